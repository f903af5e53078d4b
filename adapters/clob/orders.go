package clob

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// OrderArgs describes a limit order (GTC or GTD) to build and sign.
type OrderArgs struct {
	Token market.TokenID // the outcome token to trade
	Side  market.Side    // BUY or SELL
	// Price is the limit price, rounded half-up to the market's tick.
	Price decimal.Decimal
	// Size is in shares, truncated to 0.01.
	Size decimal.Decimal
	// Type is GTC (the zero value) or GTD.
	Type market.OrderType
	// Expiration is when a GTD order expires (Unix seconds are signed; the service
	// wants it more than a minute ahead). It must be zero for GTC.
	Expiration time.Time
	// PostOnly rejects the order instead of letting it take liquidity.
	PostOnly bool
	// Nonce is the exchange nonce to sign; 0 unless the wallet has bumped it.
	Nonce uint64
	// Taker restricts the order to one counterparty; zero for a public order.
	Taker market.Address
}

// MarketOrderArgs describes a market order (FOK or FAK) to build and sign.
type MarketOrderArgs struct {
	Token market.TokenID // the outcome token to trade
	Side  market.Side    // BUY or SELL
	// Amount is the collateral to spend for a BUY and the shares to sell for a
	// SELL, truncated to 0.01.
	Amount decimal.Decimal
	// Price is the worst acceptable price, truncated to the tick. If zero, it is
	// derived from the current book (GET /book) the way the upstream clients do
	// (auth.MarketPrice): the level at which Amount is covered; a FOK that the book
	// cannot cover fails with market.ErrFOKNotFilled before anything is sent.
	Price decimal.Decimal
	// Type is FOK or FAK; GTC (the zero value) means FOK.
	Type market.OrderType
	// Nonce is the exchange nonce to sign.
	Nonce uint64
}

// SignedOrder is a signed order ready to post, with its id (the EIP-712 digest the
// service uses as the order id) and its posting options. The same SignedOrder may
// be posted again safely: the service refuses a second order with the same id.
type SignedOrder struct {
	auth.SignedOrder
	ID        market.OrderID   // the EIP-712 digest; computed by PostOrder when empty
	Type      market.OrderType // GTC, GTD, FOK or FAK, sent as orderType
	PostOnly  bool             // sent as postOnly (GTC and GTD only)
	DeferExec bool             // sent as deferExec; the service may ignore it
}

// Placement is the outcome of posting one order.
type Placement struct {
	// ID is the order's id, computed locally from its signature digest.
	ID market.OrderID
	// PostOrderResponse is the service's answer (for a reconciled order, one made
	// from the order's record: Success, OrderID and Status; amounts are then zero).
	api.PostOrderResponse
	// Reconciled reports that the first post ended with an open outcome (timeout,
	// lost connection, 5xx) and the result comes from looking the order up, or
	// from a second post after the lookup showed the order absent.
	Reconciled bool
	// Err is the failure of this order in a batch (PostOrders): an *APIError for a
	// per-order rejection, an *OrderStatusUnknownError when its fate could not be
	// found out. PostOrder returns the same error as its second result.
	Err error
}

func (c *Client) orderSigner() (auth.Signer, error) {
	if c.signer == nil {
		return nil, ErrNoSigner
	}
	return c.signer, nil
}

// domainFor returns the EIP-712 domain of orders of a market. Exchange contracts
// not configured are learned once from the venue (DiscoverExchanges).
func (c *Client) domainFor(ctx context.Context, negRisk bool) (auth.Domain, error) {
	ex, neg := c.exchanges()
	if ex.IsZero() || neg.IsZero() {
		if err := c.DiscoverExchanges(ctx); err != nil {
			c.log.Debug("clob: exchange contracts not discovered", zap.Error(err))
		}
		ex, neg = c.exchanges()
	}
	if negRisk {
		ex = neg
	}
	if ex.IsZero() {
		what := "exchange"
		if negRisk {
			what = "neg-risk exchange"
		}
		return auth.Domain{}, fmt.Errorf("%w (%s)", ErrNoExchange, what)
	}
	return auth.ExchangeDomain(c.chainID, ex), nil
}

// toMicros converts a non-negative decimal that is already a multiple of a
// micro-unit; other values are the catalog's invalid-amount errors.
func toMicros(d decimal.Decimal) (market.Micros, error) {
	if d.Sign() < 0 {
		return 0, market.Errorf(market.CodeInvalidAmount)
	}
	m, err := market.MicrosFromDecimal(d)
	if err != nil {
		return 0, api.WithCause(market.Errorf(market.CodeInvalidAmount), err)
	}
	return m, nil
}

// CreateOrder builds and signs a limit order: it fetches the token's tick size,
// neg-risk flag and fee rate (MarketParams, cached), rounds the price half-up to the
// tick and truncates the size to 0.01 (docs/design/0020), and signs for the
// market's exchange. Nothing is sent except the parameter reads. Errors: ErrNoSigner,
// ErrNoExchange, the catalog's tick-size error for a price outside [tick, 1−tick],
// market.ErrInvalidAmount for a size that truncates to zero.
func (c *Client) CreateOrder(ctx context.Context, a OrderArgs) (*SignedOrder, error) {
	s, err := c.orderSigner()
	if err != nil {
		return nil, err
	}
	if a.Type != market.GTC && a.Type != market.GTD {
		return nil, api.WithCause(market.Errorf(market.CodeInvalidOrderPayload), errors.New("CreateOrder builds GTC and GTD orders; use CreateMarketOrder for FOK and FAK"))
	}
	p, err := c.MarketParams(ctx, a.Token)
	if err != nil {
		return nil, err
	}
	tick := p.TickSize.Decimal()
	if a.Price.Sign() <= 0 {
		return nil, market.Errorf(market.CodeTickSize, "(unsigned)", a.Price.String(), tick.String())
	}
	price, err := toMicros(a.Price.Div(tick).Round(0).Mul(tick))
	if err != nil {
		return nil, err
	}
	size, err := toMicros(a.Size.Truncate(2))
	if err != nil {
		return nil, err
	}
	var exp int64
	if !a.Expiration.IsZero() {
		exp = a.Expiration.Unix()
	}
	return c.signOrder(ctx, s, p, auth.OrderArgs{
		Token: a.Token, Side: a.Side, Type: a.Type, Price: price, Size: size, Tick: p.TickSize,
		FeeRateBps: p.FeeRateBps, Expiration: exp, Nonce: api.U256From(a.Nonce), Taker: a.Taker,
	}, a.PostOnly)
}

// CreateMarketOrder builds and signs a market order (FOK or FAK); see
// MarketOrderArgs for the amount and price rules. Nothing is sent except the
// parameter and, when Price is zero, book reads.
func (c *Client) CreateMarketOrder(ctx context.Context, a MarketOrderArgs) (*SignedOrder, error) {
	s, err := c.orderSigner()
	if err != nil {
		return nil, err
	}
	typ := a.Type
	switch typ {
	case market.GTC:
		typ = market.FOK
	case market.FOK, market.FAK:
	default:
		return nil, api.WithCause(market.Errorf(market.CodeInvalidOrderPayload), errors.New("CreateMarketOrder builds FOK and FAK orders"))
	}
	p, err := c.MarketParams(ctx, a.Token)
	if err != nil {
		return nil, err
	}
	amount, err := toMicros(a.Amount.Truncate(2))
	if err != nil {
		return nil, err
	}
	var price market.Micros
	if a.Price.IsZero() {
		book, err := c.MarketBook(ctx, a.Token)
		if err != nil {
			return nil, err
		}
		if price, err = auth.MarketPrice(&book, a.Side, amount, typ); err != nil {
			return nil, err
		}
	} else {
		tick := p.TickSize.Decimal()
		if price, err = toMicros(a.Price.Div(tick).Floor().Mul(tick)); err != nil {
			return nil, err
		}
	}
	return c.signOrder(ctx, s, p, auth.OrderArgs{
		Token: a.Token, Side: a.Side, Type: typ, Price: price, Size: amount, Tick: p.TickSize,
		FeeRateBps: p.FeeRateBps, Nonce: api.U256From(a.Nonce),
	}, false)
}

func (c *Client) signOrder(ctx context.Context, s auth.Signer, p MarketParams, args auth.OrderArgs, postOnly bool) (*SignedOrder, error) {
	d, err := c.domainFor(ctx, p.NegRisk)
	if err != nil {
		return nil, err
	}
	if args.Salt, err = auth.NewSalt(c.rand); err != nil {
		return nil, err
	}
	o, err := auth.BuildOrder(s.Address(), args)
	if err != nil {
		return nil, err
	}
	so, id, err := auth.SignOrder(s, d, o)
	if err != nil {
		return nil, err
	}
	return &SignedOrder{SignedOrder: so, ID: id, Type: args.Type, PostOnly: postOnly}, nil
}

// PlaceOrder builds, signs and posts a limit order (CreateOrder, then PostOrder).
func (c *Client) PlaceOrder(ctx context.Context, a OrderArgs) (Placement, error) {
	o, err := c.CreateOrder(ctx, a)
	if err != nil {
		return Placement{}, err
	}
	return c.PostOrder(ctx, o)
}

// PlaceMarketOrder builds, signs and posts a market order (CreateMarketOrder, then
// PostOrder).
func (c *Client) PlaceMarketOrder(ctx context.Context, a MarketOrderArgs) (Placement, error) {
	o, err := c.CreateMarketOrder(ctx, a)
	if err != nil {
		return Placement{}, err
	}
	return c.PostOrder(ctx, o)
}

// orderID returns o's id, computing it from the signature digest when o.ID is empty
// (which needs the market's neg-risk flag).
func (c *Client) orderID(ctx context.Context, o *SignedOrder) (market.OrderID, error) {
	if o.ID != "" {
		return o.ID, nil
	}
	p, err := c.MarketParams(ctx, market.TokenID(o.TokenID.String()))
	if err != nil {
		return "", err
	}
	d, err := c.domainFor(ctx, p.NegRisk)
	if err != nil {
		return "", err
	}
	return auth.OrderID(d.OrderDigest(&o.Order)), nil
}

func (c *Client) postBody(o *SignedOrder) (api.PostOrderRequest, error) {
	key := c.APIKey()
	if key == "" {
		return api.PostOrderRequest{}, ErrNoCredentials
	}
	return api.PostOrderRequest{
		DeferExec: o.DeferExec, Order: o.API(), Owner: key, OrderType: api.OrderType(o.Type), PostOnly: o.PostOnly,
	}, nil
}

// PostOrder posts a signed order (POST /order, L2) and returns its placement.
//
// The post is never blindly repeated. A 429 or a connection that could not be
// opened is retried (nothing reached the service). After a timeout, a lost
// connection or a 5xx the order's fate is open, so the client looks it up by id
// (GET /data/order/{id}): found, the order was accepted and its record is the
// result (Reconciled); not found, it was not, and the same signed order is posted
// again — if the first post lands meanwhile, the service answers "Duplicated" for
// the second, which the client takes as acceptance. No second order can result:
// both posts carry the same id. When the lookup fails too, the error is an
// *OrderStatusUnknownError (errors.Is ErrOrderStatusUnknown).
//
// Rejections are *APIError values matching the catalog (errors.Is(err,
// market.ErrTickSize), market.ErrInsufficientBalance, ...). A first post answered
// "Duplicated" is returned as that error: the order was posted before.
func (c *Client) PostOrder(ctx context.Context, o *SignedOrder) (Placement, error) {
	id, err := c.orderID(ctx, o)
	if err != nil {
		return Placement{}, err
	}
	req, err := c.postBody(o)
	if err != nil {
		return Placement{ID: id}, err
	}
	body, err := jsonBody(req)
	if err != nil {
		return Placement{ID: id}, err
	}
	p, err := c.postOnce(ctx, id, body)
	if err != nil && outcomeOpen(err) && ctx.Err() == nil {
		p, err = c.reconcile(ctx, o, id, body, err)
	}
	c.afterPost(o, err)
	return p, err
}

// afterPost forgets cached market parameters that a rejection shows stale.
func (c *Client) afterPost(o *SignedOrder, err error) {
	if errors.Is(err, market.ErrTickSize) || errors.Is(err, market.Errorf(market.CodeInvalidFeeRate)) {
		c.ForgetMarketParams(market.TokenID(o.TokenID.String()))
	}
}

// postOnce sends one POST /order (retried only while it provably did not arrive).
func (c *Client) postOnce(ctx context.Context, id market.OrderID, body []byte) (Placement, error) {
	var r api.PostOrderResponse
	cl := &call{svc: svcCLOB, method: "POST", path: "/order", body: body, auth: authL2, mode: retryUnsent}
	if err := c.do(ctx, cl, &r); err != nil {
		return Placement{ID: id}, err
	}
	return c.placement(id, cl, r)
}

// placement checks one order's answer: success false is the order's rejection.
func (c *Client) placement(id market.OrderID, cl *call, r api.PostOrderResponse) (Placement, error) {
	p := Placement{ID: id, PostOrderResponse: r}
	if !r.Success {
		msg := r.ErrorMsg
		if msg == "" {
			msg = "order not accepted"
		}
		p.Err = batchError(cl.method, cl.path, msg)
		return p, p.Err
	}
	if r.OrderID != "" && !strings.EqualFold(r.OrderID, string(id)) {
		c.log.Warn("clob: the service reports another order id than the signed digest",
			zap.String("signed", string(id)), zap.String("reported", r.OrderID))
	}
	return p, nil
}

// reconcile resolves an order post whose outcome is open (see PostOrder).
func (c *Client) reconcile(ctx context.Context, o *SignedOrder, id market.OrderID, body []byte, cause error) (Placement, error) {
	c.log.Debug("clob: order post outcome open; looking the order up", zap.String("order", string(id)), zap.Error(cause))
	for round := 1; ; round++ {
		rec, found, err := c.lookupOrder(ctx, id)
		if err != nil {
			return Placement{ID: id}, &OrderStatusUnknownError{ID: id, Err: errors.Join(cause, err)}
		}
		if found {
			return placementFromRecord(id, rec), nil
		}
		if round > c.retry.MaxAttempts {
			return Placement{ID: id}, &OrderStatusUnknownError{ID: id, Err: cause}
		}
		c.log.Debug("clob: order not found after an open post; posting the same signed order again", zap.String("order", string(id)))
		p, perr := c.postOnce(ctx, id, body)
		switch {
		case perr == nil:
			p.Reconciled = true
			return p, nil
		case errors.Is(perr, market.ErrDuplicated):
			// The first post landed after the lookup. The service keeps every
			// accepted id, so "Duplicated" proves acceptance even when its
			// record is not readable (a final order a service does not serve).
			if rec, found, err := c.lookupOrder(ctx, id); err == nil && found {
				return placementFromRecord(id, rec), nil
			}
			return Placement{ID: id, Reconciled: true, PostOrderResponse: api.PostOrderResponse{Success: true, OrderID: string(id)}}, nil
		case outcomeOpen(perr) && ctx.Err() == nil:
			cause = perr
			if err := c.clock.Sleep(ctx, c.retry.Delay(round)); err != nil {
				return Placement{ID: id}, &OrderStatusUnknownError{ID: id, Err: errors.Join(cause, err)}
			}
		default:
			if outcomeOpen(perr) {
				return Placement{ID: id}, &OrderStatusUnknownError{ID: id, Err: perr}
			}
			p.Reconciled = true
			return p, perr
		}
	}
}

// placementFromRecord describes an accepted order from its record.
func placementFromRecord(id market.OrderID, rec *api.OpenOrder) Placement {
	status := strings.ToLower(rec.Status)
	switch {
	case strings.EqualFold(rec.Status, "LIVE") && rec.SizeMatched == 0:
		status = api.PlacementLive
	case rec.SizeMatched > 0:
		status = api.PlacementMatched
	}
	return Placement{ID: id, Reconciled: true, PostOrderResponse: api.PostOrderResponse{
		Success: true, OrderID: string(rec.ID), Status: status, TradeIDs: tradeIDs(rec.AssociateTrades),
	}}
}

func tradeIDs(ts []market.TradeID) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// lookupOrder reads an order's record; found is false when the service does not
// know the id (404, or an empty answer).
func (c *Client) lookupOrder(ctx context.Context, id market.OrderID) (*api.OpenOrder, bool, error) {
	rec, err := c.Order(ctx, id)
	switch {
	case err == nil:
		return rec, rec != nil && rec.ID != "", nil
	case isNotFound(err):
		return nil, false, nil
	}
	return nil, false, err
}

func isNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == 404 || ae.Code == market.CodeUnknownOrder)
}

// PostOrders posts up to any number of signed orders (POST /orders, L2), in
// batches of api.MaxBatchOrders, and returns one Placement per order in input
// order. A per-order rejection is in that Placement's Err; the error result is
// for failures of a whole batch that leave nothing to reconcile (authentication,
// a malformed batch). A batch whose outcome is open (timeout, 5xx) is reconciled
// order by order as PostOrder does.
func (c *Client) PostOrders(ctx context.Context, orders []*SignedOrder) ([]Placement, error) {
	out := make([]Placement, 0, len(orders))
	for batch := range chunks(orders, api.MaxBatchOrders) {
		ps, err := c.postBatch(ctx, batch)
		if err != nil {
			return out, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func (c *Client) postBatch(ctx context.Context, batch []*SignedOrder) ([]Placement, error) {
	ids := make([]market.OrderID, len(batch))
	reqs := make([]api.PostOrderRequest, len(batch))
	for i, o := range batch {
		var err error
		if ids[i], err = c.orderID(ctx, o); err != nil {
			return nil, err
		}
		if reqs[i], err = c.postBody(o); err != nil {
			return nil, err
		}
	}
	body, err := jsonBody(reqs)
	if err != nil {
		return nil, err
	}
	var rs []api.PostOrderResponse
	cl := &call{svc: svcCLOB, method: "POST", path: "/orders", body: body, auth: authL2, mode: retryUnsent}
	err = c.do(ctx, cl, &rs)
	if err == nil && len(rs) != len(batch) {
		err = fmt.Errorf("clob: POST /orders: %w: %d answers for %d orders", ErrBadResponse, len(rs), len(batch))
	}
	out := make([]Placement, len(batch))
	if err == nil {
		for i, r := range rs {
			out[i], _ = c.placement(ids[i], cl, r)
			c.afterPost(batch[i], out[i].Err)
		}
		return out, nil
	}
	if !outcomeOpen(err) && !errors.Is(err, ErrBadResponse) || ctx.Err() != nil {
		return nil, err
	}
	for i, o := range batch {
		b, berr := jsonBody(reqs[i])
		if berr != nil {
			return nil, berr
		}
		out[i], out[i].Err = c.reconcile(ctx, o, ids[i], b, err)
		c.afterPost(o, out[i].Err)
	}
	return out, nil
}

// Order returns the record of one of the wallet's orders (GET /data/order/{id},
// L2). An unknown id is a 404 *APIError.
func (c *Client) Order(ctx context.Context, id market.OrderID) (*api.OpenOrder, error) {
	var r api.OpenOrder
	cl := &call{svc: svcCLOB, method: "GET", path: "/data/order/" + url.PathEscape(string(id)), auth: authL2}
	if err := c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// OrderFilter narrows Orders; zero fields do not filter.
type OrderFilter struct {
	ID      market.OrderID     // one order
	Market  market.ConditionID // one market
	AssetID market.TokenID     // one outcome token
}

func (f OrderFilter) query(cursor string) url.Values {
	q := url.Values{}
	setNonEmpty(q, "id", string(f.ID))
	setNonEmpty(q, "market", string(f.Market))
	setNonEmpty(q, "asset_id", string(f.AssetID))
	setNonEmpty(q, "next_cursor", cursor)
	return q
}

func setNonEmpty(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

// OrdersPage returns one page of the wallet's open orders (GET /data/orders, L2)
// starting at cursor ("" for the first page).
func (c *Client) OrdersPage(ctx context.Context, f OrderFilter, cursor string) (*api.Page[api.OpenOrder], error) {
	var p api.Page[api.OpenOrder]
	cl := &call{svc: svcCLOB, method: "GET", path: "/data/orders", query: f.query(cursor), auth: authL2}
	if err := c.do(ctx, cl, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Orders iterates over all of the wallet's open orders matching f, page by page
// (GET /data/orders). An error ends the iteration after being yielded.
func (c *Client) Orders(ctx context.Context, f OrderFilter) iter.Seq2[api.OpenOrder, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cursor string) (*api.Page[api.OpenOrder], error) {
		return c.OrdersPage(ctx, f, cursor)
	})
}

// TradeFilter narrows Trades; zero fields do not filter.
type TradeFilter struct {
	ID      market.TradeID     // one trade
	Maker   market.Address     // maker_address: trades of this wallet
	Market  market.ConditionID // one market
	AssetID market.TokenID     // one outcome token
	Before  int64              // Unix seconds
	After   int64              // Unix seconds
}

func (f TradeFilter) query(cursor string) url.Values {
	q := url.Values{}
	setNonEmpty(q, "id", string(f.ID))
	if !f.Maker.IsZero() {
		q.Set("maker_address", f.Maker.String())
	}
	setNonEmpty(q, "market", string(f.Market))
	setNonEmpty(q, "asset_id", string(f.AssetID))
	if f.Before != 0 {
		q.Set("before", strconv.FormatInt(f.Before, 10))
	}
	if f.After != 0 {
		q.Set("after", strconv.FormatInt(f.After, 10))
	}
	setNonEmpty(q, "next_cursor", cursor)
	return q
}

// TradesPage returns one page of the wallet's trades (GET /data/trades, L2).
func (c *Client) TradesPage(ctx context.Context, f TradeFilter, cursor string) (*api.Page[api.Trade], error) {
	var p api.Page[api.Trade]
	cl := &call{svc: svcCLOB, method: "GET", path: "/data/trades", query: f.query(cursor), auth: authL2}
	if err := c.do(ctx, cl, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Trades iterates over all of the wallet's trades matching f (GET /data/trades).
func (c *Client) Trades(ctx context.Context, f TradeFilter) iter.Seq2[api.Trade, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cursor string) (*api.Page[api.Trade], error) {
		return c.TradesPage(ctx, f, cursor)
	})
}

// exchanges returns the configured or discovered exchange contracts.
func (c *Client) exchanges() (normal, negRisk market.Address) {
	c.exMu.RLock()
	defer c.exMu.RUnlock()
	return c.exchange, c.negExch
}

// DiscoverExchanges fills the exchange contracts that Config left zero from the
// venue's GET /exchanges/status (the local exchange reports its chain and both
// contracts there). Configured addresses are kept. It fails when the venue reports
// another chain than the client signs for, or no usable address. Order building
// calls it by itself, once, when a contract it needs is unknown; a failed discovery
// is retried at the next order.
func (c *Client) DiscoverExchanges(ctx context.Context) error {
	st, err := c.ExchangesStatus(ctx)
	if err != nil {
		return err
	}
	if st.ChainID != 0 && st.ChainID != c.chainID {
		return fmt.Errorf("clob: the venue signs on chain %d, the client on chain %d", st.ChainID, c.chainID)
	}
	ex, err1 := market.ParseAddress(st.Exchange)
	neg, err2 := market.ParseAddress(st.NegRiskExchange)
	c.exMu.Lock()
	defer c.exMu.Unlock()
	if c.exchange.IsZero() && err1 == nil {
		c.exchange = ex
	}
	if c.negExch.IsZero() && err2 == nil {
		c.negExch = neg
	}
	if err1 != nil && err2 != nil {
		return fmt.Errorf("clob: GET /exchanges/status: %w: no exchange addresses", ErrBadResponse)
	}
	return nil
}

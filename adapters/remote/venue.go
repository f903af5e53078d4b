package remote

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// Config configures a Venue.
type Config struct {
	// Client talks to the venue. It must have the wallet's API credentials
	// installed (clob.Client.SetCredentials) and belong to Signer's address.
	// Required. The Venue does not close it.
	Client *clob.Client
	// Signer is the wallet: it signs orders. Required. The Venue does not close it.
	Signer auth.Signer
	// Exchange and NegRiskExchange are the exchange contracts orders are signed
	// for. If zero, they are read from the venue's GET /exchanges/status by the
	// first Markets call.
	Exchange, NegRiskExchange market.Address
	// Epoch is mixed into every order's salt with the wallet and the client id, so
	// that a state directory started afresh (client ids counting from the start
	// again) never signs an order with the id of an old one. If zero, a random
	// value drawn by New.
	Epoch uint64
	// Logger receives the venue's warnings (a heartbeat chain that lapsed, a
	// refreshed market). If nil, nothing is logged.
	Logger *zap.Logger
}

// Venue is the agent's venue on the remote service (or a `pitboss exchange`):
// agent.Venue over adapters/clob, for one wallet.
//
//   - Prepare signs the order (EIP-712, salt derived from the client id) and returns
//     its id — the order's digest — without any I/O, so the agent runs it on its
//     loop (agent.LocalPreparer) and has the id before the post can arrive.
//   - Submit posts it with the client's reconciliation (an open outcome is looked up
//     by id; the same signed order is posted again only when the venue does not
//     have it). Whatever leaves the outcome open is reported as ErrOutcomeUnknown,
//     never as a catalog error, so the agent looks the order up instead of placing
//     another one.
//   - Markets, Account, OpenOrders and Order read; Cancel and CancelAll cancel;
//     Heartbeat keeps the service's dead-man's switch chain alive (repairing it
//     when told its id is stale).
//
// There is no method that moves funds. A Venue is safe for concurrent use (the
// agent's executor goroutines call it at once); it owns no goroutine.
type Venue struct {
	c      *clob.Client
	cat    *Catalog
	signer auth.Signer
	addr   market.Address
	epoch  uint64
	log    *zap.Logger
	trk    *tracker

	mu      sync.RWMutex
	tokens  map[market.TokenID]tokenParams
	ex      [2]market.Address // normal, neg-risk (configured or discovered)
	domains [2]auth.Domain
	haveDom [2]bool

	beatMu sync.Mutex
	beatID string
}

// tokenParams is what signing an order for a token needs, and what converting the
// venue's records back needs.
type tokenParams struct {
	market  market.ConditionID
	outcome market.Outcome
	tick    market.Micros
	negRisk bool
	fee     uint32
	minSize market.Micros
}

var (
	_ agent.Venue         = (*Venue)(nil)
	_ agent.LocalPreparer = (*Venue)(nil)
)

// ErrOutcomeUnknown is matched (errors.Is) by the errors of Submit, Cancel and
// CancelAll whose outcome is open: a timeout, a lost connection, a 5xx answer, or a
// post whose reconciliation failed too. The request may or may not have taken
// effect; the agent looks the order up (or retries the cancel). Such errors never
// unwrap to a catalog *market.Error.
var ErrOutcomeUnknown = errors.New("remote: outcome unknown")

// outcomeError is an open outcome: it names the operation, the order and the cause,
// and unwraps to ErrOutcomeUnknown only.
type outcomeError struct {
	op  string
	id  market.OrderID
	err error
}

func (e *outcomeError) Error() string {
	s := "remote: " + e.op
	if e.id != "" {
		s += " " + string(e.id)
	}
	return s + ": outcome unknown: " + e.err.Error()
}

func (e *outcomeError) Unwrap() error { return ErrOutcomeUnknown }

// New returns the venue of cfg.Signer's wallet. It does no I/O.
func New(cfg Config) (*Venue, error) {
	if cfg.Client == nil || cfg.Signer == nil {
		return nil, errors.New("remote: a client and a signer are required")
	}
	addr := cfg.Signer.Address()
	if a := cfg.Client.Address(); !a.IsZero() && a != addr {
		return nil, fmt.Errorf("remote: the client belongs to %s, the signer to %s", a, addr)
	}
	epoch := cfg.Epoch
	if epoch == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("remote: salt epoch: %w", err)
		}
		epoch = binary.BigEndian.Uint64(b[:]) | 1
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Venue{c: cfg.Client, cat: NewCatalog(cfg.Client), signer: cfg.Signer, addr: addr, epoch: epoch, log: log,
		trk: newTracker(), tokens: map[market.TokenID]tokenParams{}, ex: [2]market.Address{cfg.Exchange, cfg.NegRiskExchange}}, nil
}

// Address returns the wallet's address.
func (v *Venue) Address() market.Address { return v.addr }

// Catalog returns the venue's market reader.
func (v *Venue) Catalog() *Catalog { return v.cat }

// PrepareLocally implements agent.LocalPreparer: Prepare does no I/O.
func (v *Venue) PrepareLocally() bool { return true }

// String names the venue without secrets.
func (v *Venue) String() string { return "remote venue of " + v.addr.String() }

// Markets implements agent.Venue: the markets' metadata (see Catalog.Markets), with
// each market's fee rate from GET /fee-rate where the venue answers it. It also
// learns what signing orders for the markets' tokens needs (tick size, neg-risk
// flag, fee rate, and the exchange contracts, once), so it must be called before
// Prepare — the agent's startup does.
func (v *Venue) Markets(ctx context.Context, ids []market.ConditionID) ([]market.Info, error) {
	infos, err := v.cat.Markets(ctx, ids)
	if err != nil {
		return nil, err
	}
	if err := v.discover(ctx, infos); err != nil {
		return nil, err
	}
	for i := range infos {
		info := &infos[i]
		if fee, err := v.c.FeeRate(ctx, info.Tokens[market.Yes]); err == nil {
			info.FeeBps = fee
		} else if ctx.Err() != nil {
			return nil, err
		}
		v.learn(info)
	}
	return infos, nil
}

// learn records the signing parameters of a market's tokens.
func (v *Venue) learn(info *market.Info) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, oc := range [...]market.Outcome{market.Yes, market.No} {
		t := info.Tokens[oc]
		v.tokens[t] = tokenParams{market: info.Condition, outcome: oc, tick: info.TickSize, negRisk: info.NegRisk,
			fee: info.FeeBps, minSize: info.MinSize}
		v.c.SetMarketParams(t, clob.MarketParams{TickSize: info.TickSize, NegRisk: info.NegRisk, FeeRateBps: info.FeeBps})
	}
}

// SetTickSize records a market's new tick size (a tick_size_change of the market
// channel; the Feed calls it). Orders prepared afterwards use it.
func (v *Venue) SetTickSize(m market.ConditionID, tick market.Micros) {
	if !market.ValidTick(tick) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for t, p := range v.tokens {
		if p.market == m {
			p.tick = tick
			v.tokens[t] = p
			v.c.SetMarketParams(t, clob.MarketParams{TickSize: tick, NegRisk: p.negRisk, FeeRateBps: p.fee})
		}
	}
}

// params returns token t's signing parameters.
func (v *Venue) params(t market.TokenID) (tokenParams, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	p, ok := v.tokens[t]
	return p, ok
}

// tokenList returns the known tokens, sorted.
func (v *Venue) tokenList() []market.TokenID {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return slices.Sorted(maps.Keys(v.tokens))
}

// discover makes sure the exchange contracts the markets need are known, reading
// GET /exchanges/status once when one is missing.
func (v *Venue) discover(ctx context.Context, infos []market.Info) error {
	need := [2]bool{}
	for i := range infos {
		need[boolIndex(infos[i].NegRisk)] = true
	}
	v.mu.RLock()
	missing := need[0] && !v.haveDom[0] || need[1] && !v.haveDom[1]
	ex := v.ex
	v.mu.RUnlock()
	if !missing {
		return nil
	}
	if ex[0].IsZero() || ex[1].IsZero() {
		st, err := v.c.ExchangesStatus(ctx)
		if err != nil {
			return fmt.Errorf("remote: exchange contracts: %w", err)
		}
		if st.ChainID != 0 && st.ChainID != v.c.ChainID() {
			return fmt.Errorf("remote: the venue signs on chain %d, this client on chain %d", st.ChainID, v.c.ChainID())
		}
		for i, s := range [2]string{st.Exchange, st.NegRiskExchange} {
			if ex[i].IsZero() {
				if a, err := market.ParseAddress(s); err == nil {
					ex[i] = a
				}
			}
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range ex {
		if !ex[i].IsZero() {
			v.ex[i] = ex[i]
			v.domains[i], v.haveDom[i] = auth.ExchangeDomain(v.c.ChainID(), ex[i]), true
		}
		if need[i] && !v.haveDom[i] {
			return fmt.Errorf("remote: %w (neg-risk: %v)", clob.ErrNoExchange, i == 1)
		}
	}
	return nil
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Salt returns the salt of client id c for wallet w in epoch e: 53 bits of
// SHA-256("pitboss-salt" ‖ w ‖ e ‖ c), the range the service's clients use (a JSON
// number that JavaScript reads exactly). Deterministic, so that preparing the same
// request twice gives the same order id.
func Salt(w market.Address, e, c uint64) api.U256 {
	var buf [12 + 20 + 16]byte
	copy(buf[:12], "pitboss-salt")
	copy(buf[12:32], w[:])
	binary.BigEndian.PutUint64(buf[32:40], e)
	binary.BigEndian.PutUint64(buf[40:48], c)
	h := sha256.Sum256(buf[:])
	return api.U256From(binary.BigEndian.Uint64(h[:8]) >> 11)
}

// Prepare implements agent.Venue: it builds the order the service will receive and
// signs it, without I/O. The id is the EIP-712 digest of the signed order, whose
// salt derives from the request's client id (Salt), so the same request gives the
// same id. FOK and FAK buys are signed for the collateral their size costs at their
// limit price (the service's market-order form). Errors are the catalog's: an
// unknown market (Markets was not called for it), a price off the tick, a size that
// is not a whole number of lots.
func (v *Venue) Prepare(_ context.Context, req agent.OrderRequest) (agent.PreparedOrder, error) {
	p, ok := v.params(req.Token)
	if !ok {
		return agent.PreparedOrder{}, fmt.Errorf("remote: token %s: %w", req.Token, market.ErrMarketNotFound)
	}
	switch {
	case req.Price <= 0 || req.Price >= market.One || req.Price%p.tick != 0:
		return agent.PreparedOrder{}, market.Errorf(market.CodeTickSize, "(unsigned)", req.Price.String(), p.tick.String())
	case req.Size <= 0 || req.Size > market.MaxMicros:
		return agent.PreparedOrder{}, market.ErrInvalidAmount
	case req.Size%market.Lot != 0:
		return agent.PreparedOrder{}, market.Errorf(market.CodeAmountNotExact, req.Size.String())
	case req.PostOnly && !req.Type.Rests():
		return agent.PreparedOrder{}, market.ErrInvalidOrderPayload
	}
	size := req.Size
	if !req.Type.Rests() && req.Side == market.Buy {
		n, ok := market.Notional(req.Price, req.Size)
		if !ok {
			return agent.PreparedOrder{}, market.ErrInvalidAmount
		}
		size = n / market.Lot * market.Lot
	}
	var exp int64
	if req.Type == market.GTD {
		exp = req.Expiration
	}
	v.mu.RLock()
	dom, ok := v.domains[boolIndex(p.negRisk)], v.haveDom[boolIndex(p.negRisk)]
	v.mu.RUnlock()
	if !ok {
		return agent.PreparedOrder{}, fmt.Errorf("remote: %w", clob.ErrNoExchange)
	}
	o, err := auth.BuildOrder(v.addr, auth.OrderArgs{Token: req.Token, Side: req.Side, Type: req.Type, Price: req.Price,
		Size: size, Tick: p.tick, FeeRateBps: p.fee, Expiration: exp, Salt: Salt(v.addr, v.epoch, req.ClientID)})
	if err != nil {
		return agent.PreparedOrder{}, err
	}
	so, id, err := auth.SignOrder(v.signer, dom, o)
	if err != nil {
		return agent.PreparedOrder{}, err
	}
	return agent.PreparedOrder{ID: id, Request: req,
		Payload: &clob.SignedOrder{SignedOrder: so, ID: id, Type: req.Type, PostOnly: req.PostOnly}}, nil
}

// Submit implements agent.Venue: POST /order with the client's reconciliation (see
// clob.Client.PostOrder). The answer's status becomes the order's: live (resting,
// perhaps partly matched), matched (filled at once) or, for a FAK whose rest was
// not kept, canceled. Rejections are the catalog's errors; an open outcome is
// ErrOutcomeUnknown. A tick-size or fee-rate rejection refreshes the market's
// parameters before it is returned, so the next attempt signs with the new ones.
func (v *Venue) Submit(ctx context.Context, p *agent.PreparedOrder) (market.Order, error) {
	so, ok := p.Payload.(*clob.SignedOrder)
	if !ok || so == nil || so.ID != p.ID {
		return market.Order{}, fmt.Errorf("remote: not an order this venue prepared: %w", market.ErrInvalidOrderPayload)
	}
	pl, err := v.c.PostOrder(ctx, so)
	if err != nil {
		if errors.Is(err, market.ErrTickSize) || errors.Is(err, market.Errorf(market.CodeInvalidFeeRate)) {
			v.refresh(ctx, p.Request.Market)
		}
		return market.Order{}, classify("post", p.ID, err)
	}
	o := v.requested(p)
	if pl.Reconciled {
		// The answer was lost and the order found by id: its record says the rest.
		if rec, err := v.c.Order(ctx, p.ID); err == nil && rec.ID != "" {
			if ro, err := v.convert(rec); err == nil {
				ro.PostOnly = p.Request.PostOnly
				v.track(&ro)
				return ro, nil
			}
		}
		o.Status = market.StatusLive // the feed's events correct it
		v.track(&o)
		return o, nil
	}
	o.Status, o.Matched = placementStatus(&p.Request, pl.Status, pl.MakingAmount.Micros(), pl.TakingAmount.Micros())
	v.track(&o)
	return o, nil
}

// placementStatus maps a placement's answer to the order's status and matched size
// (shares): "matched" with everything matched is MATCHED; with a rest, a resting
// type stays LIVE and a FAK is CANCELED; "live", "delayed" and "unmatched" leave a
// resting order LIVE (a FAK "unmatched" is CANCELED, a FOK MATCHED only when
// "matched"). making and taking are the answer's amounts (BUY: collateral, shares;
// SELL: shares, collateral).
func placementStatus(req *agent.OrderRequest, status string, making, taking market.Micros) (market.OrderStatus, market.Micros) {
	shares := taking
	if req.Side == market.Sell {
		shares = making
	}
	shares = max(0, min(shares, req.Size))
	switch status {
	case api.PlacementMatched:
		switch {
		case shares >= req.Size || req.Type == market.FOK:
			return market.StatusMatched, req.Size
		case req.Type == market.FAK:
			return market.StatusCanceled, shares
		}
		return market.StatusLive, shares
	default:
		if !req.Type.Rests() {
			if req.Type == market.FOK {
				return market.StatusCanceled, 0
			}
			return market.StatusCanceled, shares
		}
		return market.StatusLive, shares
	}
}

// requested is the order as the request describes it.
func (v *Venue) requested(p *agent.PreparedOrder) market.Order {
	q := &p.Request
	return market.Order{ID: p.ID, Owner: v.addr, Market: q.Market, Token: q.Token, Outcome: q.Outcome, Side: q.Side,
		Price: q.Price, Size: q.Size, Type: q.Type, PostOnly: q.PostOnly, Expiration: q.Expiration, CreatedAt: q.Time}
}

// track keeps the tracker's open set in step with an answer.
func (v *Venue) track(o *market.Order) {
	v.trk.observe(o, 0)
}

// refresh re-reads market m's parameters after the venue refused an order for
// them. Failures are logged: the next rejection tries again.
func (v *Venue) refresh(ctx context.Context, m market.ConditionID) {
	infos, err := v.Markets(ctx, []market.ConditionID{m})
	if err != nil {
		v.log.Warn("remote: market parameters not refreshed", zap.String("market", string(m)), zap.Error(err))
		return
	}
	v.log.Info("remote: market parameters refreshed after a rejection", zap.String("market", string(m)),
		zap.Stringer("tick", infos[0].TickSize), zap.Uint32("fee_bps", infos[0].FeeBps))
}

// classify returns err when it is the venue's definitive refusal — an answer below
// 500, or a catalog error the client raised before sending (a budget refusal) — and
// an ErrOutcomeUnknown error otherwise.
func classify(op string, id market.OrderID, err error) error {
	if errors.Is(err, clob.ErrOrderStatusUnknown) {
		return &outcomeError{op: op, id: id, err: err}
	}
	var ae *clob.APIError
	if errors.As(err, &ae) {
		if ae.Status < 500 {
			return err
		}
		return &outcomeError{op: op, id: id, err: err}
	}
	var me *market.Error
	if errors.As(err, &me) {
		return err
	}
	return &outcomeError{op: op, id: id, err: err}
}

// convert turns an order record of the venue into a market.Order, with the outcome
// from the market when the venue knows the token.
func (v *Venue) convert(rec *api.OpenOrder) (market.Order, error) {
	o, err := rec.Order(nil)
	if err != nil {
		return market.Order{}, fmt.Errorf("order %s: %w: %w", rec.ID, clob.ErrBadResponse, err)
	}
	v.fixOrder(&o)
	return o, nil
}

// fixOrder sets an order's outcome (and market) from the venue's own tokens: labels
// on the wire are the market's ("Up", "Down"), not necessarily Yes and No.
func (v *Venue) fixOrder(o *market.Order) {
	if p, ok := v.params(o.Token); ok {
		o.Outcome = p.outcome
		if o.Market == "" {
			o.Market = p.market
		}
	}
}

// fixFill does the same for a fill.
func (v *Venue) fixFill(f *market.Fill) {
	if p, ok := v.params(f.Token); ok {
		f.Outcome = p.outcome
		if f.Market == "" {
			f.Market = p.market
		}
	}
}

// Account implements agent.Venue: collateral from GET /balance-allowance (the
// available part and what open orders reserve), each known token's holding
// (available and reserved) from its conditional balance, and the account mode from
// GET /auth/ban-status/closed-only. The cost basis of the holdings (Basis) comes
// from the data service's positions, else the wallet's trade history (see basis).
//
// It also records the cut the agent starts from: the wallet's recent fills are read
// before and after the balances, until both reads agree (at most three times), and
// remembered as already counted, so that the Feed's replay after it connects
// delivers exactly the fills the balances do not include.
func (v *Venue) Account(ctx context.Context) (agent.Account, error) {
	var acct agent.Account
	for attempt := 1; ; attempt++ {
		now := v.c.Now().Unix()
		since := now - 2*replayOverlap
		before, err := v.fillKeys(ctx, since)
		if err != nil {
			return agent.Account{}, err
		}
		if acct, err = v.balances(ctx); err != nil {
			return agent.Account{}, err
		}
		after, err := v.fillKeys(ctx, since)
		if err != nil {
			return agent.Account{}, err
		}
		if slices.Equal(before, after) || attempt == 3 {
			if attempt == 3 && !slices.Equal(before, after) {
				v.log.Warn("remote: the wallet kept trading while its balances were read; a fill of that moment may be counted twice")
			}
			v.trk.setCut(now, after)
			acct.Basis = v.basis(ctx, acct.Positions)
			return acct, nil
		}
	}
}

// balances reads collateral, holdings and the account mode.
func (v *Venue) balances(ctx context.Context) (agent.Account, error) {
	ba, err := v.c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetCollateral})
	if err != nil {
		return agent.Account{}, fmt.Errorf("remote: collateral: %w", err)
	}
	avail := ba.Allowance.Micros()
	acct := agent.Account{Address: v.addr, Balance: avail, Reserved: max(0, ba.Balance.Micros()-avail)}
	for _, t := range v.tokenList() {
		tb, err := v.c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetConditional, TokenID: t})
		if err != nil {
			return agent.Account{}, fmt.Errorf("remote: balance of token %s: %w", t, err)
		}
		if size := tb.Balance.Micros(); size > 0 {
			p, _ := v.params(t)
			acct.Positions = append(acct.Positions, market.Position{Market: p.market, Token: t, Outcome: p.outcome, Size: size})
		}
	}
	closed, err := v.c.ClosedOnly(ctx)
	if err != nil {
		return agent.Account{}, fmt.Errorf("remote: account mode: %w", err)
	}
	if closed {
		acct.Mode = market.ModeCloseOnly
	}
	return acct, nil
}

// fillKeys returns the keys of the wallet's fills since Unix second since, sorted.
func (v *Venue) fillKeys(ctx context.Context, since int64) ([]fillKey, error) {
	fills, err := v.Fills(ctx, since)
	if err != nil {
		return nil, err
	}
	out := make([]fillKey, len(fills))
	for i := range fills {
		out[i] = fillKey{fills[i].Trade, fills[i].Order}
	}
	slices.SortFunc(out, func(a, b fillKey) int {
		return cmp.Or(cmp.Compare(a.trade, b.trade), cmp.Compare(a.order, b.order))
	})
	return out, nil
}

// Fills returns the wallet's fills in trades matched since Unix second since (GET
// /data/trades), oldest first. A taker fill's fee is computed with the service's
// formula (market.TakerFee) at the trade's price, since trade records carry no fee;
// makers pay none.
func (v *Venue) Fills(ctx context.Context, since int64) ([]market.Fill, error) {
	var out []market.Fill
	key := v.c.APIKey()
	for t, err := range v.c.Trades(ctx, clob.TradeFilter{After: since}) {
		if err != nil {
			return nil, fmt.Errorf("remote: trades: %w", err)
		}
		out = append(out, v.tradeFills(&t, key)...)
	}
	slices.SortStableFunc(out, func(a, b market.Fill) int { return cmp.Compare(a.Time, b.Time) })
	return out, nil
}

// tradeFills returns the wallet's fills in one trade record.
func (v *Venue) tradeFills(t *api.Trade, key string) []market.Fill {
	var fee market.Micros
	if t.TraderSide == "TAKER" {
		fee = market.TakerFee(uint32(max(0, min(int64(t.FeeRateBps), 10_000))), t.Price.Micros(), t.Size.Micros())
	}
	w := api.NewWSTrade(t, fee)
	fills := w.Fills(key, v.addr, nil)
	for i := range fills {
		v.fixFill(&fills[i])
	}
	return fills
}

// OpenOrders implements agent.Venue: every open order of the wallet (GET
// /data/orders, page by page).
func (v *Venue) OpenOrders(ctx context.Context) ([]market.Order, error) {
	out, err := v.listOpen(ctx)
	if err != nil {
		return nil, err
	}
	for i := range out {
		v.trk.opened(out[i].ID, out[i].Matched)
	}
	return out, nil
}

// listOpen reads the wallet's open orders without touching the tracker.
func (v *Venue) listOpen(ctx context.Context) ([]market.Order, error) {
	var out []market.Order
	for rec, err := range v.c.Orders(ctx, clob.OrderFilter{}) {
		if err != nil {
			return nil, fmt.Errorf("remote: open orders: %w", err)
		}
		o, err := v.convert(&rec)
		if err != nil {
			return nil, err
		}
		if o.Status == market.StatusLive {
			out = append(out, o)
		}
	}
	return out, nil
}

// Order implements agent.Venue (GET /data/order/{id}). An id the venue does not
// know is an error wrapping market.ErrUnknownOrder.
func (v *Venue) Order(ctx context.Context, id market.OrderID) (market.Order, error) {
	o, err := v.lookup(ctx, id)
	if err == nil {
		v.track(&o)
	}
	return o, err
}

// lookup reads one order without touching the tracker.
func (v *Venue) lookup(ctx context.Context, id market.OrderID) (market.Order, error) {
	rec, err := v.c.Order(ctx, id)
	switch {
	case err != nil && isNotFound(err), err == nil && rec.ID == "":
		return market.Order{}, fmt.Errorf("order %s: %w", id, market.ErrUnknownOrder)
	case err != nil:
		return market.Order{}, err
	}
	return v.convert(rec)
}

// Cancel implements agent.Venue (DELETE /order). An order the venue reports not
// cancelled is an error: the catalog's already-cancelled error, or one wrapping
// market.ErrUnknownOrder (matched, gone, not found). An open outcome is
// ErrOutcomeUnknown.
func (v *Venue) Cancel(ctx context.Context, id market.OrderID) error {
	r, err := v.c.CancelOrder(ctx, id)
	if err != nil {
		return classify("cancel", id, err)
	}
	if slices.Contains(r.Canceled, id) {
		v.trk.closed(id)
		return nil
	}
	reason, ok := r.NotCanceled[id]
	if !ok {
		return &outcomeError{op: "cancel", id: id, err: errors.New("the answer does not mention the order")}
	}
	v.trk.closed(id)
	if reason == api.ReasonAlreadyCanceled {
		return market.Errorf(market.CodeAlreadyCanceled)
	}
	return fmt.Errorf("order %s not cancelled (%s): %w", id, reason, market.ErrUnknownOrder)
}

// CancelAll implements agent.Venue: DELETE /cancel-all, or /cancel-market-orders
// for one market.
func (v *Venue) CancelAll(ctx context.Context, m market.ConditionID) error {
	var r *api.CancelResponse
	var err error
	if m == "" {
		r, err = v.c.CancelAll(ctx)
	} else {
		r, err = v.c.CancelMarketOrders(ctx, m, "")
	}
	if err != nil {
		return classify("cancel_all", "", err)
	}
	for _, id := range r.Canceled {
		v.trk.closed(id)
	}
	return nil
}

// ErrHeartbeatLapsed is matched by a Heartbeat error when the venue had ended the
// wallet's heartbeat chain before the beat arrived: it may have cancelled every open
// order of the wallet (the user channel reports them). A new chain was started.
var ErrHeartbeatLapsed = clob.ErrHeartbeatLapsed

// Heartbeat implements agent.Venue: one beat of the service's dead-man's switch
// (POST /v1/heartbeats). The first beat starts a chain; a stale id is repaired from
// the service's current one; a chain that had ended is restarted and reported as
// ErrHeartbeatLapsed.
func (v *Venue) Heartbeat(ctx context.Context) error {
	v.beatMu.Lock()
	defer v.beatMu.Unlock()
	id := v.beatID
	next, err := v.c.Heartbeat(ctx, id)
	var lapsed error
	if err != nil && errors.Is(err, market.Errorf(market.CodeHeartbeatInvalid)) {
		if next != "" && next != id {
			next, err = v.c.Heartbeat(ctx, next)
		} else {
			lapsed = fmt.Errorf("%w (chain %s)", ErrHeartbeatLapsed, id)
			next, err = v.c.Heartbeat(ctx, "")
		}
	}
	if err != nil {
		return fmt.Errorf("remote: heartbeat: %w", err)
	}
	v.beatID = next
	return lapsed
}

// HeartbeatTimeout is how long the service waits for the next heartbeat before it
// cancels the wallet's open orders (the specification's "about 10 seconds").
const HeartbeatTimeout = 10 * time.Second

// Merge implements agent.Merger: POST /ctf/merge of size complete sets of market m.
func (v *Venue) Merge(ctx context.Context, m market.ConditionID, size market.Micros) error {
	if _, err := v.c.Merge(ctx, clob.CTFRequest{ConditionID: m, Size: size.Decimal()}); err != nil {
		return fmt.Errorf("remote: merge: %w", err)
	}
	return nil
}

// Redeem implements agent.Redeemer: POST /ctf/redeem of resolved market m.
func (v *Venue) Redeem(ctx context.Context, m market.ConditionID) error {
	if _, err := v.c.Redeem(ctx, clob.CTFRequest{ConditionID: m}); err != nil {
		return fmt.Errorf("remote: redeem: %w", err)
	}
	return nil
}

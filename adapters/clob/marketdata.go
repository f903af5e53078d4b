package clob

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// get performs an unauthenticated, retryable GET on the CLOB service.
func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.do(ctx, &call{svc: svcCLOB, method: "GET", path: path, query: q}, out)
}

// postRead performs an unauthenticated POST that only reads (the batch market-data
// requests): it is retryable like a GET.
func (c *Client) postRead(ctx context.Context, path string, body any, out any) error {
	b, err := jsonBody(body)
	if err != nil {
		return err
	}
	return c.do(ctx, &call{svc: svcCLOB, method: "POST", path: path, body: b}, out)
}

func tokenQuery(token market.TokenID) url.Values { return url.Values{"token_id": {string(token)}} }

func dec(d api.Decimal) decimal.Decimal { return d.Micros().Decimal() }

// OK checks that the CLOB service answers (GET /, the JSON string "OK").
func (c *Client) OK(ctx context.Context) error {
	var s string
	if err := c.get(ctx, "/", nil, &s); err != nil {
		return err
	}
	if s != api.OKResponse {
		return fmt.Errorf("clob: GET /: %w: %q", ErrBadResponse, s)
	}
	return nil
}

// Book returns the order book of token (GET /book) in its wire form: levels in
// REST order (the best level last on both sides). Use MarketBook for a best-first
// market.Book. An unknown token is market.ErrNoOrderbook.
func (c *Client) Book(ctx context.Context, token market.TokenID) (*api.OrderBook, error) {
	var b api.OrderBook
	if err := c.get(ctx, "/book", tokenQuery(token), &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// MarketBook returns the order book of token as a best-first market.Book (bids
// descending, asks ascending), whatever the level order on the wire.
func (c *Client) MarketBook(ctx context.Context, token market.TokenID) (market.Book, error) {
	b, err := c.Book(ctx, token)
	if err != nil {
		return market.Book{}, err
	}
	bk, err := b.Book()
	if err != nil {
		return market.Book{}, fmt.Errorf("clob: GET /book: %w: %v", ErrBadResponse, err)
	}
	return bk, nil
}

// Books returns the order books of tokens (POST /books), one per token in request
// order. More tokens than one request may carry (api.MaxBookRequests) are sent in
// several requests.
func (c *Client) Books(ctx context.Context, tokens []market.TokenID) ([]api.OrderBook, error) {
	out := make([]api.OrderBook, 0, len(tokens))
	for chunk := range chunks(tokens, api.MaxBookRequests) {
		var page []api.OrderBook
		if err := c.postRead(ctx, "/books", tokenRequests(chunk), &page); err != nil {
			return nil, err
		}
		out = append(out, page...)
	}
	return out, nil
}

func tokenRequests(tokens []market.TokenID) []api.TokenRequest {
	reqs := make([]api.TokenRequest, len(tokens))
	for i, t := range tokens {
		reqs[i] = api.TokenRequest{TokenID: t}
	}
	return reqs
}

// chunks yields s in consecutive pieces of at most n elements (nothing for an
// empty s).
func chunks[T any](s []T, n int) iter.Seq[[]T] {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k:k]) {
				return
			}
			s = s[k:]
		}
	}
}

// Price returns the price of token on side (GET /price): the best bid for BUY and
// the best ask for SELL. Errors: market.ErrNoOrderbook, and "Invalid side".
func (c *Client) Price(ctx context.Context, token market.TokenID, side market.Side) (decimal.Decimal, error) {
	q := tokenQuery(token)
	q.Set("side", side.String())
	var r api.PriceResponse
	if err := c.get(ctx, "/price", q, &r); err != nil {
		return decimal.Decimal{}, err
	}
	return dec(r.Price), nil
}

// PriceRequest names one token and side of a Prices request.
type PriceRequest struct {
	Token market.TokenID // the outcome token
	Side  market.Side    // BUY for the best bid, SELL for the best ask
}

// Prices returns the prices of several tokens and sides (POST /prices): a map from
// token to a map from "BUY"/"SELL" to the price. A side without a price is absent.
func (c *Client) Prices(ctx context.Context, reqs []PriceRequest) (map[market.TokenID]map[market.Side]decimal.Decimal, error) {
	out := make(map[market.TokenID]map[market.Side]decimal.Decimal, len(reqs))
	for chunk := range chunks(reqs, api.MaxBookRequests) {
		body := make([]api.TokenRequest, len(chunk))
		for i, r := range chunk {
			body[i] = api.TokenRequest{TokenID: r.Token, Side: r.Side.String()}
		}
		var r api.PricesResponse
		if err := c.postRead(ctx, "/prices", body, &r); err != nil {
			return nil, err
		}
		for tok, sides := range r {
			m := out[tok]
			if m == nil {
				m = make(map[market.Side]decimal.Decimal, 2)
				out[tok] = m
			}
			for s, p := range sides {
				if side, ok := api.ParseSide(s); ok {
					m[side] = dec(p)
				}
			}
		}
	}
	return out, nil
}

// Midpoint returns the midpoint of token's best bid and ask (GET /midpoint).
func (c *Client) Midpoint(ctx context.Context, token market.TokenID) (decimal.Decimal, error) {
	var r api.MidpointResponse
	if err := c.get(ctx, "/midpoint", tokenQuery(token), &r); err != nil {
		return decimal.Decimal{}, err
	}
	return dec(r.Mid), nil
}

// Midpoints returns the midpoints of tokens (POST /midpoints).
func (c *Client) Midpoints(ctx context.Context, tokens []market.TokenID) (map[market.TokenID]decimal.Decimal, error) {
	out := make(map[market.TokenID]decimal.Decimal, len(tokens))
	for chunk := range chunks(tokens, api.MaxBookRequests) {
		var r api.MidpointsResponse
		if err := c.postRead(ctx, "/midpoints", tokenRequests(chunk), &r); err != nil {
			return nil, err
		}
		for t, v := range r {
			out[t] = dec(v)
		}
	}
	return out, nil
}

// Spread returns token's best ask minus best bid (GET /spread).
func (c *Client) Spread(ctx context.Context, token market.TokenID) (decimal.Decimal, error) {
	var r api.SpreadResponse
	if err := c.get(ctx, "/spread", tokenQuery(token), &r); err != nil {
		return decimal.Decimal{}, err
	}
	return dec(r.Spread), nil
}

// Spreads returns the spreads of tokens (POST /spreads, answered as
// {"spreads": {...}}).
func (c *Client) Spreads(ctx context.Context, tokens []market.TokenID) (map[market.TokenID]decimal.Decimal, error) {
	out := make(map[market.TokenID]decimal.Decimal, len(tokens))
	for chunk := range chunks(tokens, api.MaxBookRequests) {
		var r api.SpreadsResponse
		if err := c.postRead(ctx, "/spreads", tokenRequests(chunk), &r); err != nil {
			return nil, err
		}
		for t, v := range r.Spreads {
			out[t] = dec(v)
		}
	}
	return out, nil
}

// LastTrade is the last trade price of a token and the taker side of that trade
// (zero when the token has not traded).
type LastTrade struct {
	Token market.TokenID  // the outcome token
	Price decimal.Decimal // the price of its last trade
	Side  market.Side     // the taker's side of that trade; zero when none
}

// LastTradePrice returns the price and taker side of token's last trade (GET
// /last-trade-price).
func (c *Client) LastTradePrice(ctx context.Context, token market.TokenID) (LastTrade, error) {
	var r api.LastTradePriceResponse
	if err := c.get(ctx, "/last-trade-price", tokenQuery(token), &r); err != nil {
		return LastTrade{}, err
	}
	s, _ := api.ParseSide(r.Side)
	return LastTrade{Token: token, Price: dec(r.Price), Side: s}, nil
}

// LastTradesPrices returns the last trades of tokens (POST /last-trades-prices).
func (c *Client) LastTradesPrices(ctx context.Context, tokens []market.TokenID) ([]LastTrade, error) {
	out := make([]LastTrade, 0, len(tokens))
	for chunk := range chunks(tokens, api.MaxBookRequests) {
		var r []api.LastTradePrice
		if err := c.postRead(ctx, "/last-trades-prices", tokenRequests(chunk), &r); err != nil {
			return nil, err
		}
		for _, l := range r {
			s, _ := api.ParseSide(l.Side)
			out = append(out, LastTrade{Token: l.TokenID, Price: dec(l.Price), Side: s})
		}
	}
	return out, nil
}

// PriceHistoryParams selects a price history (GET /prices-history and each element
// of POST /batch-prices-history). Market is required; every other zero field is
// left to the service's default (fidelity 50).
type PriceHistoryParams struct {
	Market   market.ConditionID `json:"market"`             // required
	Interval string             `json:"interval,omitempty"` // e.g. 1h, 1d, max
	Fidelity int                `json:"fidelity,omitempty"` // minutes per point
	StartTs  int64              `json:"startTs,omitempty"`  // Unix seconds
	EndTs    int64              `json:"endTs,omitempty"`    // Unix seconds
}

func (p PriceHistoryParams) query() url.Values {
	q := url.Values{"market": {string(p.Market)}}
	if p.Interval != "" {
		q.Set("interval", p.Interval)
	}
	if p.Fidelity != 0 {
		q.Set("fidelity", strconv.Itoa(p.Fidelity))
	}
	if p.StartTs != 0 {
		q.Set("startTs", strconv.FormatInt(p.StartTs, 10))
	}
	if p.EndTs != 0 {
		q.Set("endTs", strconv.FormatInt(p.EndTs, 10))
	}
	return q
}

// PricesHistory returns a market's price history ordered by time (GET
// /prices-history).
func (c *Client) PricesHistory(ctx context.Context, p PriceHistoryParams) ([]api.PricePoint, error) {
	var r api.PriceHistory
	if err := c.get(ctx, "/prices-history", p.query(), &r); err != nil {
		return nil, err
	}
	return r.History, nil
}

// BatchPricesHistory returns the price histories of several markets (POST
// /batch-prices-history), keyed by condition id. A market without history has the
// current price as a single point.
func (c *Client) BatchPricesHistory(ctx context.Context, ps []PriceHistoryParams) (map[market.ConditionID][]api.PricePoint, error) {
	out := make(map[market.ConditionID][]api.PricePoint, len(ps))
	for chunk := range chunks(ps, api.MaxBookRequests) {
		var r map[market.ConditionID]api.PriceHistory
		if err := c.postRead(ctx, "/batch-prices-history", chunk, &r); err != nil {
			return nil, err
		}
		for m, h := range r {
			out[m] = h.History
		}
	}
	return out, nil
}

// TickSize returns the tick size of token's market (GET /tick-size).
func (c *Client) TickSize(ctx context.Context, token market.TokenID) (decimal.Decimal, error) {
	t, err := c.tickSize(ctx, token)
	return t.Decimal(), err
}

func (c *Client) tickSize(ctx context.Context, token market.TokenID) (market.Micros, error) {
	var r api.TickSizeResponse
	if err := c.get(ctx, "/tick-size", tokenQuery(token), &r); err != nil {
		return 0, err
	}
	if !market.ValidTick(r.MinimumTickSize.Micros()) {
		return 0, fmt.Errorf("clob: GET /tick-size: %w: tick size %s", ErrBadResponse, r.MinimumTickSize)
	}
	return r.MinimumTickSize.Micros(), nil
}

// NegRisk reports whether token's market is a neg-risk market (GET /neg-risk),
// whose orders are signed for the neg-risk exchange.
func (c *Client) NegRisk(ctx context.Context, token market.TokenID) (bool, error) {
	var r api.NegRiskResponse
	if err := c.get(ctx, "/neg-risk", tokenQuery(token), &r); err != nil {
		return false, err
	}
	return r.NegRisk, nil
}

// FeeRate returns the fee rate of token's market in basis points (GET /fee-rate);
// orders must sign at least this rate.
func (c *Client) FeeRate(ctx context.Context, token market.TokenID) (uint32, error) {
	var r api.FeeRateResponse
	if err := c.get(ctx, "/fee-rate", tokenQuery(token), &r); err != nil {
		return 0, err
	}
	return r.BaseFee, nil
}

// MarketParams are what building an order for a token needs to know about its
// market.
type MarketParams struct {
	TickSize   market.Micros // one of market.TickSizes
	NegRisk    bool          // sign for the neg-risk exchange
	FeeRateBps uint32        // the rate to sign
}

// MarketParams returns token's market parameters, from the cache when they were
// fetched (or set) less than Config.ParamsTTL ago, else with GET /tick-size,
// /neg-risk and /fee-rate. Posting an order that fails with a tick-size or fee-rate
// error forgets the token's entry, so the next order refetches it.
func (c *Client) MarketParams(ctx context.Context, token market.TokenID) (MarketParams, error) {
	now := c.clock.Now()
	if p, ok := c.params.get(token, now); ok {
		return p, nil
	}
	var p MarketParams
	var err error
	if p.TickSize, err = c.tickSize(ctx, token); err != nil {
		return MarketParams{}, err
	}
	if p.NegRisk, err = c.NegRisk(ctx, token); err != nil {
		return MarketParams{}, err
	}
	if p.FeeRateBps, err = c.FeeRate(ctx, token); err != nil {
		return MarketParams{}, err
	}
	c.params.set(token, p, now)
	return p, nil
}

// SetMarketParams primes the cache with token's parameters, for a caller that
// knows them (for example from a tick_size_change event of the market feed). A
// tick size that is not one of market.TickSizes is ignored.
func (c *Client) SetMarketParams(token market.TokenID, p MarketParams) {
	if market.ValidTick(p.TickSize) {
		c.params.set(token, p, c.clock.Now())
	}
}

// ForgetMarketParams drops token's cached parameters.
func (c *Client) ForgetMarketParams(token market.TokenID) { c.params.forget(token) }

// paramsCache holds MarketParams per token for ttl.
type paramsCache struct {
	ttl time.Duration // negative: disabled
	mu  sync.Mutex
	m   map[market.TokenID]paramsEntry
}

type paramsEntry struct {
	p  MarketParams
	at time.Time
}

// maxParamsEntries bounds the cache; when full, expired entries are dropped, and
// if none is, the whole cache.
const maxParamsEntries = 4096

func (pc *paramsCache) get(t market.TokenID, now time.Time) (MarketParams, bool) {
	if pc.ttl < 0 {
		return MarketParams{}, false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	e, ok := pc.m[t]
	if !ok || now.Sub(e.at) >= pc.ttl || now.Before(e.at) {
		return MarketParams{}, false
	}
	return e.p, true
}

func (pc *paramsCache) set(t market.TokenID, p MarketParams, now time.Time) {
	if pc.ttl < 0 {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.m == nil {
		pc.m = make(map[market.TokenID]paramsEntry)
	}
	if len(pc.m) >= maxParamsEntries {
		for k, e := range pc.m {
			if now.Sub(e.at) >= pc.ttl {
				delete(pc.m, k)
			}
		}
		if len(pc.m) >= maxParamsEntries {
			clear(pc.m)
		}
	}
	pc.m[t] = paramsEntry{p: p, at: now}
}

func (pc *paramsCache) forget(t market.TokenID) {
	pc.mu.Lock()
	delete(pc.m, t)
	pc.mu.Unlock()
}

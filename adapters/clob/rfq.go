package clob

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// RFQ (request for quote, /rfq/*, experimental; every route L2). The shapes are
// the dialect's (api/rfq.go, docs/exchange.md "RFQ"). Writes are retried only when
// they provably did not reach the service; refusals are the specification's RFQ
// errors (market.CodeRFQNotOpen, market.CodeRFQQuoteNotFound, ...), comparable with
// errors.Is.

// RFQAsk describes a request: Side (BUY or SELL) Size shares of Token at a limit
// Price (collateral per share); Expiry Unix seconds (0: the service's default).
type RFQAsk struct {
	Token  market.TokenID
	Side   market.Side
	Size   market.Micros
	Price  market.Micros
	Expiry int64
}

// Body returns the dialect's create-request body of a: amounts in base units, the
// token received on a BUY, paid on a SELL, "0" for collateral.
func (a RFQAsk) Body() (api.RFQRequestBody, error) {
	usdc, ok := market.MulDiv(a.Size, a.Price, market.One)
	if !ok || usdc <= 0 || a.Size <= 0 {
		return api.RFQRequestBody{}, market.Errorf(market.CodeInvalidAmount)
	}
	b := api.RFQRequestBody{AssetIn: string(a.Token), AssetOut: api.RFQCollateral, Expiry: a.Expiry}
	in, out := a.Size, usdc
	switch a.Side {
	case market.Buy:
	case market.Sell:
		b.AssetIn, b.AssetOut = api.RFQCollateral, string(a.Token)
		in, out = usdc, a.Size
	default:
		return api.RFQRequestBody{}, market.Errorf(market.CodeBadRequest, "side")
	}
	b.AmountIn, b.AmountOut = json.Number(strconv.FormatInt(int64(in), 10)), json.Number(strconv.FormatInt(int64(out), 10))
	return b, nil
}

// RFQFilter selects requests or quotes of the data listings; zero fields select
// all. State is "active", "inactive" or a state (ACTIVE, FILLED, ...).
type RFQFilter struct {
	RequestIDs []string
	QuoteIDs   []string
	State      string
	Markets    []market.ConditionID
}

func (f RFQFilter) query(cursor string) url.Values {
	q := url.Values{}
	set(q, "request_ids", strings.Join(f.RequestIDs, ","))
	set(q, "quote_ids", strings.Join(f.QuoteIDs, ","))
	set(q, "state", f.State)
	ms := make([]string, len(f.Markets))
	for i, m := range f.Markets {
		ms[i] = string(m)
	}
	set(q, "markets", strings.Join(ms, ","))
	set(q, "next_cursor", cursor)
	return q
}

// CreateRFQRequest posts a request (POST /rfq/request).
func (c *Client) CreateRFQRequest(ctx context.Context, a RFQAsk) (*api.RFQAck, error) {
	b, err := a.Body()
	if err != nil {
		return nil, err
	}
	return c.rfqWrite(ctx, "POST", "/rfq/request", b)
}

// CancelRFQRequest cancels the wallet's open request (DELETE /rfq/request).
func (c *Client) CancelRFQRequest(ctx context.Context, requestID string) (*api.RFQAck, error) {
	return c.rfqWrite(ctx, "DELETE", "/rfq/request", map[string]string{"request_id": requestID})
}

// CreateRFQQuote quotes price for the whole size of request requestID (POST
// /rfq/quote); expiry is Unix seconds (0: the request's).
func (c *Client) CreateRFQQuote(ctx context.Context, requestID string, price market.Micros, expiry int64) (*api.RFQAck, error) {
	body := map[string]any{"request_id": requestID, "price": api.Decimal(price)}
	if expiry > 0 {
		body["expiry"] = expiry
	}
	return c.rfqWrite(ctx, "POST", "/rfq/quote", body)
}

// CancelRFQQuote cancels the wallet's pending quote (DELETE /rfq/quote).
func (c *Client) CancelRFQQuote(ctx context.Context, quoteID string) (*api.RFQAck, error) {
	return c.rfqWrite(ctx, "DELETE", "/rfq/quote", map[string]string{"quote_id": quoteID})
}

// AcceptRFQQuote accepts quote quoteID ("": the best eligible quote) of the
// wallet's request (POST /rfq/request/accept).
func (c *Client) AcceptRFQQuote(ctx context.Context, requestID, quoteID string) (*api.RFQAck, error) {
	return c.rfqWrite(ctx, "POST", "/rfq/request/accept", map[string]string{"request_id": requestID, "quote_id": quoteID})
}

// ApproveRFQQuote approves the wallet's accepted quote, named by its id or by its
// request's, settling the trade (POST /rfq/quote/approve).
func (c *Client) ApproveRFQQuote(ctx context.Context, requestID, quoteID string) (*api.RFQAck, error) {
	return c.rfqWrite(ctx, "POST", "/rfq/quote/approve", map[string]string{"request_id": requestID, "quote_id": quoteID})
}

// RFQBestQuote returns the best eligible quote of the wallet's request (GET
// /rfq/data/best-quote).
func (c *Client) RFQBestQuote(ctx context.Context, requestID string) (*api.RFQQuote, error) {
	var q api.RFQQuote
	cl := &call{svc: svcCLOB, method: "GET", path: "/rfq/data/best-quote", query: url.Values{"request_id": {requestID}}, auth: authL2}
	if err := c.do(ctx, cl, &q); err != nil {
		return nil, err
	}
	return &q, nil
}

// RFQRequests iterates over the requests matching f (GET /rfq/data/requests):
// everyone's open requests and the wallet's own in any state.
func (c *Client) RFQRequests(ctx context.Context, f RFQFilter) iter.Seq2[api.RFQRequest, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cursor string) (*api.Page[api.RFQRequest], error) {
		var p api.Page[api.RFQRequest]
		return &p, c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/rfq/data/requests", query: f.query(cursor), auth: authL2}, &p)
	})
}

// RFQQuotes iterates over the quotes the wallet made or received matching f (GET
// /rfq/data/quotes).
func (c *Client) RFQQuotes(ctx context.Context, f RFQFilter) iter.Seq2[api.RFQQuote, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cursor string) (*api.Page[api.RFQQuote], error) {
		var p api.Page[api.RFQQuote]
		return &p, c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/rfq/data/quotes", query: f.query(cursor), auth: authL2}, &p)
	})
}

func (c *Client) rfqWrite(ctx context.Context, method, path string, body any) (*api.RFQAck, error) {
	b, err := jsonBody(body)
	if err != nil {
		return nil, err
	}
	var a api.RFQAck
	if err := c.do(ctx, &call{svc: svcCLOB, method: method, path: path, body: b, auth: authL2, mode: retryUnsent}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

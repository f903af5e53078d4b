package clob

import (
	"context"
	"maps"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Cancels are idempotent, so they are retried like reads, and they take urgent
// budget slots (UrgentLimiter), so that they find room when ordinary traffic has
// spent the budget. When a cancel needed more than one attempt, an id reported
// "the order is already canceled" is reported as canceled instead: the earlier
// attempt most likely cancelled it, and either way the order is no longer open.

func (c *Client) cancel(ctx context.Context, path string, body any) (*api.CancelResponse, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = jsonBody(body); err != nil {
			return nil, err
		}
	}
	var r api.CancelResponse
	cl := &call{svc: svcCLOB, method: "DELETE", path: path, body: b, auth: authL2, urgent: true}
	if err := c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	if cl.attempts > 1 {
		for id, reason := range r.NotCanceled {
			if reason == api.ReasonAlreadyCanceled {
				delete(r.NotCanceled, id)
				r.Canceled = append(r.Canceled, id)
			}
		}
	}
	if r.NotCanceled == nil {
		r.NotCanceled = map[market.OrderID]string{}
	}
	return &r, nil
}

// CancelOrder cancels one order (DELETE /order, L2). Whether it was cancelled is in
// the answer: Canceled lists it, or NotCanceled gives the reason
// (api.ReasonAlreadyCanceled, api.ReasonMatchedOrGone, ...). A malformed id is the
// catalog's "Invalid orderID".
func (c *Client) CancelOrder(ctx context.Context, id market.OrderID) (*api.CancelResponse, error) {
	return c.cancel(ctx, "/order", api.CancelOrderRequest{OrderID: string(id)})
}

// CancelOrders cancels several orders (DELETE /orders, L2), in requests of at most
// api.MaxCancelIDs ids, and merges the answers.
func (c *Client) CancelOrders(ctx context.Context, ids []market.OrderID) (*api.CancelResponse, error) {
	all := &api.CancelResponse{Canceled: []market.OrderID{}, NotCanceled: map[market.OrderID]string{}}
	for chunk := range chunks(ids, api.MaxCancelIDs) {
		r, err := c.cancel(ctx, "/orders", chunk)
		if err != nil {
			return all, err
		}
		all.Canceled = append(all.Canceled, r.Canceled...)
		maps.Copy(all.NotCanceled, r.NotCanceled)
	}
	return all, nil
}

// CancelAll cancels every open order of the wallet (DELETE /cancel-all, L2).
func (c *Client) CancelAll(ctx context.Context) (*api.CancelResponse, error) {
	return c.cancel(ctx, "/cancel-all", nil)
}

// CancelMarketOrders cancels the wallet's open orders in a market, a token of it,
// or both (DELETE /cancel-market-orders, L2); an empty argument matches any.
func (c *Client) CancelMarketOrders(ctx context.Context, m market.ConditionID, token market.TokenID) (*api.CancelResponse, error) {
	return c.cancel(ctx, "/cancel-market-orders", api.CancelMarketRequest{Market: m, AssetID: token})
}

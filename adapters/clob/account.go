package clob

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// BalanceParams select the balance of GET /balance-allowance.
type BalanceParams struct {
	// AssetType is api.AssetCollateral or api.AssetConditional; empty leaves it
	// to the service (collateral).
	AssetType string
	// TokenID selects the outcome token for AssetConditional.
	TokenID market.TokenID
	// SignatureType is 0 for direct EOA signing (the default; 1 and 2 are
	// reserved).
	SignatureType api.SignatureType
}

func (p BalanceParams) query() url.Values {
	q := url.Values{}
	setNonEmpty(q, "asset_type", p.AssetType)
	setNonEmpty(q, "token_id", string(p.TokenID))
	q.Set("signature_type", strconv.Itoa(int(p.SignatureType)))
	return q
}

// BalanceAllowance returns the wallet's ledger balance and allowances (GET
// /balance-allowance, L2).
func (c *Client) BalanceAllowance(ctx context.Context, p BalanceParams) (*api.BalanceAllowance, error) {
	var r api.BalanceAllowance
	cl := &call{svc: svcCLOB, method: "GET", path: "/balance-allowance", query: p.query(), auth: authL2}
	if err := c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// UpdateBalanceAllowance asks the service to refresh the cached balance and
// allowance (GET /balance-allowance/update, L2; dialect §3.10).
func (c *Client) UpdateBalanceAllowance(ctx context.Context, p BalanceParams) error {
	cl := &call{svc: svcCLOB, method: "GET", path: "/balance-allowance/update", query: p.query(), auth: authL2}
	return c.do(ctx, cl, nil)
}

// AccountState returns the wallet's account state (GET /agent/account/state, L2):
// the platform-token asset, available and effective available balances, open
// orders, recent trades and conditional token balances. The specification does not
// name the fields, so the answer is returned as raw JSON.
func (c *Client) AccountState(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	cl := &call{svc: svcCLOB, method: "GET", path: "/agent/account/state", auth: authL2}
	if err := c.do(ctx, cl, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Geoblock reports whether the caller's IP may trade (GET /api/geoblock, public).
func (c *Client) Geoblock(ctx context.Context) (*api.Geoblock, error) {
	var r api.Geoblock
	if err := c.get(ctx, "/api/geoblock", nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// OrderScoring reports whether an order counts for liquidity rewards (GET
// /order-scoring?order_id=, L2; dialect §3.10).
func (c *Client) OrderScoring(ctx context.Context, id market.OrderID) (bool, error) {
	var r struct {
		Scoring bool `json:"scoring"`
	}
	cl := &call{svc: svcCLOB, method: "GET", path: "/order-scoring", query: url.Values{"order_id": {string(id)}}, auth: authL2}
	if err := c.do(ctx, cl, &r); err != nil {
		return false, err
	}
	return r.Scoring, nil
}

// OrdersScoring reports for several orders whether they count for liquidity
// rewards (POST /orders-scoring, L2; a read, retried like one).
func (c *Client) OrdersScoring(ctx context.Context, ids []market.OrderID) (map[market.OrderID]bool, error) {
	b, err := jsonBody(ids)
	if err != nil {
		return nil, err
	}
	r := map[market.OrderID]bool{}
	cl := &call{svc: svcCLOB, method: "POST", path: "/orders-scoring", body: b, auth: authL2}
	if err := c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return r, nil
}

package clob

import (
	"context"
	"encoding/json"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Builder orders, conditional-token operations, account extras, and the RFQ routes
// the specification names without shapes. Where the specification shows no shape,
// the typed ones follow the local exchange (sandbox/server); the RFQ ones take and
// return raw JSON.

// BuilderOrder posts an order through a builder (POST /builder/order, L2 plus the
// builder id header; experimental). The service signs and salts the order; the
// builder id is recorded on every resulting trade. Errors: 400 "<PREFIX>BUILDER_ID
// header required", "missing 'order' field", "invalid JSON: …", 401 "invalid
// authorization". Not retried after a timeout or 5xx: the order has no
// client-side id to look up, so an open outcome is returned to the caller.
func (c *Client) BuilderOrder(ctx context.Context, builderID string, req api.BuilderOrderRequest) (*api.BuilderOrderResponse, error) {
	b, err := jsonBody(req)
	if err != nil {
		return nil, err
	}
	var r api.BuilderOrderResponse
	cl := &call{svc: svcCLOB, method: "POST", path: "/builder/order", body: b, auth: authL2, builder: builderID, mode: retryUnsent}
	if err := c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// BuilderCancel cancels orders placed through a builder (DELETE /builder/cancel,
// L2 plus the builder id header; experimental). The body shape is not shown by the
// specification; the client sends {"orderIDs": [...]}, which the local exchange
// accepts (as it does {"orderID": …} and a bare array).
func (c *Client) BuilderCancel(ctx context.Context, builderID string, ids []market.OrderID) (*api.CancelResponse, error) {
	b, err := jsonBody(struct {
		OrderIDs []market.OrderID `json:"orderIDs"`
	}{ids})
	if err != nil {
		return nil, err
	}
	var r api.CancelResponse
	cl := &call{svc: svcCLOB, method: "DELETE", path: "/builder/cancel", body: b, auth: authL2, builder: builderID, urgent: true}
	if err := c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// CTFRequest is the body of the conditional-token operations: the market by
// condition id or by one of its tokens, and the amount (not for redeem).
type CTFRequest struct {
	TokenID     market.TokenID     `json:"tokenId,omitempty"`     // a token of the market, or
	ConditionID market.ConditionID `json:"conditionId,omitempty"` // the market itself
	Size        decimal.Decimal    `json:"size"`                  // collateral (split) or complete sets (merge)
	// ConditionIDs (convert only) names several markets of one neg-risk event
	// whose NO tokens are converted together, instead of TokenID or ConditionID.
	ConditionIDs []market.ConditionID `json:"conditionIds,omitempty"`
}

// CTFResult is the answer of the conditional-token operations (the local
// exchange's shape, api.CTFResponse): the market and the amount moved (for redeem,
// the payout; for convert, the markets whose YES tokens were credited).
type CTFResult struct {
	Success     bool                 `json:"success"`             // true on success
	ConditionID market.ConditionID   `json:"conditionId"`         // the market
	Amount      decimal.Decimal      `json:"amount"`              // moved (redeem: paid out)
	Converted   []market.ConditionID `json:"converted,omitempty"` // convert: the markets credited
	Released    decimal.Decimal      `json:"released"`            // convert of several markets: the collateral released
}

func (c *Client) ctf(ctx context.Context, path string, req CTFRequest) (*CTFResult, error) {
	b, err := jsonBody(struct {
		TokenID      market.TokenID       `json:"tokenId,omitempty"`
		ConditionID  market.ConditionID   `json:"conditionId,omitempty"`
		ConditionIDs []market.ConditionID `json:"conditionIds,omitempty"`
		Size         string               `json:"size,omitempty"`
	}{req.TokenID, req.ConditionID, req.ConditionIDs, sizeText(req.Size)})
	if err != nil {
		return nil, err
	}
	var r CTFResult
	cl := &call{svc: svcCLOB, method: "POST", path: path, body: b, auth: authL2, mode: retryUnsent}
	if err := c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func sizeText(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

// Split turns collateral into the same amount of both outcome tokens of a market
// (POST /ctf/split, L2; experimental). Errors: 400 "tokenId and size required",
// market.ErrInsufficientBalance. Not retried after an open outcome.
func (c *Client) Split(ctx context.Context, req CTFRequest) (*CTFResult, error) {
	return c.ctf(ctx, "/ctf/split", req)
}

// Merge turns complete sets back into collateral (POST /ctf/merge, L2;
// experimental).
func (c *Client) Merge(ctx context.Context, req CTFRequest) (*CTFResult, error) {
	return c.ctf(ctx, "/ctf/merge", req)
}

// Redeem pays the winning tokens of a resolved market (POST /ctf/redeem, L2;
// experimental); Size is ignored.
func (c *Client) Redeem(ctx context.Context, req CTFRequest) (*CTFResult, error) {
	req.Size = decimal.Decimal{}
	return c.ctf(ctx, "/ctf/redeem", req)
}

// AccountState is the answer of GET /agent/account/state. The specification lists
// what it contains but not the field names; these are the local exchange's.
type AccountState struct {
	Address                   string          `json:"address"`
	Asset                     AccountAsset    `json:"asset"`
	Balance                   decimal.Decimal `json:"balance"`
	AvailableBalance          decimal.Decimal `json:"availableBalance"`
	EffectiveAvailableBalance decimal.Decimal `json:"effectiveAvailableBalance"`
	ReservedBalance           decimal.Decimal `json:"reservedBalance"`
	Mode                      string          `json:"mode"`
	ClosedOnly                bool            `json:"closedOnly"`
	Nonce                     uint64          `json:"nonce"`
	OpenOrders                []api.OpenOrder `json:"openOrders"`
	RecentTrades              []api.Trade     `json:"recentTrades"`
	ConditionalTokenBalances  []TokenBalance  `json:"conditionalTokenBalances"`
	Registered                bool            `json:"registered"`
	Geoblock                  api.Geoblock    `json:"geoblock"`
}

// AccountAsset describes the collateral of an AccountState.
type AccountAsset struct {
	Symbol   string `json:"symbol"`
	Address  string `json:"address,omitempty"`
	Decimals int    `json:"decimals"`
}

// TokenBalance is one conditional-token balance of an AccountState.
type TokenBalance struct {
	TokenID      market.TokenID     `json:"tokenId"`
	ConditionID  market.ConditionID `json:"conditionId"`
	Outcome      string             `json:"outcome"`
	OutcomeIndex int                `json:"outcomeIndex"`
	Balance      decimal.Decimal    `json:"balance"`
	Available    decimal.Decimal    `json:"available"`
	Reserved     decimal.Decimal    `json:"reserved"`
}

// AccountStateTyped returns the account state decoded into AccountState (see
// AccountState for the raw form).
func (c *Client) AccountStateTyped(ctx context.Context) (*AccountState, error) {
	raw, err := c.AccountState(ctx)
	if err != nil {
		return nil, err
	}
	var s AccountState
	if err := decodeRaw(raw, &s, "GET /agent/account/state"); err != nil {
		return nil, err
	}
	return &s, nil
}

// Reconciliation is the answer of the balance reconciliation: the ledger balance
// and the net collateral deltas of the wallet's trades as taker and as maker
// (specification field names).
type Reconciliation struct {
	Balance      decimal.Decimal `json:"balance"`
	NetUSDCTaker decimal.Decimal `json:"net_usdc_taker"`
	NetUSDCMaker decimal.Decimal `json:"net_usdc_maker"`
}

// BalanceReconciliation returns the wallet's balance reconciliation (L2). The
// specification does not show the route; the client uses the local exchange's GET
// /balance-reconciliation.
func (c *Client) BalanceReconciliation(ctx context.Context) (*Reconciliation, error) {
	var r Reconciliation
	cl := &call{svc: svcCLOB, method: "GET", path: "/balance-reconciliation", auth: authL2}
	if err := c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Notification is one account notification ({type, owner, payload}; the
// specification shows TRADE_CONFIRMED, whose payload carries tradeId). Timestamp
// (Unix seconds) is the local exchange's.
type Notification struct {
	Type      string          `json:"type"`
	Owner     string          `json:"owner"`
	Payload   json.RawMessage `json:"payload"`
	Timestamp int64           `json:"timestamp,omitempty"`
}

// Notifications lists the wallet's notifications (L2). The specification does not
// show the route; the client uses GET /notifications (the upstream service's and
// the local exchange's).
func (c *Client) Notifications(ctx context.Context) ([]Notification, error) {
	var r []Notification
	if err := c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/notifications", auth: authL2}, &r); err != nil {
		return nil, err
	}
	return r, nil
}

// DeleteNotifications deletes all of the wallet's notifications (DELETE
// /notifications, L2).
func (c *Client) DeleteNotifications(ctx context.Context) error {
	return c.do(ctx, &call{svc: svcCLOB, method: "DELETE", path: "/notifications", auth: authL2}, nil)
}

package api

import (
	"encoding/json"
	"errors"

	"github.com/pitbossdev/pitboss/market"
)

// CancelOrderRequest is the body of DELETE /order: {"orderID": "0x…"}. Decoding also
// accepts "orderId" (the Rust client's spelling).
type CancelOrderRequest struct {
	OrderID string `json:"orderID"`
}

// DecodeCancelOrder decodes the body of DELETE /order (dialect §3.8). A body that
// does not decode or has no orderID field is "Invalid order payload"; an orderID
// that is not "0x" + 64 hex digits — the empty string included — is "Invalid
// orderID".
func DecodeCancelOrder(body []byte) (market.OrderID, error) {
	var w struct {
		OrderID *string `json:"orderID"`
	}
	if err := decodeStrict(body, &w); err != nil {
		return "", invalidOrder(err)
	}
	if w.OrderID == nil {
		return "", invalidOrder(errors.New("missing orderID"))
	}
	if !ValidOrderID(*w.OrderID) {
		return "", market.Errorf(market.CodeInvalidOrderID)
	}
	return market.OrderID(*w.OrderID), nil
}

// DecodeCancelOrders decodes the body of DELETE /orders: a bare JSON array of order
// ids. Not an array of strings: "Invalid order payload"; more than max ids
// (MaxCancelIDs if max <= 0): "Too many orders in payload, max allowed: N"; a
// malformed id: "Invalid orderID". An empty array is valid and cancels nothing.
// Duplicates are kept; the server reports them once.
func DecodeCancelOrders(body []byte, max int) ([]market.OrderID, error) {
	if max <= 0 {
		max = MaxCancelIDs
	}
	var ids []string
	if err := decodeStrict(body, &ids); err != nil {
		return nil, invalidOrder(err)
	}
	if ids == nil {
		return nil, invalidOrder(errors.New("expected an array of order ids"))
	}
	if len(ids) > max {
		return nil, market.Errorf(market.CodeTooManyCancels, max)
	}
	out := make([]market.OrderID, len(ids))
	for i, id := range ids {
		if !ValidOrderID(id) {
			return nil, market.Errorf(market.CodeInvalidOrderID)
		}
		out[i] = market.OrderID(id)
	}
	return out, nil
}

// CancelMarketRequest is the body of DELETE /cancel-market-orders. Both fields are
// optional; an empty string means "any".
type CancelMarketRequest struct {
	Market  market.ConditionID `json:"market"`
	AssetID market.TokenID     `json:"asset_id"`
}

// DecodeCancelMarket decodes the body of DELETE /cancel-market-orders. An empty body
// is an empty request. A body that does not decode is "Invalid order payload".
func DecodeCancelMarket(body []byte) (CancelMarketRequest, error) {
	var r CancelMarketRequest
	if len(body) == 0 {
		return r, nil
	}
	if err := decodeStrict(body, &r); err != nil {
		return CancelMarketRequest{}, invalidOrder(err)
	}
	return r, nil
}

// Reasons in CancelResponse.NotCanceled, as the upstream service words them.
const (
	ReasonAlreadyCanceled = "the order is already canceled"
	ReasonMatchedOrGone   = "already canceled or matched"
	ReasonNotFound        = "order not found"
	ReasonNotOwner        = "order not owned by the caller"
)

// CancelResponse is the answer of every cancel endpoint: {"canceled": [...],
// "not_canceled": {"<id>": "<reason>"}}. Both keys are always emitted (an empty array
// and an empty object when nil). Decoding also accepts "notCanceled".
type CancelResponse struct {
	Canceled    []market.OrderID          `json:"canceled"`
	NotCanceled map[market.OrderID]string `json:"not_canceled"`
}

type cancelResponseJSON CancelResponse

// MarshalJSON encodes r with a non-null array and object.
func (r CancelResponse) MarshalJSON() ([]byte, error) {
	if r.Canceled == nil {
		r.Canceled = []market.OrderID{}
	}
	if r.NotCanceled == nil {
		r.NotCanceled = map[market.OrderID]string{}
	}
	return json.Marshal(cancelResponseJSON(r))
}

// UnmarshalJSON decodes r, accepting the alias "notCanceled".
func (r *CancelResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		cancelResponseJSON
		NotCanceledAlias map[market.OrderID]string `json:"notCanceled"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = CancelResponse(w.cancelResponseJSON)
	if r.NotCanceled == nil {
		r.NotCanceled = w.NotCanceledAlias
	}
	return nil
}

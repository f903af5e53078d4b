package api

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
)

// SignatureType says how an order's signature relates its signer to its maker
// (dialect §3.1). The zero value is EOA.
type SignatureType uint8

// Signature types, numbered as on the wire and in the signed struct.
const (
	SignatureEOA            SignatureType = 0 // maker == signer, an externally owned account
	SignaturePolyProxy      SignatureType = 1 // maker is the signer's Polymarket proxy wallet
	SignaturePolyGnosisSafe SignatureType = 2 // maker is the signer's Gnosis safe
)

// String returns "EOA", "POLY_PROXY", "POLY_GNOSIS_SAFE" or "SignatureType(n)".
func (t SignatureType) String() string {
	switch t {
	case SignatureEOA:
		return "EOA"
	case SignaturePolyProxy:
		return "POLY_PROXY"
	case SignaturePolyGnosisSafe:
		return "POLY_GNOSIS_SAFE"
	}
	return fmt.Sprintf("SignatureType(%d)", uint8(t))
}

// Limits of request bodies (dialect §3.7, §3.8, §4.4).
const (
	// MaxBatchOrders is the most orders one POST /orders may carry.
	MaxBatchOrders = 15
	// MaxCancelIDs is the most order ids one DELETE /orders may carry.
	MaxCancelIDs = 3000
	// MaxBookRequests is the most tokens one POST /books (and the other batch
	// market-data requests) may name.
	MaxBookRequests = 500
)

// SignedOrder is the order object of POST /order (dialect §3.1, §3.5): the twelve
// fields of the EIP-712 Order struct plus the signature. Fields are in the order the
// TypeScript client sends them, so that encoding a decoded TypeScript body gives the
// same bytes. Addresses are kept as sent (clients send EIP-55 checksummed text);
// Validate checks them. adapters/auth converts to and from its typed, signable form.
type SignedOrder struct {
	Salt          Salt          `json:"salt"` // a JSON number
	Maker         string        `json:"maker"`
	Signer        string        `json:"signer"`
	Taker         string        `json:"taker"` // the zero address for a public order
	TokenID       U256          `json:"tokenId"`
	MakerAmount   U256          `json:"makerAmount"` // 6-decimal base units
	TakerAmount   U256          `json:"takerAmount"`
	Side          Side          `json:"side"`
	Expiration    U256          `json:"expiration"` // Unix seconds; 0 means none
	Nonce         U256          `json:"nonce"`
	FeeRateBps    U256          `json:"feeRateBps"`
	SignatureType SignatureType `json:"signatureType"` // a JSON number
	Signature     string        `json:"signature"`     // "0x" + 130 hex digits
}

// Validate checks what the shape alone can tell: the three addresses are "0x" + 40
// hex digits, the side is BUY or SELL, the signature type is 0, 1 or 2 and the
// signature is "0x" + 130 hex digits. The error is the catalog's "Invalid order
// payload" wrapping the reason.
func (o *SignedOrder) Validate() error {
	for _, a := range [...]struct{ name, v string }{{"maker", o.Maker}, {"signer", o.Signer}, {"taker", o.Taker}} {
		if _, err := market.ParseAddress(a.v); err != nil {
			return invalidOrder(fmt.Errorf("%s is not an address", a.name))
		}
	}
	if !market.Side(o.Side).Valid() {
		return invalidOrder(ErrSide)
	}
	if o.SignatureType > SignaturePolyGnosisSafe {
		return invalidOrder(fmt.Errorf("unknown signature type %d", o.SignatureType))
	}
	if !isHex0x(o.Signature, 65) {
		return invalidOrder(errors.New(`signature is not "0x" + 130 hex digits`))
	}
	return nil
}

// isHex0x reports whether s is "0x" (or "0X") followed by exactly 2n hex digits.
func isHex0x(s string, n int) bool {
	if len(s) != 2+2*n || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ValidOrderID reports whether s has the form of an order id: "0x" + 64 hex digits.
func ValidOrderID(s string) bool { return isHex0x(s, 32) }

// catalogErr is a catalog error with the reason that produced it: errors.As finds
// the *market.Error (whose Message goes on the wire), errors.Is also matches the
// cause, and Error() joins both for logs.
type catalogErr struct {
	e     *market.Error
	cause error
}

func (c *catalogErr) Error() string   { return c.e.Message + ": " + c.cause.Error() }
func (c *catalogErr) Unwrap() []error { return []error{c.e, c.cause} }

// WithCause returns the catalog error e carrying cause for logs and errors.Is. The
// wire message stays e.Message (see WriteError).
func WithCause(e *market.Error, cause error) error {
	if cause == nil {
		return e
	}
	return &catalogErr{e: e, cause: cause}
}

func invalidOrder(cause error) error {
	return WithCause(market.Errorf(market.CodeInvalidOrderPayload), cause)
}

// PostOrderRequest is the body of POST /order and one element of POST /orders
// (dialect §3.5), with keys in the TypeScript client's order.
type PostOrderRequest struct {
	DeferExec bool        `json:"deferExec"` // accepted; see docs/design/0024
	Order     SignedOrder `json:"order"`
	Owner     string      `json:"owner"` // the API key of the order's owner
	OrderType OrderType   `json:"orderType"`
	PostOnly  bool        `json:"postOnly"`
}

// MaxOwnerLen is the longest PostOrderRequest.Owner DecodePostOrder and
// DecodePostOrders accept, in bytes.
const MaxOwnerLen = 128

// postOrderWire detects a missing "order" key.
type postOrderWire struct {
	DeferExec bool         `json:"deferExec"`
	Order     *SignedOrder `json:"order"`
	Owner     string       `json:"owner"`
	OrderType *OrderType   `json:"orderType"`
	PostOnly  bool         `json:"postOnly"`
}

func (w *postOrderWire) request() (PostOrderRequest, error) {
	if w.Order == nil {
		return PostOrderRequest{}, invalidOrder(errors.New(`missing "order"`))
	}
	r := PostOrderRequest{DeferExec: w.DeferExec, Order: *w.Order, Owner: w.Owner, PostOnly: w.PostOnly}
	if w.OrderType != nil {
		r.OrderType = *w.OrderType
	}
	if err := r.Order.Validate(); err != nil {
		return PostOrderRequest{}, err
	}
	if r.PostOnly && !market.OrderType(r.OrderType).Rests() {
		return PostOrderRequest{}, invalidOrder(errors.New("postOnly is only allowed with GTC and GTD"))
	}
	if len(r.Owner) > MaxOwnerLen {
		return PostOrderRequest{}, invalidOrder(errors.New("owner is too long"))
	}
	return r, nil
}

// DecodePostOrder decodes and validates the body of POST /order. A missing orderType
// means GTC. Every failure, from malformed JSON to an invalid field, is the catalog's
// "Invalid order payload" (400) wrapping the reason. Owner is not compared with the
// caller's API key here; that is the server's check ("the order owner has to be the
// owner of the API KEY").
func DecodePostOrder(body []byte) (PostOrderRequest, error) {
	var w postOrderWire
	if err := decodeStrict(body, &w); err != nil {
		return PostOrderRequest{}, invalidOrder(err)
	}
	return w.request()
}

// DecodePostOrders decodes the body of POST /orders: a JSON array of PostOrderRequest
// (dialect §3.7). The batch as a whole fails with "Invalid order payload" when it is
// not a JSON array of objects or is empty, and with "Too many orders in payload: N,
// max allowed: M" when it holds more than max (MaxBatchOrders if max <= 0). Otherwise
// it returns one request per element and, in errs, the validation error of each
// element (nil when valid), so that the server answers per order.
func DecodePostOrders(body []byte, max int) (reqs []PostOrderRequest, errs []error, err error) {
	if max <= 0 {
		max = MaxBatchOrders
	}
	var raw []json.RawMessage
	if err := decodeStrict(body, &raw); err != nil {
		return nil, nil, invalidOrder(err)
	}
	if len(raw) == 0 {
		return nil, nil, invalidOrder(errors.New("empty batch"))
	}
	if len(raw) > max {
		return nil, nil, market.Errorf(market.CodeTooManyOrders, len(raw), max)
	}
	reqs = make([]PostOrderRequest, len(raw))
	errs = make([]error, len(raw))
	for i, r := range raw {
		var w postOrderWire
		if err := json.Unmarshal(r, &w); err != nil {
			errs[i] = invalidOrder(err)
			continue
		}
		reqs[i], errs[i] = w.request()
	}
	return reqs, errs, nil
}

// Placement statuses of PostOrderResponse.Status (dialect §3.6).
const (
	PlacementLive      = "live"      // resting on the book
	PlacementMatched   = "matched"   // matched on arrival
	PlacementDelayed   = "delayed"   // marketable, subject to a matching delay
	PlacementUnmatched = "unmatched" // marketable but not matched; placement still succeeded
)

// PostOrderResponse is the answer to one placed order (dialect §3.6). Amounts are in
// human units (shares and collateral, not base units). Array fields encode as []
// when nil. Decoding also accepts the Rust client's spellings "transactionHashes" and
// "tradeIds", and "" for the amounts.
type PostOrderResponse struct {
	Success            bool     `json:"success"`
	ErrorMsg           string   `json:"errorMsg"`
	OrderID            string   `json:"orderID"`
	TransactionsHashes []string `json:"transactionsHashes"`
	Status             string   `json:"status"`
	TakingAmount       Decimal  `json:"takingAmount"`
	MakingAmount       Decimal  `json:"makingAmount"`
	TradeIDs           []string `json:"tradeIDs"`
}

type postOrderResponseJSON PostOrderResponse

// MarshalJSON encodes r with non-null arrays.
func (r PostOrderResponse) MarshalJSON() ([]byte, error) {
	if r.TransactionsHashes == nil {
		r.TransactionsHashes = []string{}
	}
	if r.TradeIDs == nil {
		r.TradeIDs = []string{}
	}
	return json.Marshal(postOrderResponseJSON(r))
}

// UnmarshalJSON decodes r, accepting the alias "transactionHashes".
func (r *PostOrderResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		postOrderResponseJSON
		TransactionHashes []string `json:"transactionHashes"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = PostOrderResponse(w.postOrderResponseJSON)
	if r.TransactionsHashes == nil {
		r.TransactionsHashes = w.TransactionHashes
	}
	return nil
}

// PlacementError is the per-order failure answer of a batch: success false and the
// catalog message of err (see AsCatalog).
func PlacementError(err error) PostOrderResponse {
	return PostOrderResponse{Success: false, ErrorMsg: AsCatalog(err).Message}
}

// BuilderOrder is the order object of POST /builder/order as the specification
// describes it ("Order object (as used by the builder order)"): maker defaults to the
// authenticated address, the signature is optional, the expiration is a string or an
// integer.
type BuilderOrder struct {
	TokenID     U256   `json:"tokenId"`
	Maker       string `json:"maker,omitempty"`
	Side        Side   `json:"side"`
	MakerAmount U256   `json:"makerAmount"`
	TakerAmount U256   `json:"takerAmount"`
	Signature   string `json:"signature,omitempty"`
	Expiration  U256   `json:"expiration"`
}

// BuilderOrderRequest is the body of POST /builder/order. OrderType defaults to GTC.
type BuilderOrderRequest struct {
	Order     BuilderOrder `json:"order"`
	OrderType OrderType    `json:"orderType,omitempty"`
}

// DecodeBuilderOrder decodes the body of POST /builder/order with the builder
// routes' errors: "invalid JSON: {details}" for a body that does not decode and
// "missing 'order' field" when there is no order.
func DecodeBuilderOrder(body []byte) (BuilderOrderRequest, error) {
	var w struct {
		Order     *BuilderOrder `json:"order"`
		OrderType *OrderType    `json:"orderType"`
	}
	if err := decodeStrict(body, &w); err != nil {
		return BuilderOrderRequest{}, invalidJSON(err)
	}
	if w.Order == nil {
		return BuilderOrderRequest{}, market.Errorf(market.CodeMissingOrderField)
	}
	r := BuilderOrderRequest{Order: *w.Order}
	if w.OrderType != nil {
		r.OrderType = *w.OrderType
	}
	if r.Order.Maker != "" {
		if _, err := market.ParseAddress(r.Order.Maker); err != nil {
			return BuilderOrderRequest{}, market.Errorf(market.CodeInvalidJSON, "maker is not an address")
		}
	}
	return r, nil
}

// BuilderOrderResponse is the answer of POST /builder/order (the specification's
// "order result").
type BuilderOrderResponse struct {
	OrderID   string   `json:"orderID"`
	Status    string   `json:"status"` // "LIVE" occurs
	Success   bool     `json:"success"`
	BuilderID string   `json:"builder_id"`
	TradeIDs  []string `json:"tradeIds"`
}

package api

import (
	"encoding/json"
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// RFQ shapes (/rfq/*). The specification names the paths and a few errors only;
// these follow the dialect's RFQ API (py-clob-client rfq_types.py: snake_case,
// amounts of the create-request body in base units, the request and quote objects)
// and are local shapes: the service does not publish them
// (docs/design/0153-rfq.md).

// RFQCollateral is the asset id of collateral in asset_in / asset_out.
const RFQCollateral = "0"

// RFQRequestBody is POST /rfq/request: the requester receives amount_in of
// asset_in and pays amount_out of asset_out, one of them collateral ("0") and
// the other an outcome token, amounts in base units (integers, 6 decimals).
// Expiry is optional, Unix seconds. user_type is accepted and ignored (EOA only).
type RFQRequestBody struct {
	AssetIn   string      `json:"asset_in"`
	AssetOut  string      `json:"asset_out"`
	AmountIn  json.Number `json:"amount_in"`
	AmountOut json.Number `json:"amount_out"`
	UserType  int         `json:"user_type"`
	Expiry    int64       `json:"expiry"`
}

// RFQIDs is the body of the routes that name a request and/or a quote: POST
// /rfq/quote (with Price), DELETE /rfq/request, DELETE /rfq/quote, POST
// /rfq/request/accept and POST /rfq/quote/approve. The dialect's request_id and
// quote_id, or the specification's rfqId and quoteId, are accepted. Price is a
// decimal string or number; Expiry (or the dialect's expiration) Unix seconds.
type RFQIDs struct {
	RequestID  string          `json:"request_id"`
	RfqID      string          `json:"rfqId"`
	QuoteID    string          `json:"quote_id"`
	QuoteIDAlt string          `json:"quoteId"`
	Price      json.RawMessage `json:"price"`
	Expiry     int64           `json:"expiry"`
	Expiration int64           `json:"expiration"`
}

// Request returns the request id, whichever spelling carried it.
func (b *RFQIDs) Request() string {
	if b.RequestID != "" {
		return b.RequestID
	}
	return b.RfqID
}

// Quote returns the quote id, whichever spelling carried it.
func (b *RFQIDs) Quote() string {
	if b.QuoteID != "" {
		return b.QuoteID
	}
	return b.QuoteIDAlt
}

// ExpiryMs returns the expiry in Unix ms (0 when not given).
func (b *RFQIDs) ExpiryMs() int64 {
	if s := max(b.Expiry, b.Expiration); s > 0 && s < 1<<40 {
		return s * 1000
	}
	return 0
}

// PriceMicros parses Price; ok is false when it is missing or unparseable.
func (b *RFQIDs) PriceMicros() (market.Micros, bool) {
	if len(b.Price) == 0 || string(b.Price) == "null" {
		return 0, false
	}
	var d Decimal
	if err := json.Unmarshal(b.Price, &d); err != nil {
		var n Number
		if err := json.Unmarshal(b.Price, &n); err != nil {
			return 0, false
		}
		return n.Micros(), true
	}
	return d.Micros(), true
}

// DecodeRFQRequest decodes a POST /rfq/request body (400 "Invalid payload" for
// anything but one JSON object).
func DecodeRFQRequest(body []byte) (RFQRequestBody, error) {
	var v RFQRequestBody
	err := DecodeQuestionBody(body, &v)
	return v, err
}

// DecodeRFQIDs decodes the body of the routes naming a request or a quote.
func DecodeRFQIDs(body []byte) (RFQIDs, error) {
	var v RFQIDs
	err := DecodeQuestionBody(body, &v)
	return v, err
}

// BaseUnits parses a decimal integer of base units (6 decimals) as micro-units;
// ok is false for anything else or out of range.
func BaseUnits(n json.Number) (market.Micros, bool) {
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || v <= 0 || market.Micros(v) > market.MaxMicros {
		return 0, false
	}
	return market.Micros(v), true
}

// RFQRequest is one request as /rfq/data/requests lists it. Side, Token and
// Complement are the requester's; SizeIn is what it receives and SizeOut what it
// pays at its limit price (decimal strings); Price is a number (0: no limit).
type RFQRequest struct {
	RequestID       string             `json:"request_id"`
	UserAddress     string             `json:"user_address"`
	Token           market.TokenID     `json:"token"`
	Complement      market.TokenID     `json:"complement"`
	Condition       market.ConditionID `json:"condition"`
	Side            Side               `json:"side"`
	SizeIn          Decimal            `json:"size_in"`
	SizeOut         Decimal            `json:"size_out"`
	Price           Number             `json:"price"`
	AcceptedQuoteID string             `json:"accepted_quote_id"`
	State           string             `json:"state"`
	Expiry          string             `json:"expiry"`
	CreatedAt       string             `json:"created_at"`
	UpdatedAt       string             `json:"updated_at"`
}

// RFQQuote is one quote as /rfq/data/quotes and /rfq/data/best-quote show it.
// Side is the quoter's (the other side of the request); SizeIn is what the quoter
// receives and SizeOut what it pays at Price.
type RFQQuote struct {
	QuoteID     string             `json:"quote_id"`
	RequestID   string             `json:"request_id"`
	UserAddress string             `json:"user_address"`
	Token       market.TokenID     `json:"token"`
	Complement  market.TokenID     `json:"complement"`
	Condition   market.ConditionID `json:"condition"`
	Side        Side               `json:"side"`
	SizeIn      Decimal            `json:"size_in"`
	SizeOut     Decimal            `json:"size_out"`
	Price       Number             `json:"price"`
	State       string             `json:"state"`
	Expiry      string             `json:"expiry"`
	CreatedAt   string             `json:"created_at"`
	UpdatedAt   string             `json:"updated_at"`
	// Reason says why the desk cancelled the quote on its quoter's behalf:
	// ANOTHER_QUOTE_ACCEPTED or REQUEST_CANCELED (omitted otherwise; local shape).
	Reason string `json:"reason,omitempty"`
}

// RFQAck answers the RFQ writes: the ids created or touched and the new state.
type RFQAck struct {
	RequestID string `json:"request_id,omitempty"`
	QuoteID   string `json:"quote_id,omitempty"`
	State     string `json:"state"`
}

// User-channel RFQ events (local shape: the service publishes no RFQ event on the
// user channel; docs/design/0153-rfq.md). Event types of the frames:
const (
	WSEventRFQRequest = "rfq_request"
	WSEventRFQQuote   = "rfq_quote"
)

// What happened to the request or quote of an RFQ frame (its "type").
const (
	WSRFQCreated  = "CREATED"  // request ACTIVE, quote PENDING
	WSRFQAccepted = "ACCEPTED" // the requester accepted the quote
	WSRFQApproved = "APPROVED" // the quoter approved: FILLED, the swap settled
	WSRFQCanceled = "CANCELED" // cancelled by its owner
	WSRFQExpired  = "EXPIRED"  // its expiry passed while it was open
)

// WSRFQRequest is an rfq_request event: the request as /rfq/data/requests shows it
// after the change, with the event's type and time (Unix seconds, as the user
// channel's other frames).
type WSRFQRequest struct {
	EventType string `json:"event_type"`
	Type      string `json:"type"`
	Timestamp Int    `json:"timestamp"`
	RFQRequest
}

// WSRFQQuote is an rfq_quote event: the quote as /rfq/data/quotes shows it after the
// change.
type WSRFQQuote struct {
	EventType string `json:"event_type"`
	Type      string `json:"type"`
	Timestamp Int    `json:"timestamp"`
	RFQQuote
}

func validRFQType(t string) bool {
	switch t {
	case WSRFQCreated, WSRFQAccepted, WSRFQApproved, WSRFQCanceled, WSRFQExpired:
		return true
	}
	return false
}

func (f *WSRFQRequest) validate() error {
	if f.RequestID == "" || !validRFQType(f.Type) || !market.Side(f.Side).Valid() {
		return ErrWSMessage
	}
	return nil
}

func (f *WSRFQQuote) validate() error {
	if f.QuoteID == "" || f.RequestID == "" || !validRFQType(f.Type) || !market.Side(f.Side).Valid() {
		return ErrWSMessage
	}
	return nil
}

package api

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// The RTDS rfq topic (local shape: the service does not publish it;
// docs/design/0166-rfq-broadcast-and-losing-quotes.md): would-be quoters learn of
// requests for quote without polling GET /rfq/data/requests. A message is
// {"topic": "rfq", "type": "request_created", "timestamp": MS, "payload": {…}}
// with the request as the listing shows it to anyone but its owner, without the
// requester's address. Types: a request appears (request_created) and leaves the
// open listing (request_accepted, request_canceled, request_expired), once each.
const (
	RTDSTopicRFQ              = "rfq"
	RTDSTypeRequestCreated    = "request_created"
	RTDSTypeRequestAccepted   = "request_accepted"
	RTDSTypeRequestCanceled   = "request_canceled"
	RTDSTypeRequestExpired    = "request_expired"
	maxRTDSRFQFilterEntries   = MaxWSAssets
	errRTDSRFQFiltersTemplate = "a JSON object with market, markets, token or tokens"
)

// RTDSRFQRequest is the payload of the rfq topic: an open request as GET
// /rfq/data/requests shows it to a quoter, in the RTDS topics' camelCase, without
// the requester's address or the accepted quote (which the listing does not show
// to others). Side, Token and Complement are the requester's.
type RTDSRFQRequest struct {
	RequestID  string             `json:"requestId"`
	Market     market.ConditionID `json:"market"`
	Token      market.TokenID     `json:"token"`
	Complement market.TokenID     `json:"complement"`
	Side       Side               `json:"side"`
	SizeIn     Decimal            `json:"sizeIn"`
	SizeOut    Decimal            `json:"sizeOut"`
	Price      Number             `json:"price"`
	State      string             `json:"state"`
	Expiry     string             `json:"expiry"`
	CreatedAt  string             `json:"createdAt"`
	UpdatedAt  string             `json:"updatedAt"`
}

// NewRTDSRFQRequest is r's rfq-topic payload.
func NewRTDSRFQRequest(r *RFQRequest) RTDSRFQRequest {
	return RTDSRFQRequest{RequestID: r.RequestID, Market: r.Condition, Token: r.Token, Complement: r.Complement, Side: r.Side,
		SizeIn: r.SizeIn, SizeOut: r.SizeOut, Price: r.Price, State: r.State, Expiry: r.Expiry, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// RTDSRFQFilters selects the requests of an rfq subscription: those of one of
// Markets or whose token is one of Tokens; both empty selects every request.
type RTDSRFQFilters struct {
	Markets []market.ConditionID
	Tokens  []market.TokenID
}

// DecodeRTDSRFQFilters decodes an rfq subscription's filters: "" (every request)
// or a JSON object with "market" (a condition id), "markets" (an array of them),
// "token" (a token id) and/or "tokens" (an array), at most MaxWSAssets entries in
// all. Unknown fields, other JSON or empty ids are refused ("Invalid payload",
// naming the expected shape). It never panics.
func DecodeRTDSRFQFilters(s string) (RTDSRFQFilters, error) {
	var f RTDSRFQFilters
	if strings.TrimSpace(s) == "" {
		return f, nil
	}
	bad := func(why string) error {
		return WithCause(market.Errorf(market.CodeBadRequest, "filters: "+errRTDSRFQFiltersTemplate), errors.New(why))
	}
	if strings.TrimLeftFunc(s, isJSONSpace)[0] != '{' {
		return f, bad("not an object")
	}
	var raw struct {
		Market  market.ConditionID   `json:"market"`
		Markets []market.ConditionID `json:"markets"`
		Token   market.TokenID       `json:"token"`
		Tokens  []market.TokenID     `json:"tokens"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return f, bad(err.Error())
	}
	if dec.More() || dec.InputOffset() < int64(len(strings.TrimRightFunc(s, isJSONSpace))) {
		return f, bad("trailing data")
	}
	if raw.Market != "" {
		f.Markets = append(f.Markets, raw.Market)
	}
	f.Markets = append(f.Markets, raw.Markets...)
	if raw.Token != "" {
		f.Tokens = append(f.Tokens, raw.Token)
	}
	f.Tokens = append(f.Tokens, raw.Tokens...)
	if len(f.Markets)+len(f.Tokens) > maxRTDSRFQFilterEntries {
		return RTDSRFQFilters{}, market.Errorf(market.CodePayloadTooLarge)
	}
	for _, m := range f.Markets {
		if m == "" || len(m) > maxIDLen {
			return RTDSRFQFilters{}, bad("empty or oversized market")
		}
	}
	for _, t := range f.Tokens {
		if t == "" || len(t) > maxIDLen {
			return RTDSRFQFilters{}, bad("empty or oversized token")
		}
	}
	return f, nil
}

// ValidRTDSRFQType reports whether typ is a type of the rfq topic ("*" included).
func ValidRTDSRFQType(typ string) bool {
	switch typ {
	case RTDSTypeAll, RTDSTypeRequestCreated, RTDSTypeRequestAccepted, RTDSTypeRequestCanceled, RTDSTypeRequestExpired:
		return true
	}
	return false
}

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// RTDS, the real-time data service (dialect §5.5): a client sends
// {"action": "subscribe"|"unsubscribe", "subscriptions": [{"topic", "type", "filters",
// "clob_auth"}]} and receives envelopes {"topic", "type", "timestamp", "payload",
// "connection_id"}, timestamp being Unix milliseconds as a JSON number.

// RTDS actions.
const (
	RTDSSubscribe   = "subscribe"
	RTDSUnsubscribe = "unsubscribe"
)

// RTDS topics and the message types the local exchange produces for them.
const (
	RTDSTopicActivity   = "activity"    // types: trades, orders_matched
	RTDSTopicClobMarket = "clob_market" // types: price_change, agg_orderbook, last_trade_price, tick_size_change, market_created, market_resolved
	RTDSTopicClobUser   = "clob_user"   // types: order, trade, rfq_request, rfq_quote (needs clob_auth)
	RTDSTopicComments   = "comments"    // types: comment_created, comment_removed, reaction_created, reaction_removed
	// RTDSTopicSubscription is the topic of the local exchange's answers about
	// subscriptions themselves: type "error" when one is refused.
	RTDSTopicSubscription = "subscription"

	RTDSTypeAll            = "*"
	RTDSTypeTrades         = "trades"
	RTDSTypeOrdersMatched  = "orders_matched"
	RTDSTypeAggOrderbook   = "agg_orderbook"
	RTDSTypeMarketCreated  = "market_created"
	RTDSTypeMarketResolved = "market_resolved"
	RTDSTypeError          = "error"
)

// MaxRTDSSubscriptions bounds the subscriptions of one RTDS request.
const MaxRTDSSubscriptions = 100

// maxRTDSFilters bounds the filters string of one subscription.
const maxRTDSFilters = 64 << 10

// RTDSAuth is the clob_auth of a subscription: API credentials in clear (that is
// the service's protocol). String and every fmt verb show the key only.
type RTDSAuth struct {
	Key        string `json:"key"`
	Secret     string `json:"secret"`
	Passphrase string `json:"passphrase"`
}

// String shows the API key only.
func (a RTDSAuth) String() string { return "RTDSAuth{key: " + a.Key + ", [redacted]}" }

// GoString shows the API key only.
func (a RTDSAuth) GoString() string { return "api." + a.String() }

// Format makes every fmt verb print String.
func (a RTDSAuth) Format(f fmt.State, _ rune) { fmt.Fprint(f, a.String()) }

// RTDSGammaAuth is the gamma_auth of a subscription (accepted, unused locally).
type RTDSGammaAuth struct {
	Address string `json:"address"`
}

// RTDSSubscription is one subscription of an RTDS request. Filters is a string
// (often JSON-encoded: a JSON array of token ids for clob_market, a JSON object such
// as {"market_slug": "…"} for activity).
type RTDSSubscription struct {
	Topic     string         `json:"topic"`
	Type      string         `json:"type"`
	Filters   string         `json:"filters,omitempty"`
	ClobAuth  *RTDSAuth      `json:"clob_auth,omitempty"`
	GammaAuth *RTDSGammaAuth `json:"gamma_auth,omitempty"`
}

// RTDSRequest is a client's RTDS message.
type RTDSRequest struct {
	Action        string             `json:"action"`
	Subscriptions []RTDSSubscription `json:"subscriptions"`
}

// DecodeRTDSRequest decodes and validates an RTDS request. It never panics. Errors
// are catalog errors: "invalid JSON: …" when the message is not a JSON object,
// "Invalid payload" for an unknown action or a subscription without a topic, "Payload
// exceeds the limit" for more than MaxRTDSSubscriptions subscriptions or an oversized
// filter. Action is lower-cased; an empty type means "*". Whether the server can feed
// a topic is the server's decision, not the decoder's.
func DecodeRTDSRequest(b []byte) (RTDSRequest, error) {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return RTDSRequest{}, WithCause(market.Errorf(market.CodeInvalidJSON, "expected a JSON object"), errors.New("not an object"))
	}
	var r RTDSRequest
	if err := decodeStrict(b, &r); err != nil {
		return RTDSRequest{}, invalidJSON(err)
	}
	r.Action = strings.ToLower(r.Action)
	if r.Action != RTDSSubscribe && r.Action != RTDSUnsubscribe {
		return RTDSRequest{}, WithCause(market.Errorf(market.CodeInvalidPayload), errors.New("action must be subscribe or unsubscribe"))
	}
	if len(r.Subscriptions) > MaxRTDSSubscriptions {
		return RTDSRequest{}, market.Errorf(market.CodePayloadTooLarge)
	}
	for i := range r.Subscriptions {
		s := &r.Subscriptions[i]
		if s.Topic == "" || len(s.Topic) > maxIDLen || len(s.Type) > maxIDLen {
			return RTDSRequest{}, WithCause(market.Errorf(market.CodeInvalidPayload), errors.New("every subscription needs a topic"))
		}
		if len(s.Filters) > maxRTDSFilters {
			return RTDSRequest{}, market.Errorf(market.CodePayloadTooLarge)
		}
		if s.Type == "" {
			s.Type = RTDSTypeAll
		}
	}
	return r, nil
}

// RTDSMessage is the envelope of every RTDS server message.
type RTDSMessage struct {
	Topic        string          `json:"topic"`
	Type         string          `json:"type"`
	Timestamp    int64           `json:"timestamp"`
	Payload      json.RawMessage `json:"payload"`
	ConnectionID string          `json:"connection_id"`
}

// ErrRTDSMessage is returned by DecodeRTDSMessage for anything that is not an
// envelope with a topic and a payload object.
var ErrRTDSMessage = errors.New("rtds: not an envelope with a topic and a payload")

// DecodeRTDSMessage decodes one RTDS server message. It never panics.
func DecodeRTDSMessage(b []byte) (RTDSMessage, error) {
	var m RTDSMessage
	if err := decodeStrict(b, &m); err != nil {
		return RTDSMessage{}, fmt.Errorf("%w: %w", ErrRTDSMessage, err)
	}
	if m.Topic == "" || len(m.Payload) == 0 || m.Payload[0] != '{' {
		return RTDSMessage{}, ErrRTDSMessage
	}
	return m, nil
}

// RTDSPriceChange is the payload of clob_market price_change (short keys, dialect
// §5.5): M market, T timestamp (ms, string), PC the changes.
type RTDSPriceChange struct {
	M  market.ConditionID    `json:"m"`
	T  Int                   `json:"t"`
	PC []RTDSPriceChangeItem `json:"pc"`
}

// RTDSPriceChangeItem is one change of an RTDSPriceChange: A asset id, H hash, P
// price, S side, SI new aggregate size, BA best ask, BB best bid.
type RTDSPriceChangeItem struct {
	A  market.TokenID `json:"a"`
	H  string         `json:"h,omitempty"`
	P  Decimal        `json:"p"`
	S  Side           `json:"s"`
	SI Decimal        `json:"si"`
	BA Decimal        `json:"ba"`
	BB Decimal        `json:"bb"`
}

// NewRTDSPriceChange converts a market-channel price_change into the RTDS payload,
// keeping only the entries of assets for which keep returns true (all if keep is
// nil).
func NewRTDSPriceChange(p *WSPriceChange, keep func(market.TokenID) bool) RTDSPriceChange {
	out := RTDSPriceChange{M: p.Market, T: p.Timestamp, PC: make([]RTDSPriceChangeItem, 0, len(p.PriceChanges))}
	for _, e := range p.PriceChanges {
		if keep != nil && !keep(e.AssetID) {
			continue
		}
		out.PC = append(out.PC, RTDSPriceChangeItem{A: e.AssetID, H: e.Hash, P: e.Price, S: e.Side, SI: e.Size, BA: e.BestAsk, BB: e.BestBid})
	}
	return out
}

// RTDSActivityTrade is the payload of activity trades / orders_matched: one trade as
// the activity feed shows it. Price and Size are JSON numbers (exact: Number);
// Timestamp is Unix seconds. Profile fields are empty on the local exchange.
type RTDSActivityTrade struct {
	Asset           market.TokenID     `json:"asset"`
	ConditionID     market.ConditionID `json:"conditionId"`
	EventSlug       string             `json:"eventSlug"`
	Outcome         string             `json:"outcome"`
	OutcomeIndex    int                `json:"outcomeIndex"`
	Price           Number             `json:"price"`
	Side            Side               `json:"side"`
	Size            Number             `json:"size"`
	Slug            string             `json:"slug"`
	Timestamp       int64              `json:"timestamp"`
	Title           string             `json:"title"`
	TransactionHash string             `json:"transactionHash"`
	ProxyWallet     string             `json:"proxyWallet"`
	Name            string             `json:"name"`
	Pseudonym       string             `json:"pseudonym"`
	Bio             string             `json:"bio"`
	Icon            string             `json:"icon"`
	ProfileImage    string             `json:"profileImage"`
}

// RTDSError is the payload of a refusal (topic "subscription", type "error"): the
// message and what was refused.
type RTDSError struct {
	Error string `json:"error"`
	Topic string `json:"topic,omitempty"`
	Type  string `json:"type,omitempty"`
}

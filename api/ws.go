package api

// WebSocket frames (dialect §5; docs/design/0070-ws-hub.md, 0071-ws-sequence-and-resync.md).
//
// The files api/ws*.go hold the frame shapes of the service's WebSocket channels, which
// the local exchange's hub (sandbox/server/ws) encodes and the client
// (adapters/wsfeed) decodes: the market channel (/ws/market), the user channel
// (/ws/user), RTDS (/ws/rtds), the comments channel (/ws/comments) and the error
// frame every channel uses. They amend docs/design/0021-api-package.md, which kept WS
// frames out of api: the server and the client must agree on them byte for byte just
// as on the HTTP bodies, and the book hash they share is here already.
//
// Conventions, as on the wire of the service: amounts are decimal strings ([Decimal]),
// timestamps are Unix milliseconds as strings ([Int]) on the market channel and Unix
// seconds as strings on the user channel, a server frame is one JSON object or a JSON
// array of objects, and the keepalive frames PING and PONG are plain text, not JSON.
// Our extension fields (seq, and min_order_size/neg_risk on book frames) are ignored
// by the stock clients.

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// Event types of the frames (the "event_type" field).
const (
	WSEventBook           = "book"
	WSEventPriceChange    = "price_change"
	WSEventLastTradePrice = "last_trade_price"
	WSEventTickSizeChange = "tick_size_change"
	WSEventBestBidAsk     = "best_bid_ask"
	WSEventNewMarket      = "new_market"
	WSEventMarketResolved = "market_resolved"
	WSEventOrder          = "order"
	WSEventTrade          = "trade"
	WSEventError          = "error"
)

// Keepalive text frames (dialect §5.1): a client sends PING, the server answers
// PONG. RTDS clients may send the lower-case "ping" and get "pong".
const (
	WSPing = "PING"
	WSPong = "PONG"
)

// Channel types of a subscribe message (the "type" field, matched case-insensitively).
const (
	WSChannelMarket   = "market"
	WSChannelUser     = "user"
	WSChannelComments = "comments"
	WSChannelSports   = "sports"
)

// Operations of a dynamic subscription change (the "operation" field).
const (
	WSOpSubscribe   = "subscribe"
	WSOpUnsubscribe = "unsubscribe"
)

// Limits of subscribe messages.
const (
	// MaxWSAssets is the default bound on the asset ids (or markets, or comment
	// parents) one subscribe message may name (dialect §5.2: 500 per connection).
	MaxWSAssets = 500
	// maxIDLen bounds a token, condition or entity id in a subscribe message.
	maxIDLen = 128
)

// IsWSPing reports whether a text frame is a keepalive ping (PING or ping, with
// surrounding white space tolerated).
func IsWSPing(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 4 && (string(b) == WSPing || string(b) == "ping")
}

// IsWSPong reports whether a text frame is a keepalive answer (PONG or pong).
func IsWSPong(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 4 && (string(b) == WSPong || string(b) == "pong")
}

// WSSubscribe is a client's subscribe message on the market, user, comments or
// sports channel (dialect §5.2, §5.4): the initial message names the channel in Type;
// a later message changes the subscription with Operation. The zero value is an
// initial message that subscribes to nothing.
//
// Auth carries the API credentials of the user channel in clear (that is the
// service's protocol); its String and fmt renderings show the API key only.
type WSSubscribe struct {
	// Type is the channel ("market", "user", ...), lower-cased by the decoder. It
	// may be empty in a dynamic message.
	Type string `json:"type,omitempty"`
	// Operation is "" for the initial message, else "subscribe" or "unsubscribe".
	Operation string `json:"operation,omitempty"`
	// AssetsIDs are token ids (market channel).
	AssetsIDs []market.TokenID `json:"assets_ids,omitempty"`
	// Markets are condition ids (user channel filter; empty means every market).
	Markets []market.ConditionID `json:"markets,omitempty"`
	// Auth is the user channel's credentials.
	Auth *APIKeyCreds `json:"auth,omitempty"`
	// InitialDump asks for a book snapshot per asset on subscribe; nil means true.
	InitialDump *bool `json:"initial_dump,omitempty"`
	// CustomFeatureEnabled enables best_bid_ask and new_market frames.
	CustomFeatureEnabled bool `json:"custom_feature_enabled,omitempty"`
	// ParentEntityType and ParentEntityIDs select comment threads (comments
	// channel; see the comments protocol in wscomments.go).
	ParentEntityType string   `json:"parent_entity_type,omitempty"`
	ParentEntityIDs  []string `json:"parent_entity_ids,omitempty"`
}

// WantsDump reports whether the message asks for snapshots (InitialDump nil or true).
func (s *WSSubscribe) WantsDump() bool { return s.InitialDump == nil || *s.InitialDump }

// ErrWSBadID is the cause of an invalid id in a subscribe message.
var ErrWSBadID = errors.New("ids must be non-empty printable strings of at most 128 bytes; token ids are decimal")

// DecodeWSSubscribe decodes and validates a subscribe message of at most max ids
// per list (MaxWSAssets if max <= 0). It never panics. Errors are catalog errors:
// "invalid JSON: …" for a message that is not one JSON object, "Invalid payload" for
// an unknown type or operation, "Invalid token id" for an asset id that is not a
// decimal token id, "Payload exceeds the limit" for too many ids. Type and Operation
// are lower-cased; an initial message (no operation) must name its type.
func DecodeWSSubscribe(b []byte, max int) (WSSubscribe, error) {
	if max <= 0 {
		max = MaxWSAssets
	}
	var s WSSubscribe
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return WSSubscribe{}, WithCause(market.Errorf(market.CodeInvalidJSON, "expected a JSON object"), errors.New("not an object"))
	}
	if err := decodeStrict(b, &s); err != nil {
		return WSSubscribe{}, invalidJSON(err)
	}
	s.Type = strings.ToLower(s.Type)
	s.Operation = strings.ToLower(s.Operation)
	switch s.Operation {
	case "", WSOpSubscribe, WSOpUnsubscribe:
	default:
		return WSSubscribe{}, WithCause(market.Errorf(market.CodeInvalidPayload), errors.New("operation must be subscribe or unsubscribe"))
	}
	switch s.Type {
	case WSChannelMarket, WSChannelUser, WSChannelComments, WSChannelSports:
	case "":
		if s.Operation == "" {
			return WSSubscribe{}, WithCause(market.Errorf(market.CodeInvalidPayload), errors.New("type is required"))
		}
	default:
		return WSSubscribe{}, WithCause(market.Errorf(market.CodeInvalidPayload), errors.New("unknown channel type"))
	}
	if len(s.AssetsIDs) > max || len(s.Markets) > max || len(s.ParentEntityIDs) > max {
		return WSSubscribe{}, market.Errorf(market.CodePayloadTooLarge)
	}
	for _, t := range s.AssetsIDs {
		if !ValidTokenID(string(t)) {
			return WSSubscribe{}, WithCause(market.Errorf(market.CodeInvalidTokenID), ErrWSBadID)
		}
	}
	for _, m := range s.Markets {
		if !validID(string(m)) {
			return WSSubscribe{}, WithCause(market.Errorf(market.CodeInvalidPayload), ErrWSBadID)
		}
	}
	for _, id := range s.ParentEntityIDs {
		if !validID(id) {
			return WSSubscribe{}, WithCause(market.Errorf(market.CodeInvalidPayload), ErrWSBadID)
		}
	}
	if len(s.ParentEntityType) > maxIDLen {
		return WSSubscribe{}, WithCause(market.Errorf(market.CodeInvalidPayload), ErrWSBadID)
	}
	return s, nil
}

// ValidTokenID reports whether s looks like a token id: 1 to 78 decimal digits (a
// uint256 has at most 78).
func ValidTokenID(s string) bool {
	if len(s) == 0 || len(s) > 78 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validID accepts non-empty printable ASCII without spaces, quotes or backslashes,
// at most maxIDLen bytes.
func validID(s string) bool {
	if len(s) == 0 || len(s) > maxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// WSError is the error frame of every channel: {"event_type": "error", "error":
// "<message>"}, the message being the catalog's (as in HTTP error bodies), plus the
// asset ids concerned when there are some (unknown assets of a subscription). A
// server sends it for a subscribe message it refuses, then keeps the connection when
// the error concerns only that message, or closes it (with the same text as the
// close reason) when it cannot serve the connection at all.
type WSError struct {
	EventType string           `json:"event_type"`
	Error     string           `json:"error"`
	AssetsIDs []market.TokenID `json:"assets_ids,omitempty"`
}

// NewWSError returns the error frame for err: the catalog message of the first
// *market.Error in its chain, else "database error" (see AsCatalog).
func NewWSError(err error) WSError {
	return WSError{EventType: WSEventError, Error: AsCatalog(err).Message}
}

// WSEnvelope is the part every server frame shares: its event type. Decoders of a
// frame look at it first.
type WSEnvelope struct {
	EventType string `json:"event_type"`
}

// ErrWSFrame is returned by SplitWSFrame for a frame that is neither a JSON object
// nor a JSON array of objects.
var ErrWSFrame = errors.New("ws frame: not a JSON object or array of objects")

// SplitWSFrame splits a server frame into its messages: a JSON object gives itself,
// a JSON array gives its elements (each must be an object). The returned slices
// alias b. It never panics and rejects trailing data.
func SplitWSFrame(b []byte) ([]json.RawMessage, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil, ErrWSFrame
	}
	switch t[0] {
	case '{':
		if !json.Valid(t) {
			return nil, ErrWSFrame
		}
		return []json.RawMessage{json.RawMessage(t)}, nil
	case '[':
		var arr []json.RawMessage
		if err := decodeStrict(t, &arr); err != nil {
			return nil, ErrWSFrame
		}
		for i := range arr {
			arr[i] = bytes.TrimSpace(arr[i])
			if len(arr[i]) == 0 || arr[i][0] != '{' {
				return nil, ErrWSFrame
			}
		}
		return arr, nil
	}
	return nil, ErrWSFrame
}

// MarshalWSFrame encodes v as the WebSocket channels send a frame: compact JSON
// without HTML escaping and without the trailing newline of json.Encoder. The
// result is a new slice the caller owns; the error is encoding/json's.
func MarshalWSFrame(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil
}

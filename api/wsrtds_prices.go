package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// RTDS price topics (docs/design/0160): prices of underlyings. A message is
// {"topic": "crypto_prices", "type": "update", "timestamp": MS, "payload":
// {"symbol": "btcusdt", "timestamp": MS, "value": 100123.45}}; the payload's
// timestamp is the price's time, the envelope's the time it was sent.
const (
	RTDSTopicCryptoPrices    = "crypto_prices"           // exchange prices (btcusdt): market.FeedCrypto
	RTDSTopicChainlinkPrices = "crypto_prices_chainlink" // oracle prices (btc/usd): market.FeedChainlink
	RTDSTopicEquityPrices    = "equity_prices"           // stock prices (aapl): market.FeedEquity
	RTDSTypeUpdate           = "update"
)

// RTDSPriceTopic returns the RTDS topic of a feed source, "" for an unknown one.
func RTDSPriceTopic(src market.FeedSource) string {
	switch src {
	case market.FeedCrypto:
		return RTDSTopicCryptoPrices
	case market.FeedChainlink:
		return RTDSTopicChainlinkPrices
	case market.FeedEquity:
		return RTDSTopicEquityPrices
	}
	return ""
}

// RTDSPriceSource returns the feed source of an RTDS price topic; false for any
// other topic.
func RTDSPriceSource(topic string) (market.FeedSource, bool) {
	switch topic {
	case RTDSTopicCryptoPrices:
		return market.FeedCrypto, true
	case RTDSTopicChainlinkPrices:
		return market.FeedChainlink, true
	case RTDSTopicEquityPrices:
		return market.FeedEquity, true
	}
	return "", false
}

// RTDSPriceFilters is the filters string of a price subscription to syms (all of
// one source): the comma-separated symbols for crypto_prices (the service's
// "btcusdt,ethusdt"), {"symbol": "…"} for the other topics, which name one symbol
// a subscription (one subscription each: RTDSPriceSubscriptions).
func RTDSPriceFilters(src market.FeedSource, syms []string) string {
	if src == market.FeedCrypto {
		return strings.Join(syms, ",")
	}
	if len(syms) == 0 {
		return ""
	}
	b, _ := json.Marshal(struct {
		Symbol string `json:"symbol"`
	}{syms[0]})
	return string(b)
}

// RTDSPriceSubscriptions returns the subscriptions that deliver the prices of
// syms: one per source for crypto prices, one per symbol for the others.
func RTDSPriceSubscriptions(syms []market.FeedSymbol) []RTDSSubscription {
	var out []RTDSSubscription
	var crypto []string
	for _, s := range syms {
		if s.Source == market.FeedCrypto {
			crypto = append(crypto, s.Symbol)
			continue
		}
		out = append(out, RTDSSubscription{Topic: RTDSPriceTopic(s.Source), Type: RTDSTypeAll,
			Filters: RTDSPriceFilters(s.Source, []string{s.Symbol})})
	}
	if len(crypto) > 0 {
		out = append([]RTDSSubscription{{Topic: RTDSTopicCryptoPrices, Type: RTDSTypeUpdate,
			Filters: RTDSPriceFilters(market.FeedCrypto, crypto)}}, out...)
	}
	return out
}

// ErrRTDSPriceFilters is the error of price filters ParseRTDSPriceFilters refuses.
var ErrRTDSPriceFilters = errors.New("filters: comma-separated symbols, a JSON array of symbols or {\"symbol\": \"…\"}")

// ParseRTDSPriceFilters parses the filters of a price subscription of source src:
// empty (every symbol), comma-separated symbols ("btcusdt,ethusdt"), a JSON array
// of symbols or a JSON object {"symbol": "…"}. Symbols are folded to lower case
// and checked as market.ParseFeedSymbol checks them; at most max of them. It
// never panics.
func ParseRTDSPriceFilters(src market.FeedSource, filters string, max int) ([]market.FeedSymbol, error) {
	f := strings.TrimSpace(filters)
	if f == "" {
		return nil, nil
	}
	var names []string
	switch f[0] {
	case '[':
		if err := json.Unmarshal([]byte(f), &names); err != nil {
			return nil, ErrRTDSPriceFilters
		}
	case '{':
		var o struct {
			Symbol string `json:"symbol"`
		}
		if err := json.Unmarshal([]byte(f), &o); err != nil || o.Symbol == "" {
			return nil, ErrRTDSPriceFilters
		}
		names = []string{o.Symbol}
	default:
		names = strings.Split(f, ",")
	}
	if len(names) > max {
		return nil, market.Errorf(market.CodePayloadTooLarge)
	}
	out := make([]market.FeedSymbol, 0, len(names))
	for _, n := range names {
		s, err := market.ParseFeedSymbol(string(src) + ":" + strings.TrimSpace(n))
		if err != nil {
			return nil, ErrRTDSPriceFilters
		}
		out = append(out, s)
	}
	return out, nil
}

// RTDSPrice is the payload of a price update: the symbol, the price's time (Unix
// ms) and its value.
type RTDSPrice struct {
	Symbol    string
	Timestamp int64
	Value     float64
}

// AppendRTDSPrice appends the JSON payload of p: the value is the shortest decimal
// that reads back as the same float64.
func AppendRTDSPrice(b []byte, p RTDSPrice) []byte {
	b = append(b, `{"symbol":`...)
	b = strconv.AppendQuote(b, p.Symbol)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, p.Timestamp, 10)
	b = append(b, `,"value":`...)
	b = strconv.AppendFloat(b, p.Value, 'f', -1, 64)
	return append(b, '}')
}

// ErrRTDSPrice is the error of every price payload DecodeRTDSPrice refuses.
var ErrRTDSPrice = errors.New(`rtds: a price payload is {"symbol": "…", "timestamp": MS, "value": NUMBER} with a finite value`)

// DecodeRTDSPrice decodes a price payload (other members are ignored: the service
// may add some). The symbol is folded to lower case and must be a symbol
// market.ParseFeedSymbol takes (1–32 letters, digits, '/', '-', '_', '.'), the timestamp a positive integer (a JSON number or a string of digits:
// clients send both), the value a finite number (a JSON number or a numeric
// string). It never panics.
func DecodeRTDSPrice(b []byte) (RTDSPrice, error) {
	var raw struct {
		Symbol    string          `json:"symbol"`
		Timestamp json.RawMessage `json:"timestamp"`
		Value     json.RawMessage `json:"value"`
	}
	if err := decodeStrict(b, &raw); err != nil {
		return RTDSPrice{}, ErrRTDSPrice
	}
	p := RTDSPrice{Symbol: strings.ToLower(raw.Symbol)}
	if _, err := market.ParseFeedSymbol(string(market.FeedCrypto) + ":" + p.Symbol); err != nil {
		return RTDSPrice{}, ErrRTDSPrice
	}
	ts := string(bytes.Trim(raw.Timestamp, `"`))
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || t <= 0 {
		return RTDSPrice{}, ErrRTDSPrice
	}
	p.Timestamp = t
	vs := string(bytes.Trim(raw.Value, `"`))
	if vs == "" || !(vs[0] == '-' || vs[0] >= '0' && vs[0] <= '9') || strings.ContainsAny(vs, "_xXpPnN") {
		return RTDSPrice{}, ErrRTDSPrice
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return RTDSPrice{}, ErrRTDSPrice
	}
	p.Value = v
	return p, nil
}

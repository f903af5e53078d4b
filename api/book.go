package api

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// Level is one price level of a REST order book: {"price": "0.48", "size": "30"}.
type Level struct {
	Price Decimal `json:"price"`
	Size  Decimal `json:"size"`
}

// OrderBook is the order-book summary of GET /book and of each element of POST
// /books (specification "Order book"; dialect §4.4). Levels are in REST order: bids
// ascending and asks descending by price, so the best level of each side is the last
// element. Timestamp is Unix milliseconds as a string. MinOrderSize is a JSON number
// (the specification's type; the dialect's example shows a string, which decodes
// too). Bids and Asks encode as [] when nil.
type OrderBook struct {
	Market         market.ConditionID `json:"market"`
	AssetID        market.TokenID     `json:"asset_id"`
	Timestamp      Int                `json:"timestamp"`
	Hash           string             `json:"hash"`
	Bids           []Level            `json:"bids"`
	Asks           []Level            `json:"asks"`
	MinOrderSize   Number             `json:"min_order_size"`
	TickSize       Decimal            `json:"tick_size"`
	NegRisk        bool               `json:"neg_risk"`
	LastTradePrice Decimal            `json:"last_trade_price"`
	// MinOrderSizeQuoted records that the decoded summary carried min_order_size as
	// a JSON string (the dialect's example) rather than a number (the specification's
	// type, which the local exchange serves); ComputeHash hashes it as it was served.
	// It is not encoded.
	MinOrderSizeQuoted bool `json:"-"`
}

type orderBookJSON OrderBook

// UnmarshalJSON decodes b, noting whether min_order_size came as a string.
func (b *OrderBook) UnmarshalJSON(data []byte) error {
	aux := struct {
		*orderBookJSON
		MinOrderSize json.RawMessage `json:"min_order_size"`
	}{orderBookJSON: (*orderBookJSON)(b)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	b.MinOrderSizeQuoted = false
	if len(aux.MinOrderSize) == 0 || string(aux.MinOrderSize) == "null" {
		return nil
	}
	b.MinOrderSizeQuoted = aux.MinOrderSize[0] == '"'
	return b.MinOrderSize.UnmarshalJSON(aux.MinOrderSize)
}

// MarshalJSON encodes b with non-null level arrays.
func (b OrderBook) MarshalJSON() ([]byte, error) {
	if b.Bids == nil {
		b.Bids = []Level{}
	}
	if b.Asks == nil {
		b.Asks = []Level{}
	}
	return json.Marshal(orderBookJSON(b))
}

// ComputeHash returns the book's hash: the SHA-1 hex digest of the compact JSON of
// the summary exactly as served, with "hash" set to "" — keys in the order market,
// asset_id, timestamp, hash, bids, asks, min_order_size, tick_size, neg_risk,
// last_trade_price (dialect §4.4), min_order_size a bare number as the local
// exchange serves it, or a string when MinOrderSizeQuoted (the dialect's vector;
// docs/design/0144-dialect-details.md). Levels are hashed in their order in b, so a
// client hashing the summary it received gets the served hash.
func (b *OrderBook) ComputeHash() string {
	var buf bytes.Buffer
	buf.Grow(256 + 40*(len(b.Bids)+len(b.Asks)))
	buf.WriteString(`{"market":`)
	writeJSONString(&buf, string(b.Market))
	buf.WriteString(`,"asset_id":`)
	writeJSONString(&buf, string(b.AssetID))
	buf.WriteString(`,"timestamp":"`)
	buf.WriteString(strconv.FormatInt(int64(b.Timestamp), 10))
	buf.WriteString(`","hash":"","bids":`)
	writeLevels(&buf, b.Bids)
	buf.WriteString(`,"asks":`)
	writeLevels(&buf, b.Asks)
	buf.WriteString(`,"min_order_size":`)
	if b.MinOrderSizeQuoted {
		buf.WriteByte('"')
		buf.WriteString(b.MinOrderSize.String())
		buf.WriteByte('"')
	} else {
		buf.WriteString(b.MinOrderSize.String())
	}
	buf.WriteString(`,"tick_size":"`)
	buf.WriteString(b.TickSize.String())
	buf.WriteString(`","neg_risk":`)
	buf.WriteString(strconv.FormatBool(b.NegRisk))
	buf.WriteString(`,"last_trade_price":"`)
	buf.WriteString(b.LastTradePrice.String())
	buf.WriteString(`"}`)
	sum := sha1.Sum(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

func writeLevels(buf *bytes.Buffer, lv []Level) {
	buf.WriteByte('[')
	for i, l := range lv {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"price":"`)
		buf.WriteString(l.Price.String())
		buf.WriteString(`","size":"`)
		buf.WriteString(l.Size.String())
		buf.WriteString(`"}`)
	}
	buf.WriteByte(']')
}

// writeJSONString writes s as a JSON string without HTML escaping (like Python's
// json.dumps; ids are ASCII in practice).
func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Truncate(buf.Len() - 1)
}

// BookFrom renders a best-first market.Book as the REST summary of token in the
// market described by info, at timeMs (Unix milliseconds), with the last trade price
// (zero when none), and sets its hash. Only levels with positive size are included.
func BookFrom(info *market.Info, book *market.Book, lastTrade market.Micros, timeMs int64) OrderBook {
	b := OrderBook{
		Market:         info.Condition,
		AssetID:        book.Token,
		Timestamp:      Int(timeMs),
		Bids:           restLevels(book.Bids),
		Asks:           restLevels(book.Asks),
		MinOrderSize:   Number(info.MinSize),
		TickSize:       Decimal(info.TickSize),
		NegRisk:        info.NegRisk,
		LastTradePrice: Decimal(lastTrade),
	}
	b.Hash = b.ComputeHash()
	return b
}

// restLevels reverses best-first levels into REST order (best last).
func restLevels(best []market.Level) []Level {
	out := make([]Level, 0, len(best))
	for i := len(best) - 1; i >= 0; i-- {
		if best[i].Size > 0 {
			out = append(out, Level{Price: Decimal(best[i].Price), Size: Decimal(best[i].Size)})
		}
	}
	return out
}

// ErrBadLevel is returned by OrderBook.Book for a level with a price outside (0, 1)
// or a negative size.
var ErrBadLevel = errors.New("book level out of range")

// Book converts the summary into a best-first market.Book, whatever the order of the
// levels on the wire (Reset sorts and merges them). Levels with a price outside
// (0, 1) or a negative size are ErrBadLevel.
func (b *OrderBook) Book() (market.Book, error) {
	conv := func(in []Level) ([]market.Level, error) {
		out := make([]market.Level, len(in))
		for i, l := range in {
			if l.Price <= 0 || market.Micros(l.Price) >= market.One || l.Size < 0 {
				return nil, ErrBadLevel
			}
			out[i] = market.Level{Price: market.Micros(l.Price), Size: market.Micros(l.Size)}
		}
		return out, nil
	}
	bids, err := conv(b.Bids)
	if err != nil {
		return market.Book{}, err
	}
	asks, err := conv(b.Asks)
	if err != nil {
		return market.Book{}, err
	}
	bk := market.Book{Token: b.AssetID, Time: int64(b.Timestamp), Hash: b.Hash}
	bk.Reset(bids, asks)
	return bk, nil
}

// TokenRequest is one element of the batch market-data bodies (POST /books,
// /prices, /midpoints, /spreads, /last-trades-prices): {"token_id": "…"} plus
// "side" for /prices.
type TokenRequest struct {
	TokenID market.TokenID `json:"token_id"`
	Side    string         `json:"side,omitempty"`
}

// DecodeTokenRequests decodes a batch market-data body: a JSON array of
// {"token_id": "…"} objects, at most max (MaxBookRequests if max <= 0). A body that
// is not such an array, or an element without a token id, is "Invalid payload"; too
// many elements is "Payload exceeds the limit". When withSide is true (POST /prices)
// every element must also carry side "BUY" or "SELL" (normalised to upper case).
func DecodeTokenRequests(body []byte, max int, withSide bool) ([]TokenRequest, error) {
	if max <= 0 {
		max = MaxBookRequests
	}
	var reqs []TokenRequest
	if err := decodeStrict(body, &reqs); err != nil || reqs == nil {
		return nil, WithCause(market.Errorf(market.CodeInvalidPayload), errors.Join(err, errors.New("expected an array of {\"token_id\"}")))
	}
	if len(reqs) > max {
		return nil, market.Errorf(market.CodePayloadTooLarge)
	}
	for i := range reqs {
		if reqs[i].TokenID == "" {
			return nil, WithCause(market.Errorf(market.CodeInvalidPayload), errors.New("missing token_id"))
		}
		if withSide {
			s, ok := ParseSide(reqs[i].Side)
			if !ok {
				return nil, WithCause(market.Errorf(market.CodeInvalidPayload), ErrSide)
			}
			reqs[i].Side = s.String()
		}
	}
	return reqs, nil
}

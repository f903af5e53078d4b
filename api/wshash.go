package api

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// BookState is what the book hash covers besides the levels: the fields of the REST
// summary (OrderBook) that a WebSocket client tracks from book, tick_size_change and
// last_trade_price frames. Bids and Asks are best-first (market.Book order); the hash
// lists them in REST order (best last), as OrderBook.ComputeHash does.
type BookState struct {
	Market    market.ConditionID
	Asset     market.TokenID
	TimeMs    int64
	Bids      []market.Level
	Asks      []market.Level
	MinSize   market.Micros
	Tick      market.Micros
	NegRisk   bool
	LastTrade market.Micros
}

// BookHasher computes the book hash of a BookState without building an OrderBook:
// the same SHA-1 as OrderBook.ComputeHash of the summary with these fields (levels of
// zero size are skipped, as BookFrom does). The zero value is ready to use; a
// BookHasher reuses its buffer and is not safe for concurrent use.
type BookHasher struct {
	buf []byte
}

// Hash returns the hex SHA-1 of s's summary.
func (bh *BookHasher) Hash(s *BookState) string {
	b := bh.buf[:0]
	b = append(b, `{"market":`...)
	b = appendJSONString(b, string(s.Market))
	b = append(b, `,"asset_id":`...)
	b = appendJSONString(b, string(s.Asset))
	b = append(b, `,"timestamp":"`...)
	b = strconv.AppendInt(b, s.TimeMs, 10)
	b = append(b, `","hash":"","bids":`...)
	b = appendRESTLevels(b, s.Bids)
	b = append(b, `,"asks":`...)
	b = appendRESTLevels(b, s.Asks)
	b = append(b, `,"min_order_size":`...)
	b = s.MinSize.AppendTo(b)
	b = append(b, `,"tick_size":"`...)
	b = s.Tick.AppendTo(b)
	b = append(b, `","neg_risk":`...)
	b = strconv.AppendBool(b, s.NegRisk)
	b = append(b, `,"last_trade_price":"`...)
	b = s.LastTrade.AppendTo(b)
	b = append(b, `"}`...)
	bh.buf = b
	sum := sha1.Sum(b)
	var hx [2 * sha1.Size]byte
	hex.Encode(hx[:], sum[:])
	return string(hx[:])
}

// appendRESTLevels appends best-first levels in REST order (reversed), skipping
// empty levels, in the layout of writeLevels.
func appendRESTLevels(b []byte, best []market.Level) []byte {
	b = append(b, '[')
	first := true
	for i := len(best) - 1; i >= 0; i-- {
		l := best[i]
		if l.Size <= 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"price":"`...)
		b = l.Price.AppendTo(b)
		b = append(b, `","size":"`...)
		b = l.Size.AppendTo(b)
		b = append(b, `"}`...)
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string without HTML escaping, like
// writeJSONString (ids are ASCII in practice; other bytes take the slow path).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			var buf bytes.Buffer
			writeJSONString(&buf, s)
			return append(b, buf.Bytes()...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

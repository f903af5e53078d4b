package api

import (
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// Hand-written encoders of the market channel's hot frames (the hub encodes one of
// them per batch and market, with its lock held). Each AppendJSON appends exactly
// the bytes encoding/json writes for the value with HTML escaping off — the
// encoding of the frames on the wire (json.Encoder with SetEscapeHTML(false), no
// trailing newline) — without allocating beyond the growth of b: no reflection, no
// intermediate buffers. Strings that are printable ASCII without quotes or
// backslashes (every id the exchange issues) are copied; any other string is
// encoded by encoding/json itself. TestAppendJSONMatchesEncodingJSON and
// FuzzAppendJSON compare the two encodings.

// AppendJSON appends p's encoding to b. It fails with ErrSide, and returns b
// unchanged, when an entry's side is neither BUY nor SELL (encoding/json fails
// too). A nil PriceChanges encodes as [] like MarshalJSON.
func (p *WSPriceChange) AppendJSON(b []byte) ([]byte, error) {
	b0 := len(b)
	b = append(b, `{"event_type":`...)
	b = appendJSONString(b, p.EventType)
	b = append(b, `,"market":`...)
	b = appendJSONString(b, string(p.Market))
	b = append(b, `,"price_changes":[`...)
	for i := range p.PriceChanges {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = p.PriceChanges[i].appendJSON(b); !ok {
			return b[:b0], ErrSide
		}
	}
	b = append(b, `],"timestamp":`...)
	b = appendQuotedInt(b, int64(p.Timestamp))
	return append(b, '}'), nil
}

// appendJSON appends e's encoding; false for an invalid side.
func (e *WSPriceChangeEntry) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"asset_id":`...)
	b = appendJSONString(b, string(e.AssetID))
	b = append(b, `,"price":`...)
	b = appendDecimal(b, e.Price)
	b = append(b, `,"size":`...)
	b = appendDecimal(b, e.Size)
	b = append(b, `,"side":`...)
	var ok bool
	if b, ok = appendSide(b, e.Side); !ok {
		return b, false
	}
	if e.Hash != "" {
		b = append(b, `,"hash":`...)
		b = appendJSONString(b, e.Hash)
	}
	b = append(b, `,"best_bid":`...)
	b = appendDecimal(b, e.BestBid)
	b = append(b, `,"best_ask":`...)
	b = appendDecimal(b, e.BestAsk)
	if e.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, e.Seq, 10)
	}
	return append(b, '}'), true
}

// AppendJSON appends t's encoding to b. It fails with ErrSide, and returns b
// unchanged, when the side is neither BUY nor SELL.
func (t *WSLastTradePrice) AppendJSON(b []byte) ([]byte, error) {
	b0 := len(b)
	b = append(b, `{"event_type":`...)
	b = appendJSONString(b, t.EventType)
	b = append(b, `,"asset_id":`...)
	b = appendJSONString(b, string(t.AssetID))
	b = append(b, `,"market":`...)
	b = appendJSONString(b, string(t.Market))
	b = append(b, `,"price":`...)
	b = appendDecimal(b, t.Price)
	b = append(b, `,"side":`...)
	var ok bool
	if b, ok = appendSide(b, t.Side); !ok {
		return b[:b0], ErrSide
	}
	b = append(b, `,"size":`...)
	b = appendDecimal(b, t.Size)
	b = append(b, `,"fee_rate_bps":`...)
	b = appendQuotedInt(b, int64(t.FeeRateBps))
	b = append(b, `,"timestamp":`...)
	b = appendQuotedInt(b, int64(t.Timestamp))
	b = append(b, `,"transaction_hash":`...)
	b = appendJSONString(b, t.TransactionHash)
	if t.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, t.Seq, 10)
	}
	return append(b, '}'), nil
}

// AppendJSON appends bk's encoding to b; nil Bids and Asks encode as [] like
// MarshalJSON. It never fails (the error is for symmetry with the other frames).
func (bk *WSBook) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"event_type":`...)
	b = appendJSONString(b, bk.EventType)
	b = append(b, `,"asset_id":`...)
	b = appendJSONString(b, string(bk.AssetID))
	b = append(b, `,"market":`...)
	b = appendJSONString(b, string(bk.Market))
	b = append(b, `,"bids":`...)
	b = appendLevels(b, bk.Bids)
	b = append(b, `,"asks":`...)
	b = appendLevels(b, bk.Asks)
	b = append(b, `,"timestamp":`...)
	b = appendQuotedInt(b, int64(bk.Timestamp))
	b = append(b, `,"hash":`...)
	b = appendJSONString(b, bk.Hash)
	b = append(b, `,"tick_size":`...)
	b = appendDecimal(b, bk.TickSize)
	b = append(b, `,"min_order_size":`...)
	b = market.Micros(bk.MinOrderSize).AppendTo(b)
	b = append(b, `,"neg_risk":`...)
	b = strconv.AppendBool(b, bk.NegRisk)
	b = append(b, `,"last_trade_price":`...)
	b = appendDecimal(b, bk.LastTradePrice)
	if bk.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, bk.Seq, 10)
	}
	return append(b, '}'), nil
}

// AppendJSON appends a's encoding to b. It never fails.
func (a *WSBestBidAsk) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"event_type":`...)
	b = appendJSONString(b, a.EventType)
	b = append(b, `,"market":`...)
	b = appendJSONString(b, string(a.Market))
	b = append(b, `,"asset_id":`...)
	b = appendJSONString(b, string(a.AssetID))
	b = append(b, `,"best_bid":`...)
	b = appendDecimal(b, a.BestBid)
	b = append(b, `,"best_ask":`...)
	b = appendDecimal(b, a.BestAsk)
	b = append(b, `,"spread":`...)
	b = appendDecimal(b, a.Spread)
	b = append(b, `,"timestamp":`...)
	b = appendQuotedInt(b, int64(a.Timestamp))
	return append(b, '}'), nil
}

// appendLevels appends levels as Level.MarshalJSON's array ([] when nil).
func appendLevels(b []byte, lv []Level) []byte {
	b = append(b, '[')
	for i := range lv {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"price":`...)
		b = appendDecimal(b, lv[i].Price)
		b = append(b, `,"size":`...)
		b = appendDecimal(b, lv[i].Size)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendDecimal appends d as Decimal.MarshalJSON does: a quoted exact decimal.
func appendDecimal(b []byte, d Decimal) []byte {
	b = append(b, '"')
	b = market.Micros(d).AppendTo(b)
	return append(b, '"')
}

// appendQuotedInt appends i as Int.MarshalJSON does: quoted decimal digits.
func appendQuotedInt(b []byte, i int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, i, 10)
	return append(b, '"')
}

// appendSide appends s as Side.MarshalText renders it, quoted; false for a side
// that does not encode.
func appendSide(b []byte, s Side) ([]byte, bool) {
	switch market.Side(s) {
	case market.Buy:
		return append(b, `"BUY"`...), true
	case market.Sell:
		return append(b, `"SELL"`...), true
	}
	return b, false
}

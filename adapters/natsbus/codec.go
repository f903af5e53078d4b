package natsbus

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
)

// Market-data frames. A frame is a market.Event in a compact binary form, preceded
// by the fan-out header (publisher epoch and per-token sequence). Layout, version 1
// (uvarint/varint are encoding/binary's; str is a uvarint length then bytes):
//
//	byte    version (1)
//	byte    kind (market.EventKind)
//	uvarint epoch, uvarint seq          FrameHeader
//	uvarint ev.Seq, varint ev.Time
//	str     ev.Market, str ev.Token
//	kind-specific body:
//	  book          str hash; uvarint n, n bid levels; uvarint n, n ask levels
//	                (a level: varint price delta from the previous level, uvarint size)
//	  price_change  uvarint n; n × (str token ("" = ev.Token), byte side,
//	                uvarint price, size, best bid, best ask)
//	  last_trade    uvarint price, uvarint size, byte side
//	  tick_size     uvarint old, uvarint new
//	  resolved      str winner
//	  order         order fields, byte update
//	  fill          fill fields
//	  timer         nothing
//
// Decoding validates everything (kinds, enum ranges, amounts within
// market.MaxMicros, string and slice lengths against the bytes left, no trailing
// bytes) and never panics; it is fuzzed.
const frameVersion = 1

// Limits on decoded frames.
const (
	maxFrameString = 256 // ids, hashes: all far shorter
	maxFrameLevels = 1 << 16
)

// FrameHeader is the fan-out part of a frame.
type FrameHeader struct {
	// Epoch identifies one run of the publisher; a new epoch resets Seq, and
	// subscribers resynchronize.
	Epoch uint32
	// Seq numbers the frames of one token from 1 within an epoch; a gap means lost
	// frames. In a snapshot reply it is the sequence the snapshot is current with.
	Seq uint64
}

// ErrBadFrame is wrapped by every DecodeFrame error.
var ErrBadFrame = errors.New("natsbus: bad market-data frame")

// AppendFrame appends the frame of ev with header h to dst and returns the extended
// slice. It does not allocate when dst has room. It fails for an invalid event kind
// or an event that DecodeFrame would refuse (a negative amount, a string longer than
// 256 bytes).
func AppendFrame(dst []byte, h FrameHeader, ev *market.Event) ([]byte, error) {
	if ev.Kind < market.EventBook || ev.Kind > market.EventTimer {
		return dst, fmt.Errorf("natsbus: cannot encode event kind %d", ev.Kind)
	}
	w := writer{b: dst}
	w.byte(frameVersion)
	w.byte(byte(ev.Kind))
	w.uvarint(uint64(h.Epoch))
	w.uvarint(h.Seq)
	w.uvarint(ev.Seq)
	w.varint(ev.Time)
	w.str(string(ev.Market))
	w.str(string(ev.Token))
	switch ev.Kind {
	case market.EventBook:
		w.str(ev.Hash)
		w.levels(ev.Bids)
		w.levels(ev.Asks)
	case market.EventPriceChange:
		if len(ev.Changes) > maxFrameLevels && w.err == nil {
			w.err = fmt.Errorf("natsbus: cannot encode %d changes", len(ev.Changes))
		}
		w.uvarint(uint64(len(ev.Changes)))
		for i := range ev.Changes {
			c := &ev.Changes[i]
			tok := c.Token
			if tok == ev.Token {
				tok = ""
			}
			w.str(string(tok))
			w.byte(byte(c.Side))
			w.amount(c.Price)
			w.amount(c.Size)
			w.amount(c.BestBid)
			w.amount(c.BestAsk)
		}
	case market.EventLastTrade:
		w.amount(ev.Price)
		w.amount(ev.Size)
		w.byte(byte(ev.Side))
	case market.EventTickSize:
		w.amount(ev.OldTick)
		w.amount(ev.NewTick)
	case market.EventResolved:
		w.str(string(ev.Winner))
	case market.EventOrder:
		o := &ev.Order
		w.str(string(o.ID))
		w.b = append(w.b, o.Owner[:]...)
		w.str(string(o.Market))
		w.str(string(o.Token))
		w.byte(byte(o.Outcome))
		w.byte(byte(o.Side))
		w.amount(o.Price)
		w.amount(o.Size)
		w.amount(o.Matched)
		w.byte(byte(o.Type))
		w.bool(o.PostOnly)
		w.varint(o.Expiration)
		w.varint(o.CreatedAt)
		w.byte(byte(o.Status))
		w.byte(byte(ev.OrderUpdate))
	case market.EventFill:
		f := &ev.Fill
		w.str(string(f.Trade))
		w.str(string(f.Order))
		w.b = append(w.b, f.Owner[:]...)
		w.str(string(f.Market))
		w.str(string(f.Token))
		w.byte(byte(f.Outcome))
		w.byte(byte(f.Side))
		w.byte(byte(f.Role))
		w.amount(f.Price)
		w.amount(f.Size)
		w.amount(f.Fee)
		w.varint(f.Time)
	case market.EventTimer:
	}
	if w.err != nil {
		return dst, w.err
	}
	return w.b, nil
}

type writer struct {
	b   []byte
	err error
}

func (w *writer) byte(c byte)      { w.b = append(w.b, c) }
func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) bool(v bool)      { w.b = append(w.b, boolByte(v)) }
func (w *writer) amount(m market.Micros) {
	if m < 0 || m > market.MaxMicros {
		if w.err == nil {
			w.err = fmt.Errorf("natsbus: cannot encode amount %s", m)
		}
		m = 0
	}
	w.uvarint(uint64(m))
}

func (w *writer) str(s string) {
	if len(s) > maxFrameString {
		if w.err == nil {
			w.err = fmt.Errorf("natsbus: cannot encode a %d-byte string", len(s))
		}
		s = ""
	}
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *writer) levels(lv []market.Level) {
	if len(lv) > maxFrameLevels && w.err == nil {
		w.err = fmt.Errorf("natsbus: cannot encode %d levels", len(lv))
	}
	w.uvarint(uint64(len(lv)))
	var prev market.Micros
	for _, l := range lv {
		if l.Price < 0 || l.Price > market.MaxMicros {
			if w.err == nil {
				w.err = fmt.Errorf("natsbus: cannot encode price %s", l.Price)
			}
		}
		w.varint(int64(l.Price - prev))
		prev = l.Price
		w.amount(l.Size)
	}
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// DecodeFrame decodes a frame into ev, reusing ev's slices and keeping its strings
// when the frame holds the same text, so that steady-state decoding of one token's
// frames does not allocate. Fields that do not belong to the frame's kind are
// zeroed. On error ev is left in an unspecified state. The slices of ev may be
// overwritten by the next DecodeFrame into it.
func DecodeFrame(data []byte, ev *market.Event) (FrameHeader, error) {
	r := reader{b: data}
	if v := r.byte(); v != frameVersion {
		return FrameHeader{}, fmt.Errorf("%w: version %d", ErrBadFrame, v)
	}
	kind := market.EventKind(r.byte())
	if kind < market.EventBook || kind > market.EventTimer {
		return FrameHeader{}, fmt.Errorf("%w: kind %d", ErrBadFrame, kind)
	}
	var h FrameHeader
	epoch := r.uvarint()
	if epoch > 0xFFFFFFFF {
		r.fail("epoch")
	}
	h.Epoch, h.Seq = uint32(epoch), r.uvarint()

	bids, asks, changes := ev.Bids[:0], ev.Asks[:0], ev.Changes[:0]
	oldMarket, oldToken, oldHash := ev.Market, ev.Token, ev.Hash
	*ev = market.Event{Kind: kind}
	ev.Seq = r.uvarint()
	ev.Time = r.varint()
	ev.Market = market.ConditionID(r.str(string(oldMarket)))
	ev.Token = market.TokenID(r.str(string(oldToken)))
	switch kind {
	case market.EventBook:
		ev.Hash = r.str(oldHash)
		ev.Bids = r.levels(bids)
		ev.Asks = r.levels(asks)
	case market.EventPriceChange:
		n := r.count(5)
		for i := 0; i < n && r.err == nil; i++ {
			tok := market.TokenID(r.str(string(ev.Token)))
			if tok == "" {
				tok = ev.Token
			}
			c := market.LevelChange{Token: tok, Side: market.Side(r.byte())}
			if !c.Side.Valid() {
				r.fail("side")
			}
			c.Price, c.Size, c.BestBid, c.BestAsk = r.amount(), r.amount(), r.amount(), r.amount()
			changes = append(changes, c)
		}
		ev.Changes = changes
	case market.EventLastTrade:
		ev.Price, ev.Size = r.amount(), r.amount()
		ev.Side = market.Side(r.byte())
		if ev.Side > market.Sell {
			r.fail("side")
		}
	case market.EventTickSize:
		ev.OldTick, ev.NewTick = r.amount(), r.amount()
	case market.EventResolved:
		ev.Winner = market.TokenID(r.str(""))
	case market.EventOrder:
		o := &ev.Order
		o.ID = market.OrderID(r.str(""))
		r.bytes(o.Owner[:])
		o.Market = market.ConditionID(r.str(string(ev.Market)))
		o.Token = market.TokenID(r.str(string(ev.Token)))
		o.Outcome = market.Outcome(r.byte())
		o.Side = market.Side(r.byte())
		o.Price, o.Size, o.Matched = r.amount(), r.amount(), r.amount()
		o.Type = market.OrderType(r.byte())
		o.PostOnly = r.bool()
		o.Expiration, o.CreatedAt = r.varint(), r.varint()
		o.Status = market.OrderStatus(r.byte())
		ev.OrderUpdate = market.OrderUpdate(r.byte())
		if o.Outcome > market.No || o.Side > market.Sell || !o.Type.Valid() ||
			o.Status > market.StatusRejected || ev.OrderUpdate > market.OrderCancellation {
			r.fail("order enum")
		}
	case market.EventFill:
		f := &ev.Fill
		f.Trade = market.TradeID(r.str(""))
		f.Order = market.OrderID(r.str(""))
		r.bytes(f.Owner[:])
		f.Market = market.ConditionID(r.str(string(ev.Market)))
		f.Token = market.TokenID(r.str(string(ev.Token)))
		f.Outcome = market.Outcome(r.byte())
		f.Side = market.Side(r.byte())
		f.Role = market.Role(r.byte())
		f.Price, f.Size, f.Fee = r.amount(), r.amount(), r.amount()
		f.Time = r.varint()
		if f.Outcome > market.No || f.Side > market.Sell || f.Role > market.Maker {
			r.fail("fill enum")
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return FrameHeader{}, r.err
	}
	return h, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrBadFrame, what)
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bool() bool {
	c := r.byte()
	if c > 1 {
		r.fail("bool")
	}
	return c == 1
}

func (r *reader) bytes(dst []byte) {
	if len(r.b) < len(dst) {
		r.fail("truncated")
		return
	}
	copy(dst, r.b)
	r.b = r.b[len(dst):]
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) amount() market.Micros {
	v := r.uvarint()
	if v > uint64(market.MaxMicros) {
		r.fail("amount out of range")
		return 0
	}
	return market.Micros(v)
}

// count reads a length whose items take at least min bytes each and checks it
// against the bytes left.
func (r *reader) count(min int) int {
	n := r.uvarint()
	if n > maxFrameLevels || n*uint64(min) > uint64(len(r.b)) {
		r.fail("length")
		return 0
	}
	return int(n)
}

// str reads a string; when its bytes equal same, it returns same without allocating.
func (r *reader) str(same string) string {
	n := r.uvarint()
	if n > maxFrameString || n > uint64(len(r.b)) {
		r.fail("string length")
		return ""
	}
	b := r.b[:n]
	r.b = r.b[n:]
	if string(b) == same { // no allocation: the compiler compares in place
		return same
	}
	return string(b)
}

func (r *reader) levels(dst []market.Level) []market.Level {
	n := r.count(2)
	var price market.Micros
	for i := 0; i < n && r.err == nil; i++ {
		d := r.varint()
		if d < -int64(market.MaxMicros) || d > int64(market.MaxMicros) {
			r.fail("price")
			break
		}
		price += market.Micros(d)
		if price < 0 || price > market.MaxMicros {
			r.fail("price")
			break
		}
		dst = append(dst, market.Level{Price: price, Size: r.amount()})
	}
	return dst
}

package exchange

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/pitbossdev/pitboss/market"
)

// ErrEncoding is wrapped by every error of the binary decoders (commands, events,
// snapshots): the input is truncated, malformed, non-canonical or of an unknown
// version. Decoding errors are not catalog errors: they mean a corrupt journal or
// snapshot, not a refused command.
var ErrEncoding = errors.New("exchange: malformed encoding")

// Format versions. A decoder accepts exactly its version; a new version is a new
// constant and a new decoder branch, never a silent change.
const (
	commandVersion  = 1
	eventVersion    = 1
	snapshotVersion = 2 // 2: version 1 plus the neg-risk events at the end

	snapshotVersion1 = 1 // still read: no neg-risk events
)

// --- primitives ---

type enc struct{ b []byte }

func (w *enc) u8(v uint8)            { w.b = append(w.b, v) }
func (w *enc) uvarint(v uint64)      { w.b = binary.AppendUvarint(w.b, v) }
func (w *enc) varint(v int64)        { w.b = binary.AppendVarint(w.b, v) }
func (w *enc) str(s string)          { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *enc) addr(a market.Address) { w.b = append(w.b, a[:]...) }
func (w *enc) bool(v bool) {
	if v {
		w.u8(1)
	} else {
		w.u8(0)
	}
}

type dec struct {
	b   []byte
	off int
	err error
}

func (r *dec) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrEncoding}, args...)...)
	}
	r.off = len(r.b)
}

func (r *dec) left() int { return len(r.b) - r.off }

func (r *dec) u8() uint8 {
	if r.off >= len(r.b) {
		r.fail("truncated at byte %d", r.off)
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func (r *dec) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad varint at byte %d", r.off)
		return 0
	}
	if n != uvarintLen(v) {
		r.fail("non-minimal varint at byte %d", r.off)
		return 0
	}
	r.off += n
	return v
}

func (r *dec) varint() int64 {
	u := r.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (r *dec) u32() uint32 {
	v := r.uvarint()
	if v > 1<<32-1 {
		r.fail("value %d out of range", v)
		return 0
	}
	return uint32(v)
}

func (r *dec) bool() bool {
	switch r.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("bad boolean at byte %d", r.off-1)
	return false
}

// count reads a collection length and checks that at least min bytes per element
// remain, so that a corrupt length never causes a huge allocation.
func (r *dec) count(min int) int {
	n := r.uvarint()
	if r.err != nil {
		return 0
	}
	if n > uint64(r.left()/min) {
		r.fail("count %d exceeds the input", n)
		return 0
	}
	return int(n)
}

func (r *dec) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(r.left()) {
		r.fail("string of %d bytes exceeds the input", n)
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}

func (r *dec) addr() market.Address {
	var a market.Address
	if r.left() < len(a) {
		r.fail("truncated address at byte %d", r.off)
		return a
	}
	copy(a[:], r.b[r.off:])
	r.off += len(a)
	return a
}

// A presence mask says which optional fields follow; a field is present exactly when
// its value is not zero, so every value has one encoding.

type maskEnc struct {
	mask uint64
	bit  uint
}

func (m *maskEnc) add(present bool) {
	if present {
		m.mask |= 1 << m.bit
	}
	m.bit++
}

// nz reads a present field and checks it is not zero (canonical form).
func (r *dec) nz(field string, zero bool) {
	if zero {
		r.fail("field %s present but zero", field)
	}
}

// --- commands ---

const commandFields = 32

func (c *Command) mask() uint64 {
	var m maskEnc
	s := &c.Spec
	for _, p := range [...]bool{
		!c.Owner.IsZero(), c.Market != "", c.Token != "", c.Order != "",
		c.Side != 0, c.Type != 0, c.PostOnly, c.Price != 0, c.Size != 0, c.Expiration != 0,
		c.Nonce != 0, c.FeeRateBps != 0, c.Amount != 0, c.Winner != 0, c.Mode != 0,
		s.Tokens[0] != "", s.Tokens[1] != "", s.Question != "", s.Slug != "", s.Outcomes[0] != "", s.Outcomes[1] != "",
		s.EndDate != 0, s.TickSize != 0, s.MinSize != 0, s.FeeBps != 0, s.NegRisk,
		s.Active, s.Closed, s.Archived, s.AcceptingOrders,
		!c.To.IsZero(), s.NegRiskID != "",
	} {
		m.add(p)
	}
	return m.mask
}

// AppendBinary appends the binary encoding of c to b (encoding.BinaryAppender). The
// encoding is versioned, deterministic (equal commands encode to equal bytes, and
// each command has exactly one encoding) and self-delimiting, so encoded commands can
// be concatenated and read back with DecodeCommand. It never fails and does not
// allocate when b has room.
func (c *Command) AppendBinary(b []byte) ([]byte, error) {
	w := enc{b: b}
	w.u8(commandVersion)
	w.u8(uint8(c.Kind))
	w.varint(c.Time)
	mask := c.mask()
	w.uvarint(mask)
	s := &c.Spec
	bit := func(i uint) bool { return mask&(1<<i) != 0 }
	if bit(0) {
		w.addr(c.Owner)
	}
	if bit(1) {
		w.str(string(c.Market))
	}
	if bit(2) {
		w.str(string(c.Token))
	}
	if bit(3) {
		w.str(string(c.Order))
	}
	if bit(4) {
		w.u8(uint8(c.Side))
	}
	if bit(5) {
		w.u8(uint8(c.Type))
	}
	if bit(7) {
		w.varint(int64(c.Price))
	}
	if bit(8) {
		w.varint(int64(c.Size))
	}
	if bit(9) {
		w.varint(c.Expiration)
	}
	if bit(10) {
		w.uvarint(c.Nonce)
	}
	if bit(11) {
		w.uvarint(uint64(c.FeeRateBps))
	}
	if bit(12) {
		w.varint(int64(c.Amount))
	}
	if bit(13) {
		w.u8(uint8(c.Winner))
	}
	if bit(14) {
		w.u8(uint8(c.Mode))
	}
	if bit(15) {
		w.str(string(s.Tokens[0]))
	}
	if bit(16) {
		w.str(string(s.Tokens[1]))
	}
	if bit(17) {
		w.str(s.Question)
	}
	if bit(18) {
		w.str(s.Slug)
	}
	if bit(19) {
		w.str(s.Outcomes[0])
	}
	if bit(20) {
		w.str(s.Outcomes[1])
	}
	if bit(21) {
		w.varint(s.EndDate)
	}
	if bit(22) {
		w.varint(int64(s.TickSize))
	}
	if bit(23) {
		w.varint(int64(s.MinSize))
	}
	if bit(24) {
		w.uvarint(uint64(s.FeeBps))
	}
	if bit(30) {
		w.addr(c.To)
	}
	if bit(31) {
		w.str(s.NegRiskID)
	}
	return w.b, nil
}

// MarshalBinary returns the encoding of c (encoding.BinaryMarshaler).
func (c *Command) MarshalBinary() ([]byte, error) { return c.AppendBinary(nil) }

// UnmarshalBinary decodes exactly one command from data (encoding.BinaryUnmarshaler).
// Errors wrap ErrEncoding.
func (c *Command) UnmarshalBinary(data []byte) error {
	v, n, err := DecodeCommand(data)
	if err != nil {
		return err
	}
	if n != len(data) {
		return fmt.Errorf("%w: %d trailing bytes after command", ErrEncoding, len(data)-n)
	}
	*c = v
	return nil
}

// DecodeCommand decodes the command at the start of b and returns it with the number
// of bytes it occupied. Errors wrap ErrEncoding; on error the command is zero.
func DecodeCommand(b []byte) (Command, int, error) {
	r := dec{b: b}
	var c Command
	if v := r.u8(); r.err == nil && v != commandVersion {
		return Command{}, 0, fmt.Errorf("%w: command version %d, want %d", ErrEncoding, v, commandVersion)
	}
	c.Kind = CommandKind(r.u8())
	c.Time = r.varint()
	mask := r.uvarint()
	if mask>>commandFields != 0 {
		r.fail("unknown command fields in mask %#x", mask)
	}
	s := &c.Spec
	bit := func(i uint) bool { return r.err == nil && mask&(1<<i) != 0 }
	if bit(0) {
		c.Owner = r.addr()
		r.nz("owner", c.Owner.IsZero())
	}
	if bit(1) {
		c.Market = market.ConditionID(r.str())
		r.nz("market", c.Market == "")
	}
	if bit(2) {
		c.Token = market.TokenID(r.str())
		r.nz("token", c.Token == "")
	}
	if bit(3) {
		c.Order = market.OrderID(r.str())
		r.nz("order", c.Order == "")
	}
	if bit(4) {
		c.Side = market.Side(r.u8())
		r.nz("side", c.Side == 0)
	}
	if bit(5) {
		c.Type = market.OrderType(r.u8())
		r.nz("type", c.Type == 0)
	}
	c.PostOnly = bit(6)
	if bit(7) {
		c.Price = market.Micros(r.varint())
		r.nz("price", c.Price == 0)
	}
	if bit(8) {
		c.Size = market.Micros(r.varint())
		r.nz("size", c.Size == 0)
	}
	if bit(9) {
		c.Expiration = r.varint()
		r.nz("expiration", c.Expiration == 0)
	}
	if bit(10) {
		c.Nonce = r.uvarint()
		r.nz("nonce", c.Nonce == 0)
	}
	if bit(11) {
		c.FeeRateBps = r.u32()
		r.nz("fee rate", c.FeeRateBps == 0)
	}
	if bit(12) {
		c.Amount = market.Micros(r.varint())
		r.nz("amount", c.Amount == 0)
	}
	if bit(13) {
		c.Winner = market.Outcome(r.u8())
		r.nz("winner", c.Winner == 0)
	}
	if bit(14) {
		c.Mode = market.AccountMode(r.u8())
		r.nz("mode", c.Mode == 0)
	}
	if bit(15) {
		s.Tokens[0] = market.TokenID(r.str())
		r.nz("yes token", s.Tokens[0] == "")
	}
	if bit(16) {
		s.Tokens[1] = market.TokenID(r.str())
		r.nz("no token", s.Tokens[1] == "")
	}
	if bit(17) {
		s.Question = r.str()
		r.nz("question", s.Question == "")
	}
	if bit(18) {
		s.Slug = r.str()
		r.nz("slug", s.Slug == "")
	}
	if bit(19) {
		s.Outcomes[0] = r.str()
		r.nz("outcome label", s.Outcomes[0] == "")
	}
	if bit(20) {
		s.Outcomes[1] = r.str()
		r.nz("outcome label", s.Outcomes[1] == "")
	}
	if bit(21) {
		s.EndDate = r.varint()
		r.nz("end date", s.EndDate == 0)
	}
	if bit(22) {
		s.TickSize = market.Micros(r.varint())
		r.nz("tick size", s.TickSize == 0)
	}
	if bit(23) {
		s.MinSize = market.Micros(r.varint())
		r.nz("min size", s.MinSize == 0)
	}
	if bit(24) {
		s.FeeBps = r.u32()
		r.nz("fee", s.FeeBps == 0)
	}
	s.NegRisk, s.Active, s.Closed, s.Archived, s.AcceptingOrders = bit(25), bit(26), bit(27), bit(28), bit(29)
	if bit(30) {
		c.To = r.addr()
		r.nz("to", c.To.IsZero())
	}
	if bit(31) {
		s.NegRiskID = r.str()
		r.nz("neg-risk id", s.NegRiskID == "")
	}
	if r.err != nil {
		return Command{}, 0, r.err
	}
	return c, r.off, nil
}

// --- events ---

const eventFields = 31

func (ev *Event) mask() uint64 {
	var m maskEnc
	for _, p := range [...]bool{
		ev.Side != 0, ev.Outcome != 0, ev.Type != 0, ev.Status != 0, ev.Reason != 0, ev.Mode != 0, ev.Flags != 0,
		ev.PostOnly, ev.FeeBps != 0, ev.Code != "", ev.Market != "", ev.Token != "", ev.Other != "", ev.Order != "",
		!ev.Owner.IsZero(), ev.Trade != 0, ev.Nonce != 0, ev.Expiration != 0,
		ev.Price != 0, ev.Size != 0, ev.Matched != 0, ev.Remaining != 0, ev.Amount != 0, ev.Fee != 0,
		ev.Available != 0, ev.Reserved != 0, ev.BestBid != 0, ev.BestAsk != 0, ev.Tick != 0, ev.OldTick != 0,
		!ev.To.IsZero(),
	} {
		m.add(p)
	}
	return m.mask
}

// AppendBinary appends the binary encoding of ev to b: versioned, deterministic (equal
// events give equal bytes) and self-delimiting. The event log of an engine is the
// concatenation of its events' encodings (AppendEvents); two runs of the same command
// stream give byte-identical logs. It never fails.
func (ev *Event) AppendBinary(b []byte) ([]byte, error) {
	w := enc{b: b}
	w.u8(eventVersion)
	w.u8(uint8(ev.Kind))
	w.uvarint(ev.Seq)
	w.varint(ev.Time)
	mask := ev.mask()
	w.uvarint(mask)
	small := [...]uint8{uint8(ev.Side), uint8(ev.Outcome), uint8(ev.Type), uint8(ev.Status), uint8(ev.Reason), uint8(ev.Mode), uint8(ev.Flags)}
	for i, v := range small {
		if mask&(1<<uint(i)) != 0 {
			w.u8(v)
		}
	}
	if mask&(1<<8) != 0 {
		w.uvarint(uint64(ev.FeeBps))
	}
	for i, s := range [...]string{string(ev.Code), string(ev.Market), string(ev.Token), string(ev.Other), string(ev.Order)} {
		if mask&(1<<uint(9+i)) != 0 {
			w.str(s)
		}
	}
	if mask&(1<<14) != 0 {
		w.addr(ev.Owner)
	}
	if mask&(1<<15) != 0 {
		w.uvarint(ev.Trade)
	}
	if mask&(1<<16) != 0 {
		w.uvarint(ev.Nonce)
	}
	for i, v := range [...]int64{ev.Expiration, int64(ev.Price), int64(ev.Size), int64(ev.Matched), int64(ev.Remaining),
		int64(ev.Amount), int64(ev.Fee), int64(ev.Available), int64(ev.Reserved), int64(ev.BestBid), int64(ev.BestAsk),
		int64(ev.Tick), int64(ev.OldTick)} {
		if mask&(1<<uint(17+i)) != 0 {
			w.varint(v)
		}
	}
	if mask&(1<<30) != 0 {
		w.addr(ev.To)
	}
	return w.b, nil
}

// AppendEvents appends the encodings of evs to b.
func AppendEvents(b []byte, evs []Event) []byte {
	for i := range evs {
		b, _ = evs[i].AppendBinary(b)
	}
	return b
}

// DecodeEvent decodes the event at the start of b and returns it with the number of
// bytes it occupied. Errors wrap ErrEncoding.
func DecodeEvent(b []byte) (Event, int, error) {
	r := dec{b: b}
	var ev Event
	if v := r.u8(); r.err == nil && v != eventVersion {
		return Event{}, 0, fmt.Errorf("%w: event version %d, want %d", ErrEncoding, v, eventVersion)
	}
	ev.Kind = EventKind(r.u8())
	ev.Seq = r.uvarint()
	ev.Time = r.varint()
	mask := r.uvarint()
	if mask>>eventFields != 0 {
		r.fail("unknown event fields in mask %#x", mask)
	}
	bit := func(i uint) bool { return r.err == nil && mask&(1<<i) != 0 }
	small := [...]*uint8{(*uint8)(&ev.Side), (*uint8)(&ev.Outcome), (*uint8)(&ev.Type), (*uint8)(&ev.Status),
		(*uint8)(&ev.Reason), (*uint8)(&ev.Mode), (*uint8)(&ev.Flags)}
	for i, p := range small {
		if bit(uint(i)) {
			*p = r.u8()
			r.nz("small", *p == 0)
		}
	}
	ev.PostOnly = bit(7)
	if bit(8) {
		ev.FeeBps = r.u32()
		r.nz("fee", ev.FeeBps == 0)
	}
	strs := [...]*string{(*string)(&ev.Code), (*string)(&ev.Market), (*string)(&ev.Token), (*string)(&ev.Other), (*string)(&ev.Order)}
	for i, p := range strs {
		if bit(uint(9 + i)) {
			*p = r.str()
			r.nz("string", *p == "")
		}
	}
	if bit(14) {
		ev.Owner = r.addr()
		r.nz("owner", ev.Owner.IsZero())
	}
	if bit(15) {
		ev.Trade = r.uvarint()
		r.nz("trade", ev.Trade == 0)
	}
	if bit(16) {
		ev.Nonce = r.uvarint()
		r.nz("nonce", ev.Nonce == 0)
	}
	ints := [...]*int64{&ev.Expiration, (*int64)(&ev.Price), (*int64)(&ev.Size), (*int64)(&ev.Matched), (*int64)(&ev.Remaining),
		(*int64)(&ev.Amount), (*int64)(&ev.Fee), (*int64)(&ev.Available), (*int64)(&ev.Reserved), (*int64)(&ev.BestBid),
		(*int64)(&ev.BestAsk), (*int64)(&ev.Tick), (*int64)(&ev.OldTick)}
	for i, p := range ints {
		if bit(uint(17 + i)) {
			*p = r.varint()
			r.nz("amount", *p == 0)
		}
	}
	if bit(30) {
		ev.To = r.addr()
		r.nz("to", ev.To.IsZero())
	}
	if r.err != nil {
		return Event{}, 0, r.err
	}
	return ev, r.off, nil
}

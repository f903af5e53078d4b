package tape

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// The format, in one place (docs/backtests.md has the reader's version of it).
//
// A tape is a framed file of package sandbox/journal: its 32-byte header carries the
// kind "TAPE" and the framing version; frames carry a CRC-32C, a length, a sequence
// number (1, 2, 3, … across the whole file, sessions included) and the write-group
// delta that tells a torn tail from corruption. Every frame's payload starts with a
// type byte:
//
//	'S' session: JSON (Session), written when a recorder starts or resumes the file
//	'M' market:  JSON (marketJSON), a market's metadata, before the events that need it
//	'B' block:   a block header, then the block body (compressed or not)
//
// Block header (after 'B'): codec (1 byte: 0 raw, 1 zstd), raw body length (uvarint),
// record count (uvarint), then zigzag varints of the first and last venue time and
// the first and last receive time of the block's records (Unix ms).
//
// Block body: records back to back, each:
//
//	kind   1 byte: 1 book, 2 price_change, 3 last_trade, 4 tick_size, 5 resolved,
//	       9 feed, 10 signal (version 2), 31 gap
//	time   zigzag varint: venue time − the previous record's (the block's first time
//	       for the first record)
//	recv   zigzag varint: receive time − the previous record's (likewise)
//	seq    zigzag varint: the venue's sequence number − the previous record's (0 at
//	       the start of a block)
//	market symbol, token symbol
//	then by kind:
//	  book          hash (string), bids (levels), asks (levels)
//	  price_change  count (uvarint), then per change: token symbol, side (1 byte),
//	                price, size, best bid, best ask (amounts)
//	  last_trade    price, size (amounts), taker side (1 byte)
//	  tick_size     old tick, new tick (amounts)
//	  resolved      winner symbol
//	  feed, signal  value: 8 bytes, the IEEE-754 bits of the float64, little-endian
//	                (the market symbol is empty, the token symbol is the feed's
//	                symbol or the signal's name)
//	  gap           reason (string)
//
// Symbols (market and token ids) are interned per block, so that every block can be
// decoded on its own: a uvarint 0 is the empty string, 1 introduces a new symbol
// (uvarint length and bytes) that gets the next index, n ≥ 2 refers to index n−2.
// Strings are a uvarint length and bytes. Levels are a count (uvarint), then per
// level the price as a delta from the previous level's price (the first from 0) and
// the size, both amounts. An amount (market.Micros) is a uvarint x: with e = x&7 < 7
// the value is zigzag⁻¹(x>>3)·10^e (so 100 shares, 100000000 micro-units, take two
// bytes); e = 7 means the zigzag value follows as a second uvarint (values too large
// for the short form).

// Kind is the framed-file kind of a tape (the header's bytes 8..12).
var Kind = journal.Kind{'T', 'A', 'P', 'E'}

// Version is the tape format version written in every session frame. Readers refuse
// a session of a newer version: a change of layout bumps it, and a reader for the old
// layout is kept beside the new one. Version 2 added the feed and signal records
// (docs/design/0135-tape-version-2.md); a block of a version 1 session holding one
// is refused, so version 1 is read exactly as before.
const Version = 2

// FormatName is the "format" field of every session frame.
const FormatName = "pitboss-tape"

// Frame types: the first byte of every frame's payload.
const (
	frameSession = 'S'
	frameMarket  = 'M'
	frameBlock   = 'B'
)

// Codec is how a block body is stored.
type Codec uint8

// Codecs. The zero value is zstd, the default of writers.
const (
	CodecZstd Codec = iota // zstd (github.com/klauspost/compress), one frame per block
	CodecRaw               // uncompressed
)

// wire values of the codecs (the zero Codec is zstd, but raw is 0 on the wire).
const (
	wireRaw  = 0
	wireZstd = 1
)

// String returns "zstd" or "raw".
func (c Codec) String() string {
	switch c {
	case CodecZstd:
		return "zstd"
	case CodecRaw:
		return "raw"
	}
	return fmt.Sprintf("Codec(%d)", uint8(c))
}

// Record kinds in a block body. Market event kinds keep market.EventKind's values.
const (
	recGap = 31
)

// Limits a reader enforces on untrusted input. Writers stay far below them.
const (
	// MaxBlockBytes bounds a block's raw (decompressed) body.
	MaxBlockBytes = 16 << 20
	// MaxFrameBytes bounds a frame's payload.
	MaxFrameBytes = MaxBlockBytes + 1<<16
	// MaxString bounds a symbol, hash or reason.
	MaxString = 4096
)

// Errors. Decoding failures wrap ErrFormat; damage that is not a torn tail wraps
// journal.ErrCorrupt (errors.Is works for both through *FormatError and
// *journal.CorruptError).
var (
	// ErrFormat: bytes that pass the framing checks but are not a valid tape
	// (an unknown frame type, codec or record kind, a truncated record, a newer
	// version). A file written by this package never produces it.
	ErrFormat = errors.New("tape: invalid format")
	// ErrNotMarketData: Writer.Write was given an event that is not public market
	// data, a feed or a signal (the wallet's orders and fills, timers).
	ErrNotMarketData = errors.New("tape: not a market-data event")
	// ErrClosed: the Writer was closed.
	ErrClosed = errors.New("tape: writer closed")
	// ErrLocked: another Writer (in this process or another) has the file open.
	ErrLocked = errors.New("tape: file is being written by another recorder")
)

// FormatError says where a tape stops being readable. Seq is the frame's sequence
// number and Offset its file offset (-1 when unknown); Err wraps ErrFormat.
type FormatError struct {
	Seq    uint64
	Offset int64
	Err    error
}

// Error implements error.
func (e *FormatError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("tape: frame %d at offset %d: %v", e.Seq, e.Offset, e.Err)
	}
	return fmt.Sprintf("tape: frame %d: %v", e.Seq, e.Err)
}

// Unwrap returns the cause (wrapping ErrFormat).
func (e *FormatError) Unwrap() error { return e.Err }

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// ---- encoding helpers (append style, no allocation beyond the destination) ----

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

var pow10 = [7]int64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000}

// appendAmount appends v in the short decimal form (see the format comment).
func appendAmount(b []byte, v market.Micros) []byte {
	m := int64(v)
	e := 0
	if m != 0 {
		for e < 6 && m%10 == 0 {
			m /= 10
			e++
		}
	}
	z := zigzag(m)
	if z >= 1<<61 {
		return binary.AppendUvarint(append(b, 7), zigzag(int64(v)))
	}
	return binary.AppendUvarint(b, z<<3|uint64(e))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ---- decoding ----

// dec reads a block body. Every read checks bounds; a failure sets err once and
// makes every later read return zero values.
type dec struct {
	b   []byte
	i   int
	err error
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = formatErr("truncated or invalid %s at byte %d of the block", what, d.i)
	}
}

// uvarint reads a uvarint. A one-byte value (kinds, counts, symbol references)
// is read inline; uvarint2 reads two-byte ones (time deltas) without the loop,
// and uvarintSlow everything else, errors included.
func (d *dec) uvarint() uint64 {
	if i := d.i; i < len(d.b) && d.b[i] < 0x80 {
		d.i = i + 1
		return uint64(d.b[i])
	}
	return d.uvarint2()
}

func (d *dec) uvarint2() uint64 {
	b, i := d.b, d.i
	if i+1 < len(b) && b[i] >= 0x80 && b[i+1] < 0x80 {
		d.i = i + 2
		return uint64(b[i]&0x7f) | uint64(b[i+1])<<7
	}
	return d.uvarintSlow()
}

func (d *dec) uvarintSlow() uint64 {
	var x uint64
	var s uint
	for k := 0; k < binary.MaxVarintLen64; k++ {
		if d.i >= len(d.b) {
			break
		}
		c := d.b[d.i]
		d.i++
		if c < 0x80 {
			if k == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			return x | uint64(c)<<s
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	d.fail("varint")
	return 0
}

func (d *dec) varint() int64 { return unzigzag(d.uvarint()) }

func (d *dec) byte1() byte {
	if i := d.i; i < len(d.b) {
		d.i = i + 1
		return d.b[i]
	}
	d.fail("byte")
	return 0
}

// pow10e is pow10 indexed by an amount's 3-bit exponent field (7, the long form,
// never reaches it), so that indexing needs no bounds check.
var pow10e = [8]int64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 0}

// amount reads an amount (see the format comment). Amounts of up to three bytes
// in the short form (every price and most sizes) are decoded here: their mantissa
// is below 2^18 and 10^6 < 2^20, so the product cannot overflow and needs no
// check. Everything else, errors included, goes through amountSlow, which
// decodes the same bytes to the same value.
// float reads the 8 bytes of a float64 (feed and signal values).
func (d *dec) float() float64 {
	if d.err != nil || len(d.b)-d.i < 8 {
		d.fail("value")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.i:]))
	d.i += 8
	return v
}

func (d *dec) amount() market.Micros {
	b, i := d.b, d.i
	var x uint64
	var n int
	switch {
	case i < len(b) && b[i] < 0x80:
		x, n = uint64(b[i]), 1
	case i+1 < len(b) && b[i+1] < 0x80:
		x, n = uint64(b[i]&0x7f)|uint64(b[i+1])<<7, 2
	case i+2 < len(b) && b[i+2] < 0x80:
		x, n = uint64(b[i]&0x7f)|uint64(b[i+1]&0x7f)<<7|uint64(b[i+2])<<14, 3
	default:
		return d.amountSlow()
	}
	e := x & 7
	if e == 7 {
		return d.amountSlow()
	}
	d.i = i + n
	return market.Micros(unzigzag(x>>3) * pow10e[e])
}

// amountSlow reads an amount of any length, checking for overflow.
func (d *dec) amountSlow() market.Micros {
	x := d.uvarint()
	e := x & 7
	if e == 7 {
		if x != 7 {
			d.fail("amount")
			return 0
		}
		return market.Micros(unzigzag(d.uvarint()))
	}
	if e == 0 {
		return market.Micros(unzigzag(x >> 3))
	}
	m := unzigzag(x >> 3)
	p := pow10[e]
	hi, lo := bits.Mul64(uint64(abs64(m)), uint64(p))
	if hi != 0 || lo > math.MaxInt64 {
		d.fail("amount")
		return 0
	}
	return market.Micros(m * p)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// bytes returns the next length-prefixed byte string, aliasing the body.
func (d *dec) bytes() []byte {
	n := d.uvarint()
	if n > MaxString || uint64(len(d.b)-d.i) < n {
		d.fail("string")
		return nil
	}
	s := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

// side reads a side; a valid one inline, anything else through sideSlow.
func (d *dec) side() market.Side {
	if i := d.i; i < len(d.b) {
		if s := market.Side(d.b[i]); s == market.Buy || s == market.Sell {
			d.i = i + 1
			return s
		}
	}
	return d.sideSlow()
}

func (d *dec) sideSlow() market.Side {
	s := market.Side(d.byte1())
	if !s.Valid() {
		d.fail("side")
		return 0
	}
	return s
}

func (d *dec) levels(dst []market.Level) []market.Level {
	n := d.uvarint()
	// a level takes at least two bytes: a bound that needs no trust in n
	if n > uint64(len(d.b)-d.i)/2 {
		d.fail("level count")
		return dst[:0]
	}
	dst = dst[:0]
	var p market.Micros
	for range n {
		p += d.amount()
		s := d.amount()
		dst = append(dst, market.Level{Price: p, Size: s})
	}
	return dst
}

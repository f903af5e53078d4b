package tape

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// RecordType says what a Record holds.
type RecordType uint8

// Record types. The zero value is invalid.
const (
	RecordEvent   RecordType = iota + 1 // a market-data event (Event, Recv)
	RecordMarket                        // a market's metadata (Market)
	RecordSession                       // a recording session starts (Session): a discontinuity
	RecordGap                           // the recorder lost data here (Recv, Reason): a discontinuity
)

var recordTypeNames = [...]string{"invalid", "event", "market", "session", "gap"}

// String returns "event", "market", "session" or "gap".
func (t RecordType) String() string {
	if int(t) < len(recordTypeNames) {
		return recordTypeNames[t]
	}
	return "unknown"
}

// Record is one entry of a tape. A Reader decodes into the caller's Record and reuses
// its storage (the Event's level and change slices); only the fields of Type are
// meaningful.
type Record struct {
	Type RecordType
	// Event is the market-data event; Event.Time is the venue's time (Unix ms).
	Event market.Event
	// Recv is when the recorder received it (Unix ms, the recorder's clock).
	Recv int64
	// Market is a market's metadata (RecordMarket).
	Market market.Info
	// Session starts a recording session (RecordSession).
	Session Session
	// Reason says why there is a gap (RecordGap).
	Reason string
}

// ReaderOptions configure a Reader. The zero value keeps everything.
type ReaderOptions struct {
	// NoHashes drops book hashes (Event.Hash stays empty), which saves an
	// allocation per book snapshot when nobody checks them (backtests).
	NoHashes bool
	// Symbols are market and token ids the caller already holds (its markets'
	// Info): a decoded id equal to one of them is that string, sharing its bytes,
	// so that the caller's comparisons of ids find equal pointers instead of
	// comparing 66 or 77 characters. Ids are the same either way.
	Symbols []string
}

// Summary describes a tape file: what Open found while verifying it.
type Summary struct {
	// Sessions are the file's recording sessions, in order.
	Sessions []Session
	// Markets is the latest metadata of every market, in order of first appearance.
	Markets []market.Info
	// Blocks and Records (events and gaps) counted in the valid part of the file.
	Blocks  int
	Records int64
	// FirstTime and LastTime bound the venue times of the records (Unix ms);
	// FirstRecv and LastRecv their receive times. Zero when there is no record.
	FirstTime, LastTime int64
	FirstRecv, LastRecv int64
	// Bytes is the size of the valid part; RawBytes the size of the records
	// before compression.
	Bytes    int64
	RawBytes int64
	// Torn is set when the file ends with a torn tail (a write cut short by a
	// kill or a crash): TornBytes bytes from Bytes on are ignored by the reader.
	Torn      *journal.DamageError
	TornBytes int64
}

// Reader reads a tape record by record. Decoding reuses the caller's Record and the
// Reader's buffers, so reading does not allocate in steady state (symbols are
// interned; book hashes allocate unless ReaderOptions.NoHashes).
//
// A Reader is not safe for concurrent use.
type Reader struct {
	jr   *journal.Reader
	f    *os.File
	opts ReaderOptions
	zd   *zstd.Decoder // from decoders, returned by Close
	// zdFailed: a DecodeAll of zd failed; Close closes it rather than pool it.
	zdFailed bool
	raw      []byte
	d        dec

	left     int // records left in the current block
	time     int64
	recv     int64
	seq      uint64
	syms     []string
	intern   map[string]string
	frameSeq uint64
	frameOff int64
	summary  Summary
	sessions int
	version  int // of the latest session
}

// NewReader reads a tape from r, checking each frame's checksum and sequence. It
// does not classify damage: a torn tail surfaces as a *journal.DamageError from Next
// (Open, on a file, tells torn tails from corruption and reads only the valid part).
func NewReader(r io.Reader, opts ReaderOptions) (*Reader, error) {
	jr, err := journal.NewReader(r, Kind, MaxFrameBytes)
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	tr := &Reader{jr: jr, opts: opts, intern: make(map[string]string, len(opts.Symbols))}
	tr.seed()
	return tr, nil
}

// seed interns the caller's symbols (ReaderOptions.Symbols).
func (r *Reader) seed() {
	for _, s := range r.opts.Symbols {
		if s != "" {
			r.intern[s] = s
		}
	}
}

// Open opens the tape file at path: it verifies the whole file first (checksums,
// sequence, write groups, block headers, market and session frames), summarizing
// it, and returns a Reader over its valid part. A torn tail is reported in the
// Summary and skipped; corruption of earlier data (a damaged frame followed by valid
// ones of a later write) is an error wrapping journal.ErrCorrupt.
func Open(path string, opts ReaderOptions) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	r, err := openFile(f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func openFile(f *os.File, path string, opts ReaderOptions) (*Reader, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	r, err := OpenReaderAt(f, fi.Size(), opts)
	if err != nil {
		var ce *journal.CorruptError
		if errors.As(err, &ce) {
			ce.Path = path
		}
		return nil, fmt.Errorf("tape: %s: %w", path, err)
	}
	r.f = f
	return r, nil
}

// OpenReaderAt is Open for a tape held in ra (size bytes): a file already open, or
// a tape in memory (bytes.NewReader). The Reader does not close ra.
func OpenReaderAt(ra io.ReaderAt, size int64, opts ReaderOptions) (*Reader, error) {
	sum, err := scan(ra, size)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(io.NewSectionReader(ra, 0, sum.Bytes), opts)
	if err != nil {
		return nil, err
	}
	r.summary = sum
	return r, nil
}

// Summarize verifies and summarizes the tape file at path (see Open).
func Summarize(path string) (Summary, error) {
	r, err := Open(path, ReaderOptions{NoHashes: true})
	if err != nil {
		return Summary{}, err
	}
	s := r.Summary()
	return s, r.Close()
}

// scan verifies a tape of the given size and summarizes it. Block bodies are not
// decompressed: their headers carry counts and times.
func scan(r io.ReaderAt, size int64) (Summary, error) {
	var s Summary
	idx := map[market.ConditionID]int{}
	var minfo market.Info
	res, err := journal.ScanFile(r, size, journal.ScanOptions{Kind: Kind, MaxPayload: MaxFrameBytes,
		Frame: func(fr journal.Frame) error {
			p := fr.Payload
			if len(p) == 0 {
				return &FormatError{Seq: fr.Seq, Offset: -1, Err: formatErr("empty frame")}
			}
			switch p[0] {
			case frameSession:
				ss, err := decodeSession(p[1:])
				if err != nil {
					return &FormatError{Seq: fr.Seq, Offset: -1, Err: err}
				}
				s.Sessions = append(s.Sessions, ss)
			case frameMarket:
				if len(s.Sessions) == 0 {
					return &FormatError{Seq: fr.Seq, Offset: -1, Err: formatErr("market frame before the first session")}
				}
				if err := decodeMarket(p[1:], &minfo); err != nil {
					return &FormatError{Seq: fr.Seq, Offset: -1, Err: err}
				}
				if i, ok := idx[minfo.Condition]; ok {
					s.Markets[i] = minfo
				} else {
					idx[minfo.Condition] = len(s.Markets)
					s.Markets = append(s.Markets, minfo)
				}
			case frameBlock:
				if len(s.Sessions) == 0 {
					return &FormatError{Seq: fr.Seq, Offset: -1, Err: formatErr("block before the first session")}
				}
				h, _, err := parseBlockHeader(p[1:])
				if err != nil {
					return &FormatError{Seq: fr.Seq, Offset: -1, Err: err}
				}
				if s.Records == 0 {
					s.FirstTime, s.LastTime, s.FirstRecv, s.LastRecv = h.firstTime, h.lastTime, h.firstRecv, h.lastRecv
				}
				s.FirstTime = min(s.FirstTime, h.firstTime)
				s.LastTime = max(s.LastTime, h.lastTime)
				s.FirstRecv = min(s.FirstRecv, h.firstRecv)
				s.LastRecv = max(s.LastRecv, h.lastRecv)
				s.Blocks++
				s.Records += int64(h.count)
				s.RawBytes += int64(h.rawLen)
			default:
				return &FormatError{Seq: fr.Seq, Offset: -1, Err: formatErr("unknown frame type %#x", p[0])}
			}
			return nil
		}})
	if err != nil {
		return s, err
	}
	if res.Frames == 0 || len(s.Sessions) == 0 {
		if res.Torn != nil {
			return s, fmt.Errorf("%w: no complete session (torn at offset %d: %v)", ErrFormat, res.Torn.Offset, res.Torn.Err)
		}
		return s, formatErr("no session")
	}
	s.Bytes = res.End
	if res.Torn != nil {
		s.Torn = res.Torn
		s.TornBytes = size - res.End
	}
	return s, nil
}

type blockHeader struct {
	codec               byte
	rawLen              int
	count               int
	firstTime, lastTime int64
	firstRecv, lastRecv int64
}

// parseBlockHeader decodes a block header (after the 'B') and returns it with the
// offset of the body.
func parseBlockHeader(p []byte) (blockHeader, int, error) {
	var h blockHeader
	d := dec{b: p}
	h.codec = d.byte1()
	raw := d.uvarint()
	count := d.uvarint()
	h.firstTime = d.varint()
	h.lastTime = d.varint()
	h.firstRecv = d.varint()
	h.lastRecv = d.varint()
	switch {
	case d.err != nil:
		return h, 0, d.err
	case h.codec != wireRaw && h.codec != wireZstd:
		return h, 0, formatErr("unknown codec %d", h.codec)
	case raw > MaxBlockBytes:
		return h, 0, formatErr("block of %d raw bytes exceeds %d", raw, MaxBlockBytes)
	case count == 0 || count > raw:
		return h, 0, formatErr("block of %d raw bytes claims %d records", raw, count)
	case h.codec == wireRaw && uint64(len(p)-d.i) != raw:
		return h, 0, formatErr("raw block body of %d bytes, header says %d", len(p)-d.i, raw)
	}
	h.rawLen, h.count = int(raw), int(count)
	return h, d.i, nil
}

// Summary returns what Open found in the file (the zero Summary for NewReader).
func (r *Reader) Summary() Summary { return r.summary }

// Close releases the Reader (and closes the file Open opened): its zstd decoder and
// block buffer are kept for the next Reader. Do not call Next after Close.
func (r *Reader) Close() error {
	if r.zd != nil {
		if r.zdFailed || !decoders.put(r.zd) {
			r.zd.Close()
		}
		r.zd = nil
	}
	if r.left == 0 && cap(r.raw) > 0 && cap(r.raw) <= freeBufBytes {
		// The block is done (a Next after Close reads the next frame into a
		// fresh buffer, as a new Reader would), so the buffer can serve another.
		r.d = dec{}
		raws.put(r.raw[:0])
		r.raw = nil
	}
	if r.f != nil {
		err := r.f.Close()
		r.f = nil
		return err
	}
	return nil
}

// Next decodes the next record into rec. It returns io.EOF at the end of the tape,
// an error wrapping ErrFormat (a *FormatError) for bytes that are not a valid tape,
// and the framing layer's errors (*journal.DamageError) as they are. Errors are
// sticky only where the framing layer's are; after a FormatError stop reading.
func (r *Reader) Next(rec *Record) error {
	for r.left == 0 {
		if err := r.nextFrame(rec); err != nil {
			return err
		}
		if rec.Type != 0 {
			return nil
		}
	}
	r.left--
	if err := r.record(rec); err != nil {
		r.left = 0
		return &FormatError{Seq: r.frameSeq, Offset: r.frameOff, Err: err}
	}
	if r.left == 0 && r.d.i != len(r.d.b) {
		return &FormatError{Seq: r.frameSeq, Offset: r.frameOff, Err: formatErr("%d bytes after the last record of the block", len(r.d.b)-r.d.i)}
	}
	return nil
}

// nextFrame reads a frame. Session and market frames are returned in rec (Type set);
// a block frame is loaded (rec.Type left 0).
func (r *Reader) nextFrame(rec *Record) error {
	r.frameOff = r.jr.Offset()
	fr, err := r.jr.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("tape: %w", err)
	}
	r.frameSeq = fr.Seq
	p := fr.Payload
	bad := func(err error) error { return &FormatError{Seq: fr.Seq, Offset: r.frameOff, Err: err} }
	if len(p) == 0 {
		return bad(formatErr("empty frame"))
	}
	rec.Type = 0
	switch p[0] {
	case frameSession:
		s, err := decodeSession(p[1:])
		if err != nil {
			return bad(err)
		}
		r.sessions++
		r.version = s.Version
		rec.Type, rec.Session = RecordSession, s
	case frameMarket:
		if r.sessions == 0 {
			return bad(formatErr("market frame before the first session"))
		}
		if err := decodeMarket(p[1:], &rec.Market); err != nil {
			return bad(err)
		}
		rec.Type = RecordMarket
	case frameBlock:
		if r.sessions == 0 {
			return bad(formatErr("block before the first session"))
		}
		h, at, err := parseBlockHeader(p[1:])
		if err != nil {
			return bad(err)
		}
		body := p[1+at:]
		if h.codec == wireZstd {
			if r.zd == nil {
				if r.zd, err = getDecoder(); err != nil {
					return fmt.Errorf("tape: %w", err)
				}
			}
			if r.raw == nil {
				r.raw, _ = raws.get()
			}
			if cap(r.raw) < h.rawLen {
				r.raw = make([]byte, 0, h.rawLen)
			}
			r.raw, err = r.zd.DecodeAll(body, r.raw[:0])
			if err != nil {
				r.zdFailed = true
				return bad(formatErr("block body: %v", err))
			}
			if len(r.raw) != h.rawLen {
				return bad(formatErr("block body of %d bytes, header says %d", len(r.raw), h.rawLen))
			}
			body = r.raw
		}
		r.d = dec{b: body}
		r.left = h.count
		r.time, r.recv, r.seq = h.firstTime, h.firstRecv, 0
		r.syms = r.syms[:0]
	default:
		return bad(formatErr("unknown frame type %#x", p[0]))
	}
	return nil
}

// record decodes one record of the current block.
func (r *Reader) record(rec *Record) error {
	d := &r.d
	kind, mkt, tok, ok := r.headerFast()
	if !ok {
		kind = d.byte1()
		r.time += d.varint()
		r.recv += d.varint()
		r.seq += uint64(d.varint())
		mkt = r.sym()
		tok = r.sym()
	}
	if d.err != nil {
		return d.err
	}
	rec.Recv = r.recv
	if kind == recGap {
		rec.Type = RecordGap
		rec.Reason = string(d.bytes())
		return d.err
	}
	ev := &rec.Event
	bids, asks, changes := ev.Bids[:0], ev.Asks[:0], ev.Changes[:0]
	// *ev = market.Event{Kind: ..., Bids: bids, ...}, field by field: the wallet's
	// parts (Order, Fill: 272 of the Event's 472 bytes) are cleared only when the
	// caller left something there, which saves rewriting them on every record
	// (TestNextSetsEveryField keeps this complete when Event grows).
	ev.Kind, ev.Seq, ev.Time, ev.Market, ev.Token = market.EventKind(kind), r.seq, r.time, market.ConditionID(mkt), market.TokenID(tok)
	ev.Bids, ev.Asks, ev.Hash, ev.Changes = bids, asks, "", changes
	ev.Price, ev.Size, ev.Side, ev.OldTick, ev.NewTick, ev.Winner = 0, 0, 0, 0, 0, ""
	ev.Name, ev.Value = "", 0
	if !walletZero(ev) {
		ev.Order, ev.OrderUpdate, ev.Fill = market.Order{}, 0, market.Fill{}
	}
	rec.Type = RecordEvent
	switch ev.Kind {
	case market.EventBook:
		h := d.bytes()
		if !r.opts.NoHashes && len(h) > 0 {
			ev.Hash = string(h)
		}
		ev.Bids = d.levels(bids)
		ev.Asks = d.levels(asks)
	case market.EventPriceChange:
		n := d.uvarint()
		if n > uint64(len(d.b)-d.i)/6 { // a change takes at least six bytes
			d.fail("change count")
			return d.err
		}
		// Decoded in place (every field of each change is set), not appended.
		changes = slices.Grow(changes, int(n))[:n]
		for k := range changes {
			c := &changes[k]
			if r.changeFast(c) {
				continue
			}
			c.Token = market.TokenID(r.sym())
			c.Side = d.side()
			c.Price = d.amount()
			c.Size = d.amount()
			c.BestBid = d.amount()
			c.BestAsk = d.amount()
		}
		ev.Changes = changes
	case market.EventLastTrade:
		ev.Price = d.amount()
		ev.Size = d.amount()
		ev.Side = d.side()
	case market.EventTickSize:
		ev.OldTick = d.amount()
		ev.NewTick = d.amount()
	case market.EventResolved:
		ev.Winner = market.TokenID(r.sym())
	case market.EventFeed, market.EventSignal:
		if r.version < 2 {
			return formatErr("%s record in a version %d session", ev.Kind, r.version)
		}
		if mkt != "" || tok == "" {
			return formatErr("%s record without a name", ev.Kind)
		}
		ev.Name, ev.Token = tok, ""
		ev.Value = d.float()
	default:
		return formatErr("unknown record kind %d", kind)
	}
	return d.err
}

// headerFast decodes a record's header (kind, time, recv, seq, market, token) when
// every field has its common short form: time and receive deltas of one or two
// bytes, a one-byte sequence delta, and market and token that are empty or refer
// to a symbol of the block in one byte. It then updates the Reader as the general
// decoding would (TestHeaderFastPathMatchesTheGeneralOne) and reports true;
// otherwise it consumes nothing and reports false.
func (r *Reader) headerFast() (kind byte, mkt, tok string, ok bool) {
	i := r.d.i
	if len(r.d.b)-i < 8 { // the longest header this path takes
		return 0, "", "", false
	}
	b := r.d.b[i : i+8]
	kind = b[0]
	var t, rc uint64
	j := 1
	if c := b[j]; c < 0x80 {
		t, j = uint64(c), j+1
	} else if c2 := b[j+1]; c2 < 0x80 {
		t, j = uint64(c&0x7f)|uint64(c2)<<7, j+2
	} else {
		return 0, "", "", false
	}
	if c := b[j]; c < 0x80 {
		rc, j = uint64(c), j+1
	} else if c2 := b[j+1]; c2 < 0x80 {
		rc, j = uint64(c&0x7f)|uint64(c2)<<7, j+2
	} else {
		return 0, "", "", false
	}
	sq := b[j]
	m, k := b[j+1], b[j+2]
	if sq >= 0x80 || m >= 0x80 || k >= 0x80 || m == 1 || k == 1 ||
		(m >= 2 && int(m-2) >= len(r.syms)) || (k >= 2 && int(k-2) >= len(r.syms)) {
		return 0, "", "", false
	}
	if m >= 2 {
		mkt = r.syms[m-2]
	}
	if k >= 2 {
		tok = r.syms[k-2]
	}
	r.time += unzigzag(t)
	r.recv += unzigzag(rc)
	r.seq += uint64(unzigzag(uint64(sq)))
	r.d.i = i + j + 3
	return kind, mkt, tok, true
}

// changeFast decodes a price change whose fields all have their common short
// form: the token a one-byte reference to a symbol of the block, a valid side, and
// four amounts of at most three bytes in the short form (see dec.amount), from one
// 14-byte window. It then sets every field of c as the general decoding would
// (TestChangeFastPathMatchesTheGeneralOne) and reports true; otherwise it
// consumes nothing and reports false.
func (r *Reader) changeFast(c *market.LevelChange) bool {
	i := r.d.i
	if len(r.d.b)-i < 14 { // token, side, 4 × 3 bytes
		return false
	}
	b := r.d.b[i : i+14]
	v := b[0]
	if v < 2 || v >= 0x80 || int(v-2) >= len(r.syms) {
		return false
	}
	side := market.Side(b[1])
	if side != market.Buy && side != market.Sell {
		return false
	}
	var a [4]market.Micros
	j := 2
	for k := range a {
		var x uint64
		if c0 := b[j]; c0 < 0x80 {
			x, j = uint64(c0), j+1
		} else if c1 := b[j+1]; c1 < 0x80 {
			x, j = uint64(c0&0x7f)|uint64(c1)<<7, j+2
		} else if c2 := b[j+2]; c2 < 0x80 {
			x, j = uint64(c0&0x7f)|uint64(c1&0x7f)<<7|uint64(c2)<<14, j+3
		} else {
			return false
		}
		if x&7 == 7 {
			return false
		}
		a[k] = market.Micros(unzigzag(x>>3) * pow10e[x&7])
	}
	c.Token, c.Side = market.TokenID(r.syms[v-2]), side
	c.Price, c.Size, c.BestBid, c.BestAsk = a[0], a[1], a[2], a[3]
	r.d.i = i + j
	return true
}

// walletZero reports whether ev's Order, OrderUpdate and Fill are zero, field by
// field (an empty string is "" whatever its pointer): cheaper than comparing the
// structs, which calls memequal for every string. TestNextSetsEveryField fails if
// Order or Fill gains a field this does not look at.
func walletZero(ev *market.Event) bool {
	o, f := &ev.Order, &ev.Fill
	return ev.OrderUpdate == 0 &&
		len(o.ID)|len(o.Market)|len(o.Token)|len(f.Trade)|len(f.Order)|len(f.Market)|len(f.Token) == 0 &&
		int64(o.Price)|int64(o.Size)|int64(o.Matched)|o.Expiration|o.CreatedAt|int64(f.Price)|int64(f.Size)|int64(f.Fee)|f.Time == 0 &&
		uint8(o.Outcome)|uint8(o.Side)|uint8(o.Type)|uint8(o.Status)|uint8(f.Outcome)|uint8(f.Side)|uint8(f.Role) == 0 &&
		!o.PostOnly && addressZero(&o.Owner) && addressZero(&f.Owner)
}

// addressZero reports whether a is zero, in three loads (== calls memequal).
func addressZero(a *market.Address) bool {
	le := binary.LittleEndian
	return le.Uint64(a[:8])|le.Uint64(a[8:16])|uint64(le.Uint32(a[16:])) == 0
}

// sym reads a symbol reference (see the format comment).
func (r *Reader) sym() string {
	// A reference to a symbol of the block (nearly every one) is read inline.
	if i := r.d.i; i < len(r.d.b) {
		if v := r.d.b[i]; v >= 2 && v < 0x80 && int(v-2) < len(r.syms) {
			r.d.i = i + 1
			return r.syms[v-2]
		}
	}
	return r.symSlow()
}

// symSlow reads any symbol reference: a new symbol, a long reference, an error.
func (r *Reader) symSlow() string {
	d := &r.d
	v := d.uvarint()
	switch {
	case v == 0:
		return ""
	case v == 1:
		b := d.bytes()
		if d.err != nil {
			return ""
		}
		s, ok := r.intern[string(b)]
		if !ok {
			if len(r.intern) >= 1<<16 {
				clear(r.intern)
				r.seed()
			}
			s = string(b)
			r.intern[s] = s
		}
		r.syms = append(r.syms, s)
		return s
	default:
		i := v - 2
		if i >= uint64(len(r.syms)) {
			d.fail("symbol reference")
			return ""
		}
		return r.syms[i]
	}
}

// decoders and raws keep what a Reader needs for compressed blocks, lent from
// NewReader's first block to Close: a zstd decoder (used for stateless DecodeAll
// only, which starts no goroutine, so one that is dropped needs no Close) and a
// block buffer. A backtest opens a Reader per run, and a sweep runs many: without
// them each run would allocate a decoder's tables and a block buffer afresh.
// They are small free lists rather than sync.Pools, which the garbage collector
// empties every other cycle (a backtest of the benchmark's size runs a cycle
// about every run).
var (
	decoders freeList[*zstd.Decoder]
	raws     freeList[[]byte]
)

// Bounds of the free lists: at most freeCap entries each, and no buffer above
// freeBufBytes (a tape of huge blocks allocates its buffers per Reader).
const (
	freeCap      = 4
	freeBufBytes = 4 * DefaultBlockBytes
)

// freeList is a bounded stack of reusable values, safe for concurrent use.
type freeList[T any] struct {
	mu    sync.Mutex
	items []T
}

// get returns a kept value, if any.
func (l *freeList[T]) get() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var v T
	n := len(l.items)
	if n == 0 {
		return v, false
	}
	v = l.items[n-1]
	l.items[n-1] = *new(T)
	l.items = l.items[:n-1]
	return v, true
}

// put keeps v unless the list is full, and reports whether it did.
func (l *freeList[T]) put(v T) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) >= freeCap {
		return false
	}
	l.items = append(l.items, v)
	return true
}

// getDecoder returns a kept zstd decoder or a new one.
func getDecoder() (*zstd.Decoder, error) {
	if zd, ok := decoders.get(); ok {
		return zd, nil
	}
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxBlockBytes))
}

// ReadAll reads every record of r and calls fn for each; fn must not keep rec. It
// stops at the end (returning nil) or at the first error (fn's included).
func ReadAll(r *Reader, fn func(rec *Record) error) error {
	var rec Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
}

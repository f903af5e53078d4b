package tape

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// Defaults of WriterOptions.
const (
	DefaultBlockBytes = 256 << 10
	DefaultBlockSpan  = time.Second
)

// WriterOptions configure a Writer. The zero value is the default: zstd blocks of at
// most 256 KiB of raw records or one second of receive time, each synced to disk
// (files only).
type WriterOptions struct {
	// Codec compresses block bodies. If zero, CodecZstd.
	Codec Codec
	// BlockBytes seals a block once its raw body reaches this size. If zero,
	// DefaultBlockBytes (256 KiB); at most MaxBlockBytes/2. It bounds the writer's
	// memory (about three times BlockBytes) and what a kill can lose (the unsealed
	// block).
	BlockBytes int
	// BlockSpan seals a block before a record whose receive time is this much
	// later than the block's first record's. If zero, DefaultBlockSpan (1s);
	// negative: no limit (only BlockBytes and Flush seal).
	BlockSpan time.Duration
	// NoSync skips the fsync after each written block of a file (Create, Append).
	// Without a sync a killed process loses nothing (the page cache keeps the
	// data), a machine crash may lose the last blocks. If false, every block is
	// synced.
	NoSync bool
}

func (o *WriterOptions) resolve() error {
	if o.BlockBytes == 0 {
		o.BlockBytes = DefaultBlockBytes
	}
	if o.BlockBytes < 0 || o.BlockBytes > MaxBlockBytes/2 {
		return fmt.Errorf("tape: block size %d out of range (1 to %d)", o.BlockBytes, MaxBlockBytes/2)
	}
	if o.BlockSpan == 0 {
		o.BlockSpan = DefaultBlockSpan
	}
	if o.Codec != CodecZstd && o.Codec != CodecRaw {
		return fmt.Errorf("tape: unknown codec %d", o.Codec)
	}
	return nil
}

// WriterStats count what a Writer wrote since it was created.
type WriterStats struct {
	Records  int64 // events and gaps
	Blocks   int64 // blocks sealed
	RawBytes int64 // raw block bodies
	Bytes    int64 // size of the file (or stream) once buffered frames are written
}

// Writer appends a recording: sessions, market metadata, events and gaps. Events are
// gathered in a block that is sealed (compressed, framed, written in one write and,
// for files, synced) when it is full, spans BlockSpan of receive time, or on Flush,
// Market and Close. What a killed process loses is the unsealed block; the file on
// disk is always a valid tape possibly followed by a torn last write, which readers
// detect and ignore (and Append cuts).
//
// A Writer is not safe for concurrent use: one goroutine (the recorder's) owns it.
// Errors of the underlying writer are sticky.
type Writer struct {
	jw    *journal.Writer
	f     *os.File // when the Writer owns a file
	lock  func()   // releases the file lock
	opts  WriterOptions
	enc   *zstd.Encoder
	body  []byte
	frame []byte
	syms  map[string]uint64
	nsym  uint64
	// inputs are the feeds ("F" + symbol) and signals ("S" + name) the session
	// declares: the only ones Write takes
	inputs []string

	count                int
	firstTime, firstRecv int64
	lastTime, lastRecv   int64
	prevTime, prevRecv   int64
	prevSeq              uint64

	stats  WriterStats
	closed bool
	err    error
}

// NewWriter starts a new tape on w with session s. The header and the session frame
// are written by the first Flush (or block). w is typically a file opened for
// writing at offset 0, or a buffer; the Writer does not sync or close it.
func NewWriter(w io.Writer, s Session, opts WriterOptions) (*Writer, error) {
	tw, err := newWriter(opts)
	if err != nil {
		return nil, err
	}
	tw.jw = journal.NewWriter(w, journal.FileHeader{Kind: Kind, Base: 1})
	if err := tw.session(s); err != nil {
		return nil, err
	}
	return tw, nil
}

func newWriter(opts WriterOptions) (*Writer, error) {
	if err := opts.resolve(); err != nil {
		return nil, err
	}
	w := &Writer{opts: opts, syms: make(map[string]uint64), body: make([]byte, 0, opts.BlockBytes+4096)}
	if opts.Codec == CodecZstd {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			return nil, fmt.Errorf("tape: %w", err)
		}
		w.enc = enc
	}
	return w, nil
}

// Create creates a new tape file at path (mode 0644; it must not exist) with session
// s and writes its header and session at once. The file is locked (flock) while the
// Writer is open: a second writer on the same file fails.
func Create(path string, s Session, opts WriterOptions) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	unlock, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	w, err := NewWriter(f, s, opts)
	if err == nil {
		w.f, w.lock = f, unlock
		err = w.Flush()
	}
	if err != nil {
		unlock()
		f.Close()
		return nil, err
	}
	return w, nil
}

// Resumed describes what Append found in an existing file.
type Resumed struct {
	// Existed is true when the file existed and had a valid header.
	Existed bool
	// Frames is the number of valid frames kept; Bytes the size kept.
	Frames int
	Bytes  int64
	// Cut is the number of bytes of a torn tail that were truncated; Torn says
	// where and why (nil when the file ended cleanly).
	Cut  int64
	Torn *journal.DamageError
}

// Append continues the tape at path, or creates it: it checks the file (a torn tail
// left by a killed recorder is cut; corruption of earlier data is an error wrapping
// journal.ErrCorrupt and changes nothing), then writes session s (marked Resumed)
// after the valid prefix. The file is locked while the Writer is open.
func Append(path string, s Session, opts WriterOptions) (*Writer, Resumed, error) {
	var res Resumed
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, res, fmt.Errorf("tape: %w", err)
	}
	unlock, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, res, err
	}
	fail := func(err error) (*Writer, Resumed, error) {
		unlock()
		f.Close()
		return nil, res, err
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("tape: %w", err))
	}
	var w *Writer
	if fi.Size() == 0 {
		w, err = NewWriter(f, s, opts)
		if err != nil {
			return fail(err)
		}
	} else {
		sc, err := journal.ScanFile(f, fi.Size(), journal.ScanOptions{Kind: Kind, MaxPayload: MaxFrameBytes})
		if err != nil {
			var ce *journal.CorruptError
			if errors.As(err, &ce) {
				ce.Path = path
			}
			return fail(fmt.Errorf("tape: %s: %w", path, err))
		}
		res.Torn = sc.Torn
		if sc.End < journal.FileHeaderSize {
			// Not even a header survived. Only a torn first write of a tape is
			// recreated; anything else is someone's file, never overwritten.
			if !tornTapeStart(f, fi.Size()) {
				return fail(fmt.Errorf("%w: %s is not a tape (and is not empty): refusing to overwrite it", ErrFormat, path))
			}
			res.Cut = fi.Size()
			if err := f.Truncate(0); err != nil {
				return fail(fmt.Errorf("tape: %w", err))
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return fail(fmt.Errorf("tape: %w", err))
			}
			w, err = NewWriter(f, s, opts)
			if err != nil {
				return fail(err)
			}
		} else {
			res.Existed, res.Frames, res.Bytes = true, sc.Frames, sc.End
			if sc.End < fi.Size() {
				res.Cut = fi.Size() - sc.End
				if err := f.Truncate(sc.End); err != nil {
					return fail(fmt.Errorf("tape: %w", err))
				}
			}
			if _, err := f.Seek(sc.End, io.SeekStart); err != nil {
				return fail(fmt.Errorf("tape: %w", err))
			}
			jw, err := journal.ResumeWriter(f, sc)
			if err != nil {
				return fail(fmt.Errorf("tape: %w", err))
			}
			w, err = newWriter(opts)
			if err != nil {
				return fail(err)
			}
			w.jw = jw
			s.Resumed = true
			if err := w.session(s); err != nil {
				return fail(err)
			}
		}
	}
	w.f, w.lock = f, unlock
	if err := w.Flush(); err != nil {
		w.f, w.lock = nil, nil
		return fail(err)
	}
	return w, res, nil
}

// tornTapeStart reports whether the size bytes of f can be the start of a tape's
// first write cut short: fewer than a header's bytes, beginning like a tape header.
func tornTapeStart(f *os.File, size int64) bool {
	if size >= journal.FileHeaderSize {
		return false
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return false
	}
	start := journal.AppendFileHeader(nil, journal.FileHeader{Kind: Kind, Base: 1})[:12] // magic and kind
	n := min(len(b), len(start))
	return string(b[:n]) == string(start[:n])
}

// session writes a session frame. Its version is the lowest that holds what the
// session declares: 1 without feeds and signals (a tape of market data alone is
// what it was before version 2, and older builds read it), else 2.
func (w *Writer) session(s Session) error {
	s.Format, s.Version = FormatName, 1
	w.inputs = w.inputs[:0]
	if len(s.Feeds)+len(s.Signals) > 0 {
		s.Version = 2
		for _, f := range s.Feeds {
			w.inputs = append(w.inputs, "F"+f)
		}
		for _, g := range s.Signals {
			w.inputs = append(w.inputs, "S"+g)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("tape: %w", err)
	}
	w.frame = append(append(w.frame[:0], frameSession), b...)
	_, err = w.jw.Append(w.frame)
	return err
}

// Market records the metadata of a market (its tokens, tick, minimum size, fees,
// flags). Write it before the market's events, and again when it changes; readers
// keep the latest. It seals the current block first, so order is kept.
func (w *Writer) Market(m *market.Info) error {
	if err := w.check(); err != nil {
		return err
	}
	if m.Condition == "" {
		return errors.New("tape: market without a condition id")
	}
	b, err := encodeMarket(m)
	if err != nil {
		return fmt.Errorf("tape: %w", err)
	}
	if err := w.seal(); err != nil {
		return err
	}
	w.frame = append(append(w.frame[:0], frameMarket), b...)
	if _, err := w.jw.Append(w.frame); err != nil {
		return w.stick(err)
	}
	return w.Flush()
}

// Write records one market-data event (book, price_change, last_trade, tick_size,
// resolved), a feed's price or a signal's value received at recv (Unix ms, the
// recorder's clock). ev.Time is the venue's time (the feed's or signal's own). Other
// kinds are refused with ErrNotMarketData. ev is not retained.
func (w *Writer) Write(ev *market.Event, recv int64) error {
	if err := w.check(); err != nil {
		return err
	}
	switch ev.Kind {
	case market.EventBook, market.EventPriceChange, market.EventLastTrade, market.EventTickSize, market.EventResolved:
	case market.EventFeed, market.EventSignal:
		if ev.Name == "" || len(ev.Name) > MaxString {
			return fmt.Errorf("tape: %s with a name of %d bytes", ev.Kind, len(ev.Name))
		}
		if !w.declared(ev) {
			return fmt.Errorf("%w: %s %q is not declared by the session (Session.Feeds, Session.Signals)", ErrNotMarketData, ev.Kind, ev.Name)
		}
		if err := w.maybeSealBefore(recv); err != nil {
			return err
		}
		b := w.recordHeader(byte(ev.Kind), ev.Time, recv, ev.Seq, "", ev.Name)
		w.body = binary.LittleEndian.AppendUint64(b, math.Float64bits(ev.Value))
		return w.afterRecord()
	default:
		return fmt.Errorf("%w: %s", ErrNotMarketData, ev.Kind)
	}
	if err := w.maybeSealBefore(recv); err != nil {
		return err
	}
	b := w.recordHeader(byte(ev.Kind), ev.Time, recv, ev.Seq, string(ev.Market), string(ev.Token))
	switch ev.Kind {
	case market.EventBook:
		if len(ev.Hash) > MaxString {
			return fmt.Errorf("tape: book hash of %d bytes", len(ev.Hash))
		}
		b = appendString(b, ev.Hash)
		b = appendLevels(b, ev.Bids)
		b = appendLevels(b, ev.Asks)
	case market.EventPriceChange:
		b = binary.AppendUvarint(b, uint64(len(ev.Changes)))
		for i := range ev.Changes {
			c := &ev.Changes[i]
			b = w.sym(b, string(c.Token))
			b = append(b, byte(c.Side))
			b = appendAmount(b, c.Price)
			b = appendAmount(b, c.Size)
			b = appendAmount(b, c.BestBid)
			b = appendAmount(b, c.BestAsk)
		}
	case market.EventLastTrade:
		b = appendAmount(b, ev.Price)
		b = appendAmount(b, ev.Size)
		b = append(b, byte(ev.Side))
	case market.EventTickSize:
		b = appendAmount(b, ev.OldTick)
		b = appendAmount(b, ev.NewTick)
	case market.EventResolved:
		b = w.sym(b, string(ev.Winner))
	}
	w.body = b
	return w.afterRecord()
}

// Gap records a discontinuity at recv (a lost connection, a restart of the
// subscription): books must be rebuilt from the snapshots that follow.
func (w *Writer) Gap(recv int64, reason string) error {
	if err := w.check(); err != nil {
		return err
	}
	if len(reason) > MaxString {
		reason = reason[:MaxString]
	}
	if err := w.maybeSealBefore(recv); err != nil {
		return err
	}
	t := w.prevTime
	b := w.recordHeader(recGap, t, recv, w.prevSeq, "", "")
	w.body = appendString(b, reason)
	return w.afterRecord()
}

// declared reports whether the session declares the feed or signal of ev.
func (w *Writer) declared(ev *market.Event) bool {
	k := byte('F')
	if ev.Kind == market.EventSignal {
		k = 'S'
	}
	for _, s := range w.inputs {
		if s[0] == k && s[1:] == ev.Name {
			return true
		}
	}
	return false
}

func (w *Writer) check() error {
	if w.closed {
		return ErrClosed
	}
	return w.err
}

func (w *Writer) stick(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

func (w *Writer) maybeSealBefore(recv int64) error {
	if w.count > 0 && w.opts.BlockSpan > 0 && recv-w.firstRecv >= w.opts.BlockSpan.Milliseconds() {
		return w.Flush()
	}
	return nil
}

func (w *Writer) afterRecord() error {
	w.count++
	w.stats.Records++
	if len(w.body) >= w.opts.BlockBytes {
		return w.Flush()
	}
	return nil
}

func (w *Writer) recordHeader(kind byte, t, recv int64, seq uint64, mkt, tok string) []byte {
	if w.count == 0 {
		w.firstTime, w.firstRecv = t, recv
		w.prevTime, w.prevRecv, w.prevSeq = t, recv, 0
		w.lastTime, w.lastRecv = t, recv
	}
	b := append(w.body, kind)
	b = binary.AppendUvarint(b, zigzag(t-w.prevTime))
	b = binary.AppendUvarint(b, zigzag(recv-w.prevRecv))
	b = binary.AppendUvarint(b, zigzag(int64(seq-w.prevSeq)))
	w.prevTime, w.prevRecv, w.prevSeq = t, recv, seq
	w.lastTime, w.lastRecv = t, recv
	b = w.sym(b, mkt)
	return w.sym(b, tok)
}

func (w *Writer) sym(b []byte, s string) []byte {
	if s == "" {
		return append(b, 0)
	}
	if i, ok := w.syms[s]; ok {
		return binary.AppendUvarint(b, i+2)
	}
	if len(s) > MaxString {
		s = s[:MaxString]
	}
	w.syms[s] = w.nsym
	w.nsym++
	return appendString(append(b, 1), s)
}

func appendLevels(b []byte, lv []market.Level) []byte {
	b = binary.AppendUvarint(b, uint64(len(lv)))
	var p market.Micros
	for _, l := range lv {
		b = appendAmount(b, l.Price-p)
		b = appendAmount(b, l.Size)
		p = l.Price
	}
	return b
}

// seal turns the open block into a frame in the journal writer's buffer.
func (w *Writer) seal() error {
	if w.count == 0 {
		return nil
	}
	p := append(w.frame[:0], frameBlock)
	codec := byte(wireRaw)
	if w.opts.Codec == CodecZstd {
		codec = wireZstd
	}
	p = append(p, codec)
	p = binary.AppendUvarint(p, uint64(len(w.body)))
	p = binary.AppendUvarint(p, uint64(w.count))
	p = binary.AppendUvarint(p, zigzag(w.firstTime))
	p = binary.AppendUvarint(p, zigzag(w.lastTime))
	p = binary.AppendUvarint(p, zigzag(w.firstRecv))
	p = binary.AppendUvarint(p, zigzag(w.lastRecv))
	if w.enc != nil {
		p = w.enc.EncodeAll(w.body, p)
	} else {
		p = append(p, w.body...)
	}
	w.frame = p
	if _, err := w.jw.Append(p); err != nil {
		return w.stick(err)
	}
	w.stats.Blocks++
	w.stats.RawBytes += int64(len(w.body))
	w.body = w.body[:0]
	w.count = 0
	w.nsym = 0
	clear(w.syms)
	return nil
}

// Flush seals the open block and writes everything buffered in one write; for a
// file it then syncs (unless NoSync). Call it when the feed goes quiet, so that an
// idle recording is on disk too.
func (w *Writer) Flush() error {
	if err := w.check(); err != nil {
		return err
	}
	if err := w.seal(); err != nil {
		return err
	}
	if w.jw.Buffered() == 0 {
		return nil
	}
	if err := w.jw.Flush(); err != nil {
		return w.stick(err)
	}
	if w.f != nil && !w.opts.NoSync {
		if err := w.f.Sync(); err != nil {
			return w.stick(fmt.Errorf("tape: sync: %w", err))
		}
	}
	return nil
}

// Buffered returns the raw bytes of the open block (the most a kill would lose).
func (w *Writer) Buffered() int { return len(w.body) }

// Stats returns what the Writer wrote so far.
func (w *Writer) Stats() WriterStats {
	s := w.stats
	s.Bytes = w.jw.Offset()
	return s
}

// Close flushes and, for a file the Writer opened, syncs, unlocks and closes it. It
// is safe to call twice.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	err := w.Flush()
	w.closed = true
	if w.enc != nil {
		w.enc.Close()
	}
	if w.f != nil {
		if w.lock != nil {
			w.lock()
		}
		if cerr := w.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("tape: %w", cerr)
		}
	}
	return err
}

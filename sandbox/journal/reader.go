package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DamageError says where a framed file stops being valid: the offset of the first
// byte that is not part of a valid frame, the sequence number expected there, and why
// (the cause wraps ErrShortFrame, ErrBadFrame or ErrBadHeader). Whether the damage is
// a torn tail (safe to cut) or corruption of synced data is decided by [ScanFile].
type DamageError struct {
	Offset int64
	Seq    uint64
	Err    error
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("journal: damaged frame at offset %d (seq %d): %v", e.Offset, e.Seq, e.Err)
}

func (e *DamageError) Unwrap() error { return e.Err }

// Reader reads the frames of one framed file sequentially from an io.Reader, checking
// checksums, the header's kind, and the sequence and group invariants (the first frame
// has Seq == Header().Base, each next frame Seq+1; a frame either continues the group of
// the previous one or starts a new group at its own Seq). It buffers at most one frame
// plus a small read-ahead, so memory is bounded by the maxPayload given to NewReader.
//
// A Reader is not safe for concurrent use. Its zero value is not usable; call
// NewReader.
type Reader struct {
	r        io.Reader
	max      int
	buf      []byte
	lo, hi   int   // unread bytes are buf[lo:hi]
	off      int64 // file offset of buf[lo]
	eof      bool
	hdr      FileHeader
	next     uint64
	group    uint64
	started  bool
	err      error
	readSize int
}

const readChunk = 64 << 10

// readBufs keeps the buffers of Readers that reached the end of their input (or an
// error) for the next Readers: a process that reads many files one after the other,
// or the same one many times (a backtest sweep reads its tape once per point),
// allocates a buffer once instead of once per file. Buffers above maxKeptBuf are
// left to the collector.
var readBufs sync.Pool

const maxKeptBuf = 1<<20 + readChunk

// getBuf returns an empty buffer of at least size bytes, a kept one if there is.
func getBuf(size int) []byte {
	if p, ok := readBufs.Get().(*[]byte); ok && cap(*p) >= size {
		return (*p)[:0]
	}
	return make([]byte, 0, size)
}

// NewReader reads and checks the file header (of kind kind) from r and returns a
// Reader positioned at the first frame. maxPayload bounds a frame's payload (zero:
// MaxPayload, which trusts length fields up to 4 GiB; pass a real bound for
// untrusted input). An invalid or short header is returned as a *DamageError at
// offset 0.
func NewReader(r io.Reader, kind Kind, maxPayload int) (*Reader, error) {
	return newReader(r, kind, maxPayload, readChunk)
}

func newReader(r io.Reader, kind Kind, maxPayload, bufSize int) (*Reader, error) {
	if maxPayload <= 0 || uint64(maxPayload) > MaxPayload {
		maxPayload = MaxPayload
	}
	bufSize = max(bufSize, FileHeaderSize)
	rd := &Reader{r: r, max: maxPayload, readSize: bufSize, buf: getBuf(bufSize)}
	if err := rd.fill(FileHeaderSize); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	h, err := ParseFileHeader(rd.buf[rd.lo:rd.hi], kind)
	if err != nil {
		return nil, &DamageError{Offset: 0, Err: err}
	}
	rd.hdr = h
	rd.next = h.Base
	rd.lo += FileHeaderSize
	rd.off = FileHeaderSize
	return rd, nil
}

// Header returns the file header.
func (r *Reader) Header() FileHeader { return r.hdr }

// Offset returns the file offset just past the last frame returned by Next (the
// header's end before the first call): the end of the file's valid prefix so far.
func (r *Reader) Offset() int64 { return r.off }

// NextSeq returns the sequence number the next frame must carry.
func (r *Reader) NextSeq() uint64 { return r.next }

// Next returns the next frame. Its Payload is valid until the following call. At a
// clean end of input (exactly at a frame boundary) it returns io.EOF; where the input
// stops being a valid continuation it returns a *DamageError; errors of the underlying
// reader are returned as they are. Errors are sticky: with the first one the Reader
// gives its buffer to the next Reader made (readBufs).
func (r *Reader) Next() (Frame, error) {
	if r.err != nil {
		return Frame{}, r.err
	}
	f, err := r.next1()
	if err != nil {
		r.err = err
		if cap(r.buf) <= maxKeptBuf {
			b := r.buf[:0]
			readBufs.Put(&b)
		}
		r.buf, r.lo, r.hi = nil, 0, 0
	}
	return f, err
}

func (r *Reader) next1() (Frame, error) {
	for {
		avail := r.buf[r.lo:r.hi]
		f, n, err := ParseFrame(avail, r.max)
		if err == nil {
			if err := r.check(f); err != nil {
				return Frame{}, r.damage(err)
			}
			r.lo += n
			r.off += int64(n)
			r.next = f.Seq + 1
			r.group = f.Group
			r.started = true
			return f, nil
		}
		if !errors.Is(err, ErrShortFrame) {
			return Frame{}, r.damage(err)
		}
		if r.eof {
			if len(avail) == 0 {
				return Frame{}, io.EOF
			}
			return Frame{}, r.damage(err)
		}
		need := FrameHeaderSize
		if len(avail) >= FrameHeaderSize {
			need += int(binary.LittleEndian.Uint32(avail[4:8]))
		}
		if err := r.fill(need); err != nil && !errors.Is(err, io.EOF) {
			return Frame{}, err
		}
	}
}

func (r *Reader) check(f Frame) error {
	switch {
	case f.Seq != r.next:
		return fmt.Errorf("%w: seq %d, want %d", ErrBadFrame, f.Seq, r.next)
	case f.Group != f.Seq && (!r.started || f.Group != r.group):
		return fmt.Errorf("%w: seq %d claims group %d", ErrBadFrame, f.Seq, f.Group)
	}
	return nil
}

func (r *Reader) damage(err error) error {
	return &DamageError{Offset: r.off, Seq: r.next, Err: err}
}

// fill reads until at least need unread bytes are buffered or the input ends
// (io.EOF, with r.eof set). It compacts the buffer and grows it to need if needed.
func (r *Reader) fill(need int) error {
	if r.lo > 0 {
		n := copy(r.buf[:cap(r.buf)], r.buf[r.lo:r.hi])
		r.lo, r.hi = 0, n
	}
	if cap(r.buf) < need {
		nb := make([]byte, r.hi, need+r.readSize)
		copy(nb, r.buf[:r.hi])
		r.buf = nb
	}
	r.buf = r.buf[:cap(r.buf)]
	for r.hi < need && !r.eof {
		n, err := r.r.Read(r.buf[r.hi:])
		r.hi += n
		if errors.Is(err, io.EOF) {
			r.eof = true
		} else if err != nil {
			return err
		}
	}
	if r.eof {
		return io.EOF
	}
	return nil
}

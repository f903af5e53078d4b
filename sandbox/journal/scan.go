package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// ErrCorrupt is matched (errors.Is) by every error that reports damage which is not
// a torn tail: data that had been synced is unreadable, so cutting it off would lose
// acknowledged records. Recovery stops; an operator decides.
var ErrCorrupt = errors.New("journal: corrupt")

// CorruptError reports corruption that is not a torn tail. Offset is where the valid
// prefix ends, Seq the sequence number expected there; Evidence, when non-negative, is
// the offset of a valid frame from a later write group found after the damage (the
// proof that the damaged bytes had been synced). Path is set by callers that know it.
type CorruptError struct {
	Path     string
	Offset   int64
	Seq      uint64
	Evidence int64
	Reason   string
}

func (e *CorruptError) Error() string {
	s := "journal: corrupt"
	if e.Path != "" {
		s += " " + e.Path
	}
	s += fmt.Sprintf(" at offset %d (seq %d): %s", e.Offset, e.Seq, e.Reason)
	if e.Evidence >= 0 {
		s += fmt.Sprintf("; valid data of a later write group follows at offset %d", e.Evidence)
	}
	return s
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// ScanOptions configure ScanFile. The zero value scans a file of kind zero, which no
// real file has: set Kind.
type ScanOptions struct {
	// Kind is the kind the file header must carry.
	Kind Kind
	// Base, if non-zero, is the sequence number the header must carry (typically
	// taken from the file name). With Base set, a damaged header followed only by
	// frames of the file's first write group is a torn tail (the header and the first
	// group are written together); without it, any valid frame after a damaged header
	// makes the file corrupt.
	Base uint64
	// MaxPayload bounds a frame's payload. If zero, MaxPayload (the format's limit);
	// lengths beyond the file's size are rejected either way.
	MaxPayload int
	// Frame, if non-nil, is called for every valid frame in order. Its Payload is
	// only valid during the call. An error stops the scan and is returned as is.
	Frame func(Frame) error
}

// ScanResult describes the valid prefix of a framed file.
type ScanResult struct {
	// Header is the file header; zero if the header itself is torn.
	Header FileHeader
	// End is the offset just past the last valid frame: the length of the valid
	// prefix (0 if the header is torn, FileHeaderSize if no frame is valid).
	End int64
	// Frames is the number of valid frames; Last the sequence number of the last one
	// (meaningless when Frames is 0).
	Frames int
	Last   uint64
	// Torn, if non-nil, says that bytes from End on are a torn tail: not a valid
	// frame, and no valid frame of a later write group follows. They can be cut off.
	Torn *DamageError
}

// ScanFile reads the framed file r of the given size from the start, calling
// opts.Frame for each valid frame, and classifies whatever follows the valid prefix:
//
//   - nothing: the file ends cleanly (Torn nil);
//   - a torn tail (Torn set): the damaged bytes belong to the last write group — no
//     valid frame of a later group appears anywhere after them — so they were never
//     synced and can be truncated;
//   - corruption (a *CorruptError, errors.Is ErrCorrupt): a CRC-valid frame of a later
//     write group (or one out of sequence) follows the damage, so the damaged bytes
//     had been synced before it was written. Nothing is cut.
//
// Limitation (inherent without a separate sync marker): damage inside the last write
// group of a file is indistinguishable from a torn write and is classified as torn.
// Errors of r are returned as they are.
func ScanFile(r io.ReaderAt, size int64, opts ScanOptions) (ScanResult, error) {
	max := opts.MaxPayload
	if max <= 0 || uint64(max) > MaxPayload {
		max = MaxPayload
	}
	if int64(max) > size {
		max = int(size)
	}
	rd, err := newReader(io.NewSectionReader(r, 0, size), opts.Kind, max, int(min(size, readChunk)))
	if err != nil {
		var d *DamageError
		if !errors.As(err, &d) {
			return ScanResult{}, err
		}
		d.Seq = opts.Base
		return classifyTail(r, size, ScanResult{}, d, max)
	}
	res := ScanResult{Header: rd.Header(), End: FileHeaderSize, Last: rd.Header().Base - 1}
	if opts.Base != 0 && res.Header.Base != opts.Base {
		return res, &CorruptError{Offset: 0, Seq: opts.Base, Evidence: -1,
			Reason: fmt.Sprintf("header base %d, want %d", res.Header.Base, opts.Base)}
	}
	for {
		f, err := rd.Next()
		if err != nil {
			var d *DamageError
			switch {
			case errors.Is(err, io.EOF):
				return res, nil
			case errors.As(err, &d):
				return classifyTail(r, size, res, d, max)
			default:
				return res, err
			}
		}
		if opts.Frame != nil {
			if err := opts.Frame(f); err != nil {
				return res, err
			}
		}
		res.End = rd.Offset()
		res.Frames++
		res.Last = f.Seq
	}
}

// classifyTail decides whether the damage d (at d.Offset, where seq k = d.Seq was
// expected) is a torn tail or corruption, by searching the rest of the file for
// CRC-valid frames. A valid frame of k's write group (Group ≤ k ≤ Seq) is consistent
// with a torn write; a valid frame of a later group (Group > k), or one that repeats
// an earlier sequence number (Seq < k), is not. k == 0 means "unknown" (a damaged
// header of a file whose base is not known): every valid frame is evidence.
func classifyTail(r io.ReaderAt, size int64, res ScanResult, d *DamageError, max int) (ScanResult, error) {
	k := d.Seq
	s := tailScanner{r: r, size: size, max: max, lo: 0, hi: math.MaxUint64}
	if k != 0 {
		// A genuine frame after the damage carries a sequence number between the
		// file's base and k plus the number of frames that fit in the rest of the
		// file; checking that before the CRC makes the search cheap on random bytes.
		s.lo = res.Header.Base
		if s.lo == 0 || s.lo > k {
			s.lo = k
		}
		s.hi = k + uint64(size-d.Offset)/FrameHeaderSize
	}
	off := d.Offset + 1
	for {
		f, at, ok, err := s.find(off)
		if err != nil {
			return res, err
		}
		if !ok {
			break
		}
		if k == 0 || f.Group > k || f.Seq < k {
			return res, &CorruptError{Offset: d.Offset, Seq: k, Evidence: at,
				Reason: fmt.Sprintf("%v; a valid frame (seq %d, write group %d) follows", d.Err, f.Seq, f.Group)}
		}
		off = at + int64(FrameSize(len(f.Payload)))
	}
	res.Torn = d
	return res, nil
}

// tailScanner searches a file region byte by byte for CRC-valid frames, through a
// bounded window.
type tailScanner struct {
	r      io.ReaderAt
	size   int64
	max    int
	lo, hi uint64 // plausible sequence numbers
	win    []byte
	winOff int64
	big    []byte
}

const scanWindow = 1 << 20

// find returns the first CRC-valid frame at an offset ≥ from.
func (s *tailScanner) find(from int64) (Frame, int64, bool, error) {
	for off := from; off+FrameHeaderSize <= s.size; off++ {
		h, err := s.at(off, FrameHeaderSize)
		if err != nil {
			return Frame{}, 0, false, err
		}
		n := int64(binary.LittleEndian.Uint32(h[4:8]))
		if n > int64(s.max) || off+FrameHeaderSize+n > s.size {
			continue
		}
		seq := binary.LittleEndian.Uint64(h[8:16])
		delta := uint64(binary.LittleEndian.Uint32(h[16:20]))
		if delta > seq || seq < s.lo || seq > s.hi {
			continue
		}
		want := binary.LittleEndian.Uint32(h[0:4])
		b, err := s.at(off, FrameHeaderSize+int(n))
		if err != nil {
			return Frame{}, 0, false, err
		}
		if crc32.Update(0, castagnoli, b[4:]) != want {
			continue
		}
		f, _, err := ParseFrame(b, s.max)
		if err != nil {
			continue
		}
		return f, off, true, nil
	}
	return Frame{}, 0, false, nil
}

// at returns n bytes at off, from the window when they fit in it.
func (s *tailScanner) at(off int64, n int) ([]byte, error) {
	if off >= s.winOff && off+int64(n) <= s.winOff+int64(len(s.win)) {
		return s.win[off-s.winOff : off-s.winOff+int64(n)], nil
	}
	if n <= scanWindow/2 {
		m := min(int64(scanWindow), s.size-off)
		if int64(cap(s.win)) < m {
			s.win = make([]byte, m)
		}
		s.win = s.win[:m]
		s.winOff = off
		if _, err := readFull(s.r, s.win, off); err != nil {
			return nil, err
		}
		return s.win[:n], nil
	}
	if cap(s.big) < n {
		s.big = make([]byte, n)
	}
	b := s.big[:n]
	if _, err := readFull(s.r, b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// readFull is io.ReaderAt.ReadAt treating a full read that ends with io.EOF as success.
func readFull(r io.ReaderAt, b []byte, off int64) (int, error) {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return n, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

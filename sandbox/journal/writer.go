package journal

import (
	"fmt"
	"io"
)

// Writer appends frames to one framed file through an io.Writer, without any sync
// policy of its own: it is the building block for append-only files that are not the
// journal (a market-data recording, an export). Append buffers a frame in memory;
// Flush hands everything buffered (with the file header on the first Flush) to the
// io.Writer in a single Write call, and that call's frames form one write group, so
// a reader can tell a torn last write from corruption of earlier ones (see ScanFile).
// Call Flush when Buffered grows past your memory bound, and sync the file yourself
// if you need durability (after Flush returns).
//
// If the process is killed at any moment, the file on disk is a valid prefix
// followed at most by a torn part of the last Write, which ScanFile reports as Torn;
// ResumeWriter continues such a file after the caller truncates it to End.
//
// A Writer is not safe for concurrent use. Errors of the io.Writer are sticky.
type Writer struct {
	w     io.Writer
	buf   []byte
	next  uint64
	group uint64
	off   int64
	err   error
}

// NewWriter returns a Writer for a new file with header h: the first frame gets
// sequence number h.Base. Nothing is written until Flush.
func NewWriter(w io.Writer, h FileHeader) *Writer {
	return &Writer{w: w, buf: AppendFileHeader(nil, h), next: h.Base, group: h.Base}
}

// ResumeWriter returns a Writer that continues a file whose valid prefix ScanFile
// described in res: its first frame gets sequence number res.Last+1 (res.Header.Base
// if the file has no frame). The caller must already have cut the file to res.End
// and positioned w there (for an *os.File: Truncate(res.End), then open with
// O_APPEND or Seek). A file whose header is torn (res.End < FileHeaderSize) cannot be
// resumed: recreate it with NewWriter.
func ResumeWriter(w io.Writer, res ScanResult) (*Writer, error) {
	if res.End < FileHeaderSize {
		return nil, fmt.Errorf("%w: cannot resume a file without a valid header", ErrBadHeader)
	}
	next := res.Header.Base
	if res.Frames > 0 {
		next = res.Last + 1
	}
	return &Writer{w: w, next: next, group: next, off: res.End}, nil
}

// Append buffers payload as the next frame and returns its sequence number. It
// copies payload.
func (w *Writer) Append(payload []byte) (uint64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if uint64(len(payload)) > MaxPayload {
		return 0, fmt.Errorf("%w: payload of %d bytes", ErrBadFrame, len(payload))
	}
	seq := w.next
	w.buf = AppendFrame(w.buf, seq, w.group, payload)
	w.next++
	return seq, nil
}

// Buffered returns the number of bytes waiting for Flush.
func (w *Writer) Buffered() int { return len(w.buf) }

// Offset returns the size of the file once the buffered bytes are written.
func (w *Writer) Offset() int64 { return w.off + int64(len(w.buf)) }

// NextSeq returns the sequence number the next Append will assign.
func (w *Writer) NextSeq() uint64 { return w.next }

// Flush writes the buffered frames in one Write call; they form one write group.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.buf)
	w.off += int64(n)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("journal: writer failed: %w", err)
		return w.err
	}
	w.buf = w.buf[:0]
	w.group = w.next
	return nil
}

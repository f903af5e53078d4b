package journal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Journal is a durable, append-only log of opaque records with group commit, plus the
// snapshot store that bounds it. See the package documentation for the contracts.
//
// All methods are safe for concurrent use. The intended use is one appender (the
// engine goroutine, so that LSN order is the order of application) and many waiters.
// A Journal owns one goroutine, the flusher, started by Open and stopped by Close.
type Journal struct {
	dir  string
	o    options
	log  *zap.Logger
	lock *os.File

	mu           sync.Mutex
	space        sync.Cond // appenders blocked on maxPending wait here; L is &mu
	next         uint64    // LSN the next Append assigns
	pending      []*batch  // appended, not yet taken by the flusher; LSN order; the last is open
	inflight     *batch    // taken by the flusher, being written and synced
	pendingBytes int       // frame bytes in pending and inflight
	closing      bool
	failed       error // sticky; wraps ErrFailed
	free         [][]byte
	st           Stats

	durable atomic.Uint64 // every LSN ≤ durable is durable

	kick chan struct{} // capacity 1: wakes the flusher
	done chan struct{} // closed when the flusher has exited

	// Owned by the flusher goroutine (and by Open before it starts).
	cur     *os.File
	curSize int64
	curNext uint64 // the LSN that would continue cur

	segMu   sync.Mutex
	segs    []segment // ascending base; the last one is cur's
	lastRec uint64    // LSN of the last durable record in the segment files

	snapMu     sync.Mutex
	snaps      []uint64     // LSNs of the snapshots on disk, ascending
	snapCount  atomic.Int32 // len(snaps), for Stats without waiting for a snapshot write
	recovery   Recovery
	closedOnce sync.Once
	closeErr   error
}

// maxFreeBuffers bounds the batch buffers kept for reuse after a burst.
const maxFreeBuffers = 8

// batch is one write group: consecutive records written with one write and one sync.
// Its buffer starts with FileHeaderSize bytes of headroom, filled with a segment
// header when the batch opens a new segment.
type batch struct {
	first, last uint64
	buf         []byte
	done        chan struct{} // closed when the batch is durable or failed
	err         error         // set before done is closed
}

type segment struct {
	base uint64
	path string
}

// Stats are counters since Open, for metrics. Read them with Journal.Stats.
type Stats struct {
	// LastLSN is the last LSN appended; DurableLSN the highest durable one.
	LastLSN, DurableLSN uint64
	// Records appended since Open; Batches written (each one write and one sync);
	// Bytes written to segment files (frames and headers).
	Records, Batches, Bytes uint64
	// MaxBatchRecords is the largest batch written, in records.
	MaxBatchRecords uint64
	// SyncTime is the total time spent in write+sync of batches; SyncTime/Batches is
	// the mean commit latency seen by the flusher.
	SyncTime time.Duration
	// Segments is the number of segment files; Snapshots the number of snapshots kept.
	Segments, Snapshots int
}

// Append copies rec into the journal's buffer and returns its LSN (1 for the first
// record ever, then consecutive). It does not wait for the disk: the record is durable
// only once WaitDurable(ctx, lsn) has returned nil. Append blocks only when the bytes
// not yet written exceed the MaxPendingBytes option (backpressure). Errors: ErrTooLarge,
// ErrClosed, or the journal's failure (wrapping ErrFailed).
func (j *Journal) Append(rec []byte) (uint64, error) {
	if len(rec) > MaxRecordSize {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(rec), MaxRecordSize)
	}
	size := FrameSize(len(rec))
	j.mu.Lock()
	for j.failed == nil && !j.closing && j.pendingBytes > 0 && j.pendingBytes+size > j.o.maxPending {
		j.space.Wait()
	}
	if err := j.appendErr(); err != nil {
		j.mu.Unlock()
		return 0, err
	}
	// The flusher sleeps only when nothing is pending, so only the record that makes
	// pending non-empty needs to wake it.
	wake := len(j.pending) == 0
	b := j.openBatch(size)
	lsn := j.next
	j.next++
	b.buf = AppendFrame(b.buf, lsn, b.first, rec)
	b.last = lsn
	j.pendingBytes += size
	j.st.Records++
	j.mu.Unlock()
	if wake {
		select {
		case j.kick <- struct{}{}:
		default:
		}
	}
	return lsn, nil
}

func (j *Journal) appendErr() error {
	switch {
	case j.failed != nil:
		return j.failed
	case j.closing:
		return ErrClosed
	}
	return nil
}

// openBatch returns the batch that takes the next record of size bytes: the last
// pending batch if it has room, else a new one. j.mu is held.
func (j *Journal) openBatch(size int) *batch {
	if n := len(j.pending); n > 0 {
		b := j.pending[n-1]
		if len(b.buf)-FileHeaderSize+size <= j.o.maxBatchBytes {
			return b
		}
	}
	var buf []byte
	if n := len(j.free); n > 0 {
		buf = j.free[n-1][:FileHeaderSize]
		j.free = j.free[:n-1]
	} else {
		// Full size at once: growing by doubling under load costs more in copies
		// than the Append itself.
		buf = make([]byte, FileHeaderSize, FileHeaderSize+max(j.o.maxBatchBytes, size))
	}
	b := &batch{first: j.next, buf: buf, done: make(chan struct{})}
	j.pending = append(j.pending, b)
	return b
}

// WaitDurable blocks until the record lsn (and so every record before it) is durable,
// the journal fails, or ctx ends. It returns nil when the record is durable, the
// journal's failure (wrapping ErrFailed), ctx.Err(), or ErrUnknownLSN for an LSN not
// yet appended. Thousands of concurrent waiters are cheap: waiters of one batch share
// one channel, and a durable LSN is answered without locking.
func (j *Journal) WaitDurable(ctx context.Context, lsn uint64) error {
	if lsn <= j.durable.Load() {
		return nil
	}
	j.mu.Lock()
	if lsn <= j.durable.Load() {
		j.mu.Unlock()
		return nil
	}
	if j.failed != nil {
		err := j.failed
		j.mu.Unlock()
		return err
	}
	if lsn >= j.next {
		next := j.next
		j.mu.Unlock()
		return fmt.Errorf("%w: %d (last appended %d)", ErrUnknownLSN, lsn, next-1)
	}
	b := j.inflight
	if b == nil || lsn < b.first || lsn > b.last {
		b = nil
		for _, p := range j.pending {
			if lsn >= p.first && lsn <= p.last {
				b = p
				break
			}
		}
	}
	j.mu.Unlock()
	if b == nil { // cannot happen: every appended, non-durable LSN is in a batch
		return fmt.Errorf("journal: lsn %d has no batch", lsn)
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LastLSN returns the LSN of the last record appended (or recovered, or covered by
// the recovered snapshot); 0 for an empty journal.
func (j *Journal) LastLSN() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next - 1
}

// DurableLSN returns the highest LSN known durable: every record up to it survives a
// crash. It never decreases.
func (j *Journal) DurableLSN() uint64 { return j.durable.Load() }

// Stats returns the journal's counters.
func (j *Journal) Stats() Stats {
	j.mu.Lock()
	s := j.st
	s.LastLSN = j.next - 1
	j.mu.Unlock()
	s.DurableLSN = j.durable.Load()
	j.segMu.Lock()
	s.Segments = len(j.segs)
	j.segMu.Unlock()
	s.Snapshots = int(j.snapCount.Load())
	return s
}

// Dir returns the journal's directory.
func (j *Journal) Dir() string { return j.dir }

// Close stops accepting appends (they return ErrClosed), waits until everything
// appended is written and synced, stops the flusher and releases the directory. It
// returns the journal's failure if it had failed, nil otherwise. If ctx ends first,
// Close returns ctx.Err() while the flusher keeps working in the background; call
// Close again to wait for it and release the directory. Later calls return the
// first call's result once done.
func (j *Journal) Close(ctx context.Context) error {
	j.mu.Lock()
	j.closing = true
	j.space.Broadcast()
	j.mu.Unlock()
	select {
	case j.kick <- struct{}{}:
	default:
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	j.closedOnce.Do(func() {
		j.snapMu.Lock() // wait for a WriteSnapshot in progress
		defer j.snapMu.Unlock()
		j.mu.Lock()
		j.closeErr = j.failed
		j.mu.Unlock()
		if j.lock != nil {
			j.lock.Close() // releases the flock
		}
	})
	return j.closeErr
}

// run is the flusher: it takes the oldest pending batch, writes it (rotating segments
// as needed), syncs it, marks it durable and wakes its waiters; as soon as a sync
// returns it takes whatever accumulated meanwhile, so batches grow with load.
func (j *Journal) run() {
	defer close(j.done)
	defer j.closeCurrent()
	for {
		j.mu.Lock()
		for len(j.pending) == 0 && !j.closing {
			j.mu.Unlock()
			<-j.kick
			j.mu.Lock()
		}
		if len(j.pending) == 0 {
			j.mu.Unlock()
			return
		}
		b := j.pending[0]
		copy(j.pending, j.pending[1:])
		j.pending[len(j.pending)-1] = nil
		j.pending = j.pending[:len(j.pending)-1]
		j.inflight = b
		j.mu.Unlock()

		start := time.Now()
		n, err := j.write(b)
		took := time.Since(start)

		j.mu.Lock()
		j.inflight = nil
		j.pendingBytes -= len(b.buf) - FileHeaderSize
		if err != nil {
			j.failed = fmt.Errorf("%w: %w", ErrFailed, err)
			j.log.Error("journal: write failed; the journal refuses further records", zap.Error(err),
				zap.Uint64("first_lsn", b.first), zap.Uint64("last_lsn", b.last))
			b.err = j.failed
			close(b.done)
			for _, p := range j.pending {
				p.err = j.failed
				close(p.done)
			}
			j.pending = nil
			j.space.Broadcast()
			j.mu.Unlock()
			return
		}
		j.durable.Store(b.last)
		j.st.Batches++
		j.st.Bytes += uint64(n)
		j.st.SyncTime += took
		if r := b.last - b.first + 1; r > j.st.MaxBatchRecords {
			j.st.MaxBatchRecords = r
		}
		close(b.done)
		if cap(b.buf) <= 2*j.o.maxBatchBytes+FileHeaderSize && len(j.free) < maxFreeBuffers {
			j.free = append(j.free, b.buf)
		}
		b.buf = nil
		j.space.Broadcast()
		j.mu.Unlock()
	}
}

// write writes batch b to the current segment (starting a new one when needed) and
// syncs it. It returns the number of bytes written.
func (j *Journal) write(b *batch) (int, error) {
	data := b.buf[FileHeaderSize:]
	rotated := false
	if j.cur == nil || j.curNext != b.first || (j.curSize > FileHeaderSize && j.curSize+int64(len(data)) > j.o.segmentSize) {
		if err := j.rotate(b.first); err != nil {
			return 0, err
		}
		AppendFileHeader(b.buf[:0], FileHeader{Kind: KindJournal, Base: b.first})
		data = b.buf
		rotated = true
	}
	n, err := j.cur.WriteAt(data, j.curSize)
	j.curSize += int64(n)
	if err != nil {
		return n, err
	}
	if err := j.syncFile(j.cur); err != nil {
		return n, err
	}
	if rotated {
		if err := j.syncDir(); err != nil {
			return n, err
		}
	}
	j.curNext = b.last + 1
	j.segMu.Lock()
	j.lastRec = b.last
	j.segMu.Unlock()
	return n, nil
}

// rotate closes the current segment (already synced) and creates the segment whose
// first record is base. The file exists but is empty until the caller writes the
// header together with the first batch.
func (j *Journal) rotate(base uint64) error {
	j.closeCurrent()
	path := filepath.Join(j.dir, segmentName(base))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create segment: %w", err)
	}
	j.cur, j.curSize, j.curNext = f, 0, base
	j.segMu.Lock()
	j.segs = append(j.segs, segment{base: base, path: path})
	j.segMu.Unlock()
	j.log.Debug("journal: new segment", zap.String("path", path), zap.Uint64("base_lsn", base))
	return nil
}

func (j *Journal) closeCurrent() {
	if j.cur != nil {
		if err := j.cur.Close(); err != nil {
			j.log.Warn("journal: closing segment", zap.Error(err))
		}
		j.cur = nil
	}
}

func (j *Journal) syncFile(f *os.File) error {
	switch j.o.sync {
	case SyncNone:
		return nil
	case SyncFull:
		return f.Sync()
	}
	return datasync(f)
}

// syncDir makes the creation, rename or removal of files in the directory durable.
func (j *Journal) syncDir() error {
	if j.o.sync == SyncNone {
		return nil
	}
	d, err := os.Open(j.dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

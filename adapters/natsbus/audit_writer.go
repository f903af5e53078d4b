package natsbus

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// ErrAuditBacklog is returned by AuditWriter.Enqueue when its queue is full: the
// stream has not kept up (a slow disk, a lost server). The record is not queued. An
// agent should treat it as a reason to stop opening positions, since what it does can
// no longer be recorded.
var ErrAuditBacklog = errors.New("natsbus: audit backlog full")

// AuditWriterConfig configures an AuditWriter. The zero value is usable.
type AuditWriterConfig struct {
	// Queue bounds the records waiting to be stored. If zero, 4096. Overflow policy:
	// Enqueue refuses the record with ErrAuditBacklog (it never blocks and never
	// drops a record silently).
	Queue int
	// Batch is the most records stored in one pipelined round trip. If zero, 64.
	Batch int
	// Drain bounds how long Run keeps storing queued records after its context ends.
	// If zero, 5 s.
	Drain time.Duration
}

// AuditWriter stores one agent's audit records in the background, so that the agent's
// loop never waits for the disk: Enqueue is non-blocking, Run stores batches in
// enqueue order and retries a failed batch (under the same record IDs, so nothing is
// stored twice) until it succeeds, and Flush waits until what was enqueued is
// acknowledged. Enqueue, Flush and Backlog are safe for concurrent use; Run is called
// once.
type AuditWriter struct {
	log *AuditLog
	cfg AuditWriterConfig
	ch  chan AuditRecord

	enqueued atomic.Uint64
	stored   atomic.Uint64

	mu       sync.Mutex
	progress chan struct{} // closed and replaced after every stored batch
}

// NewWriter returns a background writer for l.
func (l *AuditLog) NewWriter(cfg AuditWriterConfig) *AuditWriter {
	if cfg.Queue <= 0 {
		cfg.Queue = 4096
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 5 * time.Second
	}
	return &AuditWriter{log: l, cfg: cfg, ch: make(chan AuditRecord, cfg.Queue), progress: make(chan struct{})}
}

// Enqueue queues rec for storage, or returns ErrAuditBacklog when the queue is full.
// It never blocks. The record's ID is assigned when it is stored.
func (w *AuditWriter) Enqueue(rec AuditRecord) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.ch <- rec:
		w.enqueued.Add(1)
		return nil
	default:
		return ErrAuditBacklog
	}
}

// Backlog returns the number of records enqueued and not yet acknowledged.
func (w *AuditWriter) Backlog() int {
	s := w.stored.Load() // first: stored never overtakes a later read of enqueued
	e := w.enqueued.Load()
	if s > e {
		return 0
	}
	return int(e - s)
}

// Flush waits until every record enqueued before the call is stored, or ctx ends.
func (w *AuditWriter) Flush(ctx context.Context) error {
	target := w.enqueued.Load()
	for {
		w.mu.Lock()
		ch := w.progress
		w.mu.Unlock()
		if w.stored.Load() >= target {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Run stores queued records until ctx ends, then keeps storing what is queued for at
// most the Drain time, and returns nil (or an error naming how many records were left
// unstored).
func (w *AuditWriter) Run(ctx context.Context) error {
	batch := make([]AuditRecord, 0, w.cfg.Batch)
	for {
		select {
		case <-ctx.Done():
			return w.drain(batch[:0])
		case rec := <-w.ch:
			batch = w.fill(append(batch[:0], rec))
			if err := w.store(ctx, batch); err != nil {
				// ctx ended while retrying: the batch (IDs assigned) is stored by drain.
				return w.drain(batch)
			}
		}
	}
}

// fill adds queued records to batch without waiting, up to the batch size.
func (w *AuditWriter) fill(batch []AuditRecord) []AuditRecord {
	for len(batch) < cap(batch) {
		select {
		case rec := <-w.ch:
			batch = append(batch, rec)
		default:
			return batch
		}
	}
	return batch
}

// store appends batch, retrying with a backoff until it is stored or ctx ends.
func (w *AuditWriter) store(ctx context.Context, batch []AuditRecord) error {
	wait := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := w.log.AppendBatch(actx, batch)
		cancel()
		if err == nil {
			w.stored.Add(uint64(len(batch)))
			w.mu.Lock()
			close(w.progress)
			w.progress = make(chan struct{})
			w.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.log.bus.log.Warn("audit batch not stored, retrying", zap.Int("records", len(batch)), zap.Error(err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

func (w *AuditWriter) drain(batch []AuditRecord) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Drain)
	defer cancel()
	for {
		batch = w.fill(batch)
		if len(batch) == 0 {
			return nil
		}
		if err := w.store(ctx, batch); err != nil {
			left := w.Backlog()
			w.log.bus.log.Error("audit records not stored at shutdown", zap.Int("records", left))
			return errors.Join(errors.New("natsbus: audit records left unstored at shutdown"), err)
		}
		batch = batch[:0]
	}
}

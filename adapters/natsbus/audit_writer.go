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
	// Spool, if set, keeps on local disk what the stream cannot take (docs/design/
	// 0149): a batch not stored within SpoolAfter is spooled, and so is every
	// record enqueued after it until the spool has been stored (tried after 1 s,
	// backing off to 5 s); at shutdown, what could not be stored within Drain is
	// spooled instead of lost. A spool an earlier process left is stored first.
	// Spooled records count as stored for Backlog and Flush. If nil, Run retries
	// a batch until it is stored and the queue absorbs the outage.
	Spool *Spool
	// SpoolAfter is how long a batch may fail before it is spooled. If zero, 5 s.
	SpoolAfter time.Duration
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
	if cfg.SpoolAfter <= 0 {
		cfg.SpoolAfter = 5 * time.Second
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

// Flush waits until every record enqueued before the call is stored (or spooled),
// or ctx ends.
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
// most the Drain time (spooling what is left, with a Spool), and returns nil (or an
// error naming how many records were left unstored).
func (w *AuditWriter) Run(ctx context.Context) error {
	batch := make([]AuditRecord, 0, w.cfg.Batch)
	sp := w.cfg.Spool
	spooling := sp != nil && sp.Len() > 0 // an earlier process's records go first
	retry := time.NewTimer(0)
	defer retry.Stop()
	if !spooling {
		retry.Stop()
	}
	retryWait := time.Second
	for {
		if spooling {
			select {
			case <-ctx.Done():
				return w.drain(batch[:0], true)
			case rec := <-w.ch:
				batch = w.fill(append(batch[:0], rec))
				if err := w.spoolOrStore(ctx, batch, false); err != nil {
					return w.drain(batch, true)
				}
			case <-retry.C:
				// One attempt is bounded (10 s, plus 1 ms a record), so that an
				// attempt made while the stream still had no leader does not hold
				// the next one back.
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second+time.Duration(sp.Len())*time.Millisecond)
				err := sp.replay(rctx, w.log, w.cfg.Batch)
				cancel()
				if err == nil {
					spooling = false
					continue
				}
				w.log.bus.log.Debug("audit spool not stored yet", zap.Int("records", sp.Len()), zap.Error(err))
				retryWait = min(2*retryWait, 5*time.Second)
				retry.Reset(retryWait)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return w.drain(batch[:0], false)
		case rec := <-w.ch:
			batch = w.fill(append(batch[:0], rec))
			if sp == nil {
				if err := w.store(ctx, batch); err != nil {
					// ctx ended while retrying: the batch (IDs assigned) is stored by drain.
					return w.drain(batch, false)
				}
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, w.cfg.SpoolAfter)
			err := w.store(sctx, batch)
			cancel()
			if err == nil {
				continue
			}
			if ctx.Err() != nil {
				return w.drain(batch, false)
			}
			w.log.bus.log.Warn("the audit stream is not answering: spooling records to local disk", zap.String("spool", sp.Path()))
			if err := w.spoolOrStore(ctx, batch, true); err != nil {
				return w.drain(batch, true)
			}
			spooling, retryWait = true, time.Second
			retry.Reset(retryWait)
		}
	}
}

// spoolOrStore puts batch in the spool (attempted: it was sent without an
// answer) or, when the spool cannot take it (full, a disk error), stores it in the
// stream, retrying until ctx ends.
func (w *AuditWriter) spoolOrStore(ctx context.Context, batch []AuditRecord, attempted bool) error {
	err := w.cfg.Spool.put(w.log, batch, attempted, time.Now())
	if err == nil {
		w.advance(len(batch))
		return nil
	}
	w.log.bus.log.Error("audit records not spooled: waiting for the stream", zap.Int("records", len(batch)), zap.Error(err))
	return w.store(ctx, batch)
}

// advance counts n records as stored and wakes Flush.
func (w *AuditWriter) advance(n int) {
	w.stored.Add(uint64(n))
	w.mu.Lock()
	close(w.progress)
	w.progress = make(chan struct{})
	w.mu.Unlock()
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
			w.advance(len(batch))
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

// drain stores (spooling: spools) what is queued, for at most the Drain time;
// with a Spool, a batch the stream does not take in that time is spooled.
func (w *AuditWriter) drain(batch []AuditRecord, spooling bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Drain)
	defer cancel()
	sp := w.cfg.Spool
	for {
		batch = w.fill(batch)
		if len(batch) == 0 {
			return nil
		}
		if spooling && sp.put(w.log, batch, false, time.Time{}) == nil {
			w.advance(len(batch))
			batch = batch[:0]
			continue
		}
		err := w.store(ctx, batch)
		if err != nil && sp != nil && sp.put(w.log, batch, true, time.Now()) == nil {
			w.log.bus.log.Warn("audit records spooled at shutdown: stored when a process with this spool next runs",
				zap.Int("records", len(batch)), zap.String("spool", sp.Path()))
			w.advance(len(batch))
			spooling, batch = true, batch[:0]
			continue
		}
		if err != nil {
			left := w.Backlog()
			w.log.bus.log.Error("audit records not stored at shutdown", zap.Int("records", left))
			return errors.Join(errors.New("natsbus: audit records left unstored at shutdown"), err)
		}
		batch = batch[:0]
	}
}

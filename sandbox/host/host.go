package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// Defaults of Config.
const (
	// DefaultSnapshotEvery is the number of journal records between snapshots.
	DefaultSnapshotEvery = 100_000
	// DefaultQueueSize is the capacity of the request queue.
	DefaultQueueSize = 4096
	// DefaultPublishQueue is the capacity of the queue of event batches waiting for
	// durability and listeners.
	DefaultPublishQueue = 16384
	// DefaultExpireEvery is how often Run checks for GTD orders due to expire.
	DefaultExpireEvery = time.Second
	// maxBatch bounds the requests one engine-loop iteration takes.
	maxBatch = 256
)

// Errors of the host. Compare with errors.Is. Journal failures wrap
// journal.ErrFailed; a server answers all of them with market.ErrDatabase.
var (
	// ErrClosed is returned by requests after Run has stopped (or before Open
	// finished, or after Close).
	ErrClosed = errors.New("host: closed")
	// ErrRunning is returned by a second concurrent call of Run.
	ErrRunning = errors.New("host: already running")
	// ErrUnknownExtension is returned by Tx.Record for a name no extension has, and
	// by Open when the journal or snapshot names one that is not configured.
	ErrUnknownExtension = errors.New("host: unknown extension")
)

// Config configures Open. The zero value is a valid ephemeral host on the wall clock.
type Config struct {
	// Dir holds the journal and the snapshots (created with mode 0700; files 0600).
	// If empty, the host is ephemeral: nothing is written and nothing survives.
	Dir string
	// Engine configures a new engine (a fresh store). A restored engine keeps the
	// configuration recorded in its snapshot.
	Engine exchange.Config
	// Clock returns the current time in Unix milliseconds; commands whose Time is 0
	// get it. If nil, the wall clock. Tests inject one.
	Clock func() int64
	// Logger receives recovery findings, failures and listener panics. If nil,
	// nothing is logged. Record contents are never logged.
	Logger *zap.Logger
	// SnapshotEvery is the number of journal records between snapshots. If zero,
	// DefaultSnapshotEvery; negative disables periodic snapshots (a final one is
	// still written when Run stops).
	SnapshotEvery int
	// Genesis, if set, runs once on a fresh store (no snapshot and an empty journal)
	// during Open, with a function that applies and journals one command and returns
	// the engine's rejection, if any. Use it to create the catalogue's markets.
	Genesis func(apply func(exchange.Command) error) error
	// Extensions are services' durable states kept beside the engine (see
	// Extension). Names must be unique and non-empty.
	Extensions []Extension
	// Sync is the journal's sync mode. The zero value (journal.SyncData) is durable
	// against power loss; journal.SyncNone only against a process crash.
	Sync journal.SyncMode
	// JournalOptions are passed to journal.Open after the host's own (logger, sync).
	JournalOptions []journal.Option
	// QueueSize is the capacity of the request queue; when full, requests wait
	// (backpressure). If zero, DefaultQueueSize.
	QueueSize int
	// PublishQueue is the capacity of the queue of event batches waiting for
	// durability and listeners; when full, the engine loop waits. If zero,
	// DefaultPublishQueue.
	PublishQueue int
	// ExpireEvery is how often Run checks whether a GTD order is due to expire (see
	// Expire). If zero, DefaultExpireEvery; negative disables the check.
	ExpireEvery time.Duration
	// AdmittedIDs lets Places applied with Tx.ApplyAdmitted — whose ids the caller
	// checked against every id the engine accepted, refusing duplicates itself (the
	// server's admission layer, docs/design/0169) — skip that check on the engine's
	// single thread (exchange.Engine.SetAdmitted); Places applied otherwise (Tx.Apply,
	// Submit) are still checked by the engine. Replays (Open's recovery, a rollback) run the engine's own check, so a
	// journal written before, whose duplicates the engine refused, replays as it did.
	// Engine.AcceptedIDs lists the ids an admission layer starts from.
	AdmittedIDs bool
	// FailStep, if set, is called before every step (Tx.Apply or Tx.Record) of a
	// transaction with the step's index in it (0 for the first); an error fails that
	// step and the whole transaction, which is rolled back as after an error of its
	// function. It is for fault-injection tests: production code leaves it nil.
	FailStep func(step int) error
}

// Extension is a service's durable state, kept by the host beside the engine: its
// records are journaled with the engine's commands, it sees every command's events,
// and it is part of every snapshot, so recovery restores it consistently with the
// engine. All methods are called on the engine goroutine only (during Open and by
// Run), never concurrently; an extension that serves reads from other goroutines
// guards its own state.
//
// When a transaction fails after it changed state, the host rolls it back by
// restoring every extension (and the engine) to the state before it: RestoreSnapshot
// with the newest snapshot (or with the extension's own encoding taken at Open, before
// any record, when there is none yet), then ApplyRecord and Observe for what was
// committed after it. So an extension's whole state must come from its records, its
// observations and its snapshot.
type Extension interface {
	// Name identifies the extension in journal records and snapshots; it must not
	// change once data was written.
	Name() string
	// ApplyRecord applies one record written with Tx.Record, live and during replay.
	// It must be deterministic and, when it returns an error, leave the state
	// unchanged (live, the record is then not journaled; during replay the error
	// fails Open).
	ApplyRecord(rec []byte) error
	// Observe sees the events of every command the engine applies (rejections
	// included), live and during replay, right after the command. events is the
	// engine's buffer, valid only during the call. It must be deterministic.
	Observe(cmd *exchange.Command, events []exchange.Event)
	// AppendSnapshot appends an encoding of the whole state to dst.
	AppendSnapshot(dst []byte) []byte
	// RestoreSnapshot replaces the whole state with a decoded snapshot. It is called
	// during Open, before any record or event, and again by a rollback (see above).
	RestoreSnapshot(data []byte) error
}

// Result is the outcome of one command: its events (a copy, safe to keep, shared with
// listeners — do not modify it) and the engine's rejection, if it was rejected.
type Result struct {
	Events []exchange.Event
	Err    *market.Error
}

// Host owns one exchange engine on one goroutine (see the package documentation).
// All methods are safe for concurrent use. Create it with Open; Run drives it.
type Host struct {
	cfg   Config
	log   *zap.Logger
	clock func() int64
	j     *journal.Journal // nil when ephemeral
	eng   *exchange.Engine
	exts  []Extension
	extIx map[string]int
	// initExt holds each extension's encoding before any record: the state a
	// rollback restores when no snapshot exists yet.
	initExt [][]byte
	mem     *memLog // the ephemeral host's log (nil when durable)

	reqs    chan *request
	stopped chan struct{} // closed when the engine loop stops taking requests
	dead    chan struct{} // closed when the engine loop has exited
	running atomic.Bool
	closed  atomic.Bool

	pub   chan pubItem
	subs  atomic.Pointer[[]*listener]
	subM  sync.Mutex
	dispM sync.Mutex // held by the dispatcher while it calls listeners

	// engine goroutine only
	lsn       uint64 // last LSN appended (or assigned, when ephemeral)
	sinceSnap int
	snapLSN   atomic.Uint64 // LSN of the newest snapshot written or recovered
	snapBusy  atomic.Bool
	snapCh    chan snapJob
	buf       []byte
	txbuf     []byte
	gtd       map[market.OrderID]int64 // open GTD orders → expiration (Unix s)
	tx        Tx
	failed    error // the journal's failure (see fail); nil while healthy

	pubSeq   atomic.Uint64
	applied  atomic.Uint64 // engine commands applied since Open
	records  atomic.Uint64 // extension records applied since Open
	iters    atomic.Uint64
	txs      atomic.Uint64
	rolled   atomic.Uint64
	lastSeq  atomic.Uint64
	closeErr error
	closeMu  sync.Mutex
	jClosed  bool
}

type request struct {
	ctx  context.Context
	fn   func(tx *Tx) error
	done chan struct{} // capacity 1; signalled once fn has run
	err  error
	lsn  uint64 // last LSN appended for this request; 0 when none
}

var reqPool = sync.Pool{New: func() any { return &request{done: make(chan struct{}, 1)} }}

type pubItem struct {
	lsn    uint64
	events []exchange.Event
}

type snapJob struct {
	lsn  uint64
	data []byte
}

// Open opens (or creates) the store in cfg.Dir and recovers the engine and the
// extensions: the newest snapshot, then every journaled record after it. On a fresh
// store it runs cfg.Genesis. It starts no goroutine besides the journal's flusher;
// call Run to serve requests, or Close to release the store without running.
// ctx bounds the recovery's durability waits.
func Open(ctx context.Context, cfg Config) (*Host, error) {
	h := &Host{cfg: cfg, log: cfg.Logger, clock: cfg.Clock, extIx: map[string]int{}, gtd: map[market.OrderID]int64{}}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	if h.clock == nil {
		h.clock = func() int64 { return time.Now().UnixMilli() }
	}
	if h.cfg.SnapshotEvery == 0 {
		h.cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	if h.cfg.QueueSize <= 0 {
		h.cfg.QueueSize = DefaultQueueSize
	}
	if h.cfg.PublishQueue <= 0 {
		h.cfg.PublishQueue = DefaultPublishQueue
	}
	if h.cfg.ExpireEvery == 0 {
		h.cfg.ExpireEvery = DefaultExpireEvery
	}
	for i, x := range cfg.Extensions {
		n := x.Name()
		if n == "" || len(n) > 255 {
			return nil, fmt.Errorf("host: extension %d: invalid name %q", i, n)
		}
		if _, dup := h.extIx[n]; dup {
			return nil, fmt.Errorf("host: extension %q registered twice", n)
		}
		h.extIx[n] = i
	}
	h.exts = cfg.Extensions
	for _, x := range h.exts {
		h.initExt = append(h.initExt, x.AppendSnapshot(nil))
	}
	h.reqs = make(chan *request, h.cfg.QueueSize)
	h.stopped = make(chan struct{})
	h.dead = make(chan struct{})
	h.pub = make(chan pubItem, h.cfg.PublishQueue)
	h.snapCh = make(chan snapJob, 1)
	h.tx.h = h
	empty := []*listener{}
	h.subs.Store(&empty)

	fresh := true
	if cfg.Dir != "" {
		opts := append([]journal.Option{journal.WithLogger(h.log), journal.WithSync(cfg.Sync)}, cfg.JournalOptions...)
		j, err := journal.Open(cfg.Dir, opts...)
		if err != nil {
			return nil, fmt.Errorf("host: open journal: %w", err)
		}
		h.j = j
		if err := h.recover(&fresh); err != nil {
			_ = j.Close(context.Background())
			return nil, err
		}
	} else {
		h.eng = exchange.New(cfg.Engine)
		h.mem = &memLog{}
	}
	if fresh && cfg.Genesis != nil {
		if err := h.genesis(ctx); err != nil {
			h.Close(context.Background())
			return nil, err
		}
	}
	h.rebuildGTD()
	h.eng.SetAdmitted(cfg.AdmittedIDs) // after recovery and genesis: replays checked every id
	h.lastSeq.Store(h.eng.Seq())
	h.pubSeq.Store(h.eng.Seq())
	return h, nil
}

// recover loads the newest snapshot and replays the journal after it.
func (h *Host) recover(fresh *bool) error {
	after := uint64(0)
	snap, err := h.j.LatestSnapshot()
	switch {
	case err == nil:
		if err := h.restoreSnapshot(snap.Data); err != nil {
			return fmt.Errorf("host: snapshot %d: %w", snap.LSN, err)
		}
		after = snap.LSN
		*fresh = false
	case errors.Is(err, journal.ErrNoSnapshot):
		h.eng = exchange.New(h.cfg.Engine)
	default:
		return fmt.Errorf("host: %w", err)
	}
	h.snapLSN.Store(after)
	h.lsn = after
	var cmds, recs int
	err = h.j.Replay(after, func(lsn uint64, rec []byte) error {
		*fresh = false
		kind, err := h.replay(rec)
		if err != nil {
			return fmt.Errorf("host: replay of record %d: %w", lsn, err)
		}
		if kind == tagCommand {
			cmds++
		} else {
			recs++
		}
		h.lsn = lsn
		return nil
	})
	if err != nil {
		return err
	}
	if last := h.j.LastLSN(); last != h.lsn {
		return fmt.Errorf("host: journal ends at %d but replay reached %d", last, h.lsn)
	}
	h.sinceSnap = int(h.lsn - after)
	if after > 0 || h.lsn > 0 {
		if err := h.eng.Check(); err != nil {
			return fmt.Errorf("host: recovered state fails its invariants: %w", err)
		}
		h.log.Info("host: recovered", zap.Uint64("snapshot_lsn", after), zap.Uint64("last_lsn", h.lsn),
			zap.Int("commands", cmds), zap.Int("records", recs), zap.Uint64("seq", h.eng.Seq()))
	}
	return nil
}

func (h *Host) replay(rec []byte) (byte, error) {
	tag, body, err := splitRecord(rec)
	if err != nil {
		return 0, err
	}
	return tag, h.replayStep(tag, body)
}

// replayStep applies one journaled step (a command, an extension record or a
// transaction of them) during recovery or a rollback.
func (h *Host) replayStep(tag byte, body []byte) error {
	switch tag {
	case tagTx:
		return splitTxRecord(body, func(step []byte) error { return h.replayStep(step[0], step[1:]) })
	case tagCommand:
		cmd, n, err := exchange.DecodeCommand(body)
		if err != nil {
			return err
		}
		if n != len(body) {
			return fmt.Errorf("%w: %d bytes after the command", errRecord, len(body)-n)
		}
		evs, _ := h.eng.Apply(&cmd) // rejections are part of the stream
		for _, x := range h.exts {
			x.Observe(&cmd, evs)
		}
		h.applied.Add(1)
	case tagRecord:
		name, payload, err := splitExtRecord(body)
		if err != nil {
			return err
		}
		i, ok := h.extIx[name]
		if !ok {
			return fmt.Errorf("%w: %q", ErrUnknownExtension, name)
		}
		if err := h.exts[i].ApplyRecord(payload); err != nil {
			return fmt.Errorf("extension %q: %w", name, err)
		}
		h.records.Add(1)
	}
	return nil
}

// genesis runs cfg.Genesis on a fresh store and waits until it is durable.
func (h *Host) genesis(ctx context.Context) error {
	tx := &h.tx
	tx.begin()
	err := h.cfg.Genesis(func(c exchange.Command) error {
		var rej *market.Error
		if err := tx.run(func(tx *Tx) error { rej = tx.Apply(c).Err; return nil }); err != nil {
			return err
		}
		if rej != nil {
			return rej
		}
		return nil
	})
	tx.events = nil
	if err == nil && h.failed != nil {
		err = h.failed
	}
	if err != nil {
		return fmt.Errorf("host: genesis: %w", err)
	}
	if h.j != nil && h.lsn > 0 {
		if err := h.j.WaitDurable(ctx, h.lsn); err != nil {
			return fmt.Errorf("host: genesis: %w", err)
		}
	}
	return nil
}

// rebuildGTD collects the open GTD orders after recovery.
func (h *Host) rebuildGTD() {
	for _, o := range h.eng.OpenOrders(nil, exchange.Filter{}) {
		if o.Type == market.GTD {
			h.gtd[o.ID] = o.Expiration
		}
	}
}

// Run is the engine goroutine: it applies requests until ctx ends, then stops taking
// requests (later ones fail with ErrClosed), writes a final snapshot, flushes the
// journal, delivers the remaining events to listeners and releases the store. It
// returns nil after a clean stop, or the journal's failure. Run may be called once.
func (h *Host) Run(ctx context.Context) error {
	if h.closed.Load() {
		return ErrClosed
	}
	if !h.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); h.dispatch() }()
	go func() { defer wg.Done(); h.snapshotter() }()

	var tick <-chan time.Time
	if h.cfg.ExpireEvery > 0 {
		t := time.NewTicker(h.cfg.ExpireEvery)
		defer t.Stop()
		tick = t.C
	}
	batch := make([]*request, 0, maxBatch)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case r := <-h.reqs:
			batch = append(batch[:0], r)
		drain:
			for len(batch) < maxBatch {
				select {
				case r := <-h.reqs:
					batch = append(batch, r)
				default:
					break drain
				}
			}
			h.iterate(batch, false)
			clear(batch)
		case <-tick:
			h.iterate(nil, true)
		}
	}
	close(h.stopped)
	close(h.dead)
	close(h.snapCh)
	close(h.pub)
	wg.Wait()
	err := h.finalSnapshot()
	if cerr := h.closeJournal(); err == nil {
		err = cerr
	}
	h.closed.Store(true)
	if h.failed != nil {
		return h.failed
	}
	return err
}

// iterate runs one engine-loop iteration: the batch's requests in order, then the
// publication of their events and the wake-up of their callers.
func (h *Host) iterate(batch []*request, expire bool) {
	tx := &h.tx
	tx.begin()
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			continue
		}
		if h.failed != nil {
			r.err = h.failed
			continue
		}
		before := h.lsn
		r.err = tx.run(r.fn)
		if h.lsn != before {
			r.lsn = h.lsn
		}
	}
	if expire && h.failed == nil {
		_ = tx.run(func(tx *Tx) error { tx.expireDue(); return nil })
	}
	if len(tx.events) > 0 {
		h.lastSeq.Store(tx.events[len(tx.events)-1].Seq)
		h.pub <- pubItem{lsn: h.lsn, events: tx.events}
	}
	tx.events = nil
	h.iters.Add(1)
	for _, r := range batch {
		r.done <- struct{}{}
	}
	h.maybeSnapshot()
}

// fail records a journal failure: the engine has applied what the disk does not
// hold, so the host refuses everything afterwards. Only the first failure is kept.
// Like every reader of h.failed, it runs on the engine goroutine (Tx, during Open or
// Run), so no synchronisation is needed.
func (h *Host) fail(err error) {
	if h.failed != nil {
		return
	}
	h.failed = fmt.Errorf("host: journal: %w", err)
	h.log.Error("host: the journal failed; refusing further requests (restart to recover the durable state)", zap.Error(err))
}

// Exec runs fn on the engine goroutine as one transaction, serialized with every other
// request, and waits until everything fn applied (Tx.Apply, Tx.Record) is durable. fn
// may read the engine through tx.Engine() and must not retain it or anything it
// returns.
//
// All or nothing: when fn returns nil, its steps are journaled as one record (so a
// crash keeps all of them or none) and Exec returns nil once that record is durable.
// When fn returns an error, panics, or one of its steps fails (Config.FailStep, the
// record size limit), nothing it applied remains — the engine and the extensions are
// restored to their state before fn (see Extension), nothing is journaled, no event
// is published — and Exec returns that error (a panic as an error). A rollback costs
// a reload of the newest snapshot and the records after it, so check what can be
// checked before the first step. Host errors: ctx.Err() (fn may or may not have run
// and committed), ErrClosed, or the journal's failure.
func (h *Host) Exec(ctx context.Context, fn func(tx *Tx) error) error {
	if h.closed.Load() {
		return ErrClosed
	}
	r := reqPool.Get().(*request)
	r.ctx, r.fn, r.err, r.lsn = ctx, fn, nil, 0
	select {
	case h.reqs <- r:
	case <-ctx.Done():
		r.ctx, r.fn = nil, nil
		reqPool.Put(r)
		return ctx.Err()
	case <-h.stopped:
		r.ctx, r.fn = nil, nil
		reqPool.Put(r)
		return ErrClosed
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err() // r is abandoned: the engine may still signal it
	case <-h.dead:
		select {
		case <-r.done:
		default:
			return ErrClosed // queued but never taken
		}
	}
	err, lsn := r.err, r.lsn
	r.ctx, r.fn, r.err = nil, nil, nil
	reqPool.Put(r)
	if lsn > 0 && h.j != nil {
		if werr := h.j.WaitDurable(ctx, lsn); werr != nil {
			if errors.Is(werr, journal.ErrFailed) {
				return fmt.Errorf("host: journal: %w", werr)
			}
			return werr
		}
	}
	return err
}

// Submit applies cmd on the engine goroutine (a zero Time becomes Clock()), waits until
// it is durable and returns its events (a copy, safe to keep) with the engine's
// rejection in Result.Err. The error is only for host failures (see Exec).
func (h *Host) Submit(ctx context.Context, cmd exchange.Command) (Result, error) {
	var res Result
	err := h.Exec(ctx, func(tx *Tx) error {
		res = tx.Apply(cmd)
		return nil
	})
	return res, err
}

// SubmitBatch applies cmds consecutively (no other request in between) and waits once
// for their durability. It returns one Result per command.
func (h *Host) SubmitBatch(ctx context.Context, cmds []exchange.Command) ([]Result, error) {
	res := make([]Result, len(cmds))
	err := h.Exec(ctx, func(tx *Tx) error {
		for i := range cmds {
			res[i] = tx.Apply(cmds[i])
		}
		return nil
	})
	return res, err
}

// Read runs fn on the engine goroutine, serialized with Apply. fn must only use views
// and must not retain the engine or slices it returns. The state read may include
// commands whose durability wait is still in progress (at most one journal sync).
func (h *Host) Read(ctx context.Context, fn func(e *exchange.Engine)) error {
	return h.Exec(ctx, func(tx *Tx) error {
		fn(tx.h.eng)
		return nil
	})
}

// Expire applies an AdvanceTime command at Clock() if an open GTD order's expiration
// has passed by then, so that it expires now rather than at the next command. Run does
// this every Config.ExpireEvery; tests with an injected clock call it directly.
func (h *Host) Expire(ctx context.Context) error {
	return h.Exec(ctx, func(tx *Tx) error {
		tx.expireDue()
		return nil
	})
}

// Seq returns the sequence number of the last event delivered to listeners (every
// event up to it is durable). Before Run it is the recovered engine's Seq.
func (h *Host) Seq() uint64 { return h.pubSeq.Load() }

// Durable reports whether the host persists anything (Config.Dir was set).
func (h *Host) Durable() bool { return h.j != nil }

// Stats are counters for metrics. Read them with Host.Stats.
type Stats struct {
	// Commands and Records applied since Open (recovery included).
	Commands, Records uint64
	// Iterations of the engine loop.
	Iterations uint64
	// Transactions is the number of committed transactions of two or more steps
	// (journaled as one record each); Rollbacks the number of failed transactions
	// undone after they had applied something.
	Transactions, Rollbacks uint64
	// AppliedSeq is the last event sequence applied; PublishedSeq the last one
	// delivered to listeners.
	AppliedSeq, PublishedSeq uint64
	// Queue and PublishQueue are the current lengths of the two queues.
	Queue, PublishQueue int
	// Listeners is the number of subscribed listeners.
	Listeners int
	// Journal holds the journal's counters; zero when ephemeral.
	Journal journal.Stats
}

// Stats returns the host's counters.
func (h *Host) Stats() Stats {
	s := Stats{
		Commands: h.applied.Load(), Records: h.records.Load(), Iterations: h.iters.Load(),
		Transactions: h.txs.Load(), Rollbacks: h.rolled.Load(),
		AppliedSeq: h.lastSeq.Load(), PublishedSeq: h.pubSeq.Load(),
		Queue: len(h.reqs), PublishQueue: len(h.pub), Listeners: len(*h.subs.Load()),
	}
	if h.j != nil {
		s.Journal = h.j.Stats()
	}
	return s
}

// Close releases the store of a host whose Run was never started (Run releases it
// itself when it returns; if Run is running, Close waits for it to stop). It writes
// no snapshot. It is idempotent and returns the journal's close error.
func (h *Host) Close(ctx context.Context) error {
	if h.running.Load() {
		<-h.dead
	}
	h.closed.Store(true)
	return h.closeJournal()
}

func (h *Host) closeJournal() error {
	h.closeMu.Lock()
	defer h.closeMu.Unlock()
	if h.j == nil || h.jClosed {
		return h.closeErr
	}
	h.jClosed = true
	h.closeErr = h.j.Close(context.Background())
	return h.closeErr
}

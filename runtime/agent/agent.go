package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// Agent is one running agent: the loop that owns its state, its strategy and its
// orders. Create it with New and run it with Run; Status and Control may be called
// from any goroutine while it runs.
type Agent struct {
	cfg      Config
	venue    Venue
	feed     Feed
	decider  Decider
	vdecider VersionedDecider // decider, when it implements it
	// quiet: the pass's intents are those of the decider's last call (DecideAt)
	quiet    bool
	guards   Guards
	keeper   Keeper        // guards, when they implement it
	repeater BatchRepeater // guards, when they implement it (repeat.go)
	store    Store
	noStore  bool // Deps.Store was nil: no checkpoints are built
	sink     AuditSink
	metrics  Metrics
	log      *zap.Logger
	clock    Clock

	sync      bool      // venue calls run on the loop
	prepLocal bool      // an asynchronous venue's Prepare runs on the loop (LocalPreparer)
	sim       Simulator // the venue simulates our trading (paper)
	evTime    bool      // periodic duties follow event time
	// noArrival: the wall time an event arrives is never read — it is read for
	// the tick-to-trade metric and, with a wall clock, the timer events — so the
	// feed does not take it (the clock's Now costs a few per cent of a backtest).
	noArrival bool
	// nopMetrics: Metrics is NopMetrics (it reads no status: see statusDuty).
	nopMetrics bool

	// Loop-owned state. Nothing below is touched by another goroutine.
	st market.State
	// stVer is st's version for the Keeper: changed by every change of st other
	// than market data applied (books, prints, time).
	stVer uint64
	out   []market.Intent
	// The last pass, when it may be repeated, and what its repetition compares
	// (repeat.go): acts counts changes of the agent's bookkeeping, batches the
	// guard batches begun.
	tr       passTrace
	acts     uint64
	batches  uint64
	repeated uint64 // passes repeated (tests)
	// local holds, in the order they happened, the events a Simulator emitted
	// during a call and the answers of synchronous calls: handled after the pass
	// that made the calls, a call's events before its answer.
	local        []localItem
	li           int // next item to handle
	slots        map[string]*slot
	passSlots    []*slot // the slot each position of the last pass named (quoteSlot)
	byClient     map[uint64]*orderRec
	byID         map[market.OrderID]*orderRec
	open         []*orderRec // orders in placement order (final ones pruned after a minute)
	pruneAt      int         // prune the final orders when there are more than this many
	dirty        []*slot
	held         []*slot // take and flatten slots waiting for market data (see hold)
	flatten      map[market.ConditionID]*flattenJob
	flattenOrder []market.ConditionID
	replaces     bucket
	markets      []market.ConditionID

	runs         uint64
	clientSeq    uint32
	startEquity  market.Micros
	paused       bool
	failed       string
	logged       statusSig // the last status line written, and its event time
	loggedAt     int64
	stopping     bool
	inflight     int
	events       uint64 // feed events handled
	counts       Counts
	dirtyCP      bool
	forceCP      bool
	pending      Action // kill-switch action found during a pass, carried out after it
	rec          AuditRecord
	decRec       AuditRecord // decided's record: its decision fields are all it ever writes
	lastErr      string
	nextTimer    int64 // event clock: next timer event (Unix ms)
	nextBeat     int64 // event clock: next heartbeat
	nextStatus   int64 // event clock: next status line
	nextCP       int64 // event clock: next checkpoint
	lastCPWall   time.Time
	lastEvWall   time.Time
	arrived      time.Time // when the event being handled was received (tick-to-trade)
	beatFailing  bool
	beatInFlight bool

	// timer is the event clock's timer event, one for the run: like the feed's
	// (in the queue's slots), an event is not kept by what handles it.
	timer market.Event

	// Channels between the loop and its goroutines.
	scratch result      // the answer of a synchronous call being made
	free    []*orderRec // final orders, recycled by place

	queue   *eventQueue // the feed's events (nil when inline)
	inline  bool        // the loop runs the feed itself (InlineFeed)
	ops     chan op
	answers chan *result
	control chan controlMsg
	cp      chan *Checkpoint
	cpDone  chan struct{}

	status  atomic.Pointer[Status]
	running atomic.Bool
	done    chan struct{} // closed when Run returns
}

// New checks cfg and d and returns an agent ready to Run. It does not touch the
// venue or the store.
func New(cfg Config, d Deps) (*Agent, error) {
	if err := cfg.resolve(); err != nil {
		return nil, err
	}
	if d.Venue == nil || d.Feed == nil || d.Decider == nil || d.Guards == nil {
		return nil, errors.New("agent: venue, feed, decider and guards are required")
	}
	a := &Agent{cfg: cfg, venue: d.Venue, feed: d.Feed, decider: d.Decider, guards: d.Guards,
		store: d.Store, sink: d.Audit, metrics: d.Metrics, log: d.Logger, clock: d.Clock}
	if a.store == nil {
		a.store, a.noStore = nopStore{}, true
	}
	if a.metrics == nil {
		a.metrics = NopMetrics{}
	}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	if a.clock == nil {
		a.clock = WallClock
	}
	_, a.evTime = a.clock.(eventClock)
	a.noArrival = !readsArrival(a.clock, a.metrics)
	_, a.nopMetrics = a.metrics.(NopMetrics)
	a.keeper, _ = d.Guards.(Keeper)
	a.repeater, _ = d.Guards.(BatchRepeater)
	a.vdecider, _ = d.Decider.(VersionedDecider)
	if s, ok := d.Venue.(Synchronous); ok && s.Synchronous() {
		a.sync = true
	}
	if p, ok := d.Venue.(LocalPreparer); ok && p.PrepareLocally() {
		a.prepLocal = true
	}
	if s, ok := d.Venue.(Simulator); ok {
		a.sim = s
		s.Attach(a.emitLocal)
	}
	a.st.Init()
	a.slots = make(map[string]*slot)
	a.byClient = make(map[uint64]*orderRec)
	a.byID = make(map[market.OrderID]*orderRec)
	a.flatten = make(map[market.ConditionID]*flattenJob)
	a.replaces = newBucket(cfg.Reconcile.ReplacesPerSecond, cfg.Reconcile.ReplaceBurst)
	a.markets = append([]market.ConditionID(nil), cfg.Markets...)
	a.out = make([]market.Intent, 0, 16)
	a.control = make(chan controlMsg, 16)
	a.done = make(chan struct{})
	a.status.Store(&Status{Agent: cfg.ID, Wallet: cfg.Wallet, DryRun: cfg.DryRun, State: StateStarting})
	return a, nil
}

// ErrAlreadyRunning is returned by a second call of Run.
var ErrAlreadyRunning = errors.New("agent: already running")

// Run runs the agent until ctx ends, the feed ends or fails, or MaxEvents feed events
// have been handled. It reconciles with the venue first (restores the checkpoint,
// loads markets, balances and positions, adopts or cancels open orders), then runs
// the loop. On the way out it cancels the agent's open orders (unless LeaveOrders),
// waits for in-flight calls (at most ShutdownTimeout), writes a final checkpoint and
// stops every goroutine it started. A stop by ctx or MaxEvents returns nil; a
// startup or feed failure returns the error (after the same clean-up, once trading
// started). Run may be called once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer close(a.done)
	if err := a.startup(ctx); err != nil {
		a.setState(StateFailed, err.Error())
		return err
	}

	var wg sync.WaitGroup
	// Persister: writes the checkpoints the loop builds, one at a time.
	a.cp = make(chan *Checkpoint, 1)
	a.cpDone = make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(a.cpDone)
		for c := range a.cp {
			if err := a.store.Save(c); err != nil {
				a.log.Error("checkpoint not saved", zap.Error(err))
			}
		}
	}()
	// Executor: venue calls of an asynchronous venue.
	execCtx, stopExec := context.WithCancel(context.Background())
	if !a.sync {
		a.ops = make(chan op, a.cfg.MaxInFlight+a.cfg.QueueSize)
		a.answers = make(chan *result, a.cfg.MaxInFlight+a.cfg.QueueSize)
		for range a.cfg.Workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for o := range a.ops {
					r := &result{op: o}
					a.execute(execCtx, r)
					a.answers <- r
				}
			}()
		}
	}
	// Feed: on its own goroutine through the queue, or run by the loop (InlineFeed).
	feedCtx, stopFeed := context.WithCancel(ctx)
	var feedErr chan error
	if f, ok := a.feed.(InlineFeed); ok && f.Inline() {
		a.inline = true
	} else {
		a.queue = newEventQueue(a.cfg.QueueSize)
		feedErr = make(chan error, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			feedErr <- a.feed.Run(feedCtx, func(ev *market.Event) bool {
				var at time.Time // unobserved: see noArrival
				if !a.noArrival {
					at = a.clock.Now()
				}
				return a.queue.put(feedCtx, ev, at)
			})
		}()
	}

	a.setState(a.runState(), "")
	err := a.loop(ctx, feedCtx, feedErr)

	// Shutdown: no more feed events; cancel, wait, checkpoint, stop goroutines.
	a.stopping = true
	a.setState(StateStopping, "")
	stopFeed()
	if a.queue != nil {
		a.queue.close()
	}
	a.shutdown()
	if !a.sync {
		close(a.ops)
	}
	close(a.cp)
	<-a.cpDone
	if a.noStore {
		a.prune()
	} else if serr := a.store.Save(a.checkpoint()); serr != nil {
		a.log.Error("final checkpoint not saved", zap.Error(serr))
		if err == nil {
			err = serr
		}
	}
	stopExec()
	wg.Wait()
	// Drain the answers the workers produced after the shutdown wait, so that
	// nothing stays blocked; their outcome is in the venue and the next start
	// reconciles it.
	if !a.sync {
		for len(a.answers) > 0 {
			<-a.answers
		}
	}
	a.publishStatus()
	a.setState(StateStopped, "")
	a.logStatus("final")
	return err
}

// Done returns a channel closed when Run has returned.
func (a *Agent) Done() <-chan struct{} { return a.done }

// feedBatch bounds the feed events the loop handles per wake-up before it looks at
// its other inputs (answers, control, ctx) again.
const feedBatch = 64

// errStop ends the loop without an error (MaxEvents reached, feed ended).
var errStop = errors.New("stop")

func (a *Agent) loop(ctx, feedCtx context.Context, feedErr <-chan error) error {
	var tick <-chan time.Time
	stopTick := func() {}
	if !a.evTime {
		period := a.cfg.TimerInterval
		for _, d := range []time.Duration{a.cfg.Heartbeat, a.cfg.StatusInterval, a.cfg.CheckpointInterval} {
			if d > 0 && (period <= 0 || d < period) {
				period = d
			}
		}
		if period > 0 {
			tick, stopTick = a.clock.NewTicker(min(period, 250*time.Millisecond))
		}
	}
	defer stopTick()
	now := a.clock.Now()
	ticks := ticks{c: tick, timer: now, beat: now, status: now}
	a.lastCPWall = now
	a.heartbeat() // start the venue's heartbeat chain at once
	if a.inline {
		return a.loopInline(ctx, feedCtx, &ticks)
	}
	for {
		a.drainLocal(ctx)
		select {
		case <-ctx.Done():
			return nil
		case err := <-feedErr:
			if err != nil && ctx.Err() == nil {
				a.log.Error("feed failed", zap.Error(err))
				return fmt.Errorf("agent: feed: %w", err)
			}
			// The feed ended: handle what it queued before it did.
			for ctx.Err() == nil && a.queue.take(1) == 1 {
				q := a.queue.at(0)
				a.arrived, a.lastEvWall = q.at, q.at
				err := a.handleFeedEvent(&q.ev)
				a.queue.release(1)
				a.drainLocal(ctx)
				if err != nil {
					return stopErr(err)
				}
			}
			a.feedEnded()
			return nil
		case <-a.queue.ready:
			// A bounded batch of events, each followed by the answers and own
			// events it caused, as if the select had picked them one by one.
			// The queued events are taken and released in runs, a lock each.
			more, i := true, 0
		batch:
			for more && i < feedBatch {
				k := a.queue.take(feedBatch - i)
				if k == 0 {
					more = false
					break
				}
				for j := 0; j < k; j, i = j+1, i+1 {
					if i > 0 {
						if i%16 == 0 && ctx.Err() != nil {
							more = a.queue.release(j)
							break batch
						}
						a.drainLocal(ctx)
					}
					q := a.queue.at(j)
					a.arrived, a.lastEvWall = q.at, q.at
					if err := a.handleFeedEvent(&q.ev); err != nil {
						a.queue.release(j + 1)
						return stopErr(err)
					}
				}
				more = a.queue.release(k)
			}
			if more {
				a.queue.rearm()
			}
		case r := <-a.answers:
			a.onAnswer(r)
		case m := <-a.control:
			a.onControl(m)
		case t := <-tick:
			a.onTick(t, &ticks)
		}
	}
}

// ticks are the loop's wall-clock ticker (nil with the event clock) and when it
// last ran each periodic duty.
type ticks struct {
	c                   <-chan time.Time
	timer, beat, status time.Time
}

func (a *Agent) onAnswer(r *result) {
	a.inflight--
	a.handleResult(r)
	a.afterPass()
}

func (a *Agent) onControl(m controlMsg) {
	a.handleControl(m)
	a.afterPass()
}

func (a *Agent) onTick(t time.Time, tk *ticks) {
	// A timer event when nothing happened for a timer interval (and after the
	// first event: before it there is nothing to time).
	if d := a.cfg.TimerInterval; d > 0 && a.st.Time != 0 && t.Sub(tk.timer) >= d && t.Sub(a.lastEvWall) >= d {
		tk.timer = t
		ev := market.Event{Kind: market.EventTimer, Time: max(a.st.Time, t.UnixMilli())}
		a.arrived = t
		a.handleEvent(&ev)
	}
	if d := a.cfg.Heartbeat; d > 0 && t.Sub(tk.beat) >= d {
		tk.beat = t
		a.heartbeat()
	}
	if d := a.cfg.StatusInterval; t.Sub(tk.status) >= d {
		tk.status = t
		a.statusDuty()
	}
	if t.Sub(a.lastCPWall) >= a.cfg.CheckpointInterval {
		a.maybeCheckpoint(t)
	}
	a.afterPass()
}

// feedEnded logs the feed's end, once the loop handled all it delivered.
func (a *Agent) feedEnded() {
	a.log.Info("feed ended", zap.Int64("t", a.st.Time))
}

// inlinePoll is how many of an inline feed's events the loop handles between two
// looks at its other inputs (the queue's loop looks after each batch of 64).
const inlinePoll = 16

// loopInline is the loop of an InlineFeed: the loop runs the feed, and its emit
// handles each event in place, followed by the answers and own events it caused,
// exactly as the queue's loop handles a queued one; every inlinePoll events it
// gives the other inputs (ctx, answers, control, the ticker) their turn, as the
// queue's loop does between batches.
func (a *Agent) loopInline(ctx, feedCtx context.Context, tk *ticks) error {
	a.drainLocal(ctx)
	var stop error // an event stopped the agent (errStop: MaxEvents)
	n := 0
	err := a.feed.Run(feedCtx, func(ev *market.Event) bool {
		if n++; n%inlinePoll == 0 && a.poll(ctx, tk) {
			return false
		}
		if !a.noArrival {
			a.arrived = a.clock.Now()
			a.lastEvWall = a.arrived
		}
		stop = a.handleFeedEvent(ev)
		a.drainLocal(ctx)
		return stop == nil
	})
	switch {
	case stop != nil:
		return stopErr(stop)
	case ctx.Err() != nil:
		return nil
	case err != nil:
		a.log.Error("feed failed", zap.Error(err))
		return fmt.Errorf("agent: feed: %w", err)
	}
	a.feedEnded()
	return nil
}

// poll handles the loop's other inputs that are ready, without waiting, and
// reports whether ctx ended.
func (a *Agent) poll(ctx context.Context, tk *ticks) bool {
	for {
		select {
		case <-ctx.Done():
			return true
		case r := <-a.answers:
			a.onAnswer(r)
		case m := <-a.control:
			a.onControl(m)
		case t := <-tk.c:
			a.onTick(t, tk)
		default:
			return false
		}
		a.drainLocal(ctx)
	}
}

func stopErr(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// handleFeedEvent handles one event from the feed and the periodic duties that
// follow event time.
func (a *Agent) handleFeedEvent(ev *market.Event) error {
	if a.evTime && a.cfg.TimerInterval > 0 && ev.Time > 0 && ev.Kind != market.EventTimer {
		if a.nextTimer == 0 {
			a.nextTimer = ev.Time + a.cfg.TimerInterval.Milliseconds()
		} else if ev.Time >= a.nextTimer {
			a.timer = market.Event{Kind: market.EventTimer, Time: a.nextTimer}
			a.handleEvent(&a.timer)
			a.nextTimer += a.cfg.TimerInterval.Milliseconds()
			if a.nextTimer <= ev.Time {
				a.nextTimer = ev.Time + a.cfg.TimerInterval.Milliseconds()
			}
		}
	}
	a.handleEvent(ev)
	a.events++
	if a.evTime {
		a.eventDuties()
	}
	if a.cfg.MaxEvents > 0 && a.events >= a.cfg.MaxEvents {
		a.log.Info("event limit reached", zap.Int64("t", a.st.Time), zap.Uint64("events", a.events))
		return errStop
	}
	return nil
}

// eventDuties runs heartbeats, status lines and checkpoints on event time.
func (a *Agent) eventDuties() {
	now := a.st.Time
	if now <= 0 {
		return
	}
	due := func(next *int64, d time.Duration) bool {
		if d <= 0 {
			return false
		}
		if *next == 0 {
			*next = now + d.Milliseconds()
			return false
		}
		if now >= *next {
			*next = now + d.Milliseconds()
			return true
		}
		return false
	}
	if due(&a.nextBeat, a.cfg.Heartbeat) {
		a.heartbeat()
	}
	if due(&a.nextStatus, a.cfg.StatusInterval) {
		a.statusDuty()
	}
	if due(&a.nextCP, a.cfg.CheckpointInterval) || a.forceCP {
		a.maybeCheckpoint(time.Time{})
	}
}

// maxLocalItems bounds the answers and simulated events one drain handles before
// the agent declares a runaway (see drainLocal). A pass that places an order for
// every quote of a large agent makes a few hundred; a cascade that feeds itself
// (a strategy that answers each of its own fills with a new order, a venue that
// refuses every retry at once) makes them without end.
const maxLocalItems = 1 << 14

// drainLocal handles the answers of synchronous calls and the events a Simulator
// emitted, until none is left or ctx ends (it checks every 64 items, so that a
// cancelled run stops even inside a cascade; what is left is handled by the
// shutdown's drain, with no new decisions). One drain that handles more than
// maxLocalItems items without new input is a runaway: the agent fails (no new
// orders until an operator resumes it, open orders cancelled), which ends any
// cascade of placements.
func (a *Agent) drainLocal(ctx context.Context) {
	n := 0
	for a.li < len(a.local) {
		if n&63 == 63 && ctx.Err() != nil {
			return
		}
		n++
		if n == maxLocalItems+1 && !a.stopping {
			a.fail(fmt.Errorf("agent: runaway: %d venue answers and own events handled without new input", maxLocalItems))
		}
		if a.li >= 256 && 2*a.li >= len(a.local) {
			// A long cascade: drop the handled items (no item is being handled
			// here), so memory stays bounded by what is still to be handled.
			k := copy(a.local, a.local[a.li:])
			clear(a.local[k:])
			a.local, a.li = a.local[:k], 0
		}
		// A pointer into the slice: handling may append (and move the slice),
		// but the item stays where it is until the slice is reused below.
		it := &a.local[a.li]
		a.li++
		if it.result {
			a.handleResult(&it.res)
		} else {
			a.handleEvent(&it.ev)
		}
		a.afterPass()
	}
	clear(a.local)
	a.local = a.local[:0]
	a.li = 0
}

// localItem is an event a Simulator emitted or the answer of a synchronous call.
type localItem struct {
	result bool
	ev     market.Event
	res    result
}

// emitLocal is the Simulator's emitter: the event is copied and handled after the
// current pass.
func (a *Agent) emitLocal(ev *market.Event) {
	it := localItem{ev: *ev}
	it.ev.Bids, it.ev.Asks, it.ev.Changes = nil, nil, nil // own-order events carry no levels
	a.local = append(a.local, it)
}

// handleEvent applies one event, lets the strategy decide and reconciles.
func (a *Agent) handleEvent(ev *market.Event) {
	if ev.Time != 0 && ev.Time < a.st.Time {
		ev.Time = a.st.Time // agent time never goes backwards
	}
	a.st.Apply(ev)
	if !marketData(ev.Kind) {
		a.stVer++
	}
	a.counts.Events++
	a.metrics.Event(ev.Kind)
	a.dirtyCP = true
	switch ev.Kind {
	case market.EventBook, market.EventPriceChange, market.EventLastTrade, market.EventTickSize:
		if len(a.held) > 0 {
			a.releaseHeld(ev)
		}
	case market.EventOrder:
		a.onOrderEvent(ev)
	case market.EventFill:
		a.onFill(&ev.Fill)
	case market.EventResolved:
		a.onResolved(ev)
	}
	if a.sim != nil && ev.Kind != market.EventOrder && ev.Kind != market.EventFill && !a.stopping {
		a.sim.ObserveMarket(ev)
	}
	if a.stopping {
		return
	}
	a.declareVersion()
	if act := a.guards.Observe(&a.st); act.Any() {
		a.onAction(act)
	}
	a.decide(ev)
	a.afterPass()
}

// decide runs the strategy on ev and reconciles its intents in one batch.
func (a *Agent) decide(ev *market.Event) {
	var out []market.Intent
	var err error
	a.quiet = false
	if a.vdecider != nil {
		ver := a.stVer
		if a.cfg.FullPasses {
			ver = 0
		}
		out, a.quiet, err = a.vdecider.DecideAt(ev, &a.st, ver, a.out[:0])
	} else {
		out, err = a.decider.Decide(ev, &a.st, a.out[:0])
	}
	a.out = out[:0]
	if err != nil {
		a.fail(err)
		return
	}
	a.beginBatch()
	if a.repeats(out) {
		a.repeat(out)
		return
	}
	a.beginTrace(out)
	for i := range out {
		a.intent(i, &out[i])
	}
	a.endTrace(out)
	a.tr.ok = a.tr.ok && len(a.dirty) == 0
	a.reconcileDirty()
}

// marketData reports whether applying an event of kind k changes only books,
// prints and time (not the state's version).
func marketData(k market.EventKind) bool {
	switch k {
	case market.EventBook, market.EventPriceChange, market.EventLastTrade, market.EventTimer:
		return true
	}
	return false
}

// declareVersion tells a Keeper the state's version.
func (a *Agent) declareVersion() {
	if a.keeper != nil {
		a.keeper.StateVersion(&a.st, a.stVer)
	}
}

// beginBatch starts a batch of guard checks over the current state.
func (a *Agent) beginBatch() {
	a.batches++
	a.declareVersion()
	if act := a.guards.Begin(&a.st); act.Any() {
		a.pending = mergeAction(a.pending, act)
	}
}

func mergeAction(x, y Action) Action {
	x.CancelAll = x.CancelAll || y.CancelAll
	x.Flatten = x.Flatten || y.Flatten
	x.Halt = x.Halt || y.Halt
	if x.Reason == "" {
		x.Reason = y.Reason
	}
	return x
}

// afterPass carries out a kill-switch action found during the pass, drives
// flattening and writes a checkpoint when one is forced.
func (a *Agent) afterPass() {
	if a.pending.Any() {
		act := a.pending
		a.pending = Action{}
		a.onAction(act)
	}
	if !a.stopping {
		a.reconcileDirty()
		a.driveFlatten()
	}
	a.pruneFront()
	if len(a.open) > a.pruneAt {
		a.prune()
		a.pruneAt = max(512, 2*len(a.open)) // amortized: prune walks them all
	}
	if a.forceCP {
		a.maybeCheckpoint(time.Time{})
	}
}

// fail records a strategy failure: no new orders, open orders cancelled, until an
// operator resumes the agent.
func (a *Agent) fail(err error) {
	a.act()
	msg := err.Error()
	if a.failed == "" {
		a.log.Error("strategy failed: no new orders until the failure is cleared", zap.Int64("t", a.st.Time), zap.Error(err))
		a.failed = msg
		a.lastErr = msg
		a.cancelAll("", "strategy failed")
		a.setState(StateFailed, msg)
		a.forceCP = true
	} else if msg != a.lastErr {
		a.lastErr = msg
		a.log.Warn("strategy still failing", zap.Int64("t", a.st.Time), zap.Error(err))
	}
}

// onAction carries out a kill-switch action.
func (a *Agent) onAction(act Action) {
	a.act()
	a.log.Warn("kill switch tripped", zap.Int64("t", a.st.Time), zap.String("reason", act.Reason),
		zap.Bool("cancel_all", act.CancelAll), zap.Bool("flatten", act.Flatten), zap.Bool("halt", act.Halt))
	if a.sink != nil {
		rec := &a.rec
		*rec = AuditRecord{Kind: AuditTrip, Agent: a.cfg.ID, Time: a.st.Time, Reason: act.Reason, Action: act}
		a.sink.Audit(rec)
	}
	if act.CancelAll || act.Flatten {
		a.cancelAll("", "kill switch")
	}
	if act.Flatten {
		a.startFlatten("", "kill switch")
	}
	a.setState(a.runState(), "")
	a.forceCP = true
}

// runState is the state the agent is in while trading.
func (a *Agent) runState() RunState {
	switch {
	case a.guards.Halted():
		return StateKilled
	case a.failed != "":
		return StateFailed
	case a.paused:
		return StatePaused
	}
	return StateRunning
}

// canOpen reports whether new orders may be placed at all (the guards decide each).
func (a *Agent) canOpen() bool {
	return !a.stopping && !a.paused && a.failed == "" && !a.guards.Halted()
}

// maybeCheckpoint hands a checkpoint to the persister when the state changed and the
// persister is free (a forced checkpoint waits for the persister only as long as it
// takes to finish the one it writes).
func (a *Agent) maybeCheckpoint(now time.Time) {
	if !a.dirtyCP && !a.forceCP {
		return
	}
	if a.noStore {
		// Nothing to keep it in: only the pruning a checkpoint does, on the
		// same schedule.
		a.prune()
		a.dirtyCP, a.forceCP = false, false
		if !now.IsZero() {
			a.lastCPWall = now
		}
		return
	}
	c := a.checkpoint()
	if a.forceCP {
		a.cp <- c
	} else {
		select {
		case a.cp <- c:
		default:
			return // the persister is busy: try again next time
		}
	}
	a.dirtyCP, a.forceCP = false, false
	if !now.IsZero() {
		a.lastCPWall = now
	}
}

// shutdown cancels the agent's open orders (unless LeaveOrders) and waits for the
// calls in flight, at most ShutdownTimeout.
func (a *Agent) shutdown() {
	if !a.cfg.LeaveOrders {
		n := 0
		for _, r := range a.byClient {
			if r.open() {
				n++
			}
		}
		if n > 0 {
			a.log.Info("cancelling open orders", zap.Int64("t", a.st.Time), zap.Int("orders", n))
			a.cancelAll("", "shutdown")
		}
	}
	deadline := time.NewTimer(a.cfg.ShutdownTimeout)
	defer deadline.Stop()
	for {
		a.drainLocal(context.Background()) // stopping: no new decisions, so it ends
		if a.sync || a.inflight == 0 {
			return
		}
		select {
		case r := <-a.answers:
			a.inflight--
			a.handleResult(r)
		case <-deadline.C:
			a.log.Warn("stopped waiting for venue calls", zap.Int("in_flight", a.inflight))
			return
		}
	}
}

// readsArrival reports whether an agent with clock c and metrics m reads the wall
// time its events arrive: for the tick-to-trade metric (not with NopMetrics) and for
// the timer events of a wall clock (an EventClock's follow event time).
func readsArrival(c Clock, m Metrics) bool {
	_, ev := c.(eventClock)
	_, nop := m.(NopMetrics)
	return !ev || !nop
}

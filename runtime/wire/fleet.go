package wire

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// ResolveFleetAgent turns one agent of a fleet file into what the supervisor runs:
// it loads the agent file, applies the fleet's overrides (id, wallet, state
// directory, live, environment) and computes the wallet address the supervisor
// locks — the address the agent trades, found the same way RunSupervised finds it
// (FleetWallet). It refuses what Build would refuse, so that a fleet does not start
// a child that can only crash: live without `dry_run: false` in the file, and
// dry_run: false without live. res finds the address of a live remote agent's
// wallet (see FleetWallet); it may be nil when there is none.
//
// It also settles the fleet's automatic market-data mode (supervisor.MarketDataAuto,
// the default): an agent on the remote venue turns f.MarketData to fanout, with the
// WebSocket base of its venue's CLOB service as the venue to publish unless the
// file named one. The supervisor's configuration is made from f after every agent
// is resolved; a fleet without remote agents stays auto, which the supervisor
// takes as own.
func ResolveFleetAgent(ctx context.Context, f *supervisor.File, e supervisor.AgentEntry, getenv func(string) string, res *secrets.Resolver) (supervisor.Agent, error) {
	spec, err := agents.Options{Getenv: getenv}.Load(e.File)
	if err != nil {
		return supervisor.Agent{}, err
	}
	if spec.Venue.Kind == agents.VenueRemote && f.MarketData.Mode == supervisor.MarketDataAuto {
		f.MarketData.Mode = supervisor.MarketDataFanout
		if f.MarketData.Venue == "" {
			f.MarketData.Venue = wsBase(spec.Venue.CLOB)
		}
	}
	a := supervisor.Agent{ID: market.AgentID(spec.Name), File: e.File, Live: e.Live, StateDir: e.StateDir,
		Args: e.Args, Restart: f.Restart.Merge(e.Restart), Limits: f.Limits}
	if e.Limits != nil {
		a.Limits = a.Limits.Merge(*e.Limits)
	}
	if e.ID != "" {
		a.ID = market.AgentID(e.ID)
		if a.StateDir == "" && spec.StateDir != "" {
			// The file's default state directory is named after the file's agent: a
			// second id of the same file gets its own.
			a.StateDir = filepath.Join(filepath.Dir(spec.StateDir), e.ID)
		}
	}
	if e.Wallet != "" {
		ref, err := agents.ParseWalletRef(e.Wallet)
		if err != nil {
			return supervisor.Agent{}, fmt.Errorf("%s: wallet: %w", e.File, err)
		}
		spec.Wallet, a.WalletOverride = ref, true
	}
	switch {
	case e.Live && spec.DryRun():
		return supervisor.Agent{}, fmt.Errorf("%s: live: true in the fleet file, but the agent file is a dry run: set dry_run: false in it to go live", e.File)
	case !e.Live && !spec.DryRun():
		return supervisor.Agent{}, fmt.Errorf("%s: the agent file says dry_run: false, but the fleet file does not say live: true: refusing to trade live", e.File)
	}
	if a.Wallet, err = FleetWallet(ctx, spec, e.Live, res); err != nil {
		return supervisor.Agent{}, fmt.Errorf("%s: %w", e.File, err)
	}
	a.WalletRef = spec.Wallet.String()
	if spec.Wallet.Scheme == agents.WalletEnv {
		a.EnvVars = append(a.EnvVars, spec.Wallet.Value)
	}
	a.EnvVars = append(a.EnvVars, e.Env...)
	return a, nil
}

// ErrFleetWalletUnknown: a live agent on the remote venue whose wallet address
// cannot be found without a secret store.
var ErrFleetWalletUnknown = errors.New("a live agent on the remote venue needs its wallet's address before it starts (for the fleet's wallet lock), and no secret store was configured")

// FleetWallet returns the address that spec's agent trades, the one its fleet
// locks: the paper address of its wallet reference in a dry run and on the
// embedded venue (as Build computes it), and the real address of the wallet for a
// live run on the remote venue — read in the clear where it is recorded (a keystore
// file's address, the keyring's index), else from the unlocked key (an env:
// reference, the encrypted file store), through res.
func FleetWallet(ctx context.Context, spec *agents.Spec, live bool, res *secrets.Resolver) (market.Address, error) {
	if !live || spec.Venue.Kind != agents.VenueRemote {
		return PaperAddress(spec.Wallet), nil
	}
	if res == nil {
		return market.Address{}, ErrFleetWalletUnknown
	}
	ref, err := secrets.ParseRef(spec.Wallet.String())
	if err != nil {
		return market.Address{}, fmt.Errorf("wallet: %w", err)
	}
	a, err := res.WalletAddress(ctx, ref)
	if err != nil {
		return market.Address{}, fmt.Errorf("wallet %s: %w", spec.Wallet, err)
	}
	return a, nil
}

// RunSupervised runs the agent of spec as a member of a fleet (`pitboss run
// --supervised`, started by `pitboss supervise`). From the environment the
// supervisor set (supervisor.ChildFromEnv) it learns its id, wallet override, lease
// and the fleet's NATS endpoint; then it
//
//   - refuses to start unless its supervisor holds the wallet's lock for it (the
//     lease id must match; the local flock of Build is kept as well), and stops —
//     returning an error matching market.ErrLockLost — when that lock is lost;
//   - applies the fleet's desired state before trading (a kill switch or pause
//     thrown while it was away holds from its first event);
//   - writes every guard decision (with its intent), order, fill, kill-switch trip
//     and control command to the AUDIT stream through a bounded background writer
//     (a full backlog pauses the agent: what it does could no longer be recorded);
//   - answers control requests (pause, resume, cancel_all, flatten, kill,
//     resume_after_kill, status) and publishes its status every heartbeat interval
//     and after each request;
//   - stops cleanly when ctx ends, with a last status saying stopped.
//
// On the remote venue, every request to the CLOB service takes a grant of the
// fleet's request budget (natsbus.Budget as the client's limiter), unless the
// caller set Options.Remote.Budget itself.
//
// Market data: when the fleet fans market data out, an agent on the remote venue
// takes its books, changes, trades, tick sizes and resolutions from the fan-out
// (FleetFeed, through Options.Remote.MarketData unless the caller set it) and
// keeps its own user channel and REST replay; an agent on another venue than the
// one the fleet publishes keeps its own market channel. The embedded venue is the
// agent's own in-process market, so it keeps its own feed (docs/fleet.md).
//
// Metrics: the agent's metrics (NewMetrics, the remote feed's or the fan-out's
// counters, its process's) go to a registry of its own that it publishes to its
// supervisor every supervisor.DefaultAgentMetricsInterval; the supervisor exports
// them on its metrics address. Options.Metrics, if set, receives the measurements
// too.
func RunSupervised(ctx context.Context, spec *agents.Spec, opt Options) error {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	log := opt.Logger
	if log == nil {
		log = zap.NewNop()
	}
	cc, err := supervisor.ChildFromEnv(opt.Getenv)
	if err != nil {
		return err
	}
	if spec.Name != string(cc.Agent) {
		spec.Name = string(cc.Agent)
	}
	if cc.Wallet != "" {
		ref, err := agents.ParseWalletRef(cc.Wallet)
		if err != nil {
			return fmt.Errorf("%s: %w", supervisor.EnvWallet, err)
		}
		spec.Wallet = ref
	}
	id := cc.Agent
	wallet, err := FleetWallet(ctx, spec, opt.Live, opt.Remote.Secrets)
	if err != nil {
		return err
	}

	bus, err := natsbus.Connect(ctx, cc.Endpoint, natsbus.ConnectOptions{Name: "agent " + string(id), Logger: log,
		InboxPrefix: natsbus.AgentInboxPrefix(id)}) // its identity reads only its own inboxes
	if err != nil {
		return fmt.Errorf("the fleet's NATS: %w", err)
	}
	defer bus.Close()
	locks, err := bus.OpenLocks(ctx)
	if err != nil {
		return err
	}
	walletKey := natsbus.WalletLockKey(wallet)
	if err := checkLease(ctx, locks, walletKey, id, cc.Lease); err != nil {
		return err
	}
	// The lease fence (docs/design/0142): order-changing venue calls pass only
	// before the lease's deadline minus the margin, and the agent stops there.
	margin := max(locks.TTL()/5, 250*time.Millisecond)
	var fence *supervisor.Fence
	if opt.Fence != nil {
		fence, err = supervisor.NewFence(opt.Fence, margin, fenceWait)
	} else {
		fence, err = supervisor.OpenFence(opt.Getenv, margin, fenceWait)
	}
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	if err := fence.Check(); err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	trace := (*orderTrace)(nil)
	if opt.OrderTrace != nil {
		trace = &orderTrace{w: opt.OrderTrace, agent: id, wallet: wallet}
	}
	opt.WrapVenue = func(v agent.Venue) (agent.Venue, error) { return fenceVenue(v, fence.Check, trace) }
	states, err := bus.OpenState(ctx)
	if err != nil {
		return err
	}
	stateLost := make(chan error, 1)
	opt.WrapStore = func(f *agent.FileStore) (agent.Store, error) {
		return &fleetStore{file: f, kv: states, id: id, check: fence.Check, log: log, lost: func(err error) {
			select {
			case stateLost <- err:
			default:
			}
		}}, nil
	}
	desired, err := bus.OpenDesired(ctx)
	if err != nil {
		return err
	}
	eff, err := desired.EffectiveFor(ctx, id)
	if err != nil {
		return err
	}

	alog, err := bus.AuditLog(id, wallet, "r"+strconv.FormatUint(cc.Run, 10)+"-"+randomRun())
	if err != nil {
		return err
	}
	// Records the cluster cannot take (an outage, a lost quorum) wait on local
	// disk, in the agent's state directory, and are stored when it is back — by
	// this process, or by the agent's next one (docs/design/0149).
	wcfg := natsbus.AuditWriterConfig{}
	stateDir := spec.StateDir
	if opt.StateDir != "" {
		stateDir = opt.StateDir
	}
	if stateDir != "" {
		sp, err := natsbus.OpenSpool(filepath.Join(stateDir, "audit-spool"), id, "agent", 0)
		if err != nil {
			return err
		}
		if n := sp.Len(); n > 0 {
			log.Info("audit records of an earlier run are spooled: storing them first", zap.Int("records", n), zap.String("spool", sp.Path()))
		}
		wcfg.Spool = sp
	} else {
		log.Warn("no state directory: audit records the cluster cannot take during an outage are not spooled")
	}
	writer := alog.NewWriter(wcfg)
	sink := &fleetAudit{w: writer, wallet: wallet, next: opt.Audit, backlog: make(chan struct{}, 1)}
	opt.Audit = sink

	reg, metrics, err := fleetRegistry(id)
	if err != nil {
		return err
	}
	if opt.Metrics != nil {
		opt.Metrics = teeMetrics{metrics, opt.Metrics}
	} else {
		opt.Metrics = metrics
	}
	var fleetFeed *FleetFeed
	if spec.Venue.Kind == agents.VenueRemote && cc.MarketData == supervisor.MarketDataFanout && opt.Remote.MarketData == nil {
		if v := cc.MarketVenue; v != "" && !sameVenue(v, wsBase(spec.Venue.CLOB)) {
			log.Warn("the fleet fans out another venue's market data: this agent reads its own market channel",
				zap.String("fleet_venue", v), zap.String("venue", spec.Venue.CLOB))
		} else {
			opt.Remote.MarketData = func(tokens []market.TokenID) (agent.Feed, error) {
				ff, err := NewFleetFeed(bus, id, tokens)
				if err != nil {
					return nil, fmt.Errorf("the fleet's market-data fan-out: %w", err)
				}
				fleetFeed = ff
				return ff, nil
			}
		}
	}

	if spec.Venue.Kind == agents.VenueRemote && opt.Remote.Budget == nil {
		// Every request to the CLOB service takes a grant of the fleet's budget
		// (docs/design/0047): the fleet shares the venue's limit per IP.
		budget, err := bus.OpenBudget(ctx, cc.Budget, id)
		if err != nil {
			return fmt.Errorf("the fleet's request budget: %w", err)
		}
		opt.Remote.Budget = budget
	}

	r, err := BuildContext(ctx, spec, opt)
	if err != nil {
		return err
	}
	defer r.Close()
	sink.dry = r.DryRun
	if err := SubscribeSignals(bus, id, spec, r.Signals, log); err != nil {
		return err
	}
	if r.Wallet != wallet {
		return fmt.Errorf("wire: the agent trades %s but its supervisor locked %s", r.Wallet, wallet)
	}
	if err := applyDesiredAtStart(r, eff, opt.Balance); err != nil {
		return err
	}
	switch {
	case cc.MarketData == supervisor.MarketDataFanout && spec.Venue.Kind == agents.VenueEmbedded:
		log.Info("the fleet fans market data out; the embedded venue keeps its own in-process market")
	case fleetFeed != nil:
		log.Info("market data from the fleet's fan-out; orders and fills from the wallet's own channel")
		if err := RegisterFleetFeedMetrics(reg, id, fleetFeed); err != nil {
			return err
		}
	}
	if r.Remote != nil && r.Remote.Feed != nil {
		if err := RegisterRemoteMetrics(reg, id, r.Remote.Feed); err != nil {
			return err
		}
	}

	conds := make([]market.ConditionID, len(r.Bindings))
	labels := make([]string, len(r.Bindings))
	for i, b := range r.Bindings {
		conds[i], labels[i] = b.Info.Condition, b.Info.Label()
	}
	host, _ := os.Hostname()
	// The agent refreshes its status snapshot every StatusInterval (10 s) and on
	// every control request: a status request before each heartbeat keeps the
	// fleet's view (positions, PnL, last event) fresh. A busy loop that does not
	// answer within half an interval still gets its last snapshot sent — until it
	// has not answered for stuckAfter: then heartbeats stop, so that the
	// supervisor's watchdog (docs/design/0128) restarts a loop that is stuck.
	gate := stuckGate{after: stuckAfter(cc.Heartbeat)}
	snapshot := func() (natsbus.Status, bool) {
		cctx, cancel := context.WithTimeout(context.Background(), cc.Heartbeat/2)
		_, err := r.Agent.Control(cctx, agent.ControlRequest{Op: agent.OpStatus, From: "fleet heartbeat"})
		cancel()
		// Only a request the loop never took counts: an agent that is stopping
		// answers "not running", which is not a stuck loop.
		publish, silent := gate.observe(time.Now(), !errors.Is(err, context.DeadlineExceeded))
		if gate.firstSilence() { // once per silence, when the heartbeats stop
			log.Error("the agent's loop has not answered for "+silent.Round(time.Second).String()+
				": heartbeats stop so that the supervisor restarts it", zap.String("agent", string(id)))
		}
		return fleetStatus(r.Agent.Status(), conds, labels, host, cc.Supervisor), publish
	}

	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	var wg sync.WaitGroup
	defer wg.Wait()
	// The audit writer outlives the agent: it stores the records of the shutdown
	// (cancels, the last checkpoint's control records) and drains for up to 5 s.
	writerCtx, stopWriter := context.WithCancel(context.Background())
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := writer.Run(writerCtx); err != nil {
			log.Error("audit records lost at shutdown", zap.Error(err))
		}
	}()
	defer stopWriter()

	sideCtx, stopSide := context.WithCancel(context.Background())
	kick := make(chan struct{}, 1)
	ctl, err := bus.ServeAgentControl(id, func(ctx context.Context, req natsbus.ControlRequest) (natsbus.AgentState, error) {
		st, err := r.Agent.Control(ctx, agent.ControlRequest{Op: agent.ControlOp(req.Op), Market: req.Market, Reason: req.Reason, From: req.From})
		select {
		case kick <- struct{}{}:
		default:
		}
		return natsbus.AgentState(st), err
	})
	if err != nil {
		stopSide()
		return err
	}
	// The side goroutines end with the agent's run (sideCtx, runCtx) and are waited
	// for before the last status: the heartbeat's snapshot (and its stuck gate) is
	// then the caller's alone.
	var sideWG sync.WaitGroup
	side := func(fn func()) {
		sideWG.Add(1)
		go func() { defer sideWG.Done(); fn() }()
	}
	side(func() { _ = ctl.Run(sideCtx) })
	side(func() { _ = supervisor.PublishAgentMetrics(sideCtx, bus, id, reg, 0, log) })
	side(func() {
		if err := bus.RunHeartbeatWith(sideCtx, cc.Heartbeat, snapshot, kick); err != nil {
			log.Error("no heartbeats", zap.Error(err))
		}
	})
	side(func() {
		if err := watchLease(runCtx, locks, walletKey, id, cc.Lease, log); err != nil {
			stopRun(err)
		}
	})
	side(func() {
		if fence.Wait(runCtx.Done()) {
			err := fmt.Errorf("stopping: %w", fence.Check())
			log.Error("lease fenced: no renewal reached this agent in time; its orders stay for its successor", zap.Error(err))
			stopRun(err)
		}
	})
	side(func() {
		select {
		case <-runCtx.Done():
		case err := <-stateLost:
			stopRun(fmt.Errorf("stopping: %w", err))
		}
	})
	side(func() {
		select {
		case <-runCtx.Done():
		case <-sink.backlog:
			log.Error("audit backlog full: pausing the agent (what it does could no longer be recorded)")
			cctx, cancel := context.WithTimeout(runCtx, 5*time.Second)
			_, _ = r.Agent.Control(cctx, agent.ControlRequest{Op: agent.OpPause, Reason: "audit backlog full", From: "fleet"})
			cancel()
		}
	})

	log.Info("supervised", zap.String("agent", string(id)), zap.String("supervisor", cc.Supervisor),
		zap.Stringer("wallet", wallet), zap.String("desired", string(eff)), zap.Uint64("run", cc.Run))
	runErr := r.Agent.Run(runCtx)
	// The run may end by itself (a feed failure, Options.Events) while runCtx lives:
	// end it, so that the lease watch stops too. A cause set before (a lost lock)
	// stays.
	stopRun(nil)
	stopSide()
	sideWG.Wait()
	// The last word: stopped (the roster marks the agent stopped, not dead).
	final, _ := snapshot() // the heartbeat goroutine has stopped: the gate is ours
	final.Time, final.IntervalMS = time.Now().UnixMilli(), cc.Heartbeat.Milliseconds()
	if err := bus.PublishStatus(&final); err != nil {
		log.Warn("last status not sent", zap.Error(err))
	}
	stopWriter()
	if cause := context.Cause(runCtx); runErr == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		runErr = cause
	}
	return runErr
}

// fleetStatus converts the agent's status for the fleet; labels name markets for
// people, in their order.
func fleetStatus(s agent.Status, markets []market.ConditionID, labels []string, host, sup string) natsbus.Status {
	st := natsbus.Status{Agent: s.Agent, Wallet: s.Wallet, State: natsbus.AgentState(s.State), DryRun: s.DryRun,
		Markets: markets, MarketLabels: labels, OpenOrders: s.OpenOrders, Balance: natsbus.Amount(s.Balance), Reserved: natsbus.Amount(s.Reserved),
		Realized: natsbus.Amount(s.Realized), Unrealized: natsbus.Amount(s.Unrealized), LastEvent: s.Time,
		PID: os.Getpid(), Host: host, Supervisor: sup}
	if s.State == agent.StateFailed || s.State == agent.StateKilled || s.Halted {
		st.Error = s.Reason
	}
	for _, p := range s.Positions {
		st.Positions = append(st.Positions, natsbus.PositionStatus{Market: p.Market, Label: p.Label, Token: p.Token, Outcome: p.Outcome.String(),
			Size: natsbus.Amount(p.Size), AvgPrice: natsbus.Amount(p.AvgPrice), Mark: natsbus.Amount(p.Mark),
			Realized: natsbus.Amount(p.Realized), Unrealized: natsbus.Amount(p.Unrealized)})
	}
	addDetail(&st, s)
	return st
}

// fenceWait bounds the wait for the supervisor's first lease deadline.
const fenceWait = 5 * time.Second

// addDetail copies what `pitboss status` and the dashboard's agent panel show:
// equity and PnL, the tops of the books, the open orders and the guards' use.
func addDetail(st *natsbus.Status, s agent.Status) {
	st.Equity, st.PnL = natsbus.Amount(s.Equity), natsbus.Amount(s.PnL)
	for _, b := range s.Books {
		st.Books = append(st.Books, natsbus.BookStatus{Market: b.Market, Label: b.Label, Token: b.Token, Outcome: b.Outcome.String(),
			Bid: natsbus.Amount(b.Bid), Ask: natsbus.Amount(b.Ask), Mid: natsbus.Amount(b.Mid), Spread: natsbus.Amount(b.Spread)})
	}
	for _, o := range s.Orders {
		if len(st.Orders) == natsbus.MaxStatusOrders {
			break
		}
		st.Orders = append(st.Orders, natsbus.OrderStatus{ID: o.ID, Market: o.Market, Label: o.Label, Outcome: o.Outcome.String(),
			Side: o.Side.String(), Price: natsbus.Amount(o.Price), Size: natsbus.Amount(o.Size), Matched: natsbus.Amount(o.Matched),
			Placed: o.Placed, Mid: natsbus.Amount(o.Mid), Distance: natsbus.Amount(o.Distance), Key: o.Key})
	}
	for _, l := range s.Limits {
		g := natsbus.GuardStatus{Guard: l.Guard, Unit: l.Unit, Used: natsbus.Amount(l.Used), Limit: natsbus.Amount(l.Limit)}
		if l.Limit > 0 {
			g.Use = int(int64(l.Used) * 100 / int64(l.Limit))
		}
		st.Guards = append(st.Guards, g)
	}
}

// checkLease verifies that the wallet's lock is held for agent id under lease.
func checkLease(ctx context.Context, locks *natsbus.Locks, key string, id market.AgentID, lease string) error {
	h, held, err := locks.Holder(ctx, key)
	if err != nil {
		return err
	}
	what := strings.Replace(key, ".", " ", 1)
	switch {
	case !held:
		return fmt.Errorf("refusing to start: %s is not locked for agent %s (a supervised agent trades only under its supervisor's lock)", what, id)
	case h.Agent != id || h.Lease != lease:
		return fmt.Errorf("refusing to start: %w", market.Errorf(market.CodeLockHeld, what, h.String()))
	}
	return nil
}

// watchLease checks the wallet's lock every TTL/3 until ctx ends (nil) or the lock
// is gone or someone else's (an error matching market.ErrLockLost). A check that
// fails (NATS unreachable) is not a loss: the agent keeps trading and the venue's
// own heartbeat still protects its orders; the supervisor's lease expires only if
// the supervisor is gone too.
func watchLease(ctx context.Context, locks *natsbus.Locks, key string, id market.AgentID, lease string, log *zap.Logger) error {
	t := time.NewTicker(max(locks.TTL()/3, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, locks.TTL()/3)
		h, held, err := locks.Holder(cctx, key)
		cancel()
		switch {
		case err != nil:
			if ctx.Err() == nil {
				log.Warn("wallet lock not checked", zap.Error(err))
			}
		case !held || h.Agent != id || h.Lease != lease:
			err := fmt.Errorf("stopping: %w", market.Errorf(market.CodeLockLost, strings.Replace(key, ".", " ", 1)))
			log.Error("wallet lock lost", zap.Error(err))
			return err
		}
	}
}

// applyDesiredAtStart makes a killed or paused desired state hold from the agent's
// first event: the state is written into the checkpoint startup restores (the kill
// switch tripped, or paused). A first start without a checkpoint gets one that only
// carries this state, with the starting balance as its start equity (what the
// embedded venue funds); a kill switch is tripped on the guards directly, which
// startup keeps when there is no checkpoint to restore.
func applyDesiredAtStart(r *Runnable, eff natsbus.DesiredState, balance market.Micros) error {
	if eff != natsbus.DesiredKilled && eff != natsbus.DesiredPaused {
		return nil
	}
	store := r.Store
	cp, err := store.Load()
	if err != nil {
		return err
	}
	reason := "fleet desired state: " + string(eff)
	var t int64
	if cp != nil {
		t = cp.Time
	}
	if eff == natsbus.DesiredKilled {
		if r.Guards.Halted() {
			return nil
		}
		r.Guards.Trip(t, reason)
		if cp == nil {
			return nil
		}
		k, err := r.Guards.KillState()
		if err != nil {
			return err
		}
		cp.Kill = k
		return store.Save(cp)
	}
	if cp == nil {
		if balance == 0 {
			balance = DefaultBalance
		}
		cp = &agent.Checkpoint{Version: agent.CheckpointVersion, Agent: r.Agent.Status().Agent, Wallet: r.Wallet,
			StartEquity: agent.Amount(balance)}
	}
	if cp.Paused {
		return nil
	}
	cp.Paused = true
	return store.Save(cp)
}

// sameVenue reports whether two WebSocket bases name one venue.
func sameVenue(a, b string) bool {
	return strings.EqualFold(strings.TrimRight(a, "/"), strings.TrimRight(b, "/"))
}

// randomRun is a short random part of audit record ids (one process start).
func randomRun() string {
	var b [5]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go >= 1.24)
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

// FleetRuntimeDir returns (and creates, 0700) the per-user runtime directory where
// `pitboss supervise` writes the ctl endpoint file of each fleet
// (fleet-<name>.json) and `pitboss ctl` looks for it: $XDG_RUNTIME_DIR/pitboss, or
// the temporary directory's pitboss-<uid> (the directory of the wallet locks).
func FleetRuntimeDir(getenv func(string) string) (string, error) {
	return runtimeDir(Options{Getenv: getenv})
}

// stuckAfter is how long an agent's loop may leave status requests unanswered
// before its heartbeats stop: five heartbeats, and at least 30 s, longer than a
// venue call with its retries (a synchronous venue blocks the loop meanwhile).
func stuckAfter(heartbeat time.Duration) time.Duration {
	return max(5*heartbeat, 30*time.Second)
}

// stuckGate decides whether a heartbeat is published: yes while the loop answers
// status requests, and for up to after since the last answer; then no, until the
// loop answers again. The zero value with after set is ready; not safe for
// concurrent use (the heartbeat goroutine owns it).
type stuckGate struct {
	after     time.Duration
	last      time.Time // the last answer (or the first observation)
	silent    bool      // heartbeats are stopped
	announced bool
}

// observe records one status request at now, answered or not, and returns
// whether to publish and how long the loop has been silent.
func (g *stuckGate) observe(now time.Time, answered bool) (publish bool, silent time.Duration) {
	if answered || g.last.IsZero() {
		g.last, g.silent, g.announced = now, false, false
		if answered {
			return true, 0
		}
	}
	silent = now.Sub(g.last)
	g.silent = silent >= g.after
	return !g.silent, silent
}

// firstSilence reports true once per silence, the first time it is asked while
// heartbeats are stopped.
func (g *stuckGate) firstSilence() bool {
	if !g.silent || g.announced {
		return false
	}
	g.announced = true
	return true
}

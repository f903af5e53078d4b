package wire

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/embedded"
	"github.com/pitbossdev/pitboss/adapters/signals"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// ClockMode says where an embedded run's time comes from.
type ClockMode uint8

// Clock modes. The zero value is ClockWall.
const (
	// ClockWall: the embedded market runs at the wall clock's pace and the agent's
	// periodic duties follow the wall clock. For people watching.
	ClockWall ClockMode = iota
	// ClockSim: the embedded market runs as fast as the agent consumes it from a
	// fixed start time, and everything follows event time: the same seed gives the
	// same decisions, line for line. For tests and quick studies.
	ClockSim
)

// SimEpoch is the event time a ClockSim run starts at when its state directory has
// no checkpoint: 2025-01-01T00:00:00Z.
const SimEpoch int64 = 1_735_689_600_000

// DefaultBalance is the starting collateral of the paper account and of the live
// embedded wallet when Options.Balance is zero.
const DefaultBalance = 1000 * market.One

// Options are what the command line adds to an agent file. The zero value is a dry
// run on the wall clock.
type Options struct {
	// Live confirms a live run (--live). A live run needs both this and
	// `dry_run: false` in the agent file; either one alone is refused.
	Live bool
	// Clock is ClockWall (default) or ClockSim.
	Clock ClockMode
	// Seed seeds the embedded market's flow. If zero, 1.
	Seed uint64
	// Speed multiplies the pace of a ClockWall embedded market. If zero, 1.
	Speed int
	// Duration, with ClockSim, ends the run after this much event time (the
	// command line handles wall-clock durations). If zero, no limit.
	Duration time.Duration
	// Events stops the agent after this many feed events. If zero, no limit.
	Events uint64
	// StateDir overrides the agent file's state_dir. If empty, the file's.
	StateDir string
	// RuntimeDir is where wallet locks live. If empty, $XDG_RUNTIME_DIR/pitboss or
	// the temporary directory's pitboss-<uid>.
	RuntimeDir string
	// Balance is the paper account's (or the live embedded wallet's) starting
	// collateral. If zero, DefaultBalance (1000).
	Balance market.Micros
	// Latency is the paper venue's order latency (event time). If zero, none.
	Latency time.Duration
	// LeaveOrders keeps open orders on stop (--leave-orders).
	LeaveOrders bool
	// ResumeAfterKill clears a tripped kill switch at start, with this reason
	// (--resume-after-kill; agent.Config.ResumeAfterKill). Empty: no change.
	ResumeAfterKill string
	// ClearFailure clears a strategy failure the state directory kept, at start
	// (--clear-failure; agent.Config.ClearFailure).
	ClearFailure bool
	// Record, if set, is a new tape file the run records the stream its agent
	// consumes into (market data of its markets, its feeds' prices, its signals'
	// values), for `pitboss backtest --data` (--record). If empty, none.
	Record string
	// Fresh starts from an empty state: the state directory's checkpoint is set
	// aside (renamed agent.json.prev) before the agent starts, so the paper
	// account is empty, the clock starts at its beginning and nothing of an
	// earlier run carries over (--fresh). Refused for a live run on the remote
	// venue, whose positions are the venue's and whose kill switch is the
	// operator's to clear.
	Fresh bool
	// Flow replaces the embedded market's flow (tests). If nil, sandbox/sim's
	// participants on four synthetic markets (embedded.NewSimFlow).
	Flow embedded.Flow
	// UpDown is the window of the embedded market's rolling BTC up/down markets
	// (embedded.Config.UpDown; docs/strategies.md, "Up/down markets"). If zero,
	// sim.DefaultUpDownWindow (15 minutes) with the default flow and none with
	// Flow; negative: none.
	UpDown time.Duration
	// Upstream replaces the venue of the wallet on the embedded market (tests): in
	// a live run the agent trades on it; in a dry run the paper venue only reads
	// market metadata from it (Markets) and nothing else is ever called. If nil,
	// the embedded Exchange's Venue.
	Upstream func(x *embedded.Exchange, wallet market.Address) agent.Venue
	// Start sets the embedded market's start time (Unix ms). If zero: ClockSim
	// starts at SimEpoch, ClockWall now — or just after the checkpoint's last event
	// when that is later.
	Start int64
	// Logger, Metrics and Audit are handed to the agent (nil: none).
	Logger  *zap.Logger
	Metrics agent.Metrics
	Audit   agent.AuditSink
	// Getenv reads XDG_RUNTIME_DIR. If nil, os.Getenv.
	Getenv func(string) string
	// Remote is what a run on the remote venue needs (wallet and credential
	// lookup, key creation, rate budget). Ignored on the embedded venue.
	Remote RemoteOptions
	// WrapVenue, if set, wraps the venue the agent trades on (RunSupervised's
	// lease fence). WrapStore, if set, replaces the state directory's checkpoint
	// store with one built on it (RunSupervised's replicated state).
	WrapVenue func(agent.Venue) (agent.Venue, error)
	WrapStore func(*agent.FileStore) (agent.Store, error)
	// Fence replaces the supervisor's fence pipe (RunSupervised; tests): lease
	// deadlines as supervisor.NewFence reads them.
	Fence io.Reader
	// OrderTrace, if set, receives a line (OrderTraceLine) for every
	// order-changing venue call a supervised agent made (--order-trace).
	OrderTrace io.Writer
}

// Errors of Build that the command line explains.
var (
	// ErrLiveNotConfirmed: the agent file says dry_run: false but --live was not
	// given.
	ErrLiveNotConfirmed = errors.New("the agent file says dry_run: false, but --live was not given: refusing to trade live (add --live to confirm, or set dry_run: true)")
	// ErrLiveNotInFile: --live was given but the agent file is a dry run.
	ErrLiveNotInFile = errors.New("--live was given, but the agent file is a dry run (dry_run is true or absent): set dry_run: false in the file to go live")
	// ErrRemoteNotReady: the remote venue is not wired where this is returned.
	// Build no longer returns it (it composes the remote venue, see RemoteOptions).
	ErrRemoteNotReady = errors.New("venue: remote is not available in this build yet (the remote venue comes with the service client); use venue: embedded")
)

// Runnable is an agent built from its file, ready to Run, with what was built for
// it. Close releases its locks after Run returns.
type Runnable struct {
	Agent    *agent.Agent
	Spec     *agents.Spec
	Exchange *embedded.Exchange
	Guards   *Guards
	// Venue is what the agent trades on: the paper venue in a dry run, the
	// embedded venue in a live run.
	Venue    agent.Venue
	Wallet   market.Address
	DryRun   bool
	StateDir string
	Bindings []Binding
	// Remote describes the remote venue's run (nil on the embedded venue).
	Remote *RemoteRun
	// Signals is the hub of the agent file's signals (nil without any);
	// SignalURL the base URL of its HTTP endpoint ("" without http signals).
	Signals   *signals.Hub
	SignalURL string
	// Previous is the checkpoint the agent continues from (nil: a first run, or
	// a fresh one); SetAside is where Options.Fresh moved it ("" when there was
	// none).
	Previous *agent.Checkpoint
	SetAside string
	// Store is the checkpoint store the agent uses (the state directory's, or
	// what Options.WrapStore made of it).
	Store   agent.Store
	release []func()
}

// ErrFreshLive: --fresh on a live run on the remote venue.
var ErrFreshLive = errors.New("--fresh is for paper accounts: a live agent's positions are the venue's, and a tripped kill switch or a failure is cleared explicitly (--resume-after-kill, --clear-failure)")

// openState opens the state directory, takes the locks (nothing below may touch
// the state of a running agent), and sets the checkpoint aside for a fresh run or
// reads it (Previous).
func (r *Runnable) openState(opt Options, name string) (agent.Store, error) {
	fstore, err := agent.NewFileStore(r.StateDir)
	if err != nil {
		return nil, err
	}
	if err := r.lock(opt, name); err != nil {
		return nil, err
	}
	var store agent.Store = fstore
	if opt.WrapStore != nil {
		if store, err = opt.WrapStore(fstore); err != nil {
			return nil, err
		}
	}
	r.Store = store
	if opt.Fresh {
		path := filepath.Join(r.StateDir, agent.CheckpointFile)
		switch err := os.Rename(path, path+".prev"); {
		case err == nil:
			r.SetAside = path + ".prev"
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("--fresh: %w", err)
		}
		return store, nil
	}
	if r.Previous, err = store.Load(); err != nil {
		return nil, fmt.Errorf("%w (--fresh starts over, keeping it as %s.prev)", err, agent.CheckpointFile)
	}
	return store, nil
}

// Binding is one market the agent trades, under its strategy binding name.
type Binding struct {
	Name string
	Info market.Info
}

// Close releases the wallet and state-directory locks.
func (r *Runnable) Close() error {
	for i := len(r.release) - 1; i >= 0; i-- {
		r.release[i]()
	}
	r.release = nil
	return nil
}

// PaperAddress is the address of the paper wallet of a wallet reference: the first
// 20 bytes of SHA-256("pitboss-paper:" + ref). A dry run on the embedded venue uses
// it instead of looking the wallet up, so it needs no key, no keyring and no
// network; the reference is only a label.
func PaperAddress(ref agents.WalletRef) market.Address {
	h := sha256.Sum256([]byte("pitboss-paper:" + ref.String()))
	var a market.Address
	copy(a[:], h[:20])
	return a
}

// Build is BuildContext with a background context.
func Build(spec *agents.Spec, opt Options) (*Runnable, error) {
	return BuildContext(context.Background(), spec, opt)
}

// BuildContext composes the agent of spec. On the remote venue (buildRemote, see
// RemoteOptions) ctx bounds the start-up's requests: unlocking the wallet, finding
// or creating the API credentials, the geoblock check and the markets; the embedded
// venue does no I/O and ignores it.
//
// On the embedded venue: the embedded market and its feed, the venue
// (paper in a dry run, the embedded engine in a live run), the strategy with its
// overrides bound to the selected markets, the guard chain (geoblock: allowed on the
// embedded venue; the wallet's address in account-mode denials), the state
// directory's checkpoint store and the locks that keep a second process of the same
// wallet (or state directory) from starting. It refuses a live run that is not
// confirmed both in the file and by Options.Live.
func BuildContext(ctx context.Context, spec *agents.Spec, opt Options) (*Runnable, error) {
	live := !spec.DryRun()
	switch {
	case live && !opt.Live:
		return nil, ErrLiveNotConfirmed
	case opt.Live && !live:
		return nil, ErrLiveNotInFile
	case spec.Venue.Kind == agents.VenueRemote:
		return buildRemote(ctx, spec, opt, live)
	}
	id, err := market.ParseAgentID(spec.Name)
	if err != nil {
		return nil, err
	}
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.Balance == 0 {
		opt.Balance = DefaultBalance
	}
	r := &Runnable{Spec: spec, DryRun: !live, StateDir: spec.StateDir}
	if opt.StateDir != "" {
		r.StateDir = opt.StateDir
	}
	ok := false
	defer func() {
		if !ok {
			r.Close()
		}
	}()

	// The wallet: on the embedded venue a label, never looked up (see PaperAddress).
	r.Wallet = PaperAddress(spec.Wallet)

	store, err := r.openState(opt, spec.Name)
	if err != nil {
		return nil, err
	}

	// The embedded market.
	xc := embedded.Config{Paced: opt.Clock == ClockWall, Speed: opt.Speed, Start: opt.Start,
		HeartbeatTimeout: 2 * spec.Heartbeat, Prices: spec.FeedSymbols(), PriceSeed: opt.Seed}
	if xc.HeartbeatTimeout < embedded.DefaultHeartbeatTimeout {
		xc.HeartbeatTimeout = embedded.DefaultHeartbeatTimeout
	}
	if xc.Start == 0 {
		xc.Start = time.Now().UnixMilli()
		if opt.Clock == ClockSim {
			xc.Start = SimEpoch
		}
		// Continue after the last run's events (a sped-up run can be ahead of the
		// wall clock): the agent's time never goes backwards.
		if cp := r.Previous; cp != nil && cp.Time >= xc.Start {
			xc.Start = cp.Time + 1000
		}
	}
	flow := opt.Flow
	if flow == nil {
		flow = embedded.NewSimFlow(opt.Seed, 0, xc.Start, sim.Config{})
		if opt.UpDown == 0 {
			opt.UpDown = sim.DefaultUpDownWindow
		}
	}
	xc.UpDown = max(opt.UpDown, 0)
	x, err := embedded.New(xc, flow)
	if err != nil {
		return nil, err
	}
	r.Exchange = x
	if opt.Clock == ClockSim && opt.Duration > 0 {
		xc.End = x.Time() + opt.Duration.Milliseconds()
	}
	if xc.End > 0 {
		x.SetEnd(xc.End)
	}

	// Markets and strategy.
	catalog, err := x.Markets(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	binds, err := bindMarkets(&spec.Markets, catalog, x.Time())
	if err != nil {
		return nil, err
	}
	st, err := spec.LoadStrategy()
	if err != nil {
		return nil, err
	}
	inst, err := st.NewInstanceWith(binds, spec.Sources())
	if err != nil {
		return nil, err
	}
	conds, bindings := bindingsOf(binds, catalog)
	r.Bindings = bindings

	// Guards.
	g, err := NewGuards(spec.Guards, append([]policies.Option{policies.WithAgent(spec.Name), policies.WithAddress(r.Wallet),
		policies.WithGeoblock(policies.Geoblock{Status: policies.GeoAllowed, Country: "embedded"})}, SignalGuard(spec)...)...)
	if err != nil {
		return nil, err
	}
	r.Guards = g

	// Venue: the wallet's venue on the market; in a dry run the paper venue, which
	// reads market metadata from it and nothing else (it has no other way in: a
	// paper.MarketSource has one method).
	var up agent.Venue = x.Venue(r.Wallet)
	if opt.Upstream != nil {
		up = opt.Upstream(x, r.Wallet)
	}
	if live {
		if err := x.Fund(r.Wallet, opt.Balance); err != nil {
			return nil, err
		}
		r.Venue = up
	} else {
		pv, err := paper.New(paper.Config{Address: r.Wallet, Balance: opt.Balance, Latency: opt.Latency}, up)
		if err != nil {
			return nil, err
		}
		r.Venue = pv
	}

	if opt.WrapVenue != nil {
		if r.Venue, err = opt.WrapVenue(r.Venue); err != nil {
			return nil, err
		}
	}
	cfg := agent.Config{ID: id, Identity: spec.Identity(), Wallet: r.Wallet, DryRun: !live, Markets: conds, Heartbeat: spec.Heartbeat,
		LeaveOrders: opt.LeaveOrders, MaxEvents: opt.Events, ResumeAfterKill: opt.ResumeAfterKill, ClearFailure: opt.ClearFailure}
	clock := agent.WallClock
	if opt.Clock == ClockSim {
		clock = agent.EventClock
	}
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	feed, err := r.withSignals(spec, opt, opt.Clock == ClockWall, x.Feed(conds, r.Wallet))
	if err != nil {
		return nil, err
	}
	if feed, err = r.withRecording(spec, opt, fmt.Sprintf("embedded seed=%d", opt.Seed), feed); err != nil {
		return nil, err
	}
	a, err := agent.New(cfg, agent.Deps{Venue: r.Venue, Feed: feed, Decider: inst, Guards: g,
		Store: store, Audit: opt.Audit, Metrics: opt.Metrics, Logger: opt.Logger, Clock: clock})
	if err != nil {
		return nil, err
	}
	r.Agent = a
	ok = true
	return r, nil
}

// runtimeDir returns (and creates, 0700) the per-user directory of wallet locks.
func runtimeDir(opt Options) (string, error) {
	dir := opt.RuntimeDir
	if dir == "" {
		if x := opt.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
			dir = filepath.Join(x, "pitboss")
		} else {
			dir = filepath.Join(os.TempDir(), "pitboss-"+strconv.Itoa(os.Getuid()))
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("wire: runtime directory: %w", err)
	}
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", fmt.Errorf("wire: runtime directory %s is open to others: %w", dir, err)
		}
	}
	return dir, nil
}

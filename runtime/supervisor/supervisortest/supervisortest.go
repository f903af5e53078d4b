// Package supervisortest runs supervisors of fake agents for tests: the test binary
// acts as the agent process (FakeAgent, a light stand-in for `pitboss run
// --supervised` that speaks the fleet's protocol — status, control, desired state —
// without a market), so that the supervisor, its client and the dashboard are
// tested with real processes, signals and an embedded nats-server in seconds.
//
// A test package that uses it calls RunChildIfRequested first thing in its
// TestMain.
package supervisortest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// ChildEnv makes the test binary act as an agent process (FakeAgent) instead of
// running the tests.
const ChildEnv = "PITBOSS_SUPERVISORTEST_CHILD"

// HangAfterBeats is how many statuses a fake agent in mode hang sends before it
// falls silent.
const HangAfterBeats = 5

// FakeBeatsMetric is the counter a fake agent publishes to its supervisor (with
// its "agent" label): the statuses it sent.
const FakeBeatsMetric = "pitboss_agent_fake_heartbeats_total"

// RunChildIfRequested runs FakeAgent and exits when the process was started as a
// fake agent; otherwise it returns at once. Call it first in TestMain.
func RunChildIfRequested() {
	if os.Getenv(ChildEnv) != "" {
		os.Exit(FakeAgent())
	}
}

// Main is a TestMain: the fake agent when requested, else the tests, followed by a
// check that no goroutine of nats-server, nats.go or the supervisor survived them.
func Main(m *testing.M) {
	RunChildIfRequested()
	os.Exit(natsbustest.RunCheckingLeaks(m, supervisorLeakMarker))
}

// supervisorLeakMarker identifies package supervisor's goroutines in a stack dump.
const supervisorLeakMarker = "runtime/supervisor.("

// FakeAgent is the child's main. Its behaviour is the last argument (the agent
// "file"): run (until SIGTERM), crash (exit 3 at once), exit0 (exit 0 at once),
// ignore-term (run, ignoring SIGTERM), hang (run, but stop sending statuses after
// HangAfterBeats of them: alive and silent, as a deadlocked agent; SIGTERM ends it
// without a last status), hang-ignore-term (hang, ignoring SIGTERM), mute (alive,
// never a status: stuck at start), checkpoint (run, and store a Checkpoint in the
// fleet's state bucket every heartbeat). It reads the fleet's environment
// (supervisor.ChildFromEnv), starts killed or paused as the desired state says,
// answers pause, resume, kill and resume_after_kill, and publishes its status every
// heartbeat and after each request, and its metrics (FakeBeatsMetric) every
// heartbeat. Its status holds a book, two open orders and a position (cancel_all
// cancels the orders, flatten also sells the position); it writes a fill to the
// audit trail at start and a control record for each request.
func FakeAgent() int {
	mode := os.Args[len(os.Args)-1]
	fmt.Println("fake agent starting:", mode)
	switch mode {
	case "crash":
		fmt.Fprintln(os.Stderr, "fake agent: something broke")
		return 3
	case "exit0":
		return 0
	}
	hang := mode == "hang" || mode == "hang-ignore-term"
	mute := mode == "mute"
	sigs := make(chan os.Signal, 1)
	if mode == "ignore-term" || mode == "hang-ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	}
	cc, err := supervisor.ChildFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	bus, err := natsbus.Connect(ctx, cc.Endpoint, natsbus.ConnectOptions{Name: "fake " + string(cc.Agent), InboxPrefix: natsbus.AgentInboxPrefix(cc.Agent)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 2
	}
	defer bus.Close()
	var mu sync.Mutex
	state := natsbus.StateRunning
	// What a quoter would hold: two resting orders and a position (cancel_all
	// cancels the orders, flatten also sells the position), and one fill in the
	// audit trail.
	orders, holding := true, true
	audit, _ := bus.AuditLog(cc.Agent, market.Address{}, "")
	if audit != nil {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		_, _ = audit.Append(actx, &natsbus.AuditRecord{Kind: natsbus.AuditFill, Time: time.Now().UnixMilli(), DryRun: true,
			Fill: &natsbus.FillRecord{Trade: "t-1", Order: "o-0", Market: "0x01", Token: "1", Outcome: "YES", Side: "BUY", Role: "maker",
				Price: natsbus.Amount(market.One * 45 / 100), Size: natsbus.Amount(10 * market.One), Time: time.Now().UnixMilli()}})
		acancel()
	}
	if ds, err := bus.OpenDesired(ctx); err == nil {
		if eff, err := ds.EffectiveFor(ctx, cc.Agent); err == nil {
			switch eff {
			case natsbus.DesiredKilled:
				state = natsbus.StateKilled
			case natsbus.DesiredPaused:
				state = natsbus.StatePaused
			}
		}
	}
	kick := make(chan struct{}, 1)
	cs, err := bus.ServeAgentControl(cc.Agent, func(_ context.Context, req natsbus.ControlRequest) (natsbus.AgentState, error) {
		mu.Lock()
		defer mu.Unlock()
		switch req.Op {
		case natsbus.OpPause:
			state = natsbus.StatePaused
		case natsbus.OpResume:
			if state == natsbus.StateKilled {
				return state, market.Errorf(market.CodeKillSwitchTripped, string(cc.Agent), "test")
			}
			state = natsbus.StateRunning
		case natsbus.OpKill:
			state = natsbus.StateKilled
		case natsbus.OpResumeAfterKill:
			if state != natsbus.StateKilled {
				return state, market.Errorf(market.CodeKillSwitchNotTripped, string(cc.Agent))
			}
			state = natsbus.StateRunning
		case natsbus.OpCancelAll:
			orders = false
		case natsbus.OpFlatten:
			orders, holding = false, false
		}
		if audit != nil {
			actx, acancel := context.WithTimeout(context.Background(), time.Second)
			_, _ = audit.Append(actx, &natsbus.AuditRecord{Kind: natsbus.AuditControl, Time: time.Now().UnixMilli(), DryRun: true,
				Control: &natsbus.ControlRecord{Request: req, OK: true}})
			acancel()
		}
		select {
		case kick <- struct{}{}:
		default:
		}
		return state, nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 2
	}
	runCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = cs.Run(runCtx) }()
	// Its metrics, as a supervised agent publishes them (every heartbeat here).
	reg := prometheus.NewRegistry()
	beats := prometheus.NewCounter(prometheus.CounterOpts{Name: FakeBeatsMetric, Help: "Statuses the fake agent sent.",
		ConstLabels: prometheus.Labels{"agent": string(cc.Agent)}})
	reg.MustRegister(beats)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = supervisor.PublishAgentMetrics(runCtx, bus, cc.Agent, reg, cc.Heartbeat, nil)
	}()
	host, _ := os.Hostname()
	started := time.Now().UnixMilli()
	status := func(st natsbus.AgentState) natsbus.Status {
		mu.Lock()
		hasOrders, hasPos := orders, holding
		mu.Unlock()
		s := natsbus.Status{Agent: cc.Agent, State: st, DryRun: true, PID: os.Getpid(), Host: host, Supervisor: cc.Supervisor,
			Markets: []market.ConditionID{"0x01"}, MarketLabels: []string{"fake-market"}, Balance: natsbus.Amount(1000 * market.One),
			Realized: natsbus.Amount(market.One / 2), Equity: natsbus.Amount(1000*market.One + market.One/2), PnL: natsbus.Amount(market.One / 2),
			LastEvent: time.Now().UnixMilli(), Time: time.Now().UnixMilli(), IntervalMS: cc.Heartbeat.Milliseconds(),
			Books: []natsbus.BookStatus{{Market: "0x01", Label: "fake-market", Token: "1", Outcome: "YES", Bid: natsbus.Amount(market.One * 48 / 100),
				Ask: natsbus.Amount(market.One * 52 / 100), Mid: natsbus.Amount(market.One / 2), Spread: natsbus.Amount(market.One * 4 / 100)}}}
		if hasPos {
			s.Positions = []natsbus.PositionStatus{{Market: "0x01", Label: "fake-market", Token: "1", Outcome: "YES", Size: natsbus.Amount(10 * market.One),
				AvgPrice: natsbus.Amount(market.One * 45 / 100), Mark: natsbus.Amount(market.One / 2)}}
		}
		if hasOrders {
			for i, side := range []string{"BUY", "SELL"} {
				p := market.One * 47 / 100
				if side == "SELL" {
					p = market.One * 53 / 100
				}
				s.Orders = append(s.Orders, natsbus.OrderStatus{ID: market.OrderID(fmt.Sprintf("o-%d", i+1)), Market: "0x01", Label: "fake-market",
					Outcome: "YES", Side: side, Price: natsbus.Amount(p), Size: natsbus.Amount(5 * market.One), Placed: started,
					Mid: natsbus.Amount(market.One / 2), Distance: natsbus.Amount(market.One * 3 / 100)})
			}
			s.OpenOrders = len(s.Orders)
		}
		return s
	}
	// Its heartbeats, as a supervised agent sends them (natsbus.Bus.RunHeartbeatWith):
	// every heartbeat and after each request, none while silent.
	sent, silent := 0, false
	snapshot := func() (natsbus.Status, bool) {
		mu.Lock()
		st := state
		mu.Unlock()
		silent = mute || hang && sent >= HangAfterBeats
		if !silent {
			beats.Inc()
			sent++
		}
		return status(st), !silent
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = bus.RunHeartbeatWith(runCtx, cc.Heartbeat, snapshot, kick) }()
	if mode == "checkpoint" {
		wg.Add(1)
		go func() { defer wg.Done(); writeCheckpoints(runCtx, bus, cc.Agent, cc.Heartbeat) }()
	}
	<-sigs
	stop()
	wg.Wait() // the heartbeat goroutine is done: sent and silent are ours
	if !silent {
		final := status(natsbus.StateStopped)
		_ = bus.PublishStatus(&final)
	}
	_ = bus.Flush(context.Background())
	fmt.Println("fake agent stopped")
	return 0
}

// Fleet is a supervisor under test with fake agents.
type Fleet struct {
	T      *testing.T
	Sup    *supervisor.Supervisor
	Client *supervisor.Client
	Out    *SyncBuffer // the children's output
	cancel context.CancelFunc
	done   chan error
}

// SyncBuffer is a bytes.Buffer safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Logger logs to the test with -v, else nowhere.
func Logger(t testing.TB) *zap.Logger {
	if testing.Verbose() {
		return zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	}
	return zap.NewNop()
}

// Addr is a test wallet address ending in n.
func Addr(n byte) market.Address {
	var a market.Address
	a[19] = n
	a[0] = 0xaa
	return a
}

// AgentSpec is an agent run by the fake child in the given mode (see FakeAgent),
// trading wallet Addr(wallet), with a quick restart policy (50 ms backoff, crash
// loop at 4 crashes).
func AgentSpec(id string, wallet byte, mode string) supervisor.Agent {
	return supervisor.Agent{ID: market.AgentID(id), Wallet: Addr(wallet), WalletRef: "keyring:" + id, File: mode,
		Restart: supervisor.Restart{Backoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, CrashLoop: 4, CrashWindow: time.Minute}}
}

// Start runs a supervisor of agents with fake children on an embedded server
// (mod may change the configuration, e.g. to join another supervisor's server) and
// stops it at the end of the test.
func Start(t *testing.T, agents []supervisor.Agent, mod ...func(*supervisor.Config)) *Fleet {
	t.Helper()
	f, err := TryStart(t, agents, mod...)
	if err != nil {
		t.Fatalf("supervisor did not start: %v", err)
	}
	return f
}

// OnCluster makes a supervisor join the cluster at urls (comma-separated) with
// ep's credentials (none when zero), its agents getting the same.
func OnCluster(urls string, ep natsbus.Endpoint) func(*supervisor.Config) {
	return func(c *supervisor.Config) {
		ep.URL = urls
		c.NATS = supervisor.NATSConfig{Endpoint: ep}
	}
}

// TryStart is Start for a supervisor that may refuse to start: it returns the
// error Run returned before the supervisor was ready.
func TryStart(t *testing.T, agents []supervisor.Agent, mod ...func(*supervisor.Config)) (*Fleet, error) {
	t.Helper()
	out := &SyncBuffer{}
	cfg := supervisor.Config{Fleet: "test", Name: "sup-" + strings.ReplaceAll(t.Name(), "/", "_"), Agents: agents,
		NATS:      supervisor.NATSConfig{StoreDir: t.TempDir()},
		Heartbeat: 100 * time.Millisecond, StopTimeout: 3 * time.Second, LockTTL: 3 * time.Second,
		Command: []string{os.Args[0]}, ExtraEnv: []string{ChildEnv + "=1"}, Output: out, Logger: Logger(t)}
	for _, f := range mod {
		f(&cfg)
	}
	s, err := supervisor.New(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &Fleet{T: t, Sup: s, Out: out, cancel: cancel, done: make(chan error, 1)}
	go func() { f.done <- s.Run(ctx) }()
	select {
	case <-s.Ready():
	case err := <-f.done:
		cancel()
		return nil, err
	case <-time.After(30 * time.Second):
		t.Fatal("supervisor not ready")
	}
	t.Cleanup(f.Stop)
	f.Client = supervisor.NewClient(s.Bus(), "test")
	return f, nil
}

// Stop stops the supervisor (and its agents) and waits for it; the test's cleanup
// calls it too.
func (f *Fleet) Stop() {
	if f.cancel == nil {
		return
	}
	f.cancel()
	f.cancel = nil
	select {
	case err := <-f.done:
		if err != nil {
			f.T.Errorf("supervisor: %v", err)
		}
	case <-time.After(30 * time.Second):
		f.T.Error("supervisor did not stop")
	}
}

// Agent returns this supervisor's view of id.
func (f *Fleet) Agent(id string) supervisor.AgentView {
	for _, a := range f.Sup.View().Agents {
		if string(a.ID) == id {
			return a
		}
	}
	f.T.Fatalf("no agent %s", id)
	return supervisor.AgentView{}
}

// WaitAgent polls until cond holds for agent id and returns the view.
func (f *Fleet) WaitAgent(id, what string, d time.Duration, cond func(supervisor.AgentView) bool) supervisor.AgentView {
	f.T.Helper()
	deadline := time.Now().Add(d)
	for {
		v := f.Agent(id)
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			f.T.Fatalf("timed out after %s waiting for %s of %s; view %+v\noutput:\n%s", d, what, id, v, f.Out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Alive: the process runs and its heartbeats arrive.
func Alive(v supervisor.AgentView) bool {
	return v.Process == supervisor.ProcRunning && v.Liveness == "alive" && v.Status != nil
}

// StateIs: alive and reporting st.
func StateIs(st natsbus.AgentState) func(supervisor.AgentView) bool {
	return func(v supervisor.AgentView) bool { return Alive(v) && v.Status.State == st }
}

// Ctx is a context that ends after d or with the test.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// AuditEvents returns the lifecycle events f's supervisor recorded for agent id
// (after waiting for its records queued so far to be stored).
func AuditEvents(t *testing.T, f *Fleet, id string) []string {
	t.Helper()
	if err := f.Sup.FlushLifecycle(Ctx(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	var ev []string
	err := f.Client.Tail(Ctx(t, 10*time.Second), natsbus.AuditFilter{Agent: market.AgentID(id), Kinds: []natsbus.AuditKind{natsbus.AuditLifecycle}},
		func(e natsbus.AuditEntry) error {
			ev = append(ev, e.Record.Lifecycle.Event)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// LeaseFence plays a supervisor's lease fence (supervisor.NewFence) for an agent
// run in the test process: it writes until()'s deadline at once and every 50 ms
// until the test ends.
func LeaseFence(t testing.TB, until func() time.Time) io.Reader {
	r, w := io.Pipe()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.Close()
		for {
			b, err := supervisor.FenceRecord(until())
			if err != nil {
				w.CloseWithError(err)
				return
			}
			if _, err := w.Write(b); err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(done); r.Close(); wg.Wait() })
	return r
}

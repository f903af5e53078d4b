package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// fakeChildEnv makes the test binary act as an agent process (fakeAgent) instead of
// running the tests: a light stand-in for `pitboss run --supervised` that speaks the
// fleet's protocol (status, control, desired state) without a market.
const fakeChildEnv = "SUPERVISOR_TEST_CHILD"

// TestMain runs the tests, or the fake agent, and then checks that no goroutine of
// nats-server, nats.go or this package survived the tests.
func TestMain(m *testing.M) {
	if os.Getenv(fakeChildEnv) != "" {
		os.Exit(fakeAgent())
	}
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(10 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

var leakMarkers = []string{"nats-io/nats-server", "nats-io/nats.go", "runtime/supervisor.("}

func waitNoLeaks(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var bad []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "waitNoLeaks") {
				continue
			}
			for _, m := range leakMarkers {
				if strings.Contains(g, m) {
					bad = append(bad, g)
					break
				}
			}
		}
		if len(bad) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(bad, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fakeAgent is the child's main. Its behaviour is the last argument (the agent
// "file"): run (until SIGTERM), crash (exit 3 at once), exit0 (exit 0 at once),
// ignore-term (run, ignoring SIGTERM), sleep (run without NATS).
func fakeAgent() int {
	mode := os.Args[len(os.Args)-1]
	fmt.Println("fake agent starting:", mode)
	switch mode {
	case "crash":
		fmt.Fprintln(os.Stderr, "fake agent: something broke")
		return 3
	case "exit0":
		return 0
	}
	sigs := make(chan os.Signal, 1)
	if mode == "ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	}
	cc, err := ChildFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	bus, err := natsbus.Connect(ctx, cc.Endpoint, natsbus.ConnectOptions{Name: "fake " + string(cc.Agent)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 2
	}
	defer bus.Close()
	var mu sync.Mutex
	state := natsbus.StateRunning
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
	host, _ := os.Hostname()
	status := func(st natsbus.AgentState) *natsbus.Status {
		return &natsbus.Status{Agent: cc.Agent, State: st, DryRun: true, PID: os.Getpid(), Host: host, Supervisor: cc.Supervisor,
			Markets: []market.ConditionID{"0x01"}, Balance: natsbus.Amount(1000 * market.One), Realized: natsbus.Amount(market.One / 2),
			Time: time.Now().UnixMilli(), IntervalMS: cc.Heartbeat.Milliseconds()}
	}
	t := time.NewTicker(cc.Heartbeat)
	defer t.Stop()
	for {
		mu.Lock()
		st := state
		mu.Unlock()
		_ = bus.PublishStatus(status(st))
		select {
		case <-sigs:
			stop()
			wg.Wait()
			_ = bus.PublishStatus(status(natsbus.StateStopped))
			_ = bus.Flush(context.Background())
			fmt.Println("fake agent stopped")
			return 0
		case <-t.C:
		case <-kick:
		}
	}
}

// fleetT is a supervisor under test with fake agents.
type fleetT struct {
	t      *testing.T
	sup    *Supervisor
	client *Client
	out    *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testLogger(t testing.TB) *zap.Logger {
	if testing.Verbose() {
		return zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
	}
	return zap.NewNop()
}

func addr(n byte) market.Address {
	var a market.Address
	a[19] = n
	a[0] = 0xaa
	return a
}

// fakeAgentSpec is an agent run by the fake child in the given mode.
func fakeAgentSpec(id string, wallet byte, mode string) Agent {
	return Agent{ID: market.AgentID(id), Wallet: addr(wallet), WalletRef: "keyring:" + id, File: mode,
		Restart: Restart{Backoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, CrashLoop: 4, CrashWindow: time.Minute}}
}

// startFleet runs a supervisor of agents with fake children on an embedded server
// (or on ep when its URL is set) and stops it at the end of the test.
func startFleet(t *testing.T, agents []Agent, mod ...func(*Config)) *fleetT {
	t.Helper()
	out := &syncBuffer{}
	cfg := Config{Fleet: "test", Name: "sup-" + strings.ReplaceAll(t.Name(), "/", "_"), Agents: agents,
		NATS:      NATSConfig{StoreDir: t.TempDir()},
		Heartbeat: 100 * time.Millisecond, StopTimeout: 3 * time.Second, LockTTL: 3 * time.Second,
		Command: []string{os.Args[0]}, ExtraEnv: []string{fakeChildEnv + "=1"}, Output: out, Logger: testLogger(t)}
	for _, f := range mod {
		f(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleetT{t: t, sup: s, out: out, cancel: cancel, done: make(chan error, 1)}
	go func() { f.done <- s.Run(ctx) }()
	t.Cleanup(f.stop)
	select {
	case <-s.Ready():
	case err := <-f.done:
		t.Fatalf("supervisor did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("supervisor not ready")
	}
	f.client = NewClient(s.Bus(), "test")
	return f
}

func (f *fleetT) stop() {
	if f.cancel == nil {
		return
	}
	f.cancel()
	f.cancel = nil
	select {
	case err := <-f.done:
		if err != nil {
			f.t.Errorf("supervisor: %v", err)
		}
	case <-time.After(30 * time.Second):
		f.t.Error("supervisor did not stop")
	}
}

// agent returns this supervisor's view of id.
func (f *fleetT) agent(id string) AgentView {
	for _, a := range f.sup.View().Agents {
		if string(a.ID) == id {
			return a
		}
	}
	f.t.Fatalf("no agent %s", id)
	return AgentView{}
}

// waitAgent polls until cond holds for agent id.
func (f *fleetT) waitAgent(id, what string, d time.Duration, cond func(AgentView) bool) AgentView {
	f.t.Helper()
	deadline := time.Now().Add(d)
	for {
		v := f.agent(id)
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out after %s waiting for %s of %s; view %+v\noutput:\n%s", d, what, id, v, f.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func alive(v AgentView) bool {
	return v.Process == ProcRunning && v.Liveness == "alive" && v.Status != nil
}

func stateIs(st natsbus.AgentState) func(AgentView) bool {
	return func(v AgentView) bool { return alive(v) && v.Status.State == st }
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// auditEvents returns the lifecycle events recorded for agent id.
func auditEvents(t *testing.T, c *Client, id string) []string {
	t.Helper()
	var ev []string
	err := c.Tail(ctxT(t, 10*time.Second), natsbus.AuditFilter{Agent: market.AgentID(id), Kinds: []natsbus.AuditKind{natsbus.AuditLifecycle}},
		func(e natsbus.AuditEntry) error {
			ev = append(ev, e.Record.Lifecycle.Event)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

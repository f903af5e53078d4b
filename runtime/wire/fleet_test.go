package wire_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// fleetBus is an embedded server with the fleet's buckets and streams, as a
// supervisor prepares them, and a supervisor-role connection.
type fleetBus struct {
	srv     *natsbus.Server
	bus     *natsbus.Bus
	locks   *natsbus.Locks
	desired *natsbus.DesiredStore
}

func startFleetBus(t *testing.T) *fleetBus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The server's errors are watched: an agent running under its own identity
	// must never be refused a publish (a permissions violation).
	core, logs := observer.New(zap.ErrorLevel)
	t.Cleanup(func() {
		for _, e := range logs.All() {
			if strings.Contains(e.Message, "Violation") {
				t.Errorf("nats-server: %s", e.Message)
			}
		}
	})
	srv, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: t.TempDir(), Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	bus, err := srv.Connect(ctx, natsbus.RoleSupervisor, natsbus.ConnectOptions{Name: "test supervisor"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	if err := bus.EnsureAudit(ctx, natsbus.AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	locks, err := bus.EnsureLocks(ctx, natsbus.LockConfig{TTL: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	desired, err := bus.EnsureDesired(ctx, natsbus.Replicas{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.EnsureState(ctx, natsbus.Replicas{}); err != nil {
		t.Fatal(err)
	}
	return &fleetBus{srv: srv, bus: bus, locks: locks, desired: desired}
}

// lockFor takes the wallet lock of spec for agent id, as its supervisor does, and
// returns the environment of a child under that lock.
func (f *fleetBus) lockFor(t *testing.T, spec *agents.Spec, id string) (map[string]string, *natsbus.Lease) {
	t.Helper()
	wallet := wire.PaperAddress(spec.Wallet)
	lease, err := f.locks.Acquire(context.Background(), natsbus.WalletLockKey(wallet),
		natsbus.Holder{Agent: market.AgentID(id), Supervisor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_RUNTIME_DIR": t.TempDir()}
	// The agent's own identity, as its supervisor hands it: everything the agent
	// does in the fleet is allowed under its name.
	ep, err := f.srv.AgentEndpoint(natsbus.AgentScope{Agent: market.AgentID(id), Wallet: wallet})
	if err != nil {
		t.Fatal(err)
	}
	cc := supervisor.ChildConfig{Endpoint: ep, Fleet: "f", Agent: market.AgentID(id),
		Lease: lease.Holder().Lease, Supervisor: "test", Heartbeat: 100 * time.Millisecond, Run: 1}
	for _, kv := range cc.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env, lease
}

// supervised runs wire.RunSupervised in the background; stop cancels it and
// returns its error.
type supervised struct {
	cancel context.CancelFunc
	done   chan error
}

func runSupervised(t *testing.T, spec *agents.Spec, env map[string]string, opt wire.Options) *supervised {
	t.Helper()
	opt.Getenv = func(k string) string { return env[k] }
	if opt.Fence == nil { // a supervisor that keeps renewing
		opt.Fence = supervisortest.LeaseFence(t, func() time.Time { return time.Now().Add(time.Minute) })
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &supervised{cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- wire.RunSupervised(ctx, spec, opt) }()
	t.Cleanup(func() { _ = s.stop(t) })
	return s
}

func (s *supervised) stop(t *testing.T) error {
	s.cancel()
	select {
	case err, ok := <-s.done:
		if !ok {
			return nil
		}
		close(s.done)
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("RunSupervised did not stop")
		return nil
	}
}

// roster follows every agent's status.
func (f *fleetBus) roster(t *testing.T) *natsbus.Roster {
	t.Helper()
	r, err := f.bus.NewRoster(natsbus.RosterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func stateOf(r *natsbus.Roster, id string) natsbus.AgentState {
	e, ok := r.Get(market.AgentID(id))
	if !ok {
		return ""
	}
	return e.Status.State
}

// auditOf returns the audit records of agent id.
func (f *fleetBus) auditOf(t *testing.T, id string) []natsbus.AuditRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []natsbus.AuditRecord
	err := f.bus.TailAudit(ctx, natsbus.AuditFilter{Agent: market.AgentID(id)}, func(e natsbus.AuditEntry) error {
		out = append(out, e.Record)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func kinds(recs []natsbus.AuditRecord) map[natsbus.AuditKind]int {
	m := map[natsbus.AuditKind]int{}
	for _, r := range recs {
		m[r.Kind]++
	}
	return m
}

func placed(recs []natsbus.AuditRecord) int {
	n := 0
	for _, r := range recs {
		if r.Order != nil && r.Order.Action == "place" {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	waitEvery(t, d, 10*time.Millisecond, what, cond)
}

// waitEvery polls cond every period (reading the audit trail makes a consumer:
// poll it slowly).
func waitEvery(t *testing.T, d, period time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(period)
	}
}

// withLine loads spec's file again with one line replaced.
func withLine(t *testing.T, spec *agents.Spec, old, repl string) *agents.Spec {
	t.Helper()
	src, err := os.ReadFile(spec.File)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), old) {
		t.Fatalf("no %q in the agent file", old)
	}
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(src), old, repl, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := agents.Options{Getenv: func(string) string { return "" }}.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wallOptions runs the embedded market quickly on the wall clock, so that the agent
// keeps running while the test talks to it.
func wallOptions(t *testing.T) wire.Options {
	return wire.Options{Clock: wire.ClockWall, Speed: 50, Seed: 3}
}

func TestRunSupervisedRefusesWithoutItsSupervisorsLock(t *testing.T) {
	f := startFleetBus(t)
	spec := quoterFile(t, "")
	env, lease := f.lockFor(t, spec, "quoter")
	cases := []struct {
		name string
		mod  func(map[string]string)
		want string
	}{
		{"another lease", func(e map[string]string) { e[supervisor.EnvLease] = "not-mine" }, "is already held by agent quoter (supervisor test)"},
		{"another agent", func(e map[string]string) {
			// with its own identity, as its supervisor would hand it: an agent's
			// identity reads only its own replies, and its wallet's lock
			ep, err := f.srv.AgentEndpoint(natsbus.AgentScope{Agent: "other", Wallet: wire.PaperAddress(spec.Wallet)})
			if err != nil {
				t.Fatal(err)
			}
			e[supervisor.EnvAgent], e[natsbus.EnvUser], e[natsbus.EnvPassword] = "other", ep.User, ep.Password
		}, "is already held by agent quoter"},
		{"not supervised", func(e map[string]string) { delete(e, supervisor.EnvAgent) }, "not started by a supervisor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := maps.Clone(env)
			c.mod(e)
			err := wire.RunSupervised(context.Background(), quoterFile(t, ""), wire.Options{Getenv: func(k string) string { return e[k] }})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	t.Run("no lock at all", func(t *testing.T) {
		if err := lease.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		err := wire.RunSupervised(context.Background(), quoterFile(t, ""), wire.Options{Getenv: func(k string) string { return env[k] }})
		if err == nil || !strings.Contains(err.Error(), "is not locked for agent quoter") {
			t.Fatalf("got %v", err)
		}
	})
}

// TestRunSupervisedJoinsTheFleet runs a real agent under a test supervisor: its
// statuses arrive, control requests reach it, its decisions, orders and control
// commands are in the AUDIT stream, and its last status says stopped.
func TestRunSupervisedJoinsTheFleet(t *testing.T) {
	f := startFleetBus(t)
	r := f.roster(t)
	spec := quoterFile(t, "")
	env, _ := f.lockFor(t, spec, "q-1") // the fleet's id overrides the file's name
	s := runSupervised(t, spec, env, wallOptions(t))
	waitFor(t, 20*time.Second, "running", func() bool { return stateOf(r, "q-1") == natsbus.StateRunning })
	waitEvery(t, 20*time.Second, 200*time.Millisecond, "orders in the audit trail", func() bool { return placed(f.auditOf(t, "q-1")) > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, step := range []struct {
		op   natsbus.ControlOp
		want natsbus.AgentState
	}{{natsbus.OpPause, natsbus.StatePaused}, {natsbus.OpResume, natsbus.StateRunning}, {natsbus.OpKill, natsbus.StateKilled}} {
		rep, err := f.bus.Control(ctx, natsbus.ControlRequest{Op: step.op, Target: "q-1", From: "test"})
		if err != nil || rep.State != step.want {
			t.Fatalf("%s: %+v %v", step.op, rep, err)
		}
		waitFor(t, 5*time.Second, string(step.want), func() bool { return stateOf(r, "q-1") == step.want })
	}
	_, err := f.bus.Control(ctx, natsbus.ControlRequest{Op: natsbus.OpResume, Target: "q-1"})
	if !errors.Is(err, market.Errorf(market.CodeKillSwitchTripped, "", "")) {
		t.Fatalf("resume of a killed agent: %v", err)
	}
	if rep, err := f.bus.Control(ctx, natsbus.ControlRequest{Op: natsbus.OpResumeAfterKill, Target: "q-1", From: "test"}); err != nil || rep.State != natsbus.StateRunning {
		t.Fatalf("resume_after_kill: %+v %v", rep, err)
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Get("q-1")
	if e.Status.State != natsbus.StateStopped || e.Status.Wallet != wire.PaperAddress(spec.Wallet) || e.Status.Supervisor != "test" {
		t.Fatalf("last status %+v", e.Status)
	}
	// Markets are named for people too (ctl list and the dashboard show them).
	if len(e.Status.MarketLabels) != len(e.Status.Markets) || len(e.Status.MarketLabels) == 0 || e.Status.MarketLabels[0] != "synthetic-market-1" {
		t.Fatalf("status market labels %v for %v", e.Status.MarketLabels, e.Status.Markets)
	}
	recs := f.auditOf(t, "q-1")
	k := kinds(recs)
	if k[natsbus.AuditDecision] == 0 || k[natsbus.AuditOrder] == 0 || k[natsbus.AuditControl] < 3 {
		t.Fatalf("audit kinds %v", k)
	}
	var ops []string
	for _, rec := range recs {
		if rec.Control != nil {
			ops = append(ops, string(rec.Control.Request.Op))
		}
		if rec.Wallet != e.Status.Wallet || !rec.DryRun {
			t.Fatalf("record %+v", rec)
		}
	}
	// One record per command: the agent's trip (or re-arm) and its control
	// record are one record in the fleet's trail.
	for _, want := range []string{"pause", "resume", "kill", "resume_after_kill"} {
		if n := count(ops, want); n != 1 {
			t.Fatalf("control records %v: %d of %s, want 1", ops, n, want)
		}
	}
}

func count[T comparable](s []T, v T) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// TestRunSupervisedAppliesTheDesiredStateBeforeTrading: a kill switch or pause
// thrown while the agent was away holds from its first event — nothing is placed.
func TestRunSupervisedAppliesTheDesiredStateBeforeTrading(t *testing.T) {
	cases := []struct {
		name     string
		desired  natsbus.DesiredState
		fleet    bool
		priorRun bool
		want     natsbus.AgentState
	}{
		{"fleet kill, first start", natsbus.DesiredKilled, true, false, natsbus.StateKilled},
		{"agent kill, after a run", natsbus.DesiredKilled, false, true, natsbus.StateKilled},
		{"agent pause, first start", natsbus.DesiredPaused, false, false, natsbus.StatePaused},
		{"fleet pause, after a run", natsbus.DesiredPaused, true, true, natsbus.StatePaused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := startFleetBus(t)
			r := f.roster(t)
			spec := quoterFile(t, "")
			env, _ := f.lockFor(t, spec, "quoter")
			if c.priorRun {
				opt := simOptions(t)
				opt.Events = 50
				b, err := wire.Build(spec, opt)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.Agent.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				b.Close()
			}
			id := market.AgentID("quoter")
			if c.fleet {
				id = ""
			}
			if err := f.desired.Set(context.Background(), id, natsbus.Desired{State: c.desired, By: "test"}); err != nil {
				t.Fatal(err)
			}
			s := runSupervised(t, spec, env, wallOptions(t))
			waitFor(t, 20*time.Second, string(c.want), func() bool { return stateOf(r, "quoter") == c.want })
			// Let it see two minutes of the market (a few seconds at speed 50).
			var first int64
			waitFor(t, 30*time.Second, "market events", func() bool {
				e, _ := r.Get("quoter")
				if first == 0 {
					first = e.Status.LastEvent
				}
				return first > 0 && e.Status.LastEvent-first > 120_000
			})
			if err := s.stop(t); err != nil {
				t.Fatal(err)
			}
			recs := f.auditOf(t, "quoter")
			if n := placed(recs); n != 0 {
				t.Fatalf("%d orders placed under a %s desired state", n, c.desired)
			}
			for _, rec := range recs {
				if rec.Decision != nil && rec.Decision.Allow && rec.Decision.Intent.Kind == "quote" {
					t.Fatalf("a quote was allowed: %+v", rec.Decision)
				}
			}
		})
	}
}

func TestRunSupervisedStopsWhenItsLockIsLost(t *testing.T) {
	f := startFleetBus(t)
	r := f.roster(t)
	spec := quoterFile(t, "")
	env, lease := f.lockFor(t, spec, "quoter")
	s := runSupervised(t, spec, env, wallOptions(t))
	waitFor(t, 20*time.Second, "running", func() bool { return stateOf(r, "quoter") == natsbus.StateRunning })
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		close(s.done)
		if !errors.Is(err, market.ErrLockLost) {
			t.Fatalf("got %v, want a lost lock", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent kept running without its lock")
	}
}

func TestResolveFleetAgent(t *testing.T) {
	spec := quoterFile(t, "")
	live := quoterFile(t, "dry_run: false\n")
	envWallet := withLine(t, spec, "wallet: keyring:pitboss-test-quoter", "wallet: env:MY_KEY")
	const remoteVenue = "venue: {kind: remote, clob: 'https://clob.example', catalogue: 'https://cat.example', data: 'https://data.example', bridge: 'https://bridge.example'}"
	remote := withLine(t, spec, "venue: embedded", remoteVenue)
	remoteLive := withLine(t, withLine(t, envWallet, "venue: embedded", remoteVenue), "state_dir: state", "state_dir: state\ndry_run: false")
	fleet := &supervisor.File{Restart: supervisor.Restart{Policy: supervisor.RestartAlways}, Limits: supervisor.Limits{OpenFiles: 64}}
	getenv := func(string) string { return "" }
	// The private key of the web3 documentation's example, and its address.
	keyEnv := func(k string) string {
		if k == "MY_KEY" {
			return "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
		}
		return ""
	}
	res := secrets.NewResolver(secrets.WithEnv(keyEnv))
	cases := []struct {
		name  string
		entry supervisor.AgentEntry
		res   *secrets.Resolver
		check func(t *testing.T, a supervisor.Agent)
		err   string
	}{
		{"as the file says", supervisor.AgentEntry{File: spec.File}, nil, func(t *testing.T, a supervisor.Agent) {
			if a.ID != "quoter" || a.Wallet != wire.PaperAddress(spec.Wallet) || a.StateDir != "" || a.WalletOverride || a.Restart.Policy != supervisor.RestartAlways || a.Limits.OpenFiles != 64 {
				t.Fatalf("%+v", a)
			}
		}, ""},
		{"id, wallet and environment overridden", supervisor.AgentEntry{File: spec.File, ID: "q-2", Wallet: "keyring:other", Limits: &supervisor.Limits{OpenFiles: 32}, Env: []string{"X_PASS"}}, nil,
			func(t *testing.T, a supervisor.Agent) {
				ref, _ := agents.ParseWalletRef("keyring:other")
				if a.ID != "q-2" || a.Wallet != wire.PaperAddress(ref) || !a.WalletOverride || a.WalletRef != "keyring:other" ||
					a.StateDir != filepath.Join(filepath.Dir(spec.StateDir), "q-2") || a.Limits.OpenFiles != 32 || !slices.Equal(a.EnvVars, []string{"X_PASS"}) {
					t.Fatalf("%+v", a)
				}
			}, ""},
		{"env wallet passes its variable", supervisor.AgentEntry{File: envWallet.File}, nil, func(t *testing.T, a supervisor.Agent) {
			if !slices.Equal(a.EnvVars, []string{"MY_KEY"}) {
				t.Fatalf("%+v", a)
			}
		}, ""},
		{"live confirmed twice", supervisor.AgentEntry{File: live.File, Live: true}, nil, func(t *testing.T, a supervisor.Agent) {
			if !a.Live || a.Wallet != wire.PaperAddress(live.Wallet) {
				t.Fatal("not live on the paper address of the embedded venue")
			}
		}, ""},
		{"remote dry run: the paper address", supervisor.AgentEntry{File: remote.File}, nil, func(t *testing.T, a supervisor.Agent) {
			if a.Wallet != wire.PaperAddress(remote.Wallet) {
				t.Fatalf("%+v", a)
			}
		}, ""},
		{"remote live: the wallet's own address", supervisor.AgentEntry{File: remoteLive.File, Live: true}, res, func(t *testing.T, a supervisor.Agent) {
			if a.Wallet.String() != "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23" {
				t.Fatalf("address %s", a.Wallet)
			}
		}, ""},
		{"remote live without a secret store", supervisor.AgentEntry{File: remoteLive.File, Live: true}, nil, nil, "no secret store was configured"},
		{"live only in the fleet", supervisor.AgentEntry{File: spec.File, Live: true}, nil, nil, "the agent file is a dry run"},
		{"live only in the file", supervisor.AgentEntry{File: live.File}, nil, nil, "does not say live: true"},
		{"bad wallet", supervisor.AgentEntry{File: spec.File, Wallet: "plain"}, nil, nil, "must be keyring:NAME"},
		{"missing file", supervisor.AgentEntry{File: filepath.Join(t.TempDir(), "none.yaml")}, nil, nil, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := wire.ResolveFleetAgent(context.Background(), fleet, c.entry, getenv, c.res)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, a)
		})
	}
}

// TestRunSupervisedReturnsWhenTheAgentEndsByItself: an agent whose run ends on its
// own (here after Options.Events events; a feed failure ends it the same way)
// returns from RunSupervised — its lease watch and side goroutines stop with it —
// and its last status says stopped. The caller's Options.Metrics saw the events
// too (beside the registry the agent publishes to its supervisor).
func TestRunSupervisedReturnsWhenTheAgentEndsByItself(t *testing.T) {
	f := startFleetBus(t)
	r := f.roster(t)
	spec := quoterFile(t, "")
	env, lease := f.lockFor(t, spec, "q-1")
	// The supervisor renews the lock meanwhile: the agent must not wait for it to
	// expire.
	ctx, cancel := context.WithCancel(context.Background())
	renewed := make(chan error, 1)
	go func() { renewed <- lease.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-renewed })
	opt := wallOptions(t)
	opt.Events = 20
	reg := prometheus.NewRegistry()
	m, err := wire.NewMetrics(reg, "q-1")
	if err != nil {
		t.Fatal(err)
	}
	opt.Metrics = m
	s := runSupervised(t, spec, env, opt)
	select {
	case err := <-s.done:
		close(s.done)
		if err != nil {
			t.Fatalf("RunSupervised: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("RunSupervised did not return after its agent's run ended")
	}
	waitFor(t, 5*time.Second, "stopped", func() bool { return stateOf(r, "q-1") == natsbus.StateStopped })
	if got := sample(t, reg, "pitboss_agent_events_total", "", ""); got < float64(opt.Events) {
		t.Fatalf("the caller's metrics counted %v events, want at least %d", got, opt.Events)
	}
}

// TestResolveFleetAgentSettlesAutoMarketData: in a fleet whose market-data mode is
// auto, an agent on the remote venue turns it to fanout with its CLOB service's
// WebSocket base as the venue (unless the file named one); an agent on the
// embedded venue leaves it auto, and an explicit mode is never changed.
func TestResolveFleetAgentSettlesAutoMarketData(t *testing.T) {
	spec := quoterFile(t, "")
	remote := withLine(t, spec, "venue: embedded",
		"venue: {kind: remote, clob: 'https://clob.example', catalogue: 'https://cat.example', data: 'https://data.example', bridge: 'https://bridge.example'}")
	cases := []struct {
		name string
		file string
		in   supervisor.MarketData
		want supervisor.MarketData
	}{
		{"embedded: stays auto", spec.File, supervisor.MarketData{Mode: supervisor.MarketDataAuto},
			supervisor.MarketData{Mode: supervisor.MarketDataAuto}},
		{"remote: fanout of its venue", remote.File, supervisor.MarketData{Mode: supervisor.MarketDataAuto},
			supervisor.MarketData{Mode: supervisor.MarketDataFanout, Venue: "wss://clob.example"}},
		{"remote: the file's venue stays", remote.File, supervisor.MarketData{Mode: supervisor.MarketDataAuto, Venue: "ws://127.0.0.1:9"},
			supervisor.MarketData{Mode: supervisor.MarketDataFanout, Venue: "ws://127.0.0.1:9"}},
		{"remote: own stays own", remote.File, supervisor.MarketData{Mode: supervisor.MarketDataOwn},
			supervisor.MarketData{Mode: supervisor.MarketDataOwn}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fleet := &supervisor.File{MarketData: c.in}
			if _, err := wire.ResolveFleetAgent(context.Background(), fleet, supervisor.AgentEntry{File: c.file}, func(string) string { return "" }, nil); err != nil {
				t.Fatal(err)
			}
			if fleet.MarketData != c.want {
				t.Fatalf("market data %+v, want %+v", fleet.MarketData, c.want)
			}
		})
	}
}

package supervisor_test

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

func TestAgentsStartHeartbeatAndAreListed(t *testing.T) {
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run")})
	for _, id := range []string{"a", "b"} {
		f.WaitAgent(id, "heartbeats", 20*time.Second, supervisortest.Alive)
	}
	fl, err := f.Client.List(supervisortest.Ctx(t, 5*time.Second), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range fl.Agents() {
		ids = append(ids, string(a.ID)+":"+a.State())
	}
	if strings.Join(ids, ",") != "a:running,b:running" || len(fl.Supervisors) != 1 {
		t.Fatalf("list: %v (%d supervisors)", ids, len(fl.Supervisors))
	}
	a := fl.Agents()[0]
	if a.Wallet != supervisortest.Addr(1) || a.PID == 0 || a.HeartbeatAgeMS < 0 || a.Status.Supervisor != f.Sup.Name() || a.PnL() != market.One/2 {
		t.Fatalf("view of a: %+v", a)
	}
	if !strings.Contains(f.Out.String(), "a | fake agent starting: run") {
		t.Fatalf("child output not captured with its prefix:\n%s", f.Out.String())
	}
	ev := supervisortest.AuditEvents(t, f, "a")
	if len(ev) == 0 || ev[0] != "started" {
		t.Fatalf("lifecycle records of a: %v", ev)
	}
}

// TestKilledAgentComesBack SIGKILLs an agent's process: the supervisor sees it
// crash and starts it again after the backoff.
func TestKilledAgentComesBack(t *testing.T) {
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run")})
	v := f.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	f.WaitAgent("b", "heartbeats", 20*time.Second, supervisortest.Alive)
	if err := syscall.Kill(v.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	back := f.WaitAgent("a", "a new process", 20*time.Second, func(n AgentView) bool { return supervisortest.Alive(n) && n.PID != v.PID && n.Restarts == 1 })
	if !strings.Contains(back.LastExit, "killed") {
		t.Fatalf("last exit %q", back.LastExit)
	}
	if b := f.Agent("b"); b.Restarts != 0 || !supervisortest.Alive(b) {
		t.Fatalf("b was touched: %+v", b)
	}
	ev := supervisortest.AuditEvents(t, f, "a")
	want := []string{"started", "crashed", "restarting", "started"}
	if len(ev) < 4 || !slices.Equal(ev[:4], want) {
		t.Fatalf("lifecycle records %v, want %v", ev, want)
	}
}

func TestCrashLoopStopsRestartsUntilAnOperatorRestarts(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("c", 3, "crash")}, func(c *Config) { c.Registry = reg })
	v := f.WaitAgent("c", "crash loop", 30*time.Second, func(v AgentView) bool { return v.Process == ProcCrashLoop })
	if v.Restarts != 3 || v.CrashLoops != 1 || !strings.Contains(v.Message, "crashed 4 times") || !strings.Contains(v.Message, "something broke") {
		t.Fatalf("crash-loop view: %+v", v)
	}
	if got := metricValue(t, reg, "pitboss_fleet_crash_loop", "c"); got != 1 {
		t.Fatalf("crash_loop gauge %v", got)
	}
	// Nothing restarts it by itself.
	time.Sleep(400 * time.Millisecond)
	if n := f.Agent("c"); n.Restarts != 3 {
		t.Fatalf("restarted during a crash loop: %+v", n)
	}
	ev := supervisortest.AuditEvents(t, f, "c")
	if ev[len(ev)-1] != "crash_loop" || !slices.Contains(ev, "restarting") {
		t.Fatalf("lifecycle records %v", ev)
	}
	res, err := f.Client.Control(supervisortest.Ctx(t, 5*time.Second), "restart", "c", "fixed", "")
	if err != nil || !res.Replies[0].OK {
		t.Fatalf("restart: %+v %v", res, err)
	}
	f.WaitAgent("c", "a second crash loop", 30*time.Second, func(v AgentView) bool { return v.CrashLoops == 2 })
}

// metricValue returns the value of metric name (with label agent, if not empty);
// the test fails if there is none.
func metricValue(t *testing.T, reg *prometheus.Registry, name, agent string) float64 {
	t.Helper()
	v, ok := lookupMetric(t, reg, name, agent)
	if !ok {
		t.Fatalf("no metric %s{agent=%q}", name, agent)
	}
	return v
}

// lookupMetric returns the value of the gauge or counter name (with label agent,
// if not empty) and whether reg has it; a failed scrape fails the test.
func lookupMetric(t *testing.T, reg *prometheus.Registry, name, agent string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			match := agent == ""
			for _, l := range m.Label {
				match = match || l.GetName() == "agent" && l.GetValue() == agent
			}
			if !match {
				continue
			}
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			}
		}
	}
	return 0, false
}

// seriesCount counts the series of the named metrics.
func seriesCount(t *testing.T, reg *prometheus.Registry, names ...string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if slices.Contains(names, mf.GetName()) {
			n += len(mf.Metric)
		}
	}
	return n
}

func TestRestartPolicies(t *testing.T) {
	never := supervisortest.AgentSpec("n", 4, "crash")
	never.Restart.Policy = RestartNever
	clean := supervisortest.AgentSpec("e", 5, "exit0")
	always := supervisortest.AgentSpec("w", 6, "exit0")
	always.Restart.Policy = RestartAlways
	always.Restart.CrashLoop = -1
	f := supervisortest.Start(t, []Agent{never, clean, always})
	if v := f.WaitAgent("n", "failed", 20*time.Second, func(v AgentView) bool { return v.Process == ProcFailed }); v.Restarts != 0 {
		t.Fatalf("never: %+v", v)
	}
	if v := f.WaitAgent("e", "exited", 20*time.Second, func(v AgentView) bool { return v.Process == ProcExited }); v.Restarts != 0 {
		t.Fatalf("on-failure after a clean exit: %+v", v)
	}
	f.WaitAgent("w", "restarts", 20*time.Second, func(v AgentView) bool { return v.Restarts >= 2 })
}

func TestSecondAgentOnOneWalletIsRefused(t *testing.T) {
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("first", 7, "run"), supervisortest.AgentSpec("second", 7, "run")})
	var running, refused AgentView
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, b := f.Agent("first"), f.Agent("second")
		if supervisortest.Alive(a) && b.Process == ProcRefused {
			running, refused = a, b
			break
		}
		if supervisortest.Alive(b) && a.Process == ProcRefused {
			running, refused = b, a
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want one running and one refused: %+v / %+v", a, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := "wallet " + supervisortest.Addr(7).String() + " is already held by agent " + string(running.ID) + " (supervisor " + f.Sup.Name()
	if !strings.Contains(refused.Message, want) {
		t.Fatalf("refusal %q does not name the holder (%q)", refused.Message, want)
	}
	if ev := supervisortest.AuditEvents(t, f, string(refused.ID)); !slices.Equal(ev, []string{"lock_refused"}) {
		t.Fatalf("lifecycle records of the refused agent: %v", ev)
	}
}

// TestControlReachesTheRightAgent pauses, resumes and kills one agent and checks
// that the others are untouched; then kill-all and resume-after-kill --all.
func TestControlReachesTheRightAgent(t *testing.T) {
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run"), supervisortest.AgentSpec("c", 3, "run")})
	for _, id := range []string{"a", "b", "c"} {
		f.WaitAgent(id, "heartbeats", 20*time.Second, supervisortest.Alive)
	}
	ctx := supervisortest.Ctx(t, 30*time.Second)
	steps := []struct {
		op     Op
		target string
		want   map[string]natsbus.AgentState
	}{
		{"pause", "a", map[string]natsbus.AgentState{"a": "paused", "b": "running", "c": "running"}},
		{"resume", "a", map[string]natsbus.AgentState{"a": "running", "b": "running", "c": "running"}},
		{"kill", "b", map[string]natsbus.AgentState{"a": "running", "b": "killed", "c": "running"}},
		{"resume_after_kill", "b", map[string]natsbus.AgentState{"a": "running", "b": "running", "c": "running"}},
		{"pause", "", map[string]natsbus.AgentState{"a": "paused", "b": "paused", "c": "paused"}},
		{"resume", "", map[string]natsbus.AgentState{"a": "running", "b": "running", "c": "running"}},
	}
	for _, s := range steps {
		t.Run(string(s.op)+" "+s.target, func(t *testing.T) {
			res, err := f.Client.Control(ctx, s.op, market.AgentID(s.target), "test", "")
			if err != nil {
				t.Fatalf("%s: %v", s.op, err)
			}
			n := 1
			if s.target == "" {
				n = 3
			}
			if len(res.Replies) != n {
				t.Fatalf("replies %+v", res)
			}
			for id, st := range s.want {
				f.WaitAgent(id, string(st), 10*time.Second, supervisortest.StateIs(st))
			}
		})
	}
	t.Run("kill-all", func(t *testing.T) {
		res, err := f.Sup.KillAll(ctx, "test", "")
		if err != nil || len(res.Replies) != 3 || len(res.Missing) != 0 {
			t.Fatalf("kill-all: %+v %v", res, err)
		}
		for _, id := range []string{"a", "b", "c"} {
			f.WaitAgent(id, "killed", 10*time.Second, supervisortest.StateIs(natsbus.StateKilled))
		}
		if d := f.Sup.View().FleetDesired; d != natsbus.DesiredKilled {
			t.Fatalf("fleet desired %q", d)
		}
		// One agent cannot be re-armed while the fleet's switch is thrown.
		if _, err := f.Client.Control(ctx, "resume_after_kill", "a", "", ""); err == nil || !strings.Contains(err.Error(), "whole fleet is killed") {
			t.Fatalf("resume_after_kill of one agent under a fleet kill: %v", err)
		}
		if _, err := f.Client.Control(ctx, "resume_after_kill", "", "", ""); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "b", "c"} {
			f.WaitAgent(id, "running", 10*time.Second, supervisortest.StateIs(natsbus.StateRunning))
		}
	})
}

// TestDesiredKillReachesAnAgentThatMissedIt writes the desired state without any
// control request: the supervisor converges the running agent, and a restarted one
// starts killed.
func TestDesiredKillReachesAnAgentThatMissedIt(t *testing.T) {
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run")})
	v := f.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	f.WaitAgent("b", "heartbeats", 20*time.Second, supervisortest.Alive)
	ds, err := f.Sup.Bus().OpenDesired(supervisortest.Ctx(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Set(supervisortest.Ctx(t, 5*time.Second), "a", natsbus.Desired{State: natsbus.DesiredKilled, By: "test"}); err != nil {
		t.Fatal(err)
	}
	f.WaitAgent("a", "killed by convergence", 10*time.Second, supervisortest.StateIs(natsbus.StateKilled))
	if err := syscall.Kill(v.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	f.WaitAgent("a", "restarted killed", 20*time.Second, func(n AgentView) bool { return n.PID != v.PID && supervisortest.StateIs(natsbus.StateKilled)(n) })
	if b := f.Agent("b"); b.Status.State != natsbus.StateRunning {
		t.Fatalf("b: %+v", b.Status)
	}
}

// TestStopIsDurableAndStartUndoesIt stops an agent through its supervisor: the
// desired state keeps it stopped across a new supervisor on the same store; start
// brings it back.
func TestStopIsDurableAndStartUndoesIt(t *testing.T) {
	store := t.TempDir()
	useStore := func(c *Config) { c.NATS.StoreDir = store }
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, useStore)
	v := f.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	res, err := f.Client.Control(supervisortest.Ctx(t, 5*time.Second), "stop", "a", "maintenance", "")
	if err != nil || res.Replies[0].State != natsbus.StateStopping {
		t.Fatalf("stop: %+v %v", res, err)
	}
	f.WaitAgent("a", "stopped", 20*time.Second, func(v AgentView) bool { return v.Process == ProcStopped })
	if err := syscall.Kill(v.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process %d still there: %v", v.PID, err)
	}
	f.Stop()

	g := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, useStore)
	time.Sleep(300 * time.Millisecond)
	if n := g.Agent("a"); n.Process != ProcStopped || n.Desired != natsbus.DesiredStopped {
		t.Fatalf("a started again despite the desired state: %+v", n)
	}
	if _, err := g.Client.Control(supervisortest.Ctx(t, 5*time.Second), OpStart, "a", "", ""); err != nil {
		t.Fatal(err)
	}
	g.WaitAgent("a", "running again", 20*time.Second, supervisortest.Alive)
}

// TestStopTimeoutEndsInSIGKILL: an agent that ignores SIGTERM is killed after the
// stop timeout.
func TestStopTimeoutEndsInSIGKILL(t *testing.T) {
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("stubborn", 1, "ignore-term")}, func(c *Config) { c.StopTimeout = 300 * time.Millisecond })
	v := f.WaitAgent("stubborn", "heartbeats", 20*time.Second, supervisortest.Alive)
	start := time.Now()
	if _, err := f.Client.Control(supervisortest.Ctx(t, 5*time.Second), "stop", "stubborn", "", ""); err != nil {
		t.Fatal(err)
	}
	n := f.WaitAgent("stubborn", "stopped", 20*time.Second, func(v AgentView) bool { return v.Process == ProcStopped })
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("stopped after %s, before the stop timeout", took)
	}
	if !strings.Contains(n.LastExit, "killed") {
		t.Fatalf("last exit %q", n.LastExit)
	}
	if err := syscall.Kill(v.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process still there: %v", err)
	}
}

// TestChildGetsOnlyItsEnvironment reads a child's environment and command line
// from /proc: the NATS password is in its environment only, other secrets of the
// supervisor's environment are not passed on, the variable of an env: wallet is.
func TestChildGetsOnlyItsEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	a := supervisortest.AgentSpec("a", 1, "run")
	a.EnvVars = []string{"A_WALLET_KEY"}
	nice := 3
	a.Limits = Limits{OpenFiles: 200, AddressSpace: 64 << 30, Nice: &nice, Memory: 256 << 20, GoMaxProcs: 1}
	f := supervisortest.Start(t, []Agent{a}, func(c *Config) {
		c.Environ = []string{"PATH=/usr/bin:/bin", "HOME=/home/x", "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=aws-secret", "PITBOSS_API_SECRET=api-secret",
			"A_WALLET_KEY=wallet-secret", "B_WALLET_KEY=other-wallet"}
	})
	v := f.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	env, err := os.ReadFile("/proc/" + strconv.Itoa(v.PID) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(string(env), "\x00")
	own, err := f.Sup.AgentEndpointOf("a")
	if err != nil {
		t.Fatal(err)
	}
	pw := own.Password
	checks := []struct {
		name string
		ok   bool
	}{
		{"its own nats identity in the environment", slices.Contains(vars, natsbus.EnvPassword+"="+pw) && slices.Contains(vars, natsbus.EnvUser+"="+natsbus.UserAgent+".a")},
		{"no supervisor password", !strings.Contains(string(env), f.Sup.Endpoint().Password)},
		{"no shared agent password", !strings.Contains(string(env), f.Sup.AgentEndpoint().Password)},
		{"no aws secret", !strings.Contains(string(env), "aws-secret")},
		{"no api secret", !strings.Contains(string(env), "api-secret")},
		{"no other wallet", !strings.Contains(string(env), "other-wallet")},
		{"its own wallet variable", slices.Contains(vars, "A_WALLET_KEY=wallet-secret")},
		{"locale kept", slices.Contains(vars, "LC_ALL=C")},
		{"go memory limit", slices.Contains(vars, "GOMEMLIMIT="+strconv.Itoa(256<<20))},
		{"gomaxprocs", slices.Contains(vars, "GOMAXPROCS=1")},
		{"lease", strings.Contains(string(env), EnvLease+"=")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: environment %q", c.name, vars)
		}
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(v.PID) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), pw) || !strings.Contains(string(cmdline), "--supervised") {
		t.Fatalf("command line %q", cmdline)
	}
	limits, err := os.ReadFile("/proc/" + strconv.Itoa(v.PID) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Max open files            200                  200", "Max address space         " + strconv.Itoa(64<<30)} {
		if !strings.Contains(string(limits), want) {
			t.Errorf("limits lack %q:\n%s", want, limits)
		}
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(v.PID) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name: state is 3rd, nice the 19th.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	if fields[16] != "3" {
		t.Fatalf("nice %s, want 3 (stat %q)", fields[16], stat)
	}
}

func TestMetricsOfTheFleet(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run")}, func(c *Config) { c.Registry = reg })
	f.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	f.WaitAgent("b", "heartbeats", 20*time.Second, supervisortest.Alive)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := seriesCount(t, reg, "pitboss_fleet_agents", "pitboss_fleet_agent_up", "pitboss_fleet_heartbeat_age_seconds",
			"pitboss_fleet_restarts_total", "pitboss_fleet_audit_records", "pitboss_fleet_budget_grants", "pitboss_fleet_agent_pnl")
		if n == 1+2+2+2+1+1+2 && metricValue(t, reg, "pitboss_fleet_agent_up", "a") == 1 && metricValue(t, reg, "pitboss_fleet_agent_up", "b") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics: %d series", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := metricValue(t, reg, "pitboss_fleet_agent_pnl", "b"); got != 0.5 {
		t.Fatalf("pnl %v", got)
	}
}

// TestTwoSupervisorsOneFleet runs a second supervisor on the first one's server, as
// an external cluster: each runs its agents, a client lists and controls all of
// them, and a wallet taken by one supervisor is refused to the other.
func TestTwoSupervisorsOneFleet(t *testing.T) {
	f1 := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")})
	ext := func(c *Config) {
		c.NATS = NATSConfig{Endpoint: f1.Sup.Endpoint(), AgentEndpoint: f1.Sup.AgentEndpoint()}
		c.Name = "second"
	}
	f2 := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("b", 2, "run"), supervisortest.AgentSpec("a-copy", 1, "run")}, ext)
	f1.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	f2.WaitAgent("b", "heartbeats", 20*time.Second, supervisortest.Alive)
	v := f2.WaitAgent("a-copy", "refused", 20*time.Second, func(v AgentView) bool { return v.Process == ProcRefused })
	if !strings.Contains(v.Message, "held by agent a (supervisor "+f1.Sup.Name()) {
		t.Fatalf("refusal: %q", v.Message)
	}
	fl, err := f1.Client.List(supervisortest.Ctx(t, 5*time.Second), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Supervisors) != 2 || len(fl.Agents()) != 3 {
		t.Fatalf("list: %+v", fl)
	}
	if _, err := f1.Client.Control(supervisortest.Ctx(t, 10*time.Second), "pause", "", "", ""); err != nil {
		t.Fatal(err)
	}
	f1.WaitAgent("a", "paused", 10*time.Second, supervisortest.StateIs(natsbus.StatePaused))
	f2.WaitAgent("b", "paused", 10*time.Second, supervisortest.StateIs(natsbus.StatePaused))
	// A lifecycle request reaches the supervisor that runs the agent.
	if _, err := f1.Client.Control(supervisortest.Ctx(t, 10*time.Second), "stop", "b", "", ""); err != nil {
		t.Fatal(err)
	}
	f2.WaitAgent("b", "stopped", 20*time.Second, func(v AgentView) bool { return v.Process == ProcStopped })
}

// TestARefusedAgentDoesNotChurnLocks: an agent refused because another holds its
// wallet retries every TTL/2 by reading the locks, without taking and releasing
// its own id's lock each time (which logged "lock acquired" and "lock released"
// every 7.5 s forever).
func TestARefusedAgentDoesNotChurnLocks(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("first", 9, "run"), supervisortest.AgentSpec("second", 9, "run")},
		func(c *Config) { c.Logger = zap.New(core) })
	f.WaitAgent("second", "refused", 20*time.Second, func(v AgentView) bool { return v.Process == ProcRefused })
	time.Sleep(4 * time.Second) // two retries at least (TTL 3 s, one every TTL/2)
	if v := f.Agent("second"); v.Process != ProcRefused {
		t.Fatalf("second: %+v", v)
	}
	n := 0
	for _, e := range logs.All() {
		if e.Message == "lock acquired" || e.Message == "lock released" {
			if k, _ := e.ContextMap()["key"].(string); k == "agent.second" {
				n++
			}
		}
	}
	if n != 0 {
		t.Fatalf("%d lock acquisitions or releases of the refused agent's id logged", n)
	}
}

// TestARestartedSupervisorKeepsItsLifecycleRecords: a supervisor restarted under
// the same name within the stream's duplicate window records its agents' new
// lives (their record ids used to repeat the previous start's, and the stream
// dropped them as duplicates).
func TestARestartedSupervisorKeepsItsLifecycleRecords(t *testing.T) {
	store := t.TempDir()
	useStore := func(c *Config) { c.NATS.StoreDir = store }
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, useStore)
	f.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	f.Stop()
	g := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, useStore)
	g.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	ev := supervisortest.AuditEvents(t, g, "a")
	if n := count(ev, "started"); n != 2 {
		t.Fatalf("lifecycle records %v: %d started, want 2 (one per supervisor start)", ev, n)
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

// TestSupervisorWaitsForItsCluster: a supervisor started before the cluster it
// joins keeps trying (and says so) instead of exiting, and runs its agents once
// the server is up.
func TestSupervisorWaitsForItsCluster(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	scfg := natsbus.ServerConfig{StoreDir: t.TempDir(), Port: port, SupervisorPassword: "sup-secret-for-the-test", AgentPassword: "agent-secret-for-the-test"}
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	core, logs := observer.New(zap.InfoLevel)
	var srv *natsbus.Server
	started := make(chan error, 1)
	time.AfterFunc(1500*time.Millisecond, func() {
		var err error
		srv, err = natsbus.StartServer(context.Background(), scfg)
		started <- err
	})
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, func(c *Config) {
		c.Logger = zap.New(core)
		c.NATS = NATSConfig{Endpoint: natsbus.Endpoint{URL: url, User: natsbus.UserSupervisor, Password: scfg.SupervisorPassword},
			AgentEndpoint: natsbus.Endpoint{URL: url, User: natsbus.UserAgent, Password: scfg.AgentPassword}}
	})
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Stop(); srv.Shutdown() })
	f.WaitAgent("a", "heartbeats", 20*time.Second, supervisortest.Alive)
	if n := logs.FilterMessage("the fleet's NATS is not reachable; retrying").Len(); n == 0 {
		t.Fatal("the supervisor did not say it was waiting for NATS")
	}
}

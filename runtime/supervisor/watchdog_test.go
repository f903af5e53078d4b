package supervisor_test

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// watched is an agent of the fake child with a quick watchdog: 1 s of silence (ten
// heartbeats of the tests' 100 ms: a healthy child on a loaded machine is not
// silent that long), 10 s for the first heartbeat.
func watched(id string, wallet byte, mode string) Agent {
	a := supervisortest.AgentSpec(id, wallet, mode)
	a.Restart.HangTimeout = time.Second
	a.Restart.StartTimeout = 10 * time.Second
	return a
}

// lifecycleRecords returns the lifecycle records of agent id, oldest first.
func lifecycleRecords(t *testing.T, f *supervisortest.Fleet, id string) []natsbus.LifecycleRecord {
	t.Helper()
	if err := f.Sup.FlushLifecycle(supervisortest.Ctx(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	var recs []natsbus.LifecycleRecord
	err := f.Client.Tail(supervisortest.Ctx(t, 10*time.Second), natsbus.AuditFilter{Agent: market.AgentID(id), Kinds: []natsbus.AuditKind{natsbus.AuditLifecycle}},
		func(e natsbus.AuditEntry) error {
			recs = append(recs, *e.Record.Lifecycle)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// holds polls cond for d and fails the test the first time it does not hold.
func holds(t *testing.T, f *supervisortest.Fleet, id, what string, d time.Duration, cond func(AgentView) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if v := f.Agent(id); !cond(v) {
			t.Fatalf("%s of %s no longer holds: %+v\noutput:\n%s", what, id, v, f.Out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHungAgentIsStoppedAndRestarted: an agent whose process lives but whose
// heartbeats stopped is stopped after its hang timeout, recorded as hung with its
// silence, and started again after the backoff; a healthy agent beside it is never
// touched.
func TestHungAgentIsStoppedAndRestarted(t *testing.T) {
	t.Parallel() // waits on timers mostly
	reg := prometheus.NewRegistry()
	f := supervisortest.Start(t, []Agent{watched("h", 1, "hang"), watched("ok", 2, "run")}, func(c *Config) { c.Registry = reg })
	first := f.WaitAgent("h", "heartbeats", 20*time.Second, supervisortest.Alive)
	f.WaitAgent("ok", "heartbeats", 20*time.Second, supervisortest.Alive)
	// Silent after HangAfterBeats statuses (0.5 s), dead three heartbeats later,
	// stopped 1 s after its last status: well within 15 s even on a loaded machine.
	back := f.WaitAgent("h", "a new process after the hang", 15*time.Second, func(v AgentView) bool {
		return supervisortest.Alive(v) && v.PID != first.PID && v.Hangs >= 1 && v.Restarts >= 1
	})
	if back.LastExit != "exit status 0" { // the fake agent ends cleanly on SIGTERM
		t.Fatalf("the hung process was not stopped by SIGTERM: last exit %q", back.LastExit)
	}
	recs := lifecycleRecords(t, f, "h")
	var events []string
	var hung *natsbus.LifecycleRecord
	for i, r := range recs {
		events = append(events, r.Event)
		if r.Event == "hung" && hung == nil {
			hung = &recs[i]
		}
	}
	if want := []string{"started", "hung", "restarting", "started"}; len(events) < 4 || !slices.Equal(events[:4], want) {
		t.Fatalf("lifecycle records %v, want %v first", events, want)
	}
	if hung.PID != first.PID || !strings.Contains(hung.Detail, "hung: no heartbeat for ") || !strings.Contains(hung.Detail, "(hang_timeout 1s)") ||
		!strings.HasSuffix(hung.Detail, "; stopped: exit status 0") {
		t.Fatalf("hung record: %+v", *hung)
	}
	silent, err := time.ParseDuration(strings.Fields(strings.TrimPrefix(hung.Detail, "hung: no heartbeat for "))[0])
	if err != nil || silent < time.Second {
		t.Fatalf("silence in %q: %v %v", hung.Detail, silent, err)
	}
	if got := metricValue(t, reg, "pitboss_fleet_hangs_total", "h"); got < 1 {
		t.Fatalf("hangs_total %v", got)
	}
	if ok := f.Agent("ok"); ok.Restarts != 0 || ok.Hangs != 0 || !supervisortest.Alive(ok) {
		t.Fatalf("the healthy agent was touched: %+v", ok)
	}
}

// TestHungAgentIgnoringTermIsKilled: a hung process that ignores SIGTERM is killed
// after the stop timeout.
func TestHungAgentIgnoringTermIsKilled(t *testing.T) {
	t.Parallel() // waits on timers mostly
	f := supervisortest.Start(t, []Agent{watched("h", 1, "hang-ignore-term")}, func(c *Config) { c.StopTimeout = 300 * time.Millisecond })
	first := f.WaitAgent("h", "heartbeats", 20*time.Second, supervisortest.Alive)
	back := f.WaitAgent("h", "a new process after the hang", 15*time.Second, func(v AgentView) bool {
		return supervisortest.Alive(v) && v.PID != first.PID && v.Hangs >= 1
	})
	if !strings.Contains(back.LastExit, "killed") {
		t.Fatalf("last exit %q, want killed", back.LastExit)
	}
	for _, r := range lifecycleRecords(t, f, "h") {
		if r.Event == "hung" {
			if !strings.Contains(r.Detail, "stopped: signal: killed") {
				t.Fatalf("hung record: %+v", r)
			}
			return
		}
	}
	t.Fatal("no hung record")
}

// TestStoppedProcessIsHung: a process stopped with SIGSTOP (alive, silent) is hung;
// the SIGCONT after the SIGTERM lets it stop cleanly.
func TestStoppedProcessIsHung(t *testing.T) {
	t.Parallel() // waits on timers mostly
	f := supervisortest.Start(t, []Agent{watched("s", 1, "run")})
	first := f.WaitAgent("s", "heartbeats", 20*time.Second, supervisortest.Alive)
	if err := syscall.Kill(first.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	back := f.WaitAgent("s", "a new process after the hang", 15*time.Second, func(v AgentView) bool {
		return supervisortest.Alive(v) && v.PID != first.PID && v.Hangs == 1
	})
	if back.LastExit != "exit status 0" {
		t.Fatalf("last exit %q: the stopped process did not handle SIGTERM", back.LastExit)
	}
}

// TestAgentSilentAtStartCrashLoops: a process that never sends a heartbeat is
// given its start timeout (not the hang timeout), then stopped; hangs count as
// crashes, so the crash loop stops the restarts.
func TestAgentSilentAtStartCrashLoops(t *testing.T) {
	t.Parallel() // waits on timers mostly
	a := watched("m", 1, "mute")
	a.Restart.StartTimeout = 900 * time.Millisecond
	a.Restart.CrashLoop = 2
	f := supervisortest.Start(t, []Agent{a})
	v := f.WaitAgent("m", "crash loop", 30*time.Second, func(v AgentView) bool { return v.Process == ProcCrashLoop })
	if v.Hangs != 2 || v.Restarts != 1 || !strings.Contains(v.Message, "hung: no heartbeat") || !strings.Contains(v.Message, "after its start (start_timeout 900ms)") {
		t.Fatalf("view: %+v", v)
	}
	// The crash_loop record is written just after the state is set: poll.
	want := []string{"started", "hung", "restarting", "started", "hung", "crash_loop"}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var events []string
		for _, r := range lifecycleRecords(t, f, "m") {
			events = append(events, r.Event)
		}
		if slices.Equal(events, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lifecycle records %v, want %v", events, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWatchdogSparesAgentsThatHeartbeat: a paused agent still heartbeats and is not
// touched, nor is an agent still starting within its start timeout; with the hang
// timeout off (the fleet file's 0) a hung agent is shown dead and left alone.
func TestWatchdogSparesAgentsThatHeartbeat(t *testing.T) {
	t.Parallel() // waits on timers mostly
	off := watched("off", 1, "hang")
	off.Restart.HangTimeout = WatchdogOff
	starting := watched("starting", 3, "mute")
	starting.Restart.StartTimeout = time.Hour
	f := supervisortest.Start(t, []Agent{off, watched("paused", 2, "run"), starting})
	p := f.WaitAgent("paused", "heartbeats", 20*time.Second, supervisortest.Alive)
	res, err := f.Client.Control(supervisortest.Ctx(t, 5*time.Second), "pause", "paused", "test", "")
	if err != nil || !res.Replies[0].OK {
		t.Fatalf("pause: %+v %v", res, err)
	}
	f.WaitAgent("paused", "paused", 10*time.Second, supervisortest.StateIs(natsbus.StatePaused))
	o := f.WaitAgent("off", "dead", 20*time.Second, func(v AgentView) bool { return v.Process == ProcRunning && v.State() == "dead" })
	s := f.Agent("starting")
	// Three hang timeouts.
	holds(t, f, "off", "running dead, unkilled", 3*time.Second, func(v AgentView) bool {
		return v.Process == ProcRunning && v.PID == o.PID && v.Hangs == 0 && v.State() == "dead"
	})
	if v := f.Agent("paused"); v.PID != p.PID || v.Hangs != 0 || v.Restarts != 0 || !supervisortest.StateIs(natsbus.StatePaused)(v) {
		t.Fatalf("paused agent touched: %+v", v)
	}
	if v := f.Agent("starting"); v.Process != ProcRunning || v.PID != s.PID || v.Hangs != 0 || v.State() != "starting" {
		t.Fatalf("starting agent touched: %+v", v)
	}
}

// TestNewRefusesShortWatchdogTimeouts: a watchdog timeout under three heartbeats
// would kill agents whose one status was late; New refuses it, as the fleet file
// does.
func TestNewRefusesShortWatchdogTimeouts(t *testing.T) {
	cases := []struct {
		name        string
		hang, start time.Duration
		ok          bool
	}{
		{"three heartbeats", 300 * time.Millisecond, 300 * time.Millisecond, true},
		{"off", WatchdogOff, WatchdogOff, true},
		{"defaults", 0, 0, true},
		{"hang under three heartbeats", 299 * time.Millisecond, 0, false},
		{"start under three heartbeats", 0, 100 * time.Millisecond, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := supervisortest.AgentSpec("a", 1, "run")
			a.Restart.HangTimeout, a.Restart.StartTimeout = c.hang, c.start
			_, err := New(Config{Fleet: "f", Agents: []Agent{a}, Heartbeat: 100 * time.Millisecond,
				NATS: NATSConfig{StoreDir: t.TempDir()}, Command: []string{"/bin/true"}})
			if (err == nil) != c.ok {
				t.Fatalf("err %v, want ok %v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "shorter than 3 heartbeats (300ms)") {
				t.Fatalf("message %q", err)
			}
		})
	}
}

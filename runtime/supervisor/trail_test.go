package supervisor_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestLifecycleRecordsSurviveAnOutage: a supervisor on a 3-node cluster (AUDIT
// with 3 replicas) loses two nodes, so the stream has no quorum. Its agent's
// process is SIGKILLed meanwhile: the supervisor restarts it (it still holds the
// lease: the TTL is longer than the outage) and records crashed, restarting and
// started; they go to its spool on local disk (0600) 5 s later, and the stopped
// record of its shutdown, still in the outage, follows them. The nodes come back
// and the supervisor is started again under the same name and state directory,
// at once (its streams may still be electing leaders: it waits for them): it
// stores the spool before its own records. In AUDIT every record of the first
// run is there exactly once, ids 1..5 without a gap, in order.
func TestLifecycleRecordsSurviveAnOutage(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	state := t.TempDir()
	spool := filepath.Join(state, SpoolDir, "a.sup-s1.spool")
	mods := []func(*Config){supervisortest.OnCluster(c.URLs(), natsbus.Endpoint{}), named("s1"),
		func(c *Config) { c.StateDir = state; c.LockTTL = 15 * time.Second }}
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, mods...)
	v := f.WaitAgent("a", "heartbeats", 30*time.Second, supervisortest.Alive)
	if err := f.Sup.FlushLifecycle(supervisortest.Ctx(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}

	// Two of three nodes down: no quorum anywhere — if AUDIT has three replicas
	// (with one, kept on the node left running, it takes the records through the
	// outage: the first supervisor of a fleet once settled on 1 while the cluster's
	// third server was still joining the meta group).
	if n := replicasOf(t, c.URLs())[natsbus.AuditStream]; n != 3 {
		t.Fatalf("AUDIT has %d replica(s), want 3", n)
	}
	keep := c.StreamLeader("$G", natsbus.AuditStream)
	if keep < 0 {
		t.Fatal("AUDIT has no leader right after a flush")
	}
	for i := 0; i < c.Len(); i++ {
		if i != keep {
			c.Kill(i)
		}
	}
	down := time.Now()
	if err := syscall.Kill(v.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	f.WaitAgent("a", "a new process", 20*time.Second, func(n AgentView) bool { return n.Process == ProcRunning && n.PID != v.PID && n.PID != 0 })
	// SpoolAfter is 5 s; on a loaded machine the supervisor's connection may first
	// have to move to the surviving node (it failed once at 20 s, load 10).
	deadline := time.Now().Add(45 * time.Second)
	for {
		if st, err := os.Stat(spool); err == nil && st.Size() > 0 {
			if st.Mode().Perm() != 0o600 {
				t.Fatalf("spool mode %v", st.Mode())
			}
			break
		}
		if time.Now().After(deadline) {
			// Which way it failed: a flush that returns nil means the stream took
			// the records (it had a quorum after all); one that times out, that the
			// writer is stuck before spooling.
			ferr := f.Sup.FlushLifecycle(supervisortest.Ctx(t, time.Second))
			t.Fatalf("nothing spooled %s into the outage (kept node %d, AUDIT leader now %d; a flush of the lifecycle records: %v)",
				time.Since(down), keep, c.StreamLeader("$G", natsbus.AuditStream), ferr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("lifecycle records spooled %s after the outage began", time.Since(down).Round(10*time.Millisecond))
	f.Stop()
	sp, err := natsbus.OpenSpool(filepath.Join(state, SpoolDir), "a", "sup-s1", 0)
	if err != nil || sp.Len() != 4 {
		t.Fatalf("spooled %d records (want crashed, restarting, started, stopped): %v", sp.Len(), err)
	}

	// The nodes come back; the supervisor's next run stores the spool first.
	for i := 0; i < c.Len(); i++ {
		if i != keep {
			c.Restart(i)
		}
	}
	c.WaitReady(30 * time.Second)
	back := time.Now()
	// Started at once: its streams may have no leader yet (it retries until they do).
	g := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, mods...)
	deadline = time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(spool); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spool was not stored within 60 s of the nodes' return\n%s", g.Out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("spool stored %s after the cluster was back", time.Since(back).Round(10*time.Millisecond))

	// Every record of the first run, once, ids without a gap.
	type rec struct {
		event string
		time  time.Time
	}
	runs := map[string]map[int]rec{}
	var first string
	count := map[string]int{}
	err = g.Client.Tail(supervisortest.Ctx(t, 20*time.Second), natsbus.AuditFilter{Agent: "a", Kinds: []natsbus.AuditKind{natsbus.AuditLifecycle}},
		func(e natsbus.AuditEntry) error {
			id := e.Record.ID
			count[id]++
			run, n, _ := strings.Cut(strings.TrimPrefix(id, "a."), ".")
			seq, err := strconv.Atoi(n)
			if err != nil || !strings.HasPrefix(run, "sup-s1-") {
				t.Errorf("record id %q", id)
				return nil
			}
			if first == "" {
				first = run
			}
			if runs[run] == nil {
				runs[run] = map[int]rec{}
			}
			runs[run][seq] = rec{e.Record.Lifecycle.Event, time.UnixMilli(e.Record.Time)}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("record %s stored %d times", id, n)
		}
	}
	want := []string{"started", "crashed", "restarting", "started", "stopped"}
	r1 := runs[first]
	if len(r1) != len(want) {
		t.Fatalf("first run: %d records, want %d: %v", len(r1), len(want), r1)
	}
	for i, ev := range want {
		r, ok := r1[i+1]
		if !ok || r.event != ev {
			t.Fatalf("first run's record %d: %+v, want %s (all: %v)", i+1, r, ev, r1)
		}
		if i > 0 && r.time.Before(down) {
			t.Fatalf("record %d (%s) is from before the outage", i+1, ev)
		}
	}
	if len(runs) > 2 {
		t.Fatalf("records of %d supervisor runs, want 2 at most: %v", len(runs), runs)
	}
}

// waitStreamLeaders waits until every stream of the cluster at urls has a leader
// (after nodes came back, streams elect theirs one by one).
func waitStreamLeaders(t *testing.T, urls string, d time.Duration) {
	t.Helper()
	nc, err := nats.Connect(urls)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(d)
	for {
		var none []string
		lister := js.ListStreams(supervisortest.Ctx(t, 5*time.Second))
		for info := range lister.Info() {
			if info.Cluster == nil || info.Cluster.Leader == "" {
				none = append(none, info.Config.Name)
			}
		}
		if lister.Err() == nil && len(none) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("streams without a leader after %s: %v (%v)", d, none, lister.Err())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// traceIntervals reads an order trace (--order-trace) and returns, per process,
// the interval from its first order-changing call's start to its last one's end,
// sorted by start.
type traceInterval struct {
	pid        int
	start, end int64
	calls      int
}

func traceIntervals(t *testing.T, path string) []traceInterval {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	by := map[int]*traceInterval{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l wire.OrderTraceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		iv := by[l.PID]
		if iv == nil {
			iv = &traceInterval{pid: l.PID, start: l.Start, end: l.End}
			by[l.PID] = iv
		}
		iv.start, iv.end, iv.calls = min(iv.start, l.Start), max(iv.end, l.End), iv.calls+1
	}
	var out []traceInterval
	for _, iv := range by {
		out = append(out, *iv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// checkNoOverlap fails when two processes' order intervals overlap, and returns
// the smallest gap between one process's last call and the next one's first.
func checkNoOverlap(t *testing.T, ivs []traceInterval) time.Duration {
	t.Helper()
	gap := time.Duration(1<<63 - 1)
	for i := 1; i < len(ivs); i++ {
		d := time.Duration(ivs[i].start - ivs[i-1].end)
		if d <= 0 {
			t.Fatalf("processes %d and %d sent orders on one wallet at the same time: %v overlap (%+v)", ivs[i-1].pid, ivs[i].pid, -d, ivs)
		}
		gap = min(gap, d)
	}
	return gap
}

// orderIDsPlacedTwice returns the order ids of fx that more than one "place" audit
// record names (a placement repeated by a successor that did not know it).
func orderIDsPlacedTwice(t *testing.T, rt, creds string) (placed int, twice []string) {
	t.Helper()
	code, out, errOut := ctl(t, rt, "--creds", creds, "--json", "tail", "--agent", "fx", "--kind", "order")
	if code != 0 {
		t.Fatalf("ctl tail: %d %s %s", code, out, errOut)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e natsbus.AuditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if o := e.Record.Order; o != nil && o.Action == "place" && o.ID != "" {
			seen[string(o.ID)]++
		}
	}
	for id, n := range seen {
		placed++
		if n > 1 {
			twice = append(twice, id)
		}
	}
	return placed, twice
}

// haFleet skips in short mode, else builds pitboss and starts a 3-node cluster;
// it returns the binary, the cluster, a directory and an endpoint file of it.
func haFleet(t *testing.T) (string, *natsbustest.Cluster, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs two supervisors on a 3-node cluster")
	}
	bin := buildPitboss(t)
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	dir := t.TempDir()
	creds := filepath.Join(dir, "fleet.json")
	if err := (natsbus.Endpoint{URL: c.URLs()}).WriteFile(creds); err != nil {
		t.Fatal(err)
	}
	return bin, c, dir, creds
}

// TestFleetFailoverAndFencing runs two `pitboss supervise` processes on a 3-node
// cluster (each with its own state and runtime directories, as on two machines),
// both listing agent fx; A runs it, B stands by. SIGSTOP of A for longer than the
// lock TTL: fx's process fences itself before its lease can expire, B takes over,
// and the order trace of every process finds no overlap; SIGCONT: A stands by.
// Before that, the lock bucket's leader node is killed: fx keeps its process.
// Then fx's kill switch is thrown and B is SIGKILLed: A runs fx within TTL + 5 s,
// from the cluster's copy of its state (its own directory is stale), killed, with
// the same positions; no order id was ever placed twice.
func TestFleetFailoverAndFencing(t *testing.T) {
	bin, c, dir, creds := haFleet(t)
	trace := filepath.Join(dir, "orders.trace")
	af := busyAgentFile(t, "fx")
	const ttl = 3 * time.Second
	var sups []*superviseProc
	for _, name := range []string{"a", "b"} {
		entry := "{file: " + af + ", state_dir: " + filepath.Join(dir, "state-"+name) + ", args: [--speed, '50', --order-trace, " + trace + "]}"
		fleet := fleetFile(t, filepath.Join(dir), "fleet-"+name, "http_addr: off\n", entry)
		// One fleet: the files differ only in where the state is kept.
		src, _ := os.ReadFile(fleet)
		_ = os.WriteFile(fleet, []byte(strings.Replace(string(src), "name: fleet-"+name, "name: ha", 1)), 0o600)
		sups = append(sups, startSupervise(t, bin, t.TempDir(), "--nats", c.URLs(), "--name", name, fleet))
		if name == "a" {
			rt := t.TempDir()
			waitList(t, sups[0].process, "fx running on a", 60*time.Second, func() map[string]supervisor.AgentView { return list(t, rt, "--creds", creds) },
				func(m map[string]supervisor.AgentView) bool {
					return m["fx"].State() == "running" && m["fx"].Supervisor == "a"
				})
		}
	}
	a, b := sups[0], sups[1]
	defer func() { _ = a.cmd.Process.Signal(syscall.SIGCONT) }()
	rt := t.TempDir()
	ls := func() map[string]supervisor.AgentView { m, _ := fleetRunners(t, rt, creds); return m }
	waitFor := func(what string, d time.Duration, ok func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !ok() {
			if time.Since(start) > d {
				t.Fatalf("timed out after %s waiting for %s\na:\n%s\nb:\n%s", d, what, a.text(), b.text())
			}
			time.Sleep(50 * time.Millisecond)
		}
		return time.Since(start)
	}
	waitFor("orders from fx on a", 30*time.Second, func() bool { return len(traceIntervals(t, trace)) == 1 })

	// A node loss — the lock bucket's leader — stops nothing: fx keeps running
	// in the same process under a (its lease renewed through the election).
	pid0 := ls()["fx"].PID
	leader := c.StreamLeader("$G", "KV_"+natsbus.LockBucket)
	if leader < 0 || pid0 == 0 {
		t.Fatalf("lock bucket leader %d, fx pid %d", leader, pid0)
	}
	c.Kill(leader)
	time.Sleep(2 * ttl)
	if v := ls()["fx"]; v.PID != pid0 || v.Supervisor != "a" || v.State() != "running" {
		t.Fatalf("after the loss of node %d (the lock bucket's leader): fx %+v, was pid %d\na:\n%s", leader, v, pid0, a.text())
	}
	if ivs := traceIntervals(t, trace); len(ivs) != 1 {
		t.Fatalf("another process sent orders after the node loss: %+v", ivs)
	}
	c.Restart(leader)
	c.WaitReady(30 * time.Second)

	// SIGSTOP the supervisor running fx for longer than the TTL.
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	took := waitFor("fx's orders from b's process", ttl+15*time.Second, func() bool { return len(traceIntervals(t, trace)) >= 2 })
	time.Sleep(max(0, ttl+2*time.Second-time.Since(stopped)))
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitList(t, b.process, "fx on b, a standing by", 30*time.Second, ls, func(m map[string]supervisor.AgentView) bool {
		return m["fx"].State() == "running" && m["fx"].Supervisor == "b"
	})
	time.Sleep(time.Second) // b's process keeps trading; a's must not come back
	ivs := traceIntervals(t, trace)
	gap := checkNoOverlap(t, ivs)
	t.Logf("SIGSTOP of the supervisor: fx's orders resumed on b %s after the stop (TTL %s); gap between the two processes' orders %s; a's child's last order %s after the stop; %d processes: %+v",
		took.Round(10*time.Millisecond), ttl, gap.Round(time.Millisecond), time.Duration(ivs[0].end-stopped.UnixNano()).Round(time.Millisecond), len(ivs), ivs)
	if os.Getenv("PITBOSS_TEST_VERBOSE") != "" {
		t.Logf("a:\n%s", a.text())
	}

	// The kill switch, then SIGKILL of b: a takes fx over with its state.
	if code, out, errOut := ctl(t, rt, "--creds", creds, "kill", "fx"); code != 0 {
		t.Fatalf("ctl kill: %d %s %s", code, out, errOut)
	}
	m := waitList(t, b.process, "fx killed", 30*time.Second, ls, states(map[string]string{"fx": "killed"}))
	time.Sleep(1500 * time.Millisecond) // the checkpoint after the trip is written at once; give it a beat
	before := m["fx"].Status.Positions
	b.kill()
	killed := time.Now()
	m = waitList(t, a.process, "fx on a after b's SIGKILL", ttl+20*time.Second, ls, func(m map[string]supervisor.AgentView) bool {
		return m["fx"].Supervisor == "a" && m["fx"].State() == "killed"
	})
	failover := time.Since(killed)
	t.Logf("SIGKILL of the supervisor: fx killed and running on a %s later (TTL %s)", failover.Round(10*time.Millisecond), ttl)
	if failover > ttl+5*time.Second {
		t.Errorf("failover took %s, more than TTL + 5 s", failover)
	}
	after := m["fx"].Status.Positions
	if len(before) == 0 {
		t.Logf("fx had no position when killed (nothing filled yet)")
	}
	if pb, pa := positionsText(before), positionsText(after); pb != pa {
		t.Fatalf("positions changed across the failover:\nbefore %s\nafter  %s", pb, pa)
	}
	ivs = traceIntervals(t, trace)
	checkNoOverlap(t, ivs)
	placed, twice := orderIDsPlacedTwice(t, rt, creds)
	if placed == 0 || len(twice) > 0 {
		t.Fatalf("%d orders placed; placed twice: %v", placed, twice)
	}
	if !strings.Contains(a.text(), "resuming from the fleet's copy") && !strings.Contains(a.text(), "fleet's copy of the agent's state") {
		t.Logf("a's output:\n%s", a.text())
	}
}

// busyAgentFile is agentFile with quotes that follow every book change (so that
// orders go out all the time: the order trace has something to check).
func busyAgentFile(t *testing.T, name string) string {
	t.Helper()
	path := agentFile(t, name, "")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "strategy:\n  file: ", "strategy:\n  params: {smooth: 1, half_spread: 0.005, vol_mult: 0}\n  file: ", 1)
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// positionsText is positions as a comparable line (token, size, average price).
func positionsText(ps []natsbus.PositionStatus) string {
	var rows []string
	for _, p := range ps {
		rows = append(rows, string(p.Token)+" "+p.Size.String()+" "+p.AvgPrice.String())
	}
	sort.Strings(rows)
	return strings.Join(rows, "; ")
}

// fleetRunners lists the fleet and returns, by agent, the row of the supervisor
// that runs it (a standby's refused row only when nobody runs it), and the whole
// answer.
func fleetRunners(t *testing.T, rt, creds string) (map[string]supervisor.AgentView, supervisor.Fleet) {
	t.Helper()
	code, out, errOut := ctl(t, rt, "--creds", creds, "--json", "list", "--wait", "400ms")
	if code != 0 {
		t.Logf("ctl list: %d %s %s", code, out, errOut)
		return nil, supervisor.Fleet{}
	}
	var fl supervisor.Fleet
	if err := json.Unmarshal([]byte(out), &fl); err != nil {
		t.Fatalf("ctl list --json: %v\n%s", err, out)
	}
	m := map[string]supervisor.AgentView{}
	for _, a := range fl.Agents() {
		if old, ok := m[string(a.ID)]; !ok || old.Process == supervisor.ProcRefused {
			m[string(a.ID)] = a
		}
	}
	return m, fl
}

// TestDefinedAgentsArePlacedAndFailOver: two supervisors with no agents of their
// own (agents: []), labels region: eu, capacities 1 and 2, on a 3-node cluster;
// `pitboss ctl agents apply` publishes a fleet file's three agents, two placed in
// eu and one in us. Each eu agent runs on one supervisor (a at its capacity), the us
// one is a row "unplaced"; SIGKILL of a: it is a "missing" row, and its agent runs
// on b within TTL + 5 s, without any file copied to b.
func TestDefinedAgentsArePlacedAndFailOver(t *testing.T) {
	bin, c, dir, creds := haFleet(t)
	const ttl = 3 * time.Second
	start := func(name string, capacity int) *superviseProc {
		extra := "http_addr: off\nstate_dir: " + filepath.Join(dir, "sup-"+name) + "\nmax_agents: " + strconv.Itoa(capacity) + "\nlabels: {region: eu}\n"
		fleet := fleetFile(t, t.TempDir(), "place", extra)
		src, _ := os.ReadFile(fleet)
		_ = os.WriteFile(fleet, []byte(strings.Replace(string(src), "agents:\n", "agents: []\n", 1)), 0o600)
		return startSupervise(t, bin, t.TempDir(), "--nats", c.URLs(), "--name", name, fleet)
	}
	rt := t.TempDir()
	a := start("a", 1)
	waitText(t, a.process, "a running", 60*time.Second, func(s string) bool { return strings.Contains(s, "fleet place:") })
	// The definitions: a fleet file of three agents (its own paths; b gets none of them).
	var entries []string
	for _, e := range []struct{ id, region string }{{"d1", "eu"}, {"d2", "eu"}, {"d3", "us"}} {
		entries = append(entries, "{file: "+agentFile(t, e.id, "")+", args: [--speed, '20'], placement: {region: "+e.region+"}}")
	}
	defs := fleetFile(t, t.TempDir(), "defs", "", entries...)
	if code, out, errOut := ctl(t, rt, "--creds", creds, "agents", "apply", defs); code != 0 || !strings.Contains(out, "d3: defined") {
		t.Fatalf("ctl agents apply: %d %s %s", code, out, errOut)
	}
	wait := func(what string, d time.Duration, ok func(map[string]supervisor.AgentView, supervisor.Fleet) bool) (map[string]supervisor.AgentView, supervisor.Fleet) {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			m, fl := fleetRunners(t, rt, creds)
			if ok(m, fl) {
				return m, fl
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out after %s waiting for %s: %+v\nmissing %+v unplaced %v\na:\n%s", d, what, m, fl.Missing, fl.Unplaced, a.text())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	running := func(m map[string]supervisor.AgentView, id string) string {
		if v, ok := m[id]; ok && v.State() == "running" {
			return v.Supervisor
		}
		return ""
	}
	m, _ := wait("one eu agent on a", 30*time.Second, func(m map[string]supervisor.AgentView, _ supervisor.Fleet) bool {
		return running(m, "d1") == "a" || running(m, "d2") == "a"
	})
	onA := "d1"
	if running(m, "d2") == "a" {
		onA = "d2"
	}
	b := start("b", 2)
	_, fl := wait("both eu agents placed, one per supervisor; d3 unplaced", 60*time.Second, func(m map[string]supervisor.AgentView, fl supervisor.Fleet) bool {
		return running(m, "d1") != "" && running(m, "d2") != "" && running(m, "d1") != running(m, "d2") && slices.Equal(fl.Unplaced, []market.AgentID{"d3"})
	})
	if code, out, _ := ctl(t, rt, "--creds", creds, "list"); code != 0 || !strings.Contains(out, "d3") || !strings.Contains(out, "unplaced") {
		t.Fatalf("ctl list does not show the unplaced agent:\n%s", out)
	}
	_ = fl
	defer func() {
		if t.Failed() {
			t.Logf("b:\n%s", b.text())
		}
	}()

	a.kill()
	killed := time.Now()
	wait("a missing", ttl+10*time.Second, func(_ map[string]supervisor.AgentView, fl supervisor.Fleet) bool {
		return len(fl.Missing) == 1 && fl.Missing[0].Name == "a" && slices.Contains(fl.Missing[0].Agents, market.AgentID(onA))
	})
	if code, out, _ := ctl(t, rt, "--creds", creds, "list"); code != 0 || !strings.Contains(out, "supervisor a@") || !strings.Contains(out, "missing") {
		t.Fatalf("ctl list does not show the missing supervisor:\n%s", out)
	}
	wait(onA+" on b", ttl+20*time.Second, func(m map[string]supervisor.AgentView, _ supervisor.Fleet) bool {
		return running(m, onA) == "b"
	})
	took := time.Since(killed)
	t.Logf("SIGKILL of supervisor a: its agent %s running on b %s later (TTL %s)", onA, took.Round(10*time.Millisecond), ttl)
	if took > ttl+5*time.Second {
		t.Errorf("failover took %s, more than TTL + 5 s", took)
	}
	if _, err := os.Stat(filepath.Join(dir, "sup-b", "agents", onA, "agent.yaml")); err != nil {
		t.Fatalf("b did not run %s from the fleet's definition: %v", onA, err)
	}
}

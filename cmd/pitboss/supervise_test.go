//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/statusview"
)

// fleetFile writes a fleet file and returns its path. agents are YAML list items.
func fleetFile(t *testing.T, dir, name, extra string, agents ...string) string {
	t.Helper()
	src := "name: " + name + "\nheartbeat: 250ms\nstop_timeout: 10s\nlock_ttl: 3s\nrestart: {backoff: 200ms, max_backoff: 1s}\n" + extra + "agents:\n"
	for _, a := range agents {
		src += "  - " + a + "\n"
	}
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// superviseProc is `pitboss supervise` running as a child process.
type superviseProc struct {
	*process
	runtimeDir string
}

func startSupervise(t *testing.T, bin, runtimeDir string, args ...string) *superviseProc {
	t.Helper()
	p := startProcess(t, bin, append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir), func(p *process) {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	}, append([]string{"supervise"}, args...)...)
	return &superviseProc{process: p, runtimeDir: runtimeDir}
}

// ctl runs `pitboss ctl` in-process with the given runtime directory and returns
// its exit code and output.
func ctl(t *testing.T, runtimeDir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := runMain(context.Background(), append([]string{"ctl"}, args...), stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return runtimeDir
			}
			return ""
		}})
	return code, out.String(), errb.String()
}

// list returns the agents `pitboss ctl list --json` shows, by id (none while ctl
// fails: the supervisor may not be up yet).
func list(t *testing.T, runtimeDir string, args ...string) map[string]supervisor.AgentView {
	t.Helper()
	code, out, errOut := ctl(t, runtimeDir, append(args, "--json", "list", "--wait", "400ms")...)
	if code != 0 {
		t.Logf("ctl list: %d %s %s", code, out, errOut)
		return nil
	}
	var fl supervisor.Fleet
	if err := json.Unmarshal([]byte(out), &fl); err != nil {
		t.Fatalf("ctl list --json: %v\n%s", err, out)
	}
	m := map[string]supervisor.AgentView{}
	for _, a := range fl.Agents() {
		m[string(a.ID)] = a
	}
	return m
}

// waitList polls ctl list until cond holds.
func waitList(t *testing.T, p *process, what string, d time.Duration, ls func() map[string]supervisor.AgentView, cond func(map[string]supervisor.AgentView) bool) map[string]supervisor.AgentView {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		m := ls()
		if cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			var rows []string
			for id, a := range m {
				rows = append(rows, id+": "+a.State()+" "+string(a.Process)+" "+a.Message)
			}
			sort.Strings(rows)
			t.Fatalf("timed out after %s waiting for %s:\n%s\nsupervisor output:\n%s", d, what, strings.Join(rows, "\n"), p.text())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func states(want map[string]string) func(map[string]supervisor.AgentView) bool {
	return func(m map[string]supervisor.AgentView) bool {
		for id, st := range want {
			a, ok := m[id]
			if !ok || a.State() != st {
				return false
			}
		}
		return true
	}
}

// TestSuperviseAFleet runs `pitboss supervise` with three agents and a fourth on
// the first one's wallet, all real `pitboss run --supervised` processes on the
// embedded nats-server: the fourth is refused naming the holder; one agent killed
// with SIGKILL comes back; pause, resume and the kill switch reach the right agent;
// after the supervisor stopped, the AUDIT stream holds every order each agent
// recorded in its own audit file.
func TestSuperviseAFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a fleet")
	}
	bin := buildPitboss(t)
	dir, rt := t.TempDir(), t.TempDir()
	store := filepath.Join(dir, "nats")
	var entries []string
	for _, id := range []string{"a1", "a2", "a3"} {
		f := agentFile(t, id, "")
		entries = append(entries, "{file: "+f+", args: [--speed, '20', --audit, "+filepath.Join(dir, id+".audit")+"]}")
	}
	entries = append(entries, "{file: "+agentFile(t, "dup", "")+", wallet: 'keyring:pitboss-test-a1'}")
	fleet := fleetFile(t, dir, "main", "nats: {store_dir: "+store+"}\nhttp_addr: off\n", entries...)
	sup := startSupervise(t, bin, rt, fleet)
	ls := func() map[string]supervisor.AgentView { return list(t, rt) }

	m := waitList(t, sup.process, "three agents running, the fourth refused", 60*time.Second, ls, func(m map[string]supervisor.AgentView) bool {
		return states(map[string]string{"a1": "running", "a2": "running", "a3": "running", "dup": "refused"})(m)
	})
	if msg := m["dup"].Message; !strings.Contains(msg, "is already held by agent a1 (supervisor ") {
		t.Fatalf("refusal does not name the holder: %q", msg)
	}

	t.Run("an agent killed with SIGKILL comes back", func(t *testing.T) {
		pid := m["a2"].PID
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		back := waitList(t, sup.process, "a2 back", 60*time.Second, ls, func(m map[string]supervisor.AgentView) bool {
			a := m["a2"]
			return a.State() == "running" && a.PID != pid && a.Restarts == 1
		})
		if a1 := back["a1"]; a1.Restarts != 0 || a1.State() != "running" {
			t.Fatalf("a1 touched: %+v", a1)
		}
	})

	steps := []struct {
		args []string
		want map[string]string
	}{
		{[]string{"pause", "a1"}, map[string]string{"a1": "paused", "a2": "running", "a3": "running"}},
		{[]string{"resume", "a1"}, map[string]string{"a1": "running", "a2": "running", "a3": "running"}},
		{[]string{"kill", "a3", "--reason", "test"}, map[string]string{"a1": "running", "a2": "running", "a3": "killed"}},
	}
	for _, s := range steps {
		t.Run(strings.Join(s.args, " "), func(t *testing.T) {
			code, out, errOut := ctl(t, rt, s.args...)
			if code != 0 || !strings.Contains(out, s.args[1]+": ok") {
				t.Fatalf("ctl %v: %d %q %q", s.args, code, out, errOut)
			}
			waitList(t, sup.process, strings.Join(s.args, " "), 20*time.Second, ls, states(s.want))
		})
	}
	t.Run("the read-only role lists and tails, and controls nothing", func(t *testing.T) {
		reader := filepath.Join(rt, "pitboss", "reader-main.json")
		if st, err := os.Stat(reader); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("read-only endpoint file: %v %v", st, err)
		}
		if code, out, errOut := ctl(t, rt, "--creds", reader, "list"); code != 0 || !strings.Contains(out, "4 agent(s), 1 supervisor(s)") {
			t.Fatalf("read-only list: %d %q %q", code, out, errOut)
		}
		if code, out, errOut := ctl(t, rt, "--creds", reader, "tail", "--agent", "a3", "--kind", "control"); code != 0 || !strings.Contains(out, "kill") {
			t.Fatalf("read-only tail: %d %q %q", code, out, errOut)
		}
		if code, out, errOut := ctl(t, rt, "--creds", reader, "--timeout", "2s", "pause", "a1"); code == 0 {
			t.Fatalf("the read-only role paused an agent: %q %q", out, errOut)
		}
		waitList(t, sup.process, "a1 still running", 5*time.Second, ls, states(map[string]string{"a1": "running"}))
	})
	t.Run("text list", func(t *testing.T) {
		code, out, _ := ctl(t, rt, "list")
		if code != 0 || !strings.Contains(out, "AGENT") || !strings.Contains(out, "killed") || !strings.Contains(out, "4 agent(s), 1 supervisor(s)") {
			t.Fatalf("list: %d\n%s", code, out)
		}
	})

	t.Run("ctl status AGENT", func(t *testing.T) {
		// A fleet agent's status message carries its books, orders and guards.
		waitList(t, sup.process, "a1's books and guards", 30*time.Second, ls, func(m map[string]supervisor.AgentView) bool {
			st := m["a1"].Status
			return st != nil && len(st.Books) == 1 && st.Books[0].Mid > 0 && len(st.Guards) == 7
		})
		code, out, errOut := ctl(t, rt, "status", "a1")
		if code != 0 {
			t.Fatalf("ctl status a1: %d %q %q", code, out, errOut)
		}
		for _, re := range []string{`(?m)^Agent a1: running, dry run, wallet 0x[0-9a-f]{40}$`, `(?m)^Markets:\n  Market +Bid +Ask +Mid +Spread\n  \S+ +YES +0\.\d+`,
			`(?m)^Orders: \d+ open$`, `(?m)^PnL:$`, `(?m)^  max_open_orders +\d+ +/ 6 +orders`} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("no %s in:\n%s", re, out)
			}
		}
		code, js, _ := ctl(t, rt, "status", "a3", "--json")
		var v statusview.View
		if err := json.Unmarshal([]byte(js), &v); code != 0 || err != nil || v.Agent != "a3" || v.State != "killed" {
			t.Fatalf("ctl status a3 --json: %d %v %s", code, err, js)
		}
		if code, _, errOut := ctl(t, rt, "status", "nobody"); code == 0 || !strings.Contains(errOut, "nobody") {
			t.Fatalf("ctl status of an unknown agent: %d %q", code, errOut)
		}
	})

	// Let them trade, then stop the supervisor: it stops every agent.
	waitAudit := time.Now().Add(60 * time.Second)
	for countOrders(t, filepath.Join(dir, "a1.audit")) < 3 && time.Now().Before(waitAudit) {
		time.Sleep(200 * time.Millisecond)
	}
	pids := []int{}
	for _, a := range ls() {
		if a.PID != 0 {
			pids = append(pids, a.PID)
		}
	}
	if err := sup.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := sup.wait(); code != 0 {
		t.Fatalf("supervise exited %d:\n%s", code, sup.text())
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("agent process %d survived its supervisor", pid)
		}
	}
	if _, err := os.Stat(filepath.Join(rt, "pitboss", "fleet-main.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the ctl endpoint file was left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(rt, "pitboss", "reader-main.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the read-only endpoint file was left behind: %v", err)
	}

	t.Run("the audit stream holds every order", func(t *testing.T) {
		stream := streamOrders(t, store)
		for _, id := range []string{"a1", "a3"} { // a2's first life ended in SIGKILL
			local := fileOrders(t, filepath.Join(dir, id+".audit"))
			if len(local) == 0 {
				t.Fatalf("%s recorded no orders", id)
			}
			if !slices.Equal(local, stream[id]) {
				t.Fatalf("%s: the agent recorded %d order records, the stream holds %d\nlocal  %v\nstream %v", id, len(local), len(stream[id]), local, stream[id])
			}
		}
		if len(stream["a2"]) == 0 {
			t.Fatal("no order of a2 in the stream")
		}
	})
}

// countOrders counts the order records of a local audit file.
func countOrders(t *testing.T, path string) int { return len(fileOrders(t, path)) }

// fileOrders returns "op id" of every order record of a local audit file (pitboss
// run --audit), sorted.
func fileOrders(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Kind  string `json:"kind"`
			Op    string `json:"op"`
			Order *struct {
				ID string `json:"id"`
			} `json:"order"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Kind == "order" && l.Order != nil {
			out = append(out, l.Op+" "+l.Order.ID)
		}
	}
	sort.Strings(out)
	return out
}

// streamOrders opens the fleet's store with a new server and returns "op id" of
// every order record of the AUDIT stream, by agent, sorted.
func streamOrders(t *testing.T, store string) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: store, InProcessOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	bus, err := srv.Connect(ctx, natsbus.RoleSupervisor, natsbus.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	out := map[string][]string{}
	err = bus.TailAudit(ctx, natsbus.AuditFilter{Kinds: []natsbus.AuditKind{natsbus.AuditOrder}}, func(e natsbus.AuditEntry) error {
		out[string(e.Record.Agent)] = append(out[string(e.Record.Agent)], e.Record.Order.Action+" "+string(e.Record.Order.ID))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// TestTwoSupervisorsOneNATS runs a nats-server in the test process and two `pitboss
// supervise --nats` processes on it, two agents each: `pitboss ctl` sees the four
// agents of both and controls them, fleet-wide and one by one, lifecycle included.
func TestTwoSupervisorsOneNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two supervisors")
	}
	bin := buildPitboss(t)
	dir := t.TempDir()
	srv := startNATS(t, filepath.Join(dir, "nats")) // shut down after the supervisors
	supCreds, agentCreds := filepath.Join(dir, "sup.json"), filepath.Join(dir, "agent.json")
	if err := srv.Endpoint(natsbus.RoleSupervisor).WriteFile(supCreds); err != nil {
		t.Fatal(err)
	}
	if err := srv.Endpoint(natsbus.RoleAgent).WriteFile(agentCreds); err != nil {
		t.Fatal(err)
	}
	var procs []*superviseProc
	for _, s := range []string{"east", "west"} {
		entries := []string{"{file: " + agentFile(t, s+"1", "") + ", args: [--speed, '20']}", "{file: " + agentFile(t, s+"2", "") + ", args: [--speed, '20']}"}
		fleet := fleetFile(t, dir, "fleet-"+s, "http_addr: off\n", entries...)
		procs = append(procs, startSupervise(t, bin, t.TempDir(), "--nats", srv.URL(), "--nats-creds", supCreds, "--agent-creds", agentCreds,
			"--name", s, fleet))
	}
	// A failure shows east's output (waitList's); west's is here (registered
	// after the processes, so it runs before they are stopped).
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("west's output:\n%s", procs[1].text())
		}
	})
	rt := t.TempDir() // ctl finds no endpoint file here: it uses --creds
	ls := func() map[string]supervisor.AgentView { return list(t, rt, "--creds", supCreds) }
	all := func(st string) map[string]string {
		return map[string]string{"east1": st, "east2": st, "west1": st, "west2": st}
	}
	m := waitList(t, procs[0].process, "four agents of two supervisors", 60*time.Second, ls, states(all("running")))
	if m["east1"].Supervisor != "east" || m["west2"].Supervisor != "west" {
		t.Fatalf("supervisors: %+v %+v", m["east1"], m["west2"])
	}
	steps := []struct {
		args []string
		want map[string]string
	}{
		{[]string{"pause", "--all"}, all("paused")},
		{[]string{"resume", "--all"}, all("running")},
		{[]string{"kill", "west1"}, map[string]string{"east1": "running", "east2": "running", "west1": "killed", "west2": "running"}},
		{[]string{"resume-after-kill", "west1"}, all("running")},
		{[]string{"stop", "east2"}, map[string]string{"east1": "running", "east2": "stopped", "west1": "running", "west2": "running"}},
		{[]string{"start", "east2"}, all("running")},
	}
	for _, s := range steps {
		t.Run(strings.Join(s.args, " "), func(t *testing.T) {
			code, out, errOut := ctl(t, rt, append([]string{"--creds", supCreds}, s.args...)...)
			if code != 0 {
				t.Fatalf("ctl %v: %d %q %q", s.args, code, out, errOut)
			}
			waitList(t, procs[0].process, strings.Join(s.args, " "), 30*time.Second, ls, states(s.want))
		})
	}
	t.Run("restart through the other supervisor", func(t *testing.T) {
		pid := ls()["west2"].PID
		code, out, errOut := ctl(t, rt, "--creds", supCreds, "restart", "west2")
		if code != 0 || !strings.Contains(out, "west2: ok (starting)") {
			t.Fatalf("restart: %d %q %q", code, out, errOut)
		}
		waitList(t, procs[1].process, "west2 restarted", 30*time.Second, ls, func(m map[string]supervisor.AgentView) bool {
			return m["west2"].State() == "running" && m["west2"].PID != pid && m["west2"].Restarts == 1
		})
	})
	t.Run("json control result", func(t *testing.T) {
		code, out, _ := ctl(t, rt, "--creds", supCreds, "--json", "pause", "east1")
		var res supervisor.ControlResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Replies) != 1 || res.Replies[0].State != natsbus.StatePaused {
			t.Fatalf("%d %s", code, out)
		}
	})
	t.Run("tail", func(t *testing.T) {
		code, out, errOut := ctl(t, rt, "--creds", supCreds, "tail", "--agent", "west2", "--kind", "lifecycle")
		if code != 0 || !strings.Contains(out, "west2") || !strings.Contains(out, "lifecycle started pid") || !strings.Contains(out, "restarting") {
			t.Fatalf("tail: %d\n%s\n%s", code, out, errOut)
		}
		code, out, _ = ctl(t, rt, "--creds", supCreds, "--json", "tail", "--kind", "control")
		if code != 0 {
			t.Fatalf("tail --json: %d", code)
		}
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e natsbus.AuditEntry
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Record.Kind != natsbus.AuditControl {
				t.Fatalf("line %q: %v", line, err)
			}
			n++
		}
		if n < 5 {
			t.Fatalf("%d control records", n)
		}
	})
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		if code := p.wait(); code != 0 {
			t.Fatalf("supervise exited %d:\n%s", code, p.text())
		}
	}
}

// TestCtlAndSuperviseRefuseMistakes checks the command lines' own errors.
func TestCtlAndSuperviseRefuseMistakes(t *testing.T) {
	rt := t.TempDir()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: f\nagentz: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missingAgent := fleetFile(t, dir, "f2", "", filepath.Join(dir, "none.yaml"))
	remote := fleetFile(t, dir, "f3", "nats: {store_dir: "+filepath.Join(dir, "nats")+"}\n", agentFile(t, "r1", ""))
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"ctl without a command", []string{"ctl"}, 2, "name a command"},
		{"ctl without a fleet", []string{"ctl", "list"}, 1, "no running fleet found"},
		{"ctl unknown command", []string{"ctl", "--nats", "nats://127.0.0.1:1", "dance"}, 2, `unknown command "dance"`},
		{"ctl control without a target", []string{"ctl", "--nats", "nats://127.0.0.1:1", "pause"}, 2, "pause needs one AGENT or --all"},
		{"supervise without a file", []string{"supervise"}, 2, "name one fleet file"},
		{"supervise a bad file", []string{"supervise", bad}, 1, `bad.yaml:2:1: unknown setting "agentz" in the fleet file (did you mean agents?)`},
		{"supervise a missing agent file", []string{"supervise", missingAgent}, 1, "none.yaml"},
		{"a dashboard on every interface without a token", []string{"supervise", "--http-addr", "0.0.0.0:0", "--allow-remote-http", remote}, 1,
			"a dashboard on a non-loopback address needs an access token ($PITBOSS_DASHBOARD_TOKEN)"},
		{"a dashboard on every interface without allow-remote-http", []string{"supervise", "--http-addr", "0.0.0.0:0", remote}, 1,
			"needs an access token"},
		{"a supervised run with its own metrics listener", []string{"run", "--supervised", "--metrics-addr", "127.0.0.1:0", "a.yaml"}, 2,
			"--metrics-addr is not served with --supervised"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := runMain(context.Background(), c.args, stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
				getenv: func(k string) string {
					if k == "XDG_RUNTIME_DIR" {
						return rt
					}
					return ""
				}})
			if code != c.code || !strings.Contains(out.String()+errb.String(), c.want) {
				t.Fatalf("code %d, output %q %q", code, out.String(), errb.String())
			}
		})
	}
}

// TestSuperviseOnTheRemoteVenue runs a fleet of three agents against `pitboss
// exchange --sim` (a separate process) behind a proxy that counts the WebSocket
// connections: two live agents, each locked on its wallet's real address (read
// from its env: key by the supervisor), and a dry-run agent, all trading the same
// market. The fleet fans market data out by default: the exchange sees exactly one
// market-channel connection (the supervisor's) while every agent gets books and
// trades — each evaluates them and fills — and each live agent keeps its own
// user-channel connection. Every CLOB request takes a grant of the fleet's budget,
// and the publisher serves any subscriber on NATS.
func TestSuperviseOnTheRemoteVenue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the exchange and a fleet")
	}
	bin := buildPitboss(t)
	x := startExchangeProcess(t, bin)
	px := *x
	proxy := newWSCountingProxy(t, x.clob)
	px.clob = proxy.URL
	key, key2 := walletKey("fleet-live"), walletKey("fleet-live-2")
	home, rt, dir := t.TempDir(), t.TempDir(), t.TempDir()
	liveFile := liveAgentFile(t, &px, "remote-live", true)
	dryFile := liveAgentFile(t, &px, "remote-dry", false)
	liveEnvVars := "env: [PITBOSS_HOME, PITBOSS_SECRET_STORE, PITBOSS_STORE_PASSPHRASE]"
	fleet := fleetFile(t, dir, "remote", "nats: {store_dir: "+filepath.Join(dir, "nats")+"}\nhttp_addr: off\nmetrics_addr: 127.0.0.1:0\n",
		"{file: "+liveFile+", live: true, "+liveEnvVars+"}",
		"{file: "+liveFile+", id: remote-live-2, wallet: 'env:PITBOSS_TEST_WALLET_2', live: true, "+liveEnvVars+"}",
		"{file: "+dryFile+"}")
	p := startProcess(t, bin, append(liveEnv(key, home, rt), "PITBOSS_TEST_WALLET_2="+key2), func(p *process) {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait()
	}, "supervise", fleet)
	ids := []string{"remote-live", "remote-live-2", "remote-dry"}
	ls := func() map[string]supervisor.AgentView { return list(t, rt) }
	m := waitList(t, p, "the three agents running", 60*time.Second, ls,
		states(map[string]string{"remote-live": "running", "remote-live-2": "running", "remote-dry": "running"}))
	for id, k := range map[string]string{"remote-live": key, "remote-live-2": key2} {
		if got, want := m[id].Wallet, addressOf(t, k); got != want {
			t.Fatalf("%s is locked on %s, its wallet is %s", id, got, want)
		}
	}
	if !m["remote-live"].Live || !m["remote-live-2"].Live || m["remote-dry"].Live {
		t.Fatalf("modes: %+v %+v %+v", m["remote-live"], m["remote-live-2"], m["remote-dry"])
	}

	// Every agent trades on the market data it received: a book applied
	// (last_event) and its quotes placed on it (they need a two-sided book); the
	// live agents' opening takes filled, reported by their own user channels (a
	// position). The dry run's take may find the cheap asks gone: the live agents
	// took them.
	waitList(t, p, "every agent quoting on market data, the live ones with a position", 60*time.Second, ls, func(m map[string]supervisor.AgentView) bool {
		for _, id := range ids {
			st := m[id].Status
			if st == nil || st.LastEvent == 0 || st.OpenOrders == 0 || (m[id].Live && len(st.Positions) == 0) {
				return false
			}
		}
		return true
	})
	t.Run("one market-channel connection for the fleet", func(t *testing.T) {
		if open, total := proxy.open("/ws/market"), proxy.total("/ws/market"); open != 1 || total != 1 {
			t.Fatalf("market channel: %d open, %d made; want the supervisor's one\n%s", open, total, p.text())
		}
	})
	t.Run("each live agent has its own user channel", func(t *testing.T) {
		if open := proxy.open("/ws/user"); open != 2 {
			t.Fatalf("%d user-channel connections open, want one per live agent", open)
		}
	})

	// A subscriber of the fan-out, with the ctl endpoint the supervisor wrote.
	ep, err := natsbus.ReadEndpointFile(filepath.Join(rt, "pitboss", "fleet-remote.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bus, err := natsbus.Connect(ctx, ep, natsbus.ConnectOptions{Name: "test subscriber"})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	yes := fedMarket(t).Tokens[0]
	mf, err := bus.NewMarketFeed(natsbus.MarketFeedConfig{Tokens: []market.TokenID{yes}, Subscriber: "test", DemandEvery: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	books := make(chan market.Event, 1)
	subCtx, stopSub := context.WithCancel(ctx)
	subDone := make(chan error, 1)
	go func() {
		subDone <- mf.Run(subCtx, func(ev *market.Event) error {
			if ev.Kind == market.EventBook && len(ev.Bids)+len(ev.Asks) > 0 {
				select {
				case books <- *ev:
				default:
				}
			}
			return nil
		})
	}()
	select {
	case book := <-books:
		if book.Token != yes {
			t.Fatalf("book of %s", book.Token)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("no book from the fan-out:\n%s", p.text())
	}

	metricsURL := regexp.MustCompile(`metrics on (http://\S+)`).FindStringSubmatch(p.text())
	if metricsURL == nil {
		t.Fatalf("no metrics address printed:\n%s", p.text())
	}
	var body string
	defer func() {
		if t.Failed() {
			t.Logf("metrics:\n%s", body)
		}
	}()
	// Both tokens of the agents' market are published (the test's subscriber
	// wants one of them).
	waitUntilTrue(t, "budget grants and the market's two tokens published in the metrics", func() bool {
		body = httpGet(t, metricsURL[1])
		return metricValue(body, "pitboss_fleet_budget_grants") > 0 && metricValue(body, "pitboss_fleet_fanout_tokens") == 2 &&
			metricValue(body, "pitboss_fleet_fanout_events_total") > 0
	})
	// The agents' own metrics, exported by their supervisor: each received the
	// fan-out and applied trades from it (the live agents' takes print on the
	// market channel).
	waitUntilTrue(t, "every agent's fan-out and trade counters in the supervisor's metrics", func() bool {
		body = httpGet(t, metricsURL[1])
		for _, id := range ids {
			agent := `agent="` + id + `"`
			if sampleValue(body, "pitboss_agent_fanout_events_total", agent) <= 0 ||
				sampleValue(body, "pitboss_agent_events_total", agent, `kind="last_trade_price"`) <= 0 {
				return false
			}
		}
		return true
	})
	stopSub()
	if err := <-subDone; err != nil {
		t.Fatalf("subscriber: %v", err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("supervise exited %d:\n%s", code, p.text())
	}
}

// sampleValue is the value of the first sample of metric name whose labels
// include every one of labels (`key="value"`) in a Prometheus text exposition, or
// -1.
func sampleValue(body, name string, labels ...string) float64 {
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		ls, val, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && slices.Contains(strings.Split(ls, ","), l)
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); all && err == nil {
			return v
		}
	}
	return -1
}

// wsCountingProxy forwards HTTP and WebSocket requests to a server and counts the
// WebSocket connections by path: made, and open now.
type wsCountingProxy struct {
	*httptest.Server
	mu          sync.Mutex
	made, alive map[string]int
}

func newWSCountingProxy(t *testing.T, target string) *wsCountingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	x := &wsCountingProxy{made: map[string]int{}, alive: map[string]int{}}
	x.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/ws/") && r.Header.Get("Upgrade") != "" {
			x.mu.Lock()
			x.made[r.URL.Path]++
			x.alive[r.URL.Path]++
			x.mu.Unlock()
			defer func() { // the proxy copies a WebSocket until either side closes it
				x.mu.Lock()
				x.alive[r.URL.Path]--
				x.mu.Unlock()
			}()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		x.CloseClientConnections()
		x.Close()
	})
	return x
}

func (x *wsCountingProxy) total(path string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.made[path]
}

func (x *wsCountingProxy) open(path string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.alive[path]
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metricValue is the value of an unlabelled-beyond-constants metric in a
// Prometheus text exposition (the first sample), or -1.
func metricValue(body, name string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// jwtTimes returns the issue and expiry times (Unix seconds) of the user JWT in
// the .creds file at path (the claims are base64url JSON, the JWT's second part).
func jwtTimes(t *testing.T, path string) (iat, exp int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "-----BEGIN NATS USER JWT-----\n")
	token, _, _ := strings.Cut(rest, "\n")
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("no JWT in the creds file (%d parts)", len(parts))
	}
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Iat, Exp int64 }
	if err := json.Unmarshal(claims, &c); err != nil {
		t.Fatal(err)
	}
	return c.Iat, c.Exp
}

// TestSuperviseWithASigningKey runs `pitboss supervise` on a nats-server in
// operator mode with the fleet file's nats.signing_key: the agent process gets
// its own minted credentials (a creds file named in its environment, under the
// runtime directory, whose JWT lives the file's nats.credentials_ttl), heartbeats
// and obeys `ctl pause`; the signing key's seed is in neither process's command
// line or environment, nor in the output.
func TestSuperviseWithASigningKey(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a supervisor")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	bin := buildPitboss(t)
	dir := t.TempDir()
	op := natsbustest.NewOperator(t)
	natsURL := natsbustest.StartServer(t, op.Configure) // shut down after the supervisor
	fleet := fleetFile(t, dir, "fleet-signed", "http_addr: off\nnats: {url: '"+natsURL+"', credentials: "+op.SupervisorCreds+", signing_key: "+op.SigningKey+", credentials_ttl: 2m}\n",
		"{file: "+agentFile(t, "signed1", "")+", args: [--speed, '20']}")
	rt := t.TempDir()
	p := startSupervise(t, bin, rt, fleet)
	ls := func() map[string]supervisor.AgentView {
		return list(t, t.TempDir(), "--creds", op.SupervisorCreds, "--nats", natsURL)
	}
	m := waitList(t, p.process, "the agent under minted credentials", 60*time.Second, ls, states(map[string]string{"signed1": "running"}))
	if code, out, errOut := ctl(t, t.TempDir(), "--creds", op.SupervisorCreds, "--nats", natsURL, "pause", "signed1"); code != 0 {
		t.Fatalf("ctl pause: %d %s %s", code, out, errOut)
	}
	waitList(t, p.process, "paused", 30*time.Second, ls, states(map[string]string{"signed1": "paused"}))
	env, err := os.ReadFile("/proc/" + strconv.Itoa(m["signed1"].PID) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	creds := ""
	for _, v := range strings.Split(string(env), "\x00") {
		if c, ok := strings.CutPrefix(v, natsbus.EnvCreds+"="); ok {
			creds = c
		}
	}
	if !strings.HasPrefix(creds, filepath.Join(rt, "pitboss")+"/") || filepath.Base(creds) != "signed1.creds" {
		t.Fatalf("the agent's creds file: %q", creds)
	}
	if iat, exp := jwtTimes(t, creds); exp-iat != 120 {
		t.Fatalf("the agent's JWT lives %d s (iat %d, exp %d), want credentials_ttl's 120", exp-iat, iat, exp)
	}
	for _, pid := range []int{m["signed1"].PID, p.cmd.Process.Pid} {
		for _, f := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), op.SigningSeed) {
				t.Fatalf("the signing seed is in process %d's %s", pid, f)
			}
		}
	}
	if strings.Contains(p.text(), op.SigningSeed) || !strings.Contains(p.text(), "agents get credentials of their own") {
		t.Fatalf("the supervisor's output:\n%s", p.text())
	}
}

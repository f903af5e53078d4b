//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
)

// TestDistributedSweepSurvivesAKilledWorker runs a 16-point sweep through an
// embedded nats-server and two `pitboss worker` processes, one of them SIGKILLed
// while it runs a point: that point goes to the other worker once the ack wait has
// passed, no point is counted twice, and the coordinator prints the local sweep's
// table byte for byte. Each worker fetches the recording once.
func TestDistributedSweepSurvivesAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three processes")
	}
	bin := buildPitboss(t)
	dir := t.TempDir()
	srv := startNATS(t, filepath.Join(dir, "nats"))
	creds := filepath.Join(dir, "creds.json")
	if err := srv.Endpoint(natsbus.RoleSupervisor).WriteFile(creds); err != nil {
		t.Fatal(err)
	}
	sweep := []string{"backtest", "--data", btSample, "--sweep", "half_spread=0.01:0.04:0.01", "--sweep", "size=5:20:5", "--top", "0"}
	code, local, errOut := runCLI(t, append(sweep, btQuoter)...)
	if code != 0 || strings.Count(local, "\n") != 18 {
		t.Fatalf("local sweep: code %d\n%s%s", code, local, errOut)
	}
	env := os.Environ()
	stop := func(p *process) { p.cmd.Process.Signal(syscall.SIGTERM); p.wait() }
	worker := func(name string) *process {
		return startProcess(t, bin, env, stop, "worker", "--nats", srv.URL(), "--nats-creds", creds, "--parallel", "1",
			"--cache", filepath.Join(dir, name))
	}
	a, b := worker("a"), worker("b")
	coord := startProcess(t, bin, env, stop, append(append(sweep, "--nats", srv.URL(), "--nats-creds", creds, "--ack-wait", "2s", "-q"), btQuoter)...)
	started := regexp.MustCompile(`point started.*"key": "([^"]+)"`)
	var killed string
	waitText(t, a, "worker a starting a point", 60*time.Second, func(s string) bool {
		if m := started.FindStringSubmatch(s); m != nil {
			killed = m[1]
			return true
		}
		return false
	})
	a.kill()
	if regexp.MustCompile(`point done.*"key": "` + killed + `"`).MatchString(a.text()) {
		t.Logf("worker a finished %s before the kill landed", killed)
	}
	if code := coord.wait(); code != 0 {
		t.Fatalf("coordinator: exit %d\n%s", code, coord.text())
	}
	out := coord.text()
	// The coordinator's stdout and stderr share the buffer: the table follows the
	// one line on stderr naming the sweep.
	if i := strings.Index(out, "sorted by"); i < 0 || out[i:] != local[strings.Index(local, "sorted by"):] {
		t.Fatalf("the distributed sweep's table differs from the local one:\n%s\nlocal:\n%s", out, local)
	}
	// The killed worker's point was run again by the other, on a later delivery.
	again := regexp.MustCompile(`point started.*"key": "` + killed + `", "delivery": ([0-9]+)`).FindStringSubmatch(b.text())
	if again == nil || again[1] == "1" {
		t.Fatalf("point %s of the killed worker was not delivered again to the other:\n%s", killed, b.text())
	}
	for name, p := range map[string]*process{"a": a, "b": b} {
		if n := strings.Count(p.text(), `"file": "sample.tape"`); n > 1 {
			t.Fatalf("worker %s fetched the recording %d times:\n%s", name, n, p.text())
		}
	}
	if strings.Count(b.text(), `"file": "sample.tape"`) != 1 {
		t.Fatalf("worker b did not fetch the recording:\n%s", b.text())
	}
}

func TestWorkerUsageMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give --nats URL"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "extra"}, "unexpected argument"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--parallel", "-2"}, "--parallel"},
	} {
		code, _, errOut := runCLI(t, append([]string{"worker"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Fatalf("worker %v: code %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestSweepNeedsJetStream: a NATS server started without JetStream (a plain
// `nats-server`) answers a sweep's JetStream requests with "no responders"; the
// coordinator and the worker say that the server needs JetStream (-js) instead of
// leaving the user with "no responders available for request".
func TestSweepNeedsJetStream(t *testing.T) {
	url := natsbustest.StartServer(t, func(_ int, o *server.Options) { o.JetStream = false })
	for _, args := range [][]string{
		{"backtest", "--data", btSample, "--sweep", "half_spread=0.01:0.02:0.01", "--nats", url, btQuoter},
		{"worker", "--nats", url, "-q"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 1 || !strings.Contains(errOut, "JetStream does not answer on "+url) || !strings.Contains(errOut, "nats-server -js") {
			t.Errorf("%s on a server without JetStream: exit %d, stdout %q, stderr %q; want 1 and the -js hint", args[0], code, out, errOut)
		}
	}
}

// TestSweepCredentialsFromEnvironment: without --nats-creds, PITBOSS_NATS_USER and
// PITBOSS_NATS_PASSWORD (or _TOKEN) are the credentials for the server of --nats,
// as docs/backtests.md says — not only when PITBOSS_NATS_URL is set too.
func TestSweepCredentialsFromEnvironment(t *testing.T) {
	users := natsbustest.StartServer(t, func(_ int, o *server.Options) { o.Username, o.Password = "sweeper", "pass-for-the-test" })
	tokens := natsbustest.StartServer(t, func(_ int, o *server.Options) { o.Authorization = "token-for-the-test" })
	for _, tc := range []struct {
		url string
		env map[string]string
		ok  bool
	}{
		{users, map[string]string{natsbus.EnvUser: "sweeper", natsbus.EnvPassword: "pass-for-the-test"}, true},
		{users, nil, false},
		{users, map[string]string{natsbus.EnvUser: "sweeper", natsbus.EnvPassword: "wrong"}, false},
		{tokens, map[string]string{natsbus.EnvToken: "token-for-the-test"}, true},
	} {
		ep, err := natsEndpoint(stdio{getenv: func(k string) string { return tc.env[k] }}, tc.url, "")
		if err != nil {
			t.Fatalf("env %v: %v", tc.env, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		bus, err := natsbus.Connect(ctx, ep, natsbus.ConnectOptions{Name: "test"})
		cancel()
		if (err == nil) != tc.ok {
			t.Fatalf("connect to %s with %v: %v; want success %v", tc.url, ep, err, tc.ok)
		}
		if bus != nil {
			bus.Close()
		}
	}
}

// TestSweepCredentialsMistakes: a --nats-creds file that is missing, readable by
// others, or holds no server address without --nats is a usage error that names
// --nats-creds or --nats (not "--nats: natsbus: endpoint has no URL").
func TestSweepCredentialsMistakes(t *testing.T) {
	dir := t.TempDir()
	loose, creds := filepath.Join(dir, "loose.json"), filepath.Join(dir, "user.creds")
	if err := os.WriteFile(loose, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(creds, []byte("not checked before connecting"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats-creds", missing}, "--nats-creds " + missing + ": no such file or directory"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-creds", missing}, "--nats-creds " + missing + ": no such file"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-creds", loose}, "--nats-creds: secret file must not be accessible by group or others (chmod 600)"},
		{[]string{"--nats-creds", creds}, "give --nats URL: " + creds + " holds no server address"},
	} {
		for _, cmd := range [][]string{{"worker"}, {"backtest", "--data", btSample, "--sweep", "half_spread=0.01:0.02:0.01"}} {
			args := append(append(append([]string{}, cmd...), tc.args...), btQuoter)
			if cmd[0] == "worker" {
				args = args[:len(args)-1]
			}
			code, _, errOut := runCLI(t, args...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "natsbus") {
				t.Errorf("%v: exit %d, stderr %q; want 2 and %q", args, code, errOut, tc.want)
			}
		}
	}
}

// startNATS starts an embedded nats-server (loopback TCP, JetStream in dir), shut
// down at the end of the test — after the processes started later, since cleanups
// run last-in first-out.
func startNATS(t *testing.T, dir string) *natsbus.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// waitText polls p's output until ok holds or d passes.
func waitText(t *testing.T, p *process, what string, d time.Duration, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok(p.text()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s:\n%s", what, p.text())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestASweepWithoutWorkersSaysSo: a coordinator whose points no worker takes says
// so on stderr (how to start one) instead of waiting in silence; Ctrl-C then
// withdraws its points as usual. The server's URL carries a password, which the
// messages show redacted (as the one for a server without JetStream does).
func TestASweepWithoutWorkersSaysSo(t *testing.T) {
	defer func(d time.Duration) { noWorkerAfter = d }(noWorkerAfter)
	noWorkerAfter = 100 * time.Millisecond
	const pass = "pass-in-the-url"
	withJS := natsbustest.StartServer(t, func(_ int, o *server.Options) { o.Username, o.Password = "sweeper", pass })
	noJS := natsbustest.StartServer(t, func(_ int, o *server.Options) { o.Username, o.Password, o.JetStream = "sweeper", pass, false })
	secret := func(u string) (withPass, shown string) {
		host := strings.TrimPrefix(u, "nats://")
		return "nats://sweeper:" + pass + "@" + host, "nats://[redacted]@" + host
	}
	url, shown := secret(withJS)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errOut := &watchedWriter{want: "no pitboss worker takes the points", seen: cancel}
	var out strings.Builder
	code := runMain(ctx, []string{"backtest", "--data", btSample, "--sweep", "half_spread=0.01:0.02:0.01", "--nats", url, "-q", btQuoter},
		stdio{stdin: strings.NewReader(""), stdout: &out, stderr: errOut, getenv: func(string) string { return "" }})
	got := errOut.String()
	if code != 130 || !strings.Contains(got, "no pitboss worker takes the points on "+shown) || !strings.Contains(got, "pitboss worker --nats "+shown) {
		t.Fatalf("exit %d, stderr %q; want the hint, then 130 when interrupted", code, got)
	}
	url, shown = secret(noJS)
	code, _, errNoJS := runCLI(t, "backtest", "--data", btSample, "--sweep", "half_spread=0.01:0.02:0.01", "--nats", url, btQuoter)
	if code != 1 || !strings.Contains(errNoJS, "JetStream does not answer on "+shown) {
		t.Fatalf("without JetStream: exit %d, stderr %q", code, errNoJS)
	}
	if strings.Contains(got+errNoJS, pass) {
		t.Fatalf("a message shows the URL's password:\n%s\n%s", got, errNoJS)
	}
}

// watchedWriter is a stderr for a command run in the test's goroutines: it
// calls seen once what it collected contains want.
type watchedWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen func()
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.seen != nil && strings.Contains(w.b.String(), w.want) {
		w.seen()
		w.seen = nil
	}
	return len(p), nil
}

func (w *watchedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNewcomerWalkthrough (issue 15) is a newcomer following the README on a fresh
// machine: a fresh HOME (no keyring, no state, no wallet), the built binary, and the
// README's commands in the README's order — the agent's runs, the backtest, the
// local exchange session, a new agent with the commands it suggests, the example
// fleet and ctl — each run as written and asserted on its output. A command the
// README runs until Ctrl-C is started, watched until it shows what the README says,
// and interrupted with SIGINT; it must then exit 0.
//
// The only changes to the README's lines keep parallel test runs on a shared machine
// apart: fixed ports (the exchange's 8080, the metrics' 9464, the dashboard's 8740)
// become free ones — the exchange's through --addr and $PITBOSS_CLOB_URL, which the
// client commands read — and `| jq .` is replaced by parsing every line as JSON.
func TestNewcomerWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the README's commands")
	}
	w := &walk{t: t, top: t, bin: buildPitboss(t), root: repoRoot(t), env: map[string]string{
		"HOME":            t.TempDir(),
		"XDG_RUNTIME_DIR": t.TempDir(),
		"PATH":            os.Getenv("PATH"),
		"TMPDIR":          t.TempDir(),
	}}
	w.dir = w.root

	t.Run("run", w.runSection)
	t.Run("backtest", w.backtestSection)
	t.Run("exchange session", w.exchangeSection)
	t.Run("agent new and its hints", w.agentNewSection)
	t.Run("fleet and ctl", w.fleetSection)
}

// walk is the newcomer's shell: its environment (exports accumulate), its working
// directory and the binary standing for `pitboss` and `go run ./cmd/pitboss`.
type walk struct {
	t, top    *testing.T // the step's test, and the walkthrough's (its temporary directories last)
	bin, root string
	dir       string
	env       map[string]string
}

func repoRoot(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// steps returns the command lines of the README section that starts with heading
// (output samples left out: see readmeCommands), each as its words, `go run
// ./cmd/pitboss` and `pitboss` both as "pitboss".
func (w *walk) steps(heading string) [][]string {
	w.t.Helper()
	var out [][]string
	for _, line := range readmeCommands(w.t, heading) {
		// $(mktemp -d) before the words are split: it is one word of the shell's.
		line = strings.ReplaceAll(line, "$(mktemp -d)", w.top.TempDir())
		words := strings.Fields(line)
		if len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/pitboss" {
			words = append([]string{"pitboss"}, words[3:]...)
		}
		switch {
		case words[0] == "export":
		case words[0] == "pitboss" && len(words) > 1 && commands[words[1]].run != nil:
		default:
			continue // an output sample
		}
		out = append(out, words)
	}
	if len(out) == 0 {
		w.t.Fatalf("README section %q has no commands", heading)
	}
	return out
}

// expand evaluates $VAR of the shell's environment ($(mktemp -d) is steps').
func (w *walk) expand(words []string) []string {
	out := make([]string, 0, len(words))
	for _, wd := range words {
		if strings.Contains(wd, "$(") {
			w.t.Fatalf("README: a command substitution the walkthrough does not run: %s", wd)
		}
		wd = os.Expand(wd, func(k string) string { return w.env[k] })
		out = append(out, wd)
	}
	return out
}

func (w *walk) environ() []string {
	var env []string
	for k, v := range w.env {
		env = append(env, k+"="+v)
	}
	return env
}

func (w *walk) command(args []string) *exec.Cmd {
	cmd := exec.Command(w.bin, args[1:]...) // args[0] is "pitboss"
	cmd.Dir, cmd.Env = w.dir, w.environ()
	return cmd
}

// run runs a command to its end and returns its exit status and output.
func (w *walk) run(args []string) (code int, stdout, stderr string) {
	w.t.Helper()
	var out, errOut lockedBuffer
	cmd := w.command(args)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		w.t.Fatalf("%s did not end:\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// must runs a command that must succeed and returns its stdout.
func (w *walk) must(args []string) string {
	w.t.Helper()
	code, out, errOut := w.run(args)
	if code != 0 {
		w.t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// bg is a command the README leaves running (`&`, or until Ctrl-C).
type bg struct {
	w        *walk
	args     []string
	cmd      *exec.Cmd
	out, err lockedBuffer
	done     chan struct{}
}

func (w *walk) start(args []string) *bg {
	w.t.Helper()
	b := &bg{w: w, args: args, cmd: w.command(args), done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.err
	if err := b.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { _ = b.cmd.Wait(); close(b.done) }()
	w.t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = b.cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

// waitFor waits up to a minute until the command's stdout or stderr satisfies ok.
func (b *bg) waitFor(what string, ok func(stdout, stderr string) bool) {
	b.w.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok(b.out.String(), b.err.String()) {
		select {
		case <-b.done:
			b.w.t.Fatalf("%s exited (%d) before %s:\n%s%s", strings.Join(b.args, " "), b.cmd.ProcessState.ExitCode(), what, b.out.String(), b.err.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.w.t.Fatalf("%s: no %s within a minute:\n%s%s", strings.Join(b.args, " "), what, b.out.String(), b.err.String())
		}
	}
}

// interrupt is Ctrl-C: SIGINT, then the exit status (the command must end within
// 30 s).
func (b *bg) interrupt() int {
	b.w.t.Helper()
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
		b.w.t.Fatalf("%s did not stop on Ctrl-C:\n%s%s", strings.Join(b.args, " "), b.out.String(), b.err.String())
	}
	return b.cmd.ProcessState.ExitCode()
}

func (b *bg) stopOK() {
	b.w.t.Helper()
	if code := b.interrupt(); code != 0 {
		b.w.t.Fatalf("%s: exit %d after Ctrl-C:\n%s%s", strings.Join(b.args, " "), code, b.out.String(), b.err.String())
	}
}

// untilCtrlC reports whether the README's command runs until it is stopped.
func untilCtrlC(args []string) bool {
	switch args[1] {
	case "run":
		return !slicesContain(args, "--duration") && !slicesContain(args, "--events")
	case "watch", "supervise", "exchange":
		return true
	}
	return false
}

func slicesContain(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func expectIn(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(out, s) {
			t.Fatalf("%s: no %q in:\n%s", what, s, out)
		}
	}
}

func (w *walk) runSection(t *testing.T) {
	w.t = t
	var sims []string
	for _, args := range w.steps("## Run an agent: `pitboss run`") {
		line := strings.Join(args, " ")
		if i := slicesIndex(args, "|"); i >= 0 { // `| jq .`: every line must be JSON
			args = args[:i]
		}
		args = replaceArg(args, "127.0.0.1:9464", "127.0.0.1:0")
		switch {
		case slicesContain(args, "--log-format"):
			b := w.start(args)
			b.waitFor("an order record", func(out, _ string) bool { return strings.Contains(out, `"msg":"order"`) })
			b.stopOK()
			for _, l := range strings.Split(strings.TrimSpace(b.out.String()), "\n") {
				if !json.Valid([]byte(l)) {
					t.Fatalf("%s: a line jq would refuse: %q", line, l)
				}
			}
			expectIn(t, line+" (stderr)", b.err.String(), "metrics on http://127.0.0.1:", "summary: agent quoter")
		case untilCtrlC(args):
			b := w.start(args)
			b.waitFor("orders", func(out, _ string) bool { return strings.Contains(out, "order   place      synthetic-market-1/") })
			b.stopOK()
			expectIn(t, line, b.out.String(), "DRY RUN: orders go to a paper account", "first run with this state directory",
				"summary: agent quoter (dry run), run 1,", "open orders 0;")
		case slicesContain(args, "--clock"):
			// The README's promise: the same seed prints the same lines.
			out := w.must(args)
			expectIn(t, line, out, "fresh start", "[synthetic-market-1 YES ", "last event at 2025-01-01T01:59")
			sims = append(sims, agentLines(t, out))
			again := w.must(args)
			if agentLines(t, again) != sims[0] {
				t.Fatalf("%s printed other lines the second time:\n%s\n----\n%s", line, sims[0], agentLines(t, again))
			}
		default: // a bounded wall-clock run: it continues the first one's state
			out := w.must(args)
			expectIn(t, line, out, "continuing after run 1", "summary: agent quoter (dry run), run 2,")
		}
	}
	if len(sims) != 1 {
		t.Fatalf("the README's run section has %d deterministic runs; the walkthrough expects one", len(sims))
	}
}

func slicesIndex(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func replaceArg(args []string, old, new string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == old {
			out[i] = new
		}
	}
	return out
}

func (w *walk) backtestSection(t *testing.T) {
	w.t = t
	steps := w.steps("## Backtest it: `pitboss backtest`")
	for _, args := range steps {
		out := w.must(args)
		expectIn(t, strings.Join(args, " "), out, "quoter on agents/examples/testdata/sample.tape", "\npnl ", "sharpe / sortino")
	}
}

func (w *walk) exchangeSection(t *testing.T) {
	w.t = t
	var ex *bg
	var ran []string
	for _, args := range w.steps("## A local exchange: `pitboss exchange`") {
		line := strings.Join(args, " ")
		if args[0] == "export" {
			for _, kv := range w.expand(args[1:]) {
				k, v, _ := strings.Cut(kv, "=")
				w.env[k] = v
			}
			continue
		}
		args = w.expand(args)
		if args[len(args)-1] == "&" {
			args = args[:len(args)-1]
		}
		ran = append(ran, strings.Join(args[1:min(3, len(args))], " "))
		switch args[1] {
		case "exchange":
			// 8080 may be taken on a shared machine: a free block of ports, and
			// the client commands find it through $PITBOSS_CLOB_URL.
			p := freePortBlock(t)
			ex = w.start(append(args, "--addr", "127.0.0.1:"+strconv.Itoa(p)))
			ex.waitFor("the bridge service's URL", func(out, _ string) bool { return strings.Contains(out, "bridge service") })
			w.env[envCLOBURL] = "http://127.0.0.1:" + strconv.Itoa(p)
			expectIn(t, line, ex.out.String(), "CLOB service        http://127.0.0.1:"+strconv.Itoa(p), "data service")
		case "watch":
			b := w.start(args)
			b.waitFor("both books", func(out, _ string) bool {
				return strings.Contains(out, " BOOK     "+args[2]+" YES ") && strings.Contains(out, " BOOK     "+args[2]+" NO ")
			})
			b.stopOK()
		default:
			out := w.must(args)
			switch strings.Join(args[1:3], " ") {
			case "wallet new":
				expectIn(t, line, out, "address  0x", "wallet: file:demo")
			case "markets --search":
				expectIn(t, line, out, "fed-cuts-rates-in-june-2026")
			case "markets book":
				expectIn(t, line, out, "fed-cuts-rates-in-june-2026")
			case "order place":
				if !strings.Contains(out, "status    live") && !strings.Contains(out, "status    matched") {
					t.Fatalf("%s:\n%s", line, out)
				}
			case "order list":
				expectIn(t, line, out, "fed-cuts-rates-in-june-2026")
			}
		}
	}
	want := "exchange --ephemeral,wallet new,keys create,markets --search,markets book,order place,order list,watch fed-cuts-rates-in-june-2026,order cancel"
	if got := strings.Join(ran, ","); got != want {
		t.Fatalf("the README's session ran %s, want %s", got, want)
	}
	if ex == nil {
		t.Fatal("no exchange was started")
	}
	ex.stopOK()
	delete(w.env, envCLOBURL)
}

var hintRE = regexp.MustCompile(`(?m)^  (pitboss \S.*?)(?:\s+#.*)?$`)

func (w *walk) agentNewSection(t *testing.T) {
	w.t = t
	steps := w.steps("## Your own agent: `pitboss agent new`")
	if len(steps) != 1 || steps[0][1] != "agent" {
		t.Fatalf("the README's agent section runs %v; the walkthrough expects one 'pitboss agent new'", steps)
	}
	w.dir = t.TempDir() // where the newcomer keeps their bots
	defer func() { w.dir = w.root }()
	out := w.must(steps[0])
	// A fresh HOME has no D-Bus session: the wallet goes to the file store.
	expectIn(t, "agent new", out, "created  my-bot/agent.yaml", "wallet   file:pitboss-my-bot", "dry run  yes", "check    ok")
	hints := hintRE.FindAllStringSubmatch(out, -1)
	var ran []string
	for _, h := range hints {
		args := strings.Fields(h[1])
		ran = append(ran, args[1])
		if untilCtrlC(args) {
			b := w.start(args)
			b.waitFor("orders", func(out, _ string) bool { return strings.Contains(out, "order   place") })
			b.stopOK()
			continue
		}
		// The exchange section exported the file store's passphrase and home, as
		// the hint says wallet new needs.
		w.must(args)
	}
	if strings.Join(ran, ",") != "run,backtest,wallet" {
		t.Fatalf("agent new suggested %v:\n%s", ran, out)
	}
}

func (w *walk) fleetSection(t *testing.T) {
	w.t = t
	var sup *bg
	var ran []string
	for _, args := range w.steps("## Run a fleet: `pitboss supervise` and `pitboss ctl`") {
		line := strings.Join(args, " ")
		if args[len(args)-1] == "&" {
			args = args[:len(args)-1]
		}
		ran = append(ran, args[1])
		switch args[1] {
		case "check":
			expectIn(t, line, w.must(args), "agents/examples/fleet.yaml: ok (fleet examples: 2 agent(s): quoter (dry run), meanrev (dry run))")
		case "supervise":
			// The dashboard's 8740 may be taken on a shared machine.
			sup = w.start(append([]string{"pitboss", "supervise", "--http-addr", "127.0.0.1:0"}, args[2:]...))
			sup.waitFor("both agents started", func(out, errOut string) bool {
				s := out + errOut
				return strings.Contains(s, `"agent": "quoter", "from": "unknown", "to": "alive"`) &&
					strings.Contains(s, `"agent": "meanrev", "from": "unknown", "to": "alive"`)
			})
		case "ctl":
			if sup == nil {
				t.Fatalf("%s before the supervisor", line)
			}
			out := w.must(args)
			switch args[2] {
			case "list":
				// An agent heartbeats "starting" until its start-up (the checkpoint
				// stored on disk and in the fleet's bucket) is done: a reader who
				// lists again a moment later sees it running.
				for deadline := time.Now().Add(20 * time.Second); ; out = w.must(args) {
					missing := ""
					for _, re := range []string{`(?m)^meanrev +running +running .*dry-run +synthetic-market-1`, `(?m)^quoter +running +running .*dry-run +synthetic-market-1 `,
						`2 agent\(s\), 1 supervisor\(s\)`} {
						if !regexp.MustCompile(re).MatchString(out) {
							missing = re
						}
					}
					if missing == "" {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: no %s in:\n%s", line, missing, out)
					}
					time.Sleep(250 * time.Millisecond)
				}
			case "pause":
				expectIn(t, line, out, "paused")
			case "resume":
				expectIn(t, line, out, "running")
			}
		default:
			t.Fatalf("the walkthrough does not know the README's %q", line)
		}
	}
	if strings.Join(ran, ",") != "check,supervise,ctl,ctl,ctl" {
		t.Fatalf("the README's fleet section ran %v", ran)
	}
	sup.stopOK()
}

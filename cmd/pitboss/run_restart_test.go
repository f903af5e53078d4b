//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/runtime/agent"
)

// process is the binary (`pitboss run` with JSON logs, `pitboss supervise`) running
// as a child process.
type process struct {
	t   *testing.T
	cmd *exec.Cmd
	out lockedBuffer // the child's stdout and stderr
}

// startProcess starts bin with args and env, its stdout and stderr both in p.out; at
// the end of the test, stop ends it if it is still running (stop must reap it).
func startProcess(t *testing.T, bin string, env []string, stop func(*process), args ...string) *process {
	t.Helper()
	p := &process{t: t, cmd: exec.Command(bin, args...)}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			stop(p)
		}
	})
	return p
}

// startRun is startAgent with this process's environment and XDG_RUNTIME_DIR set to
// runtimeDir.
func startRun(t *testing.T, bin, runtimeDir string, args ...string) *process {
	t.Helper()
	return startAgent(t, bin, append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir), args...)
}

func (p *process) text() string {
	return p.out.String()
}

// logs returns the JSON log records with message msg.
func (p *process) logs(msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.text()))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

func (p *process) wait() int {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		p.t.Fatalf("pitboss run did not end:\n%s", p.text())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *process) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	p.cmd.Wait()
}

// checkpoint reads the agent's checkpoint, or nil.
func checkpoint(t *testing.T, dir string) *agent.Checkpoint {
	s, err := agent.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func waitCheckpoint(t *testing.T, p *process, dir, what string, ok func(c *agent.Checkpoint) bool) *agent.Checkpoint {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c := checkpoint(t, dir); c != nil && ok(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint with %s:\n%s", what, p.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRestartAfterSIGKILL kills `pitboss run` with SIGKILL and starts it again on the
// same state directory.
//
// restartDuplicatesNothing kills `pitboss run` with SIGKILL while it
// trades and starts it again on the same state directory: the paper account, the
// positions with their cost basis and the open orders come back, the open orders are
// adopted under their quote keys (no second order for a quote), and no unknown
// order has to be cancelled.
func TestRestartAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildPitboss(t)
	t.Run("nothing is duplicated", func(t *testing.T) { restartDuplicatesNothing(t, bin) })
	t.Run("the kill switch stays tripped", func(t *testing.T) { restartKeepsTheKillSwitch(t, bin) })
}

func restartDuplicatesNothing(t *testing.T, bin string) {
	rt, state := t.TempDir(), t.TempDir()
	path := agentFile(t, "restarter", "")
	first := startRun(t, bin, rt, "--clock", "wall", "--speed", "100", "--state-dir", state, path)
	waitCheckpoint(t, first, state, "a position and open orders", func(c *agent.Checkpoint) bool {
		held := false
		for _, p := range c.Positions {
			held = held || p.Size > 0
		}
		return held && len(c.Orders) > 0
	})
	first.kill()
	before := checkpoint(t, state) // the last one written before the kill

	second := startRun(t, bin, rt, "--clock", "wall", "--speed", "100", "--events", "1", "--leave-orders", "--state-dir", state, path)
	if code := second.wait(); code != 0 {
		t.Fatalf("restart exited %d:\n%s", code, second.text())
	}
	started := second.logs("started")
	if len(started) != 1 {
		t.Fatalf("no start line:\n%s", second.text())
	}
	st := started[0]
	if st["run"] != float64(before.Runs+1) || st["adopted_orders"] != float64(len(before.Orders)) || st["cancelled_orders"] != float64(0) {
		t.Fatalf("start: %v; want run %d, %d orders adopted, none cancelled", st, before.Runs+1, len(before.Orders))
	}
	after := checkpoint(t, state)
	keys := map[string]int{}
	for _, o := range after.Orders {
		keys[o.Key]++
		if o.Client>>32 != before.Runs && o.Client>>32 != after.Runs {
			t.Fatalf("order %s has client id %d of neither run", o.ID, o.Client)
		}
	}
	for k, n := range keys {
		if n > 1 {
			t.Fatalf("quote %s has %d open orders after the restart: %v", k, n, after.Orders)
		}
	}
	// The positions came back with their cost basis (one event may have filled a
	// little more, never less).
	for _, p := range before.Positions {
		found := false
		for _, q := range after.Positions {
			if q.Token == p.Token {
				found = true
				if q.Realized != p.Realized && q.Size == p.Size {
					t.Fatalf("position %s: realized %s became %s without a fill", p.Token, amount(p.Realized), amount(q.Realized))
				}
			}
		}
		if !found && p.Size > 0 {
			t.Fatalf("position %s lost in the restart", p.Token)
		}
	}
}

// restartKeepsTheKillSwitch trips the kill switch, kills the process
// and restarts it: it comes back halted and places nothing.
func restartKeepsTheKillSwitch(t *testing.T, bin string) {
	rt, state := t.TempDir(), t.TempDir()
	path := agentFile(t, "tripper", "  max_drawdown: 0.05\n")
	first := startRun(t, bin, rt, "--clock", "wall", "--speed", "100", "--state-dir", state, path)
	waitCheckpoint(t, first, state, "a tripped kill switch", tripped)
	first.kill()

	second := startRun(t, bin, rt, "--clock", "wall", "--speed", "100", "--events", "300", "--state-dir", state, path)
	if code := second.wait(); code != 0 {
		t.Fatalf("restart exited %d:\n%s", code, second.text())
	}
	started := second.logs("started")
	if len(started) != 1 || started[0]["halted"] == nil {
		t.Fatalf("the restart is not halted:\n%s", second.text())
	}
	for _, o := range second.logs("order") {
		switch o["op"] {
		case "place", "replace", "take":
			t.Fatalf("an order opened after the restart: %v", o)
		}
	}
	if !strings.Contains(second.text(), "kill switch tripped: drawdown") {
		t.Fatalf("the summary does not say the switch is tripped:\n%s", second.text())
	}
	if c := checkpoint(t, state); !tripped(c) {
		t.Fatalf("the checkpoint lost the trip: %s", c.Kill)
	}
}

// tripped reports whether a checkpoint holds a tripped kill switch.
func tripped(c *agent.Checkpoint) bool {
	var k struct {
		Tripped bool `json:"tripped"`
	}
	return json.Unmarshal(c.Kill, &k) == nil && k.Tripped
}

// amount formats an amount for messages.
func amount(a agent.Amount) string { b, _ := a.MarshalText(); return string(b) }

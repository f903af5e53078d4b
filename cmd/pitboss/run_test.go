package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const quoterAgent = "../../agents/examples/quoter/agent.yaml"

// agentFile writes an agent file for the example quoter strategy with the guard
// settings given, and returns its path.
func agentFile(t *testing.T, name, guards string) string {
	t.Helper()
	strat, err := filepath.Abs("../../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := `name: ` + name + `
wallet: keyring:pitboss-test-` + name + `
markets:
  select: accepting_orders && active
  limit: 1
strategy:
  file: ` + strat + `
state_dir: state
guards:
  max_order_size: 25
  max_order_notional: 15
  max_open_orders: 6
  max_orders_per_minute: 600
` + guards
	path := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runEnv runs pitboss with XDG_RUNTIME_DIR in a temporary directory (wallet locks).
func runEnv(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	rt := t.TempDir()
	var out, errb strings.Builder
	code := runMain(t.Context(), args, stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return rt
			}
			return ""
		}})
	return code, out.String(), errb.String()
}

func TestRunDryRunOnTheEmbeddedVenue(t *testing.T) {
	code, out, errOut := runEnv(t, "run", "--clock", "sim", "--duration", "30m", "--state-dir", t.TempDir(), quoterAgent)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"DRY RUN: orders go to a paper account",
		"paper address of keyring:pitboss-quoter",
		"started",
		"order   place",
		"fill    ",
		"status  running",
		"summary: agent quoter (dry run), run 1",
		"state stopped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
	// Stopping cancels the agent's orders.
	if !regexp.MustCompile(`open orders 0;`).MatchString(out) {
		t.Fatalf("orders left open:\n%s", out[strings.Index(out, "summary:"):])
	}
}

func TestRunWritesJSONLogsWithLogFormatJSON(t *testing.T) {
	code, out, errOut := runEnv(t, "run", "--clock", "sim", "--duration", "1m", "--log-format", "json", "--state-dir", t.TempDir(), quoterAgent)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		if rec["msg"] == "order" {
			n++
			if _, ok := rec["t"].(float64); !ok {
				t.Fatalf("order line without event time: %q", line)
			}
		}
	}
	if n == 0 {
		t.Fatal("no order lines")
	}
}

func TestRunRefusesToGoLiveWithoutBothConfirmations(t *testing.T) {
	liveFile := agentFile(t, "livequoter", "")
	b, _ := os.ReadFile(liveFile)
	os.WriteFile(liveFile, append(b, []byte("dry_run: false\n")...), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"dry_run: false without --live", []string{"run", "--clock", "sim", liveFile}, "--live was not given: refusing to trade live"},
		{"--live on a dry-run file", []string{"run", "--live", "--clock", "sim", quoterAgent}, "set dry_run: false in the file to go live"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runEnv(t, tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q, stdout %q", code, errOut, out)
			}
			if strings.Contains(out, "order ") {
				t.Fatal("orders before the refusal")
			}
		})
	}
	t.Run("both confirmations: live on the embedded venue", func(t *testing.T) {
		code, out, errOut := runEnv(t, "run", "--live", "--clock", "sim", "--duration", "1m", "--state-dir", t.TempDir(), liveFile)
		if code != 0 || !strings.Contains(out, "LIVE on the embedded venue") || !strings.Contains(out, "(live)") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
	})
}

func TestRunKillSwitchFlattensAndHalts(t *testing.T) {
	// A drawdown limit of 0.05 trips soon after the first position moves against the
	// quoter; flatten_on_halt sells what it holds.
	path := agentFile(t, "killed", "  max_drawdown: 0.05\n  flatten_on_halt: true\n")
	stateDir := t.TempDir()
	code, out, errOut := runEnv(t, "run", "--clock", "sim", "--duration", "20m", "--state-dir", stateDir, path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	defer checkResumeAfterKill(t, path, stateDir)
	trip := strings.Index(out, "kill switch tripped")
	if trip < 0 {
		t.Fatalf("the kill switch never tripped:\n%s", out)
	}
	after := out[trip:]
	for _, line := range strings.Split(after, "\n") {
		if strings.Contains(line, "order   place") || strings.Contains(line, "order   replace") || strings.Contains(line, "order   take") {
			t.Fatalf("an order opened after the trip: %q", line)
		}
	}
	if !strings.Contains(after, "order   flatten") || !strings.Contains(after, "flat ") && !strings.Contains(after, " flat") {
		t.Fatalf("no flattening after the trip:\n%s", after)
	}
	sum := out[strings.Index(out, "summary:"):]
	if !strings.Contains(sum, "kill switch tripped: drawdown") {
		t.Fatalf("not halted:\n%s", sum)
	}
	for _, line := range strings.Split(sum, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "position ") && !strings.Contains(line, ": 0 @") {
			t.Fatalf("a position is left after flattening: %q", line)
		}
	}
}

// checkResumeAfterKill restarts a killed agent: without --resume-after-kill it stays
// halted and places nothing (the summary says how to clear it); with it, the switch
// is cleared before any event, the audit trail says so with the operator's reason,
// and the agent quotes again.
func checkResumeAfterKill(t *testing.T, path, stateDir string) {
	t.Helper()
	code, out, errOut := runEnv(t, "run", "--clock", "sim", "--duration", "2m", "--state-dir", stateDir, path)
	if code != 0 {
		t.Fatalf("restart: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "order   place") || !strings.Contains(out, "kill switch tripped: drawdown") ||
		!strings.Contains(out, "--resume-after-kill") {
		t.Fatalf("a restart without --resume-after-kill must stay halted and say how to clear it:\n%s", out)
	}
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	code, out, errOut = runEnv(t, "run", "--clock", "sim", "--duration", "2m", "--state-dir", stateDir,
		"--audit", audit, "--resume-after-kill", "drawdown reviewed by the operator", path)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "kill switch cleared") || !strings.Contains(out, "order   place") {
		t.Fatalf("--resume-after-kill did not re-arm the agent:\n%s", out)
	}
	b, err := os.ReadFile(audit)
	if err != nil || !strings.Contains(string(b), "drawdown reviewed by the operator") {
		t.Fatalf("the audit trail lacks the operator's reason (%v):\n%s", err, b)
	}
	// Not tripped: nothing to clear, and the run goes on.
	code, out, errOut = runEnv(t, "run", "--clock", "sim", "--duration", "1m", "--state-dir", t.TempDir(),
		"--resume-after-kill", "again", quoterAgent)
	if code != 0 || !strings.Contains(out+errOut, "not tripped") {
		t.Fatalf("resume of an agent that is not halted: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "name one agent file"},
		{[]string{"run", "--clock", "fast", quoterAgent}, "--clock must be wall or sim"},
		{[]string{"run", "--balance", "-5", quoterAgent}, "--balance must be a positive decimal"},
		{[]string{"run", "--log-format", "xml", quoterAgent}, "--log-format must be text or json"},
		{[]string{"run", "--supervised", "--resume-after-kill", "x", quoterAgent}, "pitboss ctl resume-after-kill"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := runEnv(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
		})
	}
	code, _, errOut := runEnv(t, "run", "no-such-file.yaml")
	if code != 1 || !strings.Contains(errOut, "no-such-file.yaml") {
		t.Fatalf("missing file: exit %d, %q", code, errOut)
	}
}

func TestRunAuditsEveryDecisionOrderAndFill(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	code, out, errOut := runEnv(t, "run", "--clock", "sim", "--duration", "30m", "--audit", audit, "--state-dir", t.TempDir(), quoterAgent)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(audit); fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit file mode %o", fi.Mode().Perm())
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		kinds[rec["kind"].(string)]++
	}
	if kinds["decision"] == 0 || kinds["order"] == 0 || kinds["fill"] == 0 || kinds["dropped"] != 0 {
		t.Fatalf("audit kinds %v", kinds)
	}
	// Every fill the summary counts is in the audit.
	if !strings.Contains(out, fmt.Sprintf("fills %d\n", kinds["fill"])) {
		t.Fatalf("summary and audit disagree on fills (%d):\n%s", kinds["fill"], out[strings.Index(out, "summary:"):])
	}
}

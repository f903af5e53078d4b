package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Tests of what `pitboss run` keeps between runs and what it prints (issue 15,
// items 1, 3, 5, 7 and 12). Each runs the binary's command line in-process on the
// embedded venue with the simulated clock, with a private HOME.

// runHome runs pitboss with HOME (so the agent files' default state directories)
// and XDG_RUNTIME_DIR in temporary directories of the test.
func runHome(t *testing.T, home string, args ...string) (int, string, string) {
	t.Helper()
	rt := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_RUNTIME_DIR": rt}
	var out, errb strings.Builder
	code := runMain(t.Context(), args, stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] }})
	return code, out.String(), errb.String()
}

// copyQuoter copies the example quoter (agent and strategy, name unchanged) into
// dir and returns the agent file's path.
func copyQuoter(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"agent.yaml", "strategy.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../agents/examples/quoter", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "agent.yaml")
}

// agentLines returns the agent's own lines of a run's output: from the "started"
// line to the summary, without it.
func agentLines(t *testing.T, out string) string {
	t.Helper()
	i, j := strings.Index(out, " started "), strings.Index(out, "\nsummary:")
	if i < 0 || j < i {
		t.Fatalf("no agent lines in:\n%s", out)
	}
	return out[strings.LastIndex(out[:i], "\n")+1 : j]
}

// TestCopiedAgentDoesNotShareState (item 1): a copied agent directory that kept
// the name has its own state; the original's is untouched.
func TestCopiedAgentDoesNotShareState(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	orig := copyQuoter(t, filepath.Join(dir, "quoter"))
	cp := copyQuoter(t, filepath.Join(dir, "quoter-copy"))
	if code, out, errOut := runHome(t, home, "run", "--clock", "sim", "--duration", "10m", orig); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runHome(t, home, "run", "--clock", "sim", "--duration", "10m", cp)
	if code != 0 || !strings.Contains(out, "summary: agent quoter (dry run), run 1,") || !strings.Contains(out, "first run with this state directory") {
		t.Fatalf("the copy continued the original's state: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runHome(t, home, "run", "--clock", "sim", "--duration", "10m", orig)
	if code != 0 || !strings.Contains(out, "summary: agent quoter (dry run), run 2,") {
		t.Fatalf("the original lost its state:\n%s", out)
	}
}

// TestStrategyFailureIsClearedAndExitsNonZero (item 1): a run whose strategy
// fails exits 1 and says how to clear it; fixing the file alone leaves it failed
// (and --resume-after-kill says it is the wrong switch); --clear-failure clears it
// and the agent trades again.
func TestStrategyFailureIsClearedAndExitsNonZero(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	path := copyQuoter(t, dir)
	good, _ := os.ReadFile(filepath.Join(dir, "strategy.yaml"))
	bad := strings.Replace(string(good), "    price: bid_px\n", "    price: \"[bid_px][int(size)]\"\n", 1)
	if bad == string(good) {
		t.Fatal("could not plant the failing expression")
	}
	os.WriteFile(filepath.Join(dir, "strategy.yaml"), []byte(bad), 0o644)
	code, out, errOut := runHome(t, home, "run", "--clock", "sim", "--duration", "5m", path)
	if code != 1 || !strings.Contains(out, "strategy failed") || !strings.Contains(errOut, "pitboss run --clear-failure "+path) {
		t.Fatalf("a failed run: exit %d (want 1)\n%s\nstderr:\n%s", code, out, errOut)
	}
	os.WriteFile(filepath.Join(dir, "strategy.yaml"), good, 0o644)
	code, out, errOut = runHome(t, home, "run", "--clock", "sim", "--duration", "5m", "--resume-after-kill", "fixed", path)
	if code != 1 || strings.Contains(out, "order   place") || !strings.Contains(out, "clear the failure instead") {
		t.Fatalf("fixed file, no --clear-failure: exit %d (want 1, still failed, no orders)\n%s\n%s", code, out, errOut)
	}
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	code, out, errOut = runHome(t, home, "run", "--clock", "sim", "--duration", "5m", "--clear-failure", "--audit", audit, path)
	if code != 0 || !strings.Contains(out, "failure cleared") || !strings.Contains(out, "order   place") {
		t.Fatalf("--clear-failure: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(audit); !strings.Contains(string(b), "clear_failure") {
		t.Fatalf("the audit trail does not record the clearing:\n%s", b)
	}
}

// TestSimRunsRepeatAndFreshStartsOver (item 3): the README's deterministic run
// prints the same lines each time with --fresh, starting at 2025-01-01 as the docs
// say; without it a second run says what it continues from.
func TestSimRunsRepeatAndFreshStartsOver(t *testing.T) {
	home := t.TempDir()
	args := []string{"run", "--clock", "sim", "--duration", "30m", "--seed", "7", "--fresh", quoterAgent}
	_, first, _ := runHome(t, home, args...)
	code, second, errOut := runHome(t, home, args...)
	if code != 0 || agentLines(t, first) != agentLines(t, second) {
		t.Fatalf("two --fresh runs differ (exit %d, %s):\n%s\n----\n%s", code, errOut, first, second)
	}
	if !strings.Contains(second, "fresh start: the previous state is kept as ") || !strings.Contains(second, "run 1,") {
		t.Fatalf("the second --fresh run does not say it started over:\n%s", second)
	}
	if !strings.Contains(first, "  [synthetic-market-1 YES 10 @0.72]  ") { // item 7: positions by slug and outcome
		t.Fatalf("the status line does not name the position by slug and outcome:\n%s", first)
	}
	if !strings.Contains(first, "\n00:00:00.000 order ") || !strings.Contains(first, "last event at 2025-01-01T00:") {
		t.Fatalf("the simulated clock does not start at 2025-01-01 00:00:\n%s", first)
	}
	_, third, _ := runHome(t, home, append(args[:len(args)-2:len(args)-2], quoterAgent)...)
	if !strings.Contains(third, "continuing after run 1 (last event 2025-01-01T00:29") || !strings.Contains(third, "run 2,") {
		t.Fatalf("a run without --fresh does not say what it continues from:\n%s", third)
	}
}

// TestJSONLogsArePureJSON (item 5): with --log-format json stdout is one JSON
// object per line (for jq); the header and summary are on stderr; positions are
// structured, with the market's slug and the outcome.
func TestJSONLogsArePureJSON(t *testing.T) {
	code, out, errOut := runHome(t, t.TempDir(), "run", "--clock", "sim", "--duration", "30m", "--seed", "7", "--log-format", "json", quoterAgent)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var positions []any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("stdout has a line that is not JSON: %q", line)
		}
		if p, ok := rec["positions"].([]any); ok && len(p) > 0 {
			positions = p
		}
	}
	if !strings.Contains(errOut, "pitboss run: agent quoter") || !strings.Contains(errOut, "summary: agent quoter") {
		t.Fatalf("the header and summary are not on stderr:\n%s", errOut)
	}
	if len(positions) == 0 {
		t.Fatal("no status record with positions")
	}
	p, ok := positions[0].(map[string]any)
	if !ok || p["market"] != "synthetic-market-1" || (p["outcome"] != "YES" && p["outcome"] != "NO") || p["size"] == nil ||
		p["avg_price"] == nil || len(p["token"].(string)) < 20 {
		t.Fatalf("positions are not structured: %v", positions)
	}
}

// TestRunOutputNamesMarketsAndIsQuiet (items 7 and 12): the agent's lines name
// markets by slug and YES/NO, never by truncated ids; status lines come when
// positions change (or every 5 minutes), not every 10 seconds.
func TestRunOutputNamesMarketsAndIsQuiet(t *testing.T) {
	path := agentFile(t, "labels", "  max_drawdown: 0.05\n  flatten_on_halt: true\n  price_band: 0.02\n")
	code, out, errOut := runHome(t, t.TempDir(), "run", "--clock", "sim", "--duration", "2h", "--seed", "7", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	lines := agentLines(t, out)
	for _, want := range []string{`flatten +market=synthetic-market-1 why=kill switch`,
		`order   flatten    flatten/synthetic-market-1 (YES|NO) SELL`, `flat +market=synthetic-market-1`, `deny    synthetic-market-1/`} {
		if !regexp.MustCompile(want).MatchString(lines) {
			t.Errorf("no %q in the output", want)
		}
	}
	id := regexp.MustCompile(`…|0x[0-9a-f]{16,}|[0-9]{16,}`)
	for _, line := range strings.Split(lines, "\n") {
		if strings.Contains(line, " started ") {
			continue // the wallet's address
		}
		if id.MatchString(line) {
			t.Errorf("a market shown by id: %q", line)
		}
		if strings.Contains(line, " deny ") && !strings.Contains(line, " YES ") && !strings.Contains(line, " NO ") {
			t.Errorf("a denial without its outcome: %q", line)
		}
	}
	if n := strings.Count(lines, " status  "); n > 40 {
		t.Errorf("%d status lines in 2 h of market (one per 10 s was 720)", n)
	}
	if t.Failed() {
		t.Log(out)
	}
}

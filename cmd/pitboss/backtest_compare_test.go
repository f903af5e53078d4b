package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBacktestSaveAndCompare saves two runs of the quoter on the sample — as it
// is, and with a daily loss limit its crash trips — under $XDG_DATA_HOME, then
// compares them by name (text and HTML): the guard that differs is marked, the
// kill-switch trips differ by one, and the saved files are where the docs say.
func TestBacktestSaveAndCompare(t *testing.T) {
	dataHome := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": dataHome}
	raw, err := os.ReadFile(btQuoter)
	if err != nil {
		t.Fatal(err)
	}
	strat, _ := filepath.Abs(filepath.Join(filepath.Dir(btQuoter), "strategy.yaml"))
	tight := filepath.Join(t.TempDir(), "agent.yaml")
	s := strings.Replace(strings.Replace(string(raw), "max_daily_loss: 25", "max_daily_loss: 10", 1), "file: strategy.yaml", "file: "+strat, 1)
	if err := os.WriteFile(tight, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, run := range []struct{ name, agent string }{{"wide", btQuoter}, {"tight", tight}} {
		code, out, errOut := runCLIEnv(t, env, "backtest", "--data", btSample, "--save", run.name, run.agent)
		saved := filepath.Join(dataHome, "pitboss", "backtests", run.name+".json")
		if code != 0 || !strings.Contains(out, "saved ("+run.name+") report: "+saved) {
			t.Fatalf("save %s: code %d\n%s%s", run.name, code, out, errOut)
		}
	}
	code, out, errOut := runCLIEnv(t, env, "backtest", "compare")
	if code != 0 || !strings.Contains(out, "  tight\n  wide\n") {
		t.Fatalf("list: %d %s%s", code, out, errOut)
	}
	page := filepath.Join(t.TempDir(), "c.html")
	code, out, errOut = runCLIEnv(t, env, "backtest", "compare", "--html", page, "wide", "tight")
	if code != 0 {
		t.Fatalf("compare: %d %s%s", code, out, errOut)
	}
	for _, want := range []string{"  A  wide: quoter on", "* guards.max_daily_loss", "kill-switch trips", "html comparison: " + page} {
		if !strings.Contains(out, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "kill-switch trips") && !strings.HasSuffix(strings.TrimSpace(line), "+1") {
			t.Errorf("kill-switch trips: %q", line)
		}
	}
	if b, err := os.ReadFile(page); err != nil || strings.Count(string(b), `class="run-line run-`) != 2 {
		t.Errorf("html comparison: %v", err)
	}
	for _, bad := range [][]string{{"compare", "wide"}, {"compare", "wide", "../x"}, {"compare", "wide", "nosuch"}, {"--save", "a/b", "--data", btSample, btQuoter}} {
		if code, _, _ := runCLIEnv(t, env, append([]string{"backtest"}, bad...)...); code == 0 {
			t.Errorf("backtest %v succeeded", bad)
		}
	}
}

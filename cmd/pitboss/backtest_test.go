package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/runtime/backtest"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

const (
	btSample = "../../" + backtest.SamplePath
	btQuoter = "../../agents/examples/quoter/agent.yaml"
)

// TestBacktestTheSampleWithNoNetwork is the newcomer's first backtest: the bundled
// recording, an example agent, a text report and the HTML and CSV files.
func TestBacktestTheSampleWithNoNetwork(t *testing.T) {
	dir := t.TempDir()
	html, csv, js := filepath.Join(dir, "r.html"), filepath.Join(dir, "f.csv"), filepath.Join(dir, "r.json")
	code, out, errOut := runCLI(t, "backtest", "--data", btSample, "--html", html, "--csv", csv, "--out", js, btQuoter)
	if code != 0 {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	for _, want := range []string{"quoter on ", "pnl", "sharpe / sortino", "max drawdown", "fills", "html report: " + html} {
		if !strings.Contains(out, want) {
			t.Errorf("the text report lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr (no terminal, so no progress bar): %q", errOut)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), `<svg id="equity"`) {
		t.Fatalf("html: %v", err)
	}
	rows, err := os.ReadFile(csv)
	if err != nil || !strings.HasPrefix(string(rows), strings.Join(report.FillsHeader, ",")+"\n") {
		t.Fatalf("csv: %v %q", err, rows)
	}
	var r report.Report
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &r) != nil || r.Run.Agent != "quoter" {
		t.Fatalf("json report: %v", err)
	}
}

func TestBacktestJSONIsTheReportAndIsStable(t *testing.T) {
	args := []string{"backtest", "--json", "--data", btSample, "--latency", "200ms", "--fee-bps", "100",
		"--from", "2023-11-14T23:00:00Z", "--to", "1700010000000", btQuoter}
	code1, out1, err1 := runCLI(t, args...)
	code2, out2, _ := runCLI(t, args...)
	if code1 != 0 || code2 != 0 {
		t.Fatalf("codes %d %d: %s", code1, code2, err1)
	}
	if out1 != out2 {
		t.Fatal("two identical backtests printed different JSON")
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out1), &r); err != nil {
		t.Fatal(err)
	}
	if r.Run.LatencyMs != 200 || r.Run.From != 1_700_002_800_000 || r.Run.To != 1_700_010_000_000 {
		t.Fatalf("run %+v", r.Run)
	}
}

func TestBacktestSweepPrintsATable(t *testing.T) {
	code, out, errOut := runCLI(t, "backtest", "--data", btSample, "--to", "1700003600000",
		"--sweep", "half_spread=0.01:0.03:0.01", "--metric", "sharpe", "--top", "2", btQuoter)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "sorted by sharpe") || !strings.Contains(lines[1], "half_spread") {
		t.Fatalf("table:\n%s", out)
	}
	// The table is the same whatever the runs at once (--parallel, or its older
	// name --workers).
	var tables []string
	for _, par := range [][]string{nil, {"--parallel", "1"}, {"--parallel", "3"}, {"--workers", "2"}} {
		args := append([]string{"backtest", "--json", "--data", btSample, "--to", "1700003600000", "--sweep", "size=5:10:5"}, par...)
		code, out, _ = runCLI(t, append(args, btQuoter)...)
		var res backtest.SweepResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Rows) != 2 {
			t.Fatalf("%v: code %d, json %s", par, code, out)
		}
		tables = append(tables, out)
	}
	for i := range tables {
		if tables[i] != tables[0] {
			t.Fatalf("the sweep's table depends on --parallel:\n%s\n%s", tables[0], tables[i])
		}
	}
}

// A sweep that measured nothing — every point failed — prints its table (each
// row's failure after its values, without widening the columns) and exits 1, so
// that a script does not take it for a result; with --json the same.
func TestSweepWhoseEveryPointFailedExits1(t *testing.T) {
	for _, format := range [][]string{nil, {"--json"}} {
		args := append([]string{"backtest", "--data", btSample, "--from", "1800000000000", "--sweep", "size=5:10:5"}, format...)
		code, out, errOut := runCLI(t, append(args, btQuoter)...)
		if code != 1 || !strings.Contains(errOut, "every point of the sweep failed (the first: backtest: --to") {
			t.Fatalf("%v: code %d, stderr %q", format, code, errOut)
		}
		if format != nil {
			var res backtest.SweepResult
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Rows) != 2 || res.Rows[1].Err == "" {
				t.Fatalf("json %v: %s", err, out)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 4 || !strings.Contains(lines[3], "10  failed: backtest: --to") {
			t.Fatalf("table:\n%s", out)
		}
		if h := lines[1]; !strings.HasPrefix(strings.TrimSpace(h), "#  size  pnl") {
			t.Fatalf("the failures widened the columns:\n%s", out)
		}
	}
}

func TestBacktestOnSyntheticFlow(t *testing.T) {
	code, out, errOut := runCLI(t, "backtest", "--sim", "3", "--duration", "30m", "--sim-markets", "1", "--json", btQuoter)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || !strings.HasPrefix(r.Run.Data, "sim seed=3") || r.Run.Events == 0 {
		t.Fatalf("report %+v (%v)", r.Run, err)
	}
}

func TestBacktestUsageMistakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no agent", []string{"--data", btSample}, "name one agent file"},
		{"no data", []string{btQuoter}, "either --data FILE or --sim SEED"},
		{"both", []string{"--data", btSample, "--sim", "1", btQuoter}, "either --data FILE or --sim SEED"},
		{"bad time", []string{"--data", btSample, "--from", "yesterday", btQuoter}, "--from"},
		{"reversed period", []string{"--data", btSample, "--from", "1700003600000", "--to", "1700000000000", btQuoter}, "before --from"},
		{"bad metric", []string{"--data", btSample, "--sweep", "size=5:10:5", "--metric", "luck", btQuoter}, "--metric"},
		{"walk-forward without sweep", []string{"--data", btSample, "--walk-forward", "2", btQuoter}, "--sweep"},
		{"bad sweep", []string{"--data", btSample, "--sweep", "nope=1:2:1", btQuoter}, "no parameter"},
		{"bad seed", []string{"--sim", "x", btQuoter}, "seed"},
		{"bad balance", []string{"--data", btSample, "--balance", "-5", btQuoter}, "--balance"},
		{"negative parallel", []string{"--data", btSample, "--sweep", "size=5:10:5", "--parallel", "-1", btQuoter}, "--parallel"},
		{"nats without sweep", []string{"--data", btSample, "--nats", "nats://127.0.0.1:1", btQuoter}, "give at least one --sweep"},
		{"short ack wait", []string{"--data", btSample, "--sweep", "size=5:10:5", "--nats", "nats://127.0.0.1:1", "--ack-wait", "10ms", btQuoter}, "--ack-wait"},
		{"parallel and workers", []string{"--data", btSample, "--sweep", "size=5:10:5", "--parallel", "2", "--workers", "3", btQuoter}, "older name"},
		{"parallel without sweep", []string{"--data", btSample, "--parallel", "2", btQuoter}, "--parallel runs a sweep's points"},
		{"workers without sweep", []string{"--data", btSample, "--workers", "2", btQuoter}, "--parallel runs a sweep's points"},
		{"parallel on a nats coordinator", []string{"--data", btSample, "--sweep", "size=5:10:5", "--nats", "nats://127.0.0.1:1", "--parallel", "2", btQuoter}, "give --parallel to each worker"},
		{"html of a sweep", []string{"--data", btSample, "--sweep", "size=5:10:5", "--html", "r.html", btQuoter}, "--html writes one run's report"},
		{"csv of a sweep", []string{"--data", btSample, "--sweep", "size=5:10:5", "--csv", "f.csv", btQuoter}, "--csv writes one run's report"},
		{"out of a sweep", []string{"--data", btSample, "--sweep", "size=5:10:5", "--out", "r.json", btQuoter}, "--out writes one run's report"},
		{"log of a sweep", []string{"--data", btSample, "--sweep", "size=5:10:5", "--nats", "nats://127.0.0.1:1", "--log", "a.log", btQuoter}, "--log writes one run's report or log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"backtest"}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("code %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

func TestBacktestMissingDataFails(t *testing.T) {
	code, _, errOut := runCLI(t, "backtest", "--data", filepath.Join(t.TempDir(), "none.tape"), btQuoter)
	if code != 1 || !strings.Contains(errOut, "none.tape") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

func TestParseEventTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"", 0, true},
		{"1700000000000", 1_700_000_000_000, true},
		{"2023-11-14T22:13:20Z", 1_700_000_000_000, true},
		{"2023-11-14T22:13:20.5+00:00", 1_700_000_000_500, true},
		{"2023-11-15", 1_700_006_400_000, true},
		{"0", 0, false},
		{"soon", 0, false},
	} {
		got, err := parseEventTime(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %d, %v", tc.in, got, err)
		}
	}
}

func TestProgressBarDrawsAndStops(t *testing.T) {
	var buf lockedBuffer
	p := newProgressBar(&buf, "events")
	p.set(25, 100)
	p.draw()
	p.follow(func() (int64, int64) { return 7, 0 })
	p.draw()
	p.stop()
	p.stop() // twice is fine
	var none *progressBar
	none.stop() // a nil bar does nothing
	out := buf.String()
	for _, want := range []string{"[#######.......................]  25%  25/100 events", "\r\033[K7 events", "\r\033[K"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output %q lacks %q", out, want)
		}
	}
	if isTerminal(&buf) {
		t.Error("a buffer is not a terminal")
	}
}

// FuzzParseEventTime: --from and --to accept only what they document, and an
// accepted time is positive.
func FuzzParseEventTime(f *testing.F) {
	for _, s := range []string{"", "1700000000000", "2023-11-14T22:13:20Z", "2023-11-15", "2023-11-15T10:00", "-5", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := parseEventTime(s)
		if err == nil && !(s == "" && ms == 0 || ms > 0) {
			t.Fatalf("%q parsed to %d", s, ms)
		}
	})
}

// TestBacktestSeveralDataFiles replays two recordings of synthetic flow an hour
// apart as one stream, and refuses them out of time order, naming both.
func TestBacktestSeveralDataFiles(t *testing.T) {
	dir := t.TempDir()
	start := int64(sim.DefaultTapeStart)
	mk := func(name string, at int64) string {
		src, err := backtest.NewSimSource(sim.TapeConfig{Seed: 3, Start: at, Duration: 20 * time.Minute,
			Markets: sim.SyntheticMarkets(4, start/1000)})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := backtest.WriteTape(context.Background(), f, src, tape.WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	early, late := mk("a.tape", start), mk("b.tape", start+3_600_000)

	code, out, errOut := runCLI(t, "backtest", "--json", "--data", early, "--data", late, btQuoter)
	var r report.Report
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(r.Run.Data, "(2 files)") || r.Run.Events == 0 {
		t.Fatalf("run %+v", r.Run)
	}
	code, _, errOut = runCLI(t, "backtest", "--data", late, "--data", early, btQuoter)
	if code != 1 || !strings.Contains(errOut, "a.tape starts at") || !strings.Contains(errOut, "before the end of "+late) {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "backtest", "--data", filepath.Join(dir, "z-*.tape"), btQuoter)
	if code != 1 || !strings.Contains(errOut, "no file matches") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

// TestInterruptedSweepSaysSo: a sweep stopped by Ctrl-C (its context cancelled)
// prints "interrupted" and exits 130, not "context canceled" and 1.
func TestInterruptedSweepSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut strings.Builder
	code := runMain(ctx, []string{"backtest", "--data", btSample, "--sweep", "half_spread=0.01:0.04:0.01", "-q", btQuoter},
		stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }})
	if code != 130 || errOut.String() != "pitboss backtest: interrupted\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 130 and \"pitboss backtest: interrupted\"", code, out.String(), errOut.String())
	}
}

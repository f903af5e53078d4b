package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

// recordVenue starts `pitboss exchange` in-process with one plain market and live
// synthetic flow, and returns its base URL and the market's condition id.
func recordVenue(t *testing.T, extra ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cat := filepath.Join(dir, "markets.yaml")
	yml := "events:\n  - slug: rain\n    title: Rain\n    markets:\n      - {slug: rain-tomorrow, question: \"Rain tomorrow?\", tick_size: 0.01}\n"
	if err := os.WriteFile(cat, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	// A lively flow, so that a few seconds give enough events.
	flow := filepath.Join(dir, "sim.yaml")
	if err := os.WriteFile(flow, []byte("defaults:\n  maker_refresh: 50ms\n  noise_every: 100ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startExchange(t, append([]string{"--addr", "127.0.0.1:0", "--ephemeral", "--sync", "none", "--markets", cat,
		"--sim", "--sim-seed", "4", "--sim-config", flow, "--sim-updown-window", "0"}, extra...)...)
	base := r.url(t, "CLOB service")
	var page api.Page[api.SimplifiedMarket]
	_, b := get(t, base+"/simplified-markets", nil)
	if err := json.Unmarshal(b, &page); err != nil || len(page.Data) != 1 {
		t.Fatalf("markets: %s", b)
	}
	return base, string(page.Data[0].ConditionID)
}

var recordedRE = regexp.MustCompile(`recorded (\d+) events, (\d+) gaps`)

// TestRecordThenBacktest records the market channel of a local exchange with live
// flow, continues the recording after a simulated kill, and backtests the result.
func TestRecordThenBacktest(t *testing.T) {
	base, cond := recordVenue(t)
	out := filepath.Join(t.TempDir(), "rec.tape")
	code, stdout, stderr := runCLI(t, "record", "--venue", base, "--out", out, "--events", "25", "--duration", "60s", "--no-sync", cond)
	m := recordedRE.FindStringSubmatch(stdout)
	if code != 0 || m == nil {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if n, _ := strconv.Atoi(m[1]); n < 25 {
		t.Fatalf("recorded %d events, want at least 25", n)
	}
	sum, err := tape.Summarize(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Markets) != 1 || string(sum.Markets[0].Condition) != cond || sum.Records < 25 || len(sum.Sessions) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	if s := sum.Sessions[0]; !strings.HasPrefix(s.Source, "ws://127.0.0.1:") || len(s.Tokens) != 2 || s.Started == 0 {
		t.Fatalf("session %+v", s)
	}

	// A recorder killed mid-write leaves a torn tail; the next one cuts it and
	// continues the file.
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0x11, 0x22, 0x33, 0x44, 9, 0, 0, 0, 77})
	f.Close()
	code, stdout, stderr = runCLI(t, "record", "-q", "--venue", base, "--out", out, "--events", "10", "--duration", "60s", "--no-sync", cond)
	if code != 0 || !strings.Contains(stderr, "cut a torn tail of 9 bytes") {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	sum, err = tape.Summarize(out)
	if err != nil || len(sum.Sessions) != 2 || !sum.Sessions[1].Resumed || sum.Torn != nil {
		t.Fatalf("after resuming: %+v %v", sum, err)
	}

	// The recording replays through an example agent.
	code, stdout, stderr = runCLI(t, "backtest", "--json", "--data", out, btQuoter)
	var r report.Report
	if code != 0 || json.Unmarshal([]byte(stdout), &r) != nil {
		t.Fatalf("backtest: code %d\n%s\n%s", code, stdout, stderr)
	}
	if r.Run.Events < 35 || len(r.Markets) != 1 || string(r.Markets[0].Condition) != cond {
		t.Fatalf("report %+v %+v", r.Run, r.Markets)
	}
}

// TestRecordRotatesAndTheSetBacktests records a local exchange's market channel
// into files cut by size and by time (a second: the wall clock is the command's
// receive clock), with retention, and backtests the set given as a directory, a
// glob and several --data flags: the same report, and every recorded event.
func TestRecordRotatesAndTheSetBacktests(t *testing.T) {
	base, cond := recordVenue(t)
	for _, tc := range []struct {
		name string
		args []string
		keep int
	}{
		{"by size", []string{"--rotate-size", "1KB", "--block-span", "50ms"}, 0},
		{"by time, keeping 2", []string{"--rotate-every", "1s", "--keep", "2", "--events", "0", "--duration", "3500ms"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "recs")
			prefix := filepath.Join(dir, "rain")
			args := append([]string{"record", "--venue", base, "--out", prefix, "--events", "60", "--duration", "60s", "--no-sync"}, tc.args...)
			code, stdout, stderr := runCLI(t, append(args, cond)...)
			m := recordedRE.FindStringSubmatch(stdout)
			if code != 0 || m == nil || !strings.Contains(stderr, "pitboss record: writing "+prefix+"-") {
				t.Fatalf("code %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			files, err := tape.SetFiles(prefix)
			if err != nil || len(files) < 2 {
				t.Fatalf("files %v, %v\nstderr %s", files, err, stderr)
			}
			if tc.keep > 0 && (len(files) > tc.keep || !strings.Contains(stderr, "(--keep 2)")) {
				t.Fatalf("kept %d files, want at most %d\nstderr %s", len(files), tc.keep, stderr)
			}
			for _, f := range files { // each file is a recording of its own
				if code, out, errOut := runCLI(t, "backtest", "-q", "--json", "--data", f, btQuoter); code != 0 {
					t.Fatalf("%s alone: code %d\n%s\n%s", f, code, out, errOut)
				}
			}
			many := []string{"backtest", "--json"}
			for _, f := range files {
				many = append(many, "--data", f)
			}
			var outs []string
			for _, a := range [][]string{{"backtest", "--json", "--data", dir}, {"backtest", "--json", "--data", prefix + "-*.tape"}, many} {
				code, out, errOut := runCLI(t, append(a, btQuoter)...)
				if code != 0 {
					t.Fatalf("%v: code %d\n%s\n%s", a, code, out, errOut)
				}
				outs = append(outs, out)
			}
			if outs[0] != outs[1] || outs[0] != outs[2] {
				t.Fatal("a directory, a glob and the files one by one give different reports")
			}
			var r report.Report
			if err := json.Unmarshal([]byte(outs[0]), &r); err != nil {
				t.Fatal(err)
			}
			if n, _ := strconv.Atoi(m[1]); tc.keep == 0 && r.Run.Events != int64(n) {
				t.Fatalf("the set replays %d events, the recorder wrote %d", r.Run.Events, n)
			}
			if !strings.Contains(r.Run.Data, "files)") || len(r.Markets) != 1 || string(r.Markets[0].Condition) != cond {
				t.Fatalf("report %+v %+v", r.Run, r.Markets)
			}
		})
	}
}

func TestRecordRefusesATokenTheVenueDoesNotList(t *testing.T) {
	base, _ := recordVenue(t)
	code, _, stderr := runCLI(t, "record", "--venue", base, "--out", filepath.Join(t.TempDir(), "x.tape"), "--duration", "5s", "12345")
	if code != 1 || !strings.Contains(stderr, "token 12345") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
}

func TestRecordUsageMistakes(t *testing.T) {
	cond := "0x" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{cond}, "--out"},
		{"no market", []string{"--out", "x.tape"}, "at least one market"},
		{"bad market", []string{"--out", "x.tape", "0x12"}, "neither a condition id"},
		{"bad venue", []string{"--out", "x.tape", "--venue", "ftp://x", cond}, "--venue"},
		{"bad span", []string{"--out", "x.tape", "--block-span", "0s", cond}, "--block-span"},
		{"bad size", []string{"--out", "x", "--rotate-size", "12 parsecs", cond}, "--rotate-size"},
		{"zero size", []string{"--out", "x", "--rotate-size", "0", cond}, "--rotate-size"},
		{"fractional period", []string{"--out", "x", "--rotate-every", "1500ms", cond}, "--rotate-every"},
		{"negative period", []string{"--out", "x", "--rotate-every", "-1h", cond}, "--rotate-every"},
		{"keep without rotation", []string{"--out", "x", "--keep", "3", cond}, "--keep"},
		{"negative keep", []string{"--out", "x", "--rotate-every", "1h", "--keep", "-1", cond}, "--keep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"record"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("code %d, stderr %q", code, stderr)
			}
		})
	}
}

func TestRedactDropsCredentials(t *testing.T) {
	if got := redact("wss://alice:s3cret@example.com/path"); strings.Contains(got, "s3cret") || strings.Contains(got, "alice") {
		t.Fatalf("redact kept the credentials: %s", got)
	}
}

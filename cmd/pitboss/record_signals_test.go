//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

// sigStrategy buys 10 YES at the ask while signals.model is above 0.5 and sells
// them at the bid once it is not — below 0.5, or stale (NaN) — on the prices of
// feeds.spot only: a wall-clock run's timer events (after a second without an
// event, by the wall clock) are not the backtest's (every second of event time),
// so a strategy that acts on them cannot replay a wall-clock run exactly; one that
// acts on recorded events can. A stale signal acts at the first price at or
// after its limit.
const sigStrategy = `name: sigrec
feeds: [spot]
signals: [model]
rules:
  enter:
    on: feed
    when: feeds.spot.price > 0 && signals.model > 0.5 && yes.position < market.min_size
    take: {token: YES, side: BUY, price: yes.ask, size: 10}
  leave:
    on: feed
    when: feeds.spot.price > 0 && yes.position >= market.min_size && !(signals.model > 0.5)
    take: {token: YES, side: SELL, price: yes.bid, size: yes.position}
`

// sigAgentFile writes the agent file of sigStrategy on the venue at base, market
// cond, its signal model pushed over HTTP (token in $PITBOSS_TEST_SIGNAL_TOKEN)
// and stale after 3 s, beat likewise (stale after 5 s), and the signals of the
// YAML lines more.
func sigAgentFile(t *testing.T, dir, base, cond, more string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "strategy.yaml"), []byte(sigStrategy), 0o600); err != nil {
		t.Fatal(err)
	}
	binding := "feeds:\n  spot: {symbol: crypto:btcusdt, stale: 10s}\nsignals:\n  model: {source: http, stale: 3s}\n  beat: {source: http, stale: 5s}\n" +
		more + "signal_http:\n  token: env:PITBOSS_TEST_SIGNAL_TOKEN\nstrategy: strategy.yaml\n"
	return remoteAgentFile(t, dir, "sigrec", remoteVenue{base, base, base, base}, false, cond, binding, "")
}

// staticVenue starts `pitboss exchange --sim` as a process whose market's book
// never moves (one maker quoting once, no other trader) and whose prices are
// sim.NewPrices(4, origin): a price every whole second after origin. It returns
// the CLOB URL and the market's condition id.
func staticVenue(t *testing.T, bin string, origin int64) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cat := filepath.Join(dir, "markets.yaml")
	yml := "events:\n  - slug: rain\n    title: Rain\n    markets:\n      - {slug: rain-tomorrow, question: \"Rain tomorrow?\", tick_size: 0.01}\n"
	flow := filepath.Join(dir, "sim.yaml")
	still := "defaults:\n  vol: -1\n  news_every: -1s\n  maker_refresh: 24h\n  noise_every: -1s\n  informed_every: -1s\n  informed_followers: -1\n"
	if err := os.WriteFile(cat, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flow, []byte(still), 0o600); err != nil {
		t.Fatal(err)
	}
	x := startExchangeProcess(t, bin, "--markets", cat, "--sim-seed", "4", "--sim-config", flow, "--sim-updown-window", "0",
		"--sim-prices-origin", strconv.FormatInt(origin, 10))
	var page api.Page[api.SimplifiedMarket]
	_, b := get(t, x.clob+"/simplified-markets", nil)
	if err := json.Unmarshal(b, &page); err != nil || len(page.Data) != 1 {
		t.Fatalf("markets: %s", b)
	}
	return x.clob, string(page.Data[0].ConditionID)
}

// atPhase sleeps until the wall clock is phase ms past a whole second (the prices
// of a process started at a whole second are stamped at whole seconds; a value
// pushed half-way between two is between the same two prices in every process
// that receives it).
func atPhase(phase int64) {
	now := time.Now().UnixMilli()
	next := now - now%1000 + phase
	if next <= now {
		next += 1000
	}
	time.Sleep(time.Duration(next-now) * time.Millisecond)
}

// pushSignal POSTs {"value": v} to url+name with the bearer token and returns the
// status.
func pushSignal(t *testing.T, url, name, token string, v float64) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+name, strings.NewReader(fmt.Sprintf(`{"value": %v}`, v)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// sigFill is a fill as both the dry run's audit trail and a backtest's report
// give it (order and trade ids are each run's own).
type sigFill struct {
	Time              int64
	Token, Side, Role string
	Price, Size, Fee  market.Micros
}

func micros(t *testing.T, s string) market.Micros {
	t.Helper()
	m, err := market.ParseMicros(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return m
}

// auditFills reads the fills of a `pitboss run --audit` file.
func auditFills(t *testing.T, path string) []sigFill {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []sigFill
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var l struct {
			Kind string `json:"kind"`
			Time int64  `json:"time_ms"`
			Fill *struct {
				Token, Side, Role, Price, Size, Fee string
			} `json:"fill"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if l.Fill != nil {
			f := l.Fill
			out = append(out, sigFill{l.Time, f.Token, f.Side, f.Role, micros(t, f.Price), micros(t, f.Size), micros(t, f.Fee)})
		}
	}
	return out
}

// reportFills reads the fills of a backtest's JSON report.
func reportFills(t *testing.T, js string) []sigFill {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	var out []sigFill
	for _, f := range r.Fills {
		var price, size, fee []byte
		price, _ = json.Marshal(f.Price)
		size, _ = json.Marshal(f.Size)
		fee, _ = json.Marshal(f.Fee)
		unq := func(b []byte) string { return strings.Trim(string(b), `"`) }
		out = append(out, sigFill{f.Time, string(f.Token), f.Side, f.Role, micros(t, unq(price)), micros(t, unq(size)), micros(t, unq(fee))})
	}
	return out
}

// dumpTapes logs the records of tapes (when a comparison failed).
func dumpTapes(t *testing.T, paths ...string) {
	for _, p := range paths {
		r, err := tape.Open(p, tape.ReaderOptions{})
		if err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		_ = tape.ReadAll(r, func(x *tape.Record) error {
			t.Logf("%s: %v %v t=%d recv=%d %s %v", filepath.Base(p), x.Type, x.Event.Kind, x.Event.Time, x.Recv, x.Event.Name, x.Event.Value)
			return nil
		})
		r.Close()
	}
}

var signalURLRE = regexp.MustCompile(`signal endpoint (http://\S+)`)

// TestRecordedSignalsBacktestToTheDryRun (issue 19, item 4): a dry run of a
// feed- and signal-driven agent on a real `pitboss exchange --sim` and `pitboss
// record --agent` of the same agent file run side by side; the test pushes the
// signal over each one's real HTTP endpoint (a wrong token is refused and
// recorded nowhere). Two backtests of the recording write byte-identical reports
// whose fills are the dry run's — same times, tokens, sides, prices, sizes and
// fees — among them the sell made when the signal went stale, so the value
// turned NaN at the same event in the replay as live. The token is in no file,
// output or argv.
func TestRecordedSignalsBacktestToTheDryRun(t *testing.T) {
	bin := buildPitboss(t)
	origin := time.Now().Add(-time.Minute).UnixMilli() / 1000 * 1000
	base, cond := staticVenue(t, bin, origin)
	dir := t.TempDir()
	agentPath := sigAgentFile(t, dir, base, cond, "")
	tok := make([]byte, 16)
	rand.Read(tok)
	token := "sigtok-" + hex.EncodeToString(tok)
	env := append(os.Environ(), "PITBOSS_TEST_WALLET="+walletKey("sigrec"), "PITBOSS_TEST_SIGNAL_TOKEN="+token,
		"XDG_RUNTIME_DIR="+t.TempDir())
	interrupt := func(p *process) {
		p.cmd.Process.Signal(syscall.SIGINT)
		p.cmd.Wait()
	}

	recPath := filepath.Join(dir, "rec.tape")
	rec := startProcess(t, bin, env, interrupt, "record", "--agent", agentPath, "--out", recPath, "--no-sync")
	audit := filepath.Join(dir, "audit.jsonl")
	runRec := filepath.Join(dir, "run.tape")
	run := startAgent(t, bin, env, "--record", runRec, "--audit", audit, "--state-dir", filepath.Join(dir, "state"), agentPath)
	var recURL, runURL string
	waitText(t, rec, "the recorder's signal endpoint", 30*time.Second, func(s string) bool {
		m := signalURLRE.FindStringSubmatch(s)
		if m != nil {
			recURL = m[1]
		}
		return m != nil && strings.Contains(s, "market channel connected") && strings.Contains(s, "rtds channel connected")
	})
	waitText(t, run, "the agent's signal endpoint", 30*time.Second, func(string) bool {
		l := run.logs("signal endpoint")
		if len(l) > 0 {
			runURL, _ = l[0]["url"].(string)
		}
		return runURL != ""
	})
	if b, err := os.ReadFile(filepath.Join(fmt.Sprintf("/proc/%d", rec.cmd.Process.Pid), "cmdline")); err == nil && bytes.Contains(b, []byte(token)) {
		t.Fatal("the token is in the recorder's argv")
	}
	time.Sleep(3 * time.Second) // both are subscribed and hold a price

	// Every second, half-way between two prices, to both endpoints: beat, which
	// no expression reads (an event in every second, so that the run's wall-clock
	// timer — after a second without an event — never fires: its events are the
	// agent's, in no recording); and at seconds 0, 6 and 8 model: above 0.5 (a buy
	// at the next price), then left to go stale (a sell at the first price at or
	// after its limit), above again, then below (a sell).
	both := func(name string, v float64) {
		for _, u := range []string{recURL, runURL} {
			if code := pushSignal(t, u, name, token, v); code != http.StatusNoContent {
				t.Fatalf("push %s %v to %s: %d", name, v, u, code)
			}
		}
	}
	if code := pushSignal(t, recURL, "model", "wrong-"+token, 0.99); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d", code)
	}
	model := map[int]float64{0: 0.8, 6: 0.9, 8: 0.1}
	for i := range 11 {
		atPhase(500)
		both("beat", float64(i))
		if v, ok := model[i]; ok {
			both("model", v)
		}
	}
	interrupt(run)
	interrupt(rec)
	if code := run.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, run.text())
	}
	if code := rec.cmd.ProcessState.ExitCode(); code != 0 || recordedRE.FindStringSubmatch(rec.text()) == nil {
		t.Fatalf("record: exit %d\n%s", code, rec.text())
	}

	// The recording: the values, in order, beside the books and prices.
	r, err := tape.Open(recPath, tape.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sigs []market.Event
	kinds := map[market.EventKind]int{}
	if err := tape.ReadAll(r, func(x *tape.Record) error {
		if x.Type == tape.RecordEvent {
			kinds[x.Event.Kind]++
			if x.Event.Kind == market.EventSignal && x.Event.Name == "model" {
				sigs = append(sigs, x.Event)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if len(sigs) != 3 || sigs[0].Value != 0.8 || sigs[1].Value != 0.9 || sigs[2].Value != 0.1 || sigs[0].Name != "model" ||
		kinds[market.EventSignal] != 3+11 || kinds[market.EventBook] == 0 || kinds[market.EventFeed] < 10 {
		t.Fatalf("recorded signals %+v, events by kind %v", sigs, kinds)
	}

	// Two backtests, byte-identical, with the dry run's fills.
	var reports []string
	for i := range 2 {
		code, stdout, stderr := runCLIEnv(t, map[string]string{"PITBOSS_TEST_WALLET": walletKey("sigrec"), "PITBOSS_TEST_SIGNAL_TOKEN": token},
			"backtest", "-q", "--json", "--data", recPath, agentPath)
		if code != 0 {
			t.Fatalf("backtest %d: code %d\n%s\n%s", i, code, stdout, stderr)
		}
		reports = append(reports, stdout)
	}
	if reports[0] != reports[1] {
		t.Fatal("two backtests of the same recording differ")
	}
	dry, bt := auditFills(t, audit), reportFills(t, reports[0])
	if len(dry) != 4 {
		t.Logf("run:\n%s\nbacktest fills %+v", run.text(), bt)
		t.Fatalf("the dry run made %d fills, want 4 (buy, sell when stale, buy, sell): %+v", len(dry), dry)
	}
	if fmt.Sprint(dry) != fmt.Sprint(bt) {
		dumpTapes(t, recPath, runRec)
		t.Fatalf("the backtest's fills differ from the dry run's:\ndry run  %+v\nbacktest %+v", dry, bt)
	}
	// So does a backtest of the run's own recording (pitboss run --record).
	code, stdout, stderr := runCLIEnv(t, map[string]string{"PITBOSS_TEST_WALLET": walletKey("sigrec"), "PITBOSS_TEST_SIGNAL_TOKEN": token},
		"backtest", "-q", "--json", "--data", runRec, agentPath)
	if own := reportFills(t, stdout); code != 0 || fmt.Sprint(own) != fmt.Sprint(dry) {
		dumpTapes(t, recPath, runRec)
		t.Fatalf("a backtest of the run's recording: code %d, fills %+v, the dry run's %+v\n%s", code, own, dry, stderr)
	}
	// The stale sell: at the first price at or after the limit, live and replayed.
	limit := sigs[0].Time + 3000
	firstStale := (limit + 999) / 1000 * 1000
	if dry[1].Side != "SELL" || dry[1].Time != firstStale {
		t.Fatalf("the stale sell filled at %d, want %d (the signal of %d stale at %d): %+v", dry[1].Time, firstStale, sigs[0].Time, limit, dry)
	}

	// The token is nowhere it could leak to.
	b, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"the recording": string(b), "the recorder's output": rec.text(), "the run's output": run.text(),
		"the reports": reports[0]} {
		if strings.Contains(s, token) {
			t.Fatalf("the token is in %s", what)
		}
	}
	t.Logf("4 identical fills; recorded %v events by kind; signals at %d, %d, %d", kinds, sigs[0].Time, sigs[1].Time, sigs[2].Time)
}

// TestRecordSignalsFromEverySource: pitboss record --agent takes each kind of
// signal source an agent file binds — a NATS subject of the --nats server, the
// HTTP endpoint (a malformed body and a wrong token are refused and recorded
// nowhere), a file and a command polled on their interval — and records every
// value under its name in receive order; pitboss tape info lists the signals and
// pitboss tape verify counts their values.
func TestRecordSignalsFromEverySource(t *testing.T) {
	bin := buildPitboss(t)
	base, cond := recordVenue(t)
	dir := t.TempDir()
	score := filepath.Join(dir, "score.txt")
	if err := os.WriteFile(score, []byte("0.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo command")
	}
	agentPath := sigAgentFile(t, dir, base, cond, fmt.Sprintf(`  view: {source: nats, stale: 1m}
  score: {source: file, path: score.txt, every: 100ms, stale: 1m}
  odds: {source: command, command: [%s, "0.25"], every: 100ms, stale: 1m}
`, echo))
	srv := startNATS(t, filepath.Join(dir, "nats"))
	creds := filepath.Join(dir, "nats.creds")
	if err := srv.Endpoint(natsbus.RoleSupervisor).WriteFile(creds); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pub, err := srv.Connect(ctx, natsbus.RoleSupervisor, natsbus.ConnectOptions{Name: "publisher"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	token := "sigtok-every-source-0123456789"
	env := append(os.Environ(), "PITBOSS_TEST_SIGNAL_TOKEN="+token)
	out := filepath.Join(dir, "rec.tape")
	rec := startProcess(t, bin, env, func(p *process) {
		p.cmd.Process.Signal(syscall.SIGINT)
		p.cmd.Wait()
	}, "record", "--agent", agentPath, "--out", out, "--no-sync", "--nats", srv.URL(), "--nats-creds", creds)
	var url string
	waitText(t, rec, "the recorder's signal endpoint", 30*time.Second, func(s string) bool {
		if m := signalURLRE.FindStringSubmatch(s); m != nil {
			url = m[1]
		}
		return url != "" && strings.Contains(s, "market channel connected")
	})

	subj, err := natsbus.SignalSubject("sigrec", "view")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1", "2", "not json", "3"} {
		if err := pub.Conn().Publish(subj, []byte(`{"value": `+v+`}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	if code := pushSignal(t, url, "model", token, 0.7); code != http.StatusNoContent {
		t.Fatalf("push: %d", code)
	}
	if code := pushSignal(t, url, "model", "wrong", 0.1); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d", code)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"model", strings.NewReader(`{"value": "0.2"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a malformed body: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	time.Sleep(500 * time.Millisecond)
	if err := os.WriteFile(score, []byte("0.75\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	rec.cmd.Process.Signal(syscall.SIGINT)
	if code := rec.wait(); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, rec.text())
	}

	r, err := tape.Open(out, tape.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]float64{}
	var lastRecv, lastSignal int64
	if err := tape.ReadAll(r, func(x *tape.Record) error {
		if x.Type != tape.RecordEvent {
			return nil
		}
		if x.Recv < lastRecv {
			t.Fatalf("receive times go back: %d after %d", x.Recv, lastRecv)
		}
		lastRecv = x.Recv
		if x.Event.Kind == market.EventSignal {
			if x.Event.Time < lastSignal {
				t.Fatalf("signal times go back: %d after %d", x.Event.Time, lastSignal)
			}
			lastSignal = x.Event.Time
			values[x.Event.Name] = append(values[x.Event.Name], x.Event.Value)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	sc := values["score"]
	if fmt.Sprint(values["view"]) != "[1 2 3]" || fmt.Sprint(values["model"]) != "[0.7]" || len(values["odds"]) < 3 ||
		len(sc) < 4 || sc[0] != 0.5 || sc[len(sc)-1] != 0.75 || len(values["beat"]) != 0 {
		t.Fatalf("recorded %v", values)
	}
	for _, v := range values["odds"] {
		if v != 0.25 {
			t.Fatalf("odds %v", values["odds"])
		}
	}

	code, stdout, _ := runCLI(t, "tape", "info", out)
	if code != 0 || !strings.Contains(stdout, "signals    model, beat, view, score, odds\n") || !strings.Contains(stdout, "feeds      crypto:btcusdt\n") {
		t.Fatalf("tape info: %d\n%s", code, stdout)
	}
	code, stdout, _ = runCLI(t, "tape", "verify", out)
	want := fmt.Sprintf("signal values: model 1, odds %d, score %d, view 3\n", len(values["odds"]), len(sc))
	if code != 0 || !strings.Contains(stdout, want) {
		t.Fatalf("tape verify: %d\n%s\nwant %q", code, stdout, want)
	}
	b, _ := os.ReadFile(out)
	if bytes.Contains(b, []byte(token)) || strings.Contains(rec.text(), token) {
		t.Fatal("the token leaked into the recording or the output")
	}
	t.Logf("recorded %d odds, %d score values", len(values["odds"]), len(sc))
}

// TestRecordAgentRefusals: what pitboss record --agent refuses before it writes
// anything, and that a missing token leaves no recording behind.
func TestRecordAgentRefusals(t *testing.T) {
	base, cond := recordVenue(t)
	dir := t.TempDir()
	agentPath := sigAgentFile(t, dir, base, cond, "")
	natsDir := t.TempDir()
	natsAgent := sigAgentFile(t, natsDir, base, cond, "  view: {source: nats, stale: 1m}\n")
	src, err := os.ReadFile(agentPath)
	if err != nil {
		t.Fatal(err)
	}
	selDir := t.TempDir()
	selAgent := filepath.Join(selDir, "agent.yaml")
	sel := strings.Replace(string(src), "conditions: ["+cond+"]", "select: accepting_orders", 1)
	if err := os.WriteFile(selAgent, []byte(sel), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(selDir, "strategy.yaml"), []byte(sigStrategy), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rec.tape")
	for _, tc := range []struct {
		args  []string
		code  int
		want  string
		token string
	}{
		{[]string{"--nats", "nats://127.0.0.1:4222", cond}, 2, "--nats is for the nats signals of an --agent file", ""},
		{[]string{"--signal-addr", "127.0.0.1:0", cond}, 2, "--signal-addr is for the http signals of an --agent file", ""},
		{[]string{"--agent", selAgent}, 2, "selects its markets (select:): name the markets to record", ""},
		{[]string{"--agent", natsAgent}, 2, "has nats signals: give --nats URL", ""},
		{[]string{"--agent", agentPath, "--signal-addr", "192.0.2.1:80"}, 1, "is not a loopback address", "secret-token"},
		{[]string{"--agent", agentPath}, 1, "signal_http.token: $PITBOSS_TEST_SIGNAL_TOKEN is empty", ""},
	} {
		code, stdout, stderr := runCLIEnv(t, map[string]string{"PITBOSS_TEST_WALLET": walletKey("sigrec"), "PITBOSS_TEST_SIGNAL_TOKEN": tc.token},
			append([]string{"record", "-q", "--venue", base, "--out", out, "--duration", "1s"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Fatalf("%v: code %d, stderr %q, stdout %q; want %d and %q", tc.args, code, stderr, stdout, tc.code, tc.want)
		}
		if tc.token != "" && strings.Contains(stderr+stdout, tc.token) {
			t.Fatalf("%v: the token is in the output", tc.args)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v: the recording was created (%v)", tc.args, err)
		}
	}
}

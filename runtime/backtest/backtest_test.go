package backtest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/runtime/report/reporttest"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

const (
	quoterAgent   = "../../agents/examples/quoter/agent.yaml"
	momentumAgent = "../../agents/examples/momentum/agent.yaml"
)

func sample(t testing.TB) *TapeSource {
	t.Helper()
	src, err := OpenTape(filepath.Join("..", "..", SamplePath))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func run(t testing.TB, cfg Config) *report.Report {
	t.Helper()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res.Report
}

// render returns the report's JSON, HTML and CSV.
func render(t testing.TB, r *report.Report) [3][]byte {
	t.Helper()
	var out [3][]byte
	var err error
	if out[0], err = r.MarshalIndent(); err != nil {
		t.Fatal(err)
	}
	var h, c bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFillsCSV(&c); err != nil {
		t.Fatal(err)
	}
	out[1], out[2] = h.Bytes(), c.Bytes()
	return out
}

func TestSameInputsGiveByteIdenticalReports(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent string
		cfg   Config
	}{
		{"quoter, no latency", quoterAgent, Config{}},
		{"quoter, 250ms latency and fees, first hour", quoterAgent, Config{Latency: 250 * time.Millisecond, FeeBps: ptr(uint32(150)),
			To: sample(t).Summary().FirstTime + 3_600_000}},
		{"momentum over the last hour", momentumAgent, Config{From: sample(t).Summary().FirstTime + 3*3_600_000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Spec, cfg.Source = loadAgent(t, tc.agent), sample(t)
			a := render(t, run(t, cfg))
			cfg.Spec, cfg.Source = loadAgent(t, tc.agent), sample(t) // fresh inputs, same content
			b := render(t, run(t, cfg))
			for i, what := range []string{"json", "html", "csv"} {
				if !bytes.Equal(a[i], b[i]) {
					t.Errorf("the %s reports of two identical runs differ", what)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestGoldenReportOfTheSample pins the quoter's backtest on the bundled sample:
// any change in the strategy, the guards, the loop, the paper venue or the metrics
// shows up as a diff here. PITBOSS_UPDATE_GOLDEN=1 rewrites the files.
func TestGoldenReportOfTheSample(t *testing.T) {
	r := run(t, Config{Spec: loadAgent(t, quoterAgent), Source: sample(t), Latency: 100 * time.Millisecond,
		Report: report.Config{Points: 60}})
	out := render(t, r)
	var txt bytes.Buffer
	if err := r.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	reporttest.CheckGolden(t, "testdata/golden/quoter-sample.json", out[0])
	reporttest.CheckGolden(t, "testdata/golden/quoter-sample.csv", out[2])
	reporttest.CheckGolden(t, "testdata/golden/quoter-sample.txt", txt.Bytes())
}

func TestReportCoversTheRun(t *testing.T) {
	src := sample(t)
	r := run(t, Config{Spec: loadAgent(t, momentumAgent), Source: src})
	s := r.Summary
	if r.Run.Agent != "momentum" || r.Run.Strategy == "" || len(r.Run.Params) == 0 || r.Run.Data != src.Name() {
		t.Errorf("run %+v", r.Run)
	}
	if first, last, _ := src.Span(); r.Run.From != first || r.Run.To != last {
		t.Errorf("period [%d, %d], want the data's [%d, %d]", r.Run.From, r.Run.To, first, last)
	}
	if s.Fills == 0 || s.Fills != len(r.Fills) || s.Fills != s.MakerFills+s.TakerFills {
		t.Errorf("fills: summary %d (%d maker, %d taker), %d rows", s.Fills, s.MakerFills, s.TakerFills, len(r.Fills))
	}
	if s.PnL != s.EndEquity-s.StartEquity || s.Realized+s.Unrealized != s.PnL {
		t.Errorf("pnl %s: equity %s → %s, realized %s + unrealized %s", s.PnL, s.StartEquity, s.EndEquity, s.Realized, s.Unrealized)
	}
	if s.StartEquity != report.Money(1000*market.One) {
		t.Errorf("start equity %s, want the default balance", s.StartEquity)
	}
	// The sample's second market resolves three hours in: the report says so.
	if len(r.Markets) != 2 || !r.Markets[1].Resolved || r.Markets[0].Resolved {
		t.Fatalf("markets %+v", r.Markets)
	}
	if r.Markets[1].Settlement != s.Settlement {
		t.Errorf("settlement %s, market %s", s.Settlement, r.Markets[1].Settlement)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes: %q", r.Notes)
	}
}

func TestFeesAndLatencyChangeTheFills(t *testing.T) {
	spec, src := loadAgent(t, momentumAgent), sample(t)
	to := src.Summary().FirstTime + 2*3_600_000
	base := run(t, Config{Spec: spec, Source: src, FeeBps: ptr(uint32(0)), To: to})
	fees := run(t, Config{Spec: spec, Source: src, FeeBps: ptr(uint32(500)), To: to})
	slow := run(t, Config{Spec: spec, Source: src, FeeBps: ptr(uint32(0)), Latency: 5 * time.Second, To: to})
	if base.Summary.Fees != 0 {
		t.Errorf("fees %s with a zero fee rate", base.Summary.Fees)
	}
	if fees.Summary.Fees <= 0 || fees.Summary.TakerFills == 0 {
		t.Errorf("fees %s at 500 bps over %d taker fills", fees.Summary.Fees, fees.Summary.TakerFills)
	}
	if slow.Run.LatencyMs != 5000 {
		t.Errorf("latency %d ms in the report", slow.Run.LatencyMs)
	}
	if bytes.Equal(render(t, base)[2], render(t, slow)[2]) {
		t.Error("five seconds of latency changed no fill")
	}
}

func TestNoEventInThePeriodIsAnError(t *testing.T) {
	src := sample(t)
	_, last, _ := src.Span()
	_, err := Run(context.Background(), Config{Spec: loadAgent(t, quoterAgent), Source: src, From: last + 1000, To: last + 2000})
	if !errors.Is(err, ErrNoEvents) {
		t.Fatalf("%v, want ErrNoEvents", err)
	}
}

func TestARecordedTornTailIsReportedAndSkipped(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", SamplePath))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "torn.tape")
	if err := os.WriteFile(path, data[:len(data)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := OpenTape(path)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, Config{Spec: loadAgent(t, quoterAgent), Source: src})
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "torn tail") {
		t.Fatalf("notes %q", r.Notes)
	}
}

func TestSimSourceReplaysTheSameFlow(t *testing.T) {
	cfg := SampleConfig()
	cfg.Duration = 20 * time.Minute
	a, err := NewSimSource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var x, y bytes.Buffer
	if _, err := WriteTape(context.Background(), &x, a, tape.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteTape(context.Background(), &y, a, tape.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Bytes(), y.Bytes()) || x.Len() < 1000 {
		t.Fatalf("two passes over one sim differ (or are empty: %d bytes)", x.Len())
	}
	// The recording and the live flow give the same report.
	spec := loadAgent(t, quoterAgent)
	ts, err := TapeBytes("sim", x.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := run(t, Config{Spec: spec, Source: a}), run(t, Config{Spec: spec, Source: ts})
	// Only the period's end differs: the flow's is its planned end, the
	// recording's its last event.
	r2.Run.Data, r2.Title, r2.Run.To = r1.Run.Data, r1.Title, r1.Run.To
	if !bytes.Equal(render(t, r1)[0], render(t, r2)[0]) {
		t.Fatal("the synthetic flow and its recording give different reports")
	}
}

// TestBrierScoresTheDeclaredProbability binds the quoter (whose indicator "fair" is
// its probability of YES) to the sample's market that resolves, and checks the
// report's three scores: the declaration an hour before the resolution (the
// headline), the last one before it, and the average over time, which lies
// between the best and the worst of the declarations.
func TestBrierScoresTheDeclaredProbability(t *testing.T) {
	src := sample(t)
	resolving := src.Markets()[1].Condition
	dir := t.TempDir()
	strat, err := filepath.Abs("../../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	agent := "name: forecaster\nwallet: keyring:test\nmarkets:\n  conditions: [\"" + string(resolving) + "\"]\nstrategy:\n  file: " + strat + "\n"
	path := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(path, []byte(agent), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, Config{Spec: loadAgent(t, path), Source: src})
	m, s := r.Markets[0], r.Summary
	if !m.Resolved || !m.Forecast.Defined() || !m.ForecastHorizon.Defined() || s.Forecasts != 1 || s.ForecastsLast != 1 || s.ForecastsAvg != 1 {
		t.Fatalf("market %+v, summary %+v", m, s)
	}
	outcome := 0.0
	if m.Winner == "YES" {
		outcome = 1
	}
	sq := func(p report.Ratio) float64 { return (float64(p) - outcome) * (float64(p) - outcome) }
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-5 }
	if !near(float64(s.Brier), sq(m.ForecastHorizon)) || !near(float64(s.BrierLast), sq(m.Forecast)) || float64(m.Brier) != float64(s.Brier) {
		t.Fatalf("brier %v at the horizon (forecast %v), %v last (forecast %v), outcome %v", s.Brier, m.ForecastHorizon, s.BrierLast, m.Forecast, outcome)
	}
	// The price converges: the last forecast scores far better than the one
	// an hour before, which is the point of the horizon.
	if !(float64(s.BrierLast) < float64(s.Brier)) {
		t.Fatalf("last %v, horizon %v: the last forecast should score better on a converged market", s.BrierLast, s.Brier)
	}
	if avg := float64(s.BrierTimeAvg); !(avg > 0 && avg < 1) {
		t.Fatalf("time-averaged %v", avg)
	}
	if s.BrierHorizonMs != 3_600_000 {
		t.Fatalf("horizon %d ms", s.BrierHorizonMs)
	}
}

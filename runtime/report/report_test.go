package report

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/report/reporttest"
)

const (
	cond = market.ConditionID("0x00000000000000000000000000000000000000000000000000000000000000c1")
	yes  = market.TokenID("101")
	no   = market.TokenID("102")
	t0   = int64(1_700_000_000_000)
)

func testInfo() market.Info {
	return market.Info{Condition: cond, Slug: "will-it-rain", Tokens: [2]market.TokenID{yes, no}, TickSize: 10_000,
		MinSize: market.One, Active: true, AcceptingOrders: true}
}

func dec(s string) market.Micros {
	neg := strings.HasPrefix(s, "-")
	v, err := market.ParseMicros(strings.TrimPrefix(s, "-"))
	if err != nil {
		panic(err)
	}
	if neg {
		return -v
	}
	return v
}

// script drives a Collector the way a run's loop does: each event is applied to
// the state, then shown to the collector.
type script struct {
	t   testing.TB
	st  market.State
	c   *Collector
	seq int
}

func newScript(t testing.TB, cfg Config, balance string) *script {
	c, err := NewCollector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &script{t: t, c: c}
	info := testInfo()
	s.st.Init()
	s.st.Markets[cond] = &info
	s.st.Balance = dec(balance)
	s.st.Time = t0
	c.Begin(t0, &s.st, []market.Info{info})
	return s
}

func (s *script) apply(ev market.Event) {
	s.st.Apply(&ev)
	s.c.Event(&ev, &s.st)
}

func (s *script) book(at int64, bid, ask string) {
	s.apply(market.Event{Kind: market.EventBook, Time: t0 + at, Market: cond, Token: yes,
		Bids: []market.Level{{Price: dec(bid), Size: 1000 * market.One}},
		Asks: []market.Level{{Price: dec(ask), Size: 1000 * market.One}}})
}

func (s *script) fill(at int64, side market.Side, role market.Role, price, size, fee string) {
	s.seq++
	f := market.Fill{Trade: market.TradeID("t" + string(rune('0'+s.seq))), Order: "o", Market: cond, Token: yes,
		Outcome: market.Yes, Side: side, Role: role, Price: dec(price), Size: dec(size), Fee: dec(fee), Time: t0 + at}
	s.c.Fill(&f, "")
	s.apply(market.Event{Kind: market.EventFill, Time: t0 + at, Market: cond, Token: yes, Fill: f})
}

func (s *script) resolve(at int64, winner market.TokenID) {
	s.apply(market.Event{Kind: market.EventResolved, Time: t0 + at, Market: cond, Token: winner, Winner: winner})
}

// knownRun is a run whose every figure is computed by hand in the test below.
func knownRun(t testing.TB, cfg Config) *Report {
	s := newScript(t, cfg, "1000")
	s.book(1000, "0.40", "0.42")                                 // equity 1000
	s.fill(2000, market.Buy, market.Taker, "0.42", "100", "0")   // 958 + 100×0.41 = 999
	s.book(3000, "0.50", "0.52")                                 // 958 + 51 = 1009 (peak)
	s.fill(4000, market.Sell, market.Maker, "0.50", "50", "0")   // +4 realized; 983 + 25.5 = 1008.5
	s.book(5000, "0.30", "0.32")                                 // 983 + 15.5 = 998.5
	s.fill(6000, market.Sell, market.Taker, "0.30", "20", "0.1") // −2.5 realized; 988.9 + 9.3 = 998.2 (trough)
	s.c.Forecast(cond, 0.7)
	s.resolve(8000, yes) // 30 shares settle at 1: +17.4; 1018.9
	return s.c.Finish(&s.st, Run{Agent: "test", Data: "script", Events: 7})
}

func TestMetricsOfAKnownRun(t *testing.T) {
	r := knownRun(t, Config{})
	s := r.Summary
	money := []struct {
		name string
		got  Money
		want string
	}{
		{"start equity", s.StartEquity, "1000"},
		{"end equity", s.EndEquity, "1018.9"},
		{"pnl", s.PnL, "18.9"},
		{"realized", s.Realized, "18.9"},
		{"unrealized", s.Unrealized, "0"},
		{"settlement", s.Settlement, "17.4"},
		{"fees", s.Fees, "0.1"},
		{"volume", s.Volume, "73"},
		{"bought", s.Bought, "100"},
		{"sold", s.Sold, "70"},
		{"max drawdown", s.MaxDrawdown, "10.8"},
		{"max exposure", s.MaxExposure, "51"},
	}
	for _, m := range money {
		if m.got != Money(dec(m.want)) {
			t.Errorf("%s = %s, want %s", m.name, m.got, m.want)
		}
	}
	ratios := []struct {
		name      string
		got, want float64
	}{
		{"return", float64(s.Return), 0.0189},
		{"max drawdown pct", float64(s.MaxDrawdownPct), 10.8 / 1009},
		{"win rate", float64(s.WinRate), 2.0 / 3},
		{"profit factor", float64(s.ProfitFactor), 21.4 / 2.5},
		{"turnover", float64(s.Turnover), 0.073},
		{"brier of the last forecast", float64(s.BrierLast), 0.09},
		// declared at 6 s, resolved at 8 s: 2 s of 0.7 against YES
		{"time-averaged brier", float64(s.BrierTimeAvg), 0.09},
		// A position from the buy (t0+2s) to the resolution (t0+8s), of 8 s.
		{"time in market", float64(s.TimeInMarket), 6.0 / 8},
	}
	for _, x := range ratios {
		if math.Abs(x.got-x.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if s.Fills != 3 || s.MakerFills != 1 || s.TakerFills != 2 || s.Trades != 3 || s.ForecastsLast != 1 || s.ForecastsAvg != 1 ||
		s.Forecasts != 0 || s.Brier.Defined() {
		t.Errorf("counts: %+v", s)
	}
	if len(r.Markets) != 1 {
		t.Fatalf("markets %+v", r.Markets)
	}
	m := r.Markets[0]
	if !m.Resolved || m.Winner != "YES" || m.Realized != Money(dec("18.9")) || m.Settlement != Money(dec("17.4")) ||
		m.Yes != 0 || m.Fills != 3 || m.Name != "will-it-rain" || math.Abs(float64(m.BrierLast)-0.09) > 1e-12 {
		t.Errorf("market %+v", m)
	}
	realized := []string{"0", "4", "-2.5"}
	for i, f := range r.Fills {
		if f.Realized != Money(dec(realized[i])) {
			t.Errorf("fill %d realized %s, want %s", i, f.Realized, realized[i])
		}
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestRatiosOfKnownReturns(t *testing.T) {
	day := int64(24 * time.Hour / time.Millisecond)
	for _, tc := range []struct {
		name            string
		eqs             []market.Micros
		sharpe, sortino bool // defined
	}{
		{"flat equity: no variance", []market.Micros{100, 100, 100}, false, false},
		{"only gains: no downside", []market.Micros{100, 110, 121, 133}, true, false},
		{"one period", []market.Micros{100, 110}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh, so, _ := ratios(tc.eqs, day)
			if sh.Defined() != tc.sharpe || so.Defined() != tc.sortino {
				t.Errorf("sharpe %v, sortino %v; want defined %v, %v", sh, so, tc.sharpe, tc.sortino)
			}
		})
	}
	t.Run("value", func(t *testing.T) {
		eqs := []market.Micros{1_000_000, 1_100_000, 990_000, 1_089_000}
		sh, so, n := ratios(eqs, day)
		rs := []float64{0.1, -0.1, 0.1}
		mean := (rs[0] + rs[1] + rs[2]) / 3
		var sq float64
		for _, r := range rs {
			sq += (r - mean) * (r - mean)
		}
		sd := math.Sqrt(sq / 2)
		dd := math.Sqrt(0.01 / 3)
		a := math.Sqrt(365)
		if n != 3 || math.Abs(float64(sh)-mean/sd*a) > 1e-9 || math.Abs(float64(so)-mean/dd*a) > 1e-9 {
			t.Fatalf("sharpe %v sortino %v (n %d), want %v %v", sh, so, n, mean/sd*a, mean/dd*a)
		}
	})
}

func TestReturnPeriodIsChosenFromTheSpan(t *testing.T) {
	h := int64(time.Hour / time.Millisecond)
	for _, tc := range []struct {
		span int64
		want time.Duration
	}{
		{0, time.Hour},
		{60 * 24 * h, 24 * time.Hour},
		{29 * 24 * h, time.Hour},
		{8 * h, 15 * time.Minute},
		{h, time.Minute},
		{10 * 1000, time.Second},
	} {
		if got := autoPeriod(tc.span); got != tc.want {
			t.Errorf("span %d ms: %s, want %s", tc.span, got, tc.want)
		}
	}
}

func TestEquityCurveStaysBounded(t *testing.T) {
	s := newScript(t, Config{Points: 50, Resolution: time.Second}, "100")
	for i := int64(1); i <= 20_000; i++ {
		s.book(i*1000, "0.40", "0.42")
	}
	r := s.c.Finish(&s.st, Run{})
	if n := len(r.Equity); n > 100 || n < 25 {
		t.Fatalf("%d points for a limit of 50", n)
	}
	for i := 1; i < len(r.Equity); i++ {
		if r.Equity[i].Time <= r.Equity[i-1].Time {
			t.Fatalf("points out of order at %d", i)
		}
	}
	if last := r.Equity[len(r.Equity)-1].Time; last != t0+20_000_000 {
		t.Fatalf("last point at %d, want the run's end", last)
	}
}

func TestSameInputsGiveIdenticalBytes(t *testing.T) {
	render := func() [3][]byte {
		r := knownRun(t, Config{})
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
	a, b := render(), render()
	for i, name := range []string{"json", "html", "csv"} {
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("%s differs between two identical runs", name)
		}
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	var h bytes.Buffer
	if err := knownRun(t, Config{}).WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	for _, bad := range []string{"http://", "https://", "<script", "src=", "@import", "url("} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("the page contains %q: it must not load anything", bad)
		}
	}
	for _, want := range []string{`<svg id="equity"`, `<svg id="drawdown"`, `<svg id="position"`, "<polyline", "will-it-rain"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestGoldenReport pins the JSON, HTML, CSV and text of the known run. Rewrite with
// PITBOSS_UPDATE_GOLDEN=1 after an intended change, and read the diff.
func TestGoldenReport(t *testing.T) {
	r := knownRun(t, Config{})
	r.Title = "known run"
	checkGolden(t, r, "known")
}

// checkGolden compares the report's JSON, HTML, CSV and text with
// testdata/golden/NAME.{json,html,csv,txt} and returns the text.
func checkGolden(t *testing.T, r *Report, name string) string {
	t.Helper()
	js, err := r.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	var h, c, txt bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFillsCSV(&c); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		ext string
		got []byte
	}{
		{"json", js}, {"html", h.Bytes()}, {"csv", c.Bytes()}, {"txt", txt.Bytes()},
	} {
		reporttest.CheckGolden(t, filepath.Join("testdata", "golden", name+"."+g.ext), g.got)
	}
	return txt.String()
}

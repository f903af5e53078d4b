package backtest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/internal/browsertest"
	"github.com/pitbossdev/pitboss/runtime/report"
)

// trippingAgent writes the quoter's agent file with a daily loss limit of 10
// instead of 25: on the sample the kill switch trips when the market crashes
// (23:54:32 UTC), cancels, flattens and halts the agent to the end.
func trippingAgent(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(quoterAgent)
	if err != nil {
		t.Fatal(err)
	}
	strat, err := filepath.Abs(filepath.Join(filepath.Dir(quoterAgent), "strategy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), "max_daily_loss: 25", "max_daily_loss: 10", 1)
	s = strings.Replace(s, "file: strategy.yaml", "file: "+strat, 1)
	if !strings.Contains(s, "max_daily_loss: 10") || !strings.Contains(s, strat) {
		t.Fatal("the quoter's agent file changed: update trippingAgent")
	}
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// pinFont makes the page's text DejaVu Sans (which scripts/ci-setup installs),
// whatever else the machine has, so that the screenshots compare with references
// made elsewhere. It only adds a style; the page itself has no script.
const pinFont = `document.head.insertAdjacentHTML('beforeend',
	'<style>body, svg text { font-family: "DejaVu Sans" !important; }</style>'); document.fonts.ready.then(() => true)`

// TestReportInHeadlessChromium backtests the quoter on the bundled sample twice —
// as it is, and with a daily loss limit the crash trips — and opens both HTML
// reports in headless Chromium. In the page as the browser built it: one fill
// marker per fill on the price chart, inside the plot; a kill-switch mark on every
// time chart of the run that trips (none in the other) and the trip in the
// events table; the charts as wide as the window, and no horizontal scroll at
// 1400 and 1024 px. Then full-page screenshots of the run that trips, at both
// widths, against the committed references (internal/browsertest.CheckReference; rewrite them with
// PITBOSS_UPDATE_GOLDEN=1 and look at them).
func TestReportInHeadlessChromium(t *testing.T) {
	browsertest.Chromium(t) // skip before backtesting without one
	dir := t.TempDir()
	runs := []struct {
		name  string
		agent string
		trips bool
	}{
		{"quoter", quoterAgent, false},
		{"quoter-kill-switch", trippingAgent(t), true},
	}
	b := browsertest.Start(t)
	for _, rc := range runs {
		t.Run(rc.name, func(t *testing.T) {
			r := run(t, Config{Spec: loadAgent(t, rc.agent), Source: sample(t)})
			if got := r.Summary.KillSwitchTrips > 0; got != rc.trips {
				t.Fatalf("kill switch tripped: %v, want %v", got, rc.trips)
			}
			page := filepath.Join(dir, rc.name+".html")
			f, err := os.Create(page)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.WriteHTML(f); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			p := b.Load(t, "file://"+page)
			if !p.EvalBool(t, pinFont) {
				t.Fatal("could not pin the font")
			}

			// A marker per fill, each naming its trade, each inside its chart's plot.
			var trades []string
			p.EvalInto(t, `[...document.querySelectorAll('svg.chart .fill-mark')].map(m => m.dataset.trade)`, &trades)
			var want []string
			for _, f := range r.Fills {
				want = append(want, string(f.Trade))
			}
			slices.Sort(trades)
			slices.Sort(want)
			if len(want) == 0 || !slices.Equal(trades, want) {
				t.Fatalf("fill markers for trades %v, want one per fill %v", trades, want)
			}
			if out := p.EvalString(t, `[...document.querySelectorAll('.fill-mark')].filter(m => {
				const r = m.getBoundingClientRect(), s = m.ownerSVGElement.getBoundingClientRect();
				return r.width === 0 || r.left < s.left || r.right > s.right || r.top < s.top || r.bottom > s.bottom;
			}).map(m => m.dataset.trade).join(',')`); out != "" {
				t.Fatalf("fill markers outside their chart or not drawn: %s", out)
			}

			// Kill-switch marks: on every time chart of the run that trips.
			var charts, kills int
			p.EvalInto(t, `document.querySelectorAll('svg.chart').length`, &charts)
			p.EvalInto(t, `[...document.querySelectorAll('svg.chart')].filter(s => s.querySelector('.mark-kill_switch')).length`, &kills)
			wantKills := 0
			if rc.trips {
				wantKills = charts
				if !p.EvalBool(t, `!!document.querySelector('#events tr.kill_switch') && !!document.querySelector('svg.chart .halted')`) {
					t.Fatal("the trip is not in the events table, or the halted period is not shaded")
				}
			}
			if charts < 5 || kills != wantKills {
				t.Fatalf("%d of %d charts mark the kill switch, want %d", kills, charts, wantKills)
			}

			for _, width := range []int{1400, 1024} {
				p.SetWidth(t, width, 900)
				if !p.EvalBool(t, `document.documentElement.scrollWidth <= window.innerWidth`) {
					t.Errorf("%d px: the page scrolls sideways (%s px wide)", width,
						p.Eval(t, `document.documentElement.scrollWidth`))
				}
				if !p.EvalBool(t, `document.getElementById('equity').getBoundingClientRect().width >= 0.9 * window.innerWidth`) {
					t.Errorf("%d px: the equity chart does not use the width (%s px)", width,
						p.Eval(t, `document.getElementById('equity').getBoundingClientRect().width`))
				}
				if rc.trips { // the page with everything on it: one pair of references is enough
					shot := p.Screenshot(t, width)
					browsertest.CheckReference(t, filepath.Join("testdata", "screenshots", rc.name+"-"+strconv.Itoa(width)+".png"), shot, browsertest.Tolerance{})
				}
			}
		})
	}
}

// TestComparisonInHeadlessChromium compares the quoter on the sample with the
// same quoter under a daily loss limit the crash trips (report.Compare) and
// opens the page in headless Chromium: both runs drawn on the PnL and drawdown
// charts, the trip marked on both, the guard that differs highlighted (and the
// parameters that do not, not), the difference column present; no horizontal
// scroll at 1400 and 1024 px, and full-page screenshots at both widths against
// the committed references.
func TestComparisonInHeadlessChromium(t *testing.T) {
	browsertest.Chromium(t)
	wide := run(t, Config{Spec: loadAgent(t, quoterAgent), Source: sample(t)})
	tight := run(t, Config{Spec: loadAgent(t, trippingAgent(t)), Source: sample(t)})
	c, err := report.Compare([]report.Compared{{Name: "wide", Report: wide}, {Name: "tight", Report: tight}})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "compare.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	p := browsertest.Start(t).Load(t, "file://"+page)
	if !p.EvalBool(t, pinFont) {
		t.Fatal("could not pin the font")
	}
	for _, chart := range []string{"compare-pnl", "compare-drawdown"} {
		for _, run := range []string{"A", "B"} {
			if !p.EvalBool(t, `!!document.querySelector('#`+chart+` polyline.run-`+run+`')`) {
				t.Errorf("%s: run %s is not drawn", chart, run)
			}
		}
		if !p.EvalBool(t, `!!document.querySelector('#`+chart+` .mark-kill_switch')`) {
			t.Errorf("%s: the kill-switch trip of run B is not marked", chart)
		}
	}
	var differs []string
	p.EvalInto(t, `[...document.querySelectorAll('#params tr.differs td:first-child')].map(td => td.textContent)`, &differs)
	if !slices.Contains(differs, "guards.max_daily_loss") || slices.Contains(differs, "param half_spread") || slices.Contains(differs, "data") {
		t.Errorf("highlighted parameters %v, want guards.max_daily_loss and not the others", differs)
	}
	var kill string
	p.EvalInto(t, `[...document.querySelectorAll('#metrics tr')].find(tr => tr.cells[0].textContent === 'kill-switch trips').cells[3].textContent`, &kill)
	if kill != "+1" {
		t.Errorf("kill-switch trips B − A %q", kill)
	}
	for _, width := range []int{1400, 1024} {
		p.SetWidth(t, width, 900)
		if !p.EvalBool(t, `document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("%d px: the page scrolls sideways (%s px wide)", width, p.Eval(t, `document.documentElement.scrollWidth`))
		}
		shot := p.Screenshot(t, width)
		browsertest.CheckReference(t, filepath.Join("testdata", "screenshots", "compare-"+strconv.Itoa(width)+".png"), shot, browsertest.Tolerance{})
	}
}

package dashboard

import (
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/internal/browsertest"
)

// TestDashboardScreenshots lays the dashboard of a deterministic fleet (fixed
// clock, fixed figures, an hour of history) out in headless Chromium at 1400 and
// 1024 px with an agent's panel open, checks what a person must see — times in
// UTC, the stale feed, the standby's wanted-but-not-running state not in green, the
// agent's orders, fills, audit records and guards, the charts' lines, no sideways
// scrolling — and compares each screenshot with its committed reference
// (testdata/screenshots; PITBOSS_UPDATE_GOLDEN=1 rewrites them).
func TestDashboardScreenshots(t *testing.T) {
	browsertest.Chromium(t)
	clk := &clock{t: fixtureEpoch}
	src := &fixtureSource{clk: clk}
	d, err := New(Config{Source: src, Title: "pitboss fleet demo", Now: clk.Now, Every: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 13; i++ {
		if err := d.Sample(t.Context()); err != nil {
			t.Fatal(err)
		}
		if i < 12 {
			clk.Add(5 * time.Minute)
		}
	}
	src.freeze()
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)

	b := browsertest.Start(t)
	p := b.Load(t, srv.URL+"/")
	p.WaitEval(t, `document.querySelectorAll('#agents tr').length === 4 && document.querySelectorAll('#chart-equity path').length === 3`, 20*time.Second)
	p.Click(t, `#agents tr[data-agent="quoter-1"] button[data-open]`)
	p.WaitEval(t, `document.getElementById('detail').dataset.loaded !== undefined`, 10*time.Second)

	checks := []struct{ what, expr string }{
		{"the clock is UTC", `document.getElementById('clock').textContent === '2026-03-02 15:30:00 UTC'`},
		{"the chart's times are UTC", `[...document.querySelectorAll('#chart-fleet text')].map(e => e.textContent).join(' ').includes('14:30')`},
		{"one fleet line, one equity line per agent", `document.querySelectorAll('#chart-fleet path').length === 1 && document.querySelectorAll('#chart-equity path').length === 3 && document.querySelectorAll('#legend span').length === 3`},
		{"the stalled feed is flagged", `document.querySelector('#agents tr[data-agent="stalled-3"] td[data-stale="1"]').textContent === 'STALE 7m ago' && document.getElementById('summary').textContent.includes('1 stale feed')`},
		{"a fresh feed is not", `document.querySelector('#agents tr[data-agent="quoter-1"] td[data-stale]').textContent === '1.5s ago'`},
		{"the refused standby's desired state is not green", `(() => { const c = [...document.querySelectorAll('#agents tr')].find(r => r.children[1].textContent === 'refused').querySelector('td[data-desired]');
			return c.textContent === 'running (wanted)' && getComputedStyle(c).color !== 'rgb(63, 185, 80)'; })()`},
		{"the running agent's desired state is green", `getComputedStyle(document.querySelector('#agents tr[data-agent="quoter-1"] td[data-desired]')).color === 'rgb(63, 185, 80)'`},
		{"money to the cent", `document.querySelector('#agents tr[data-agent="paused-2"]').textContent.includes('-2.75') && document.getElementById('fleet-pnl').textContent === '-1.10'`},
		{"two supervisor rows", `document.querySelectorAll('#supervisors tr').length === 2 && document.querySelector('#supervisors tr[data-supervisor="sup-west"]').textContent.includes('1 refused')`},
		{"the agent's orders with distance and age", `(() => { const r = [...document.querySelectorAll('#orders tr')].map(r => r.textContent); return r.length === 2 && r[0].includes('0.02') && r[0].includes('42s ago') && r[1].includes('SELL'); })()`},
		{"the agent's book", `document.querySelector('#books tr').textContent.includes('0.49') && document.querySelector('#books tr').textContent.includes('0.51')`},
		{"the guard near its limit", `document.querySelector('#guards tr td.warn').textContent === '80%'`},
		{"its fills, in UTC", `document.querySelectorAll('#fills tr').length === 1 && document.querySelector('#fills tr').textContent.startsWith('2026-03-02 14:25:00')`},
		{"its audit records, newest first", `(() => { const r = [...document.querySelectorAll('#audit tr')].map(r => r.textContent); return r.length === 3 && r[0].includes('placed BUY YES 25 @0.48') && r[1].includes('denied by max_position') && r[2].includes('started pid 4101'); })()`},
		{"all seven actions", `[...document.querySelectorAll('#actions button[data-op]')].map(b => b.dataset.op).join(',') === 'pause,resume,cancel_all,flatten,restart,kill,resume_after_kill'`},
	}
	for _, c := range checks {
		if !p.EvalBool(t, c.expr) {
			t.Errorf("%s: not so; page:\n%s", c.what, p.EvalString(t, `document.body.innerText`))
		}
	}
	for _, width := range []int{1400, 1024} {
		p.SetWidth(t, width, 900)
		p.Eval(t, `new Promise(r => { window.dispatchEvent(new Event('resize')); requestAnimationFrame(() => requestAnimationFrame(r)); })`)
		if !p.EvalBool(t, `document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("%d px: the page scrolls sideways (%s px wide)", width, p.Eval(t, `document.documentElement.scrollWidth`))
		}
		if out := p.EvalString(t, `[...document.querySelectorAll('table, .card, header, svg')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5).map(e => e.id || e.tagName).join(',')`); out != "" {
			t.Errorf("%d px: elements overflow the window: %s", width, out)
		}
		if width == 1024 && !p.EvalBool(t, `getComputedStyle(document.querySelector('#agents-table th.wide')).display === 'none'`) {
			t.Errorf("1024 px: the wide-only columns are shown")
		}
		shot := p.Screenshot(t, width)
		browsertest.CheckReference(t, filepath.Join("testdata", "screenshots", "dashboard-"+strconv.Itoa(width)+".png"), shot, browsertest.Tolerance{})
	}
	if s := p.EvalString(t, `document.body.innerHTML`); strings.Contains(s, "keyring:quoter\"") {
		t.Log("wallet references are shown only as titles")
	}
}

package dashboard

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/internal/browsertest"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// absentSource is a fleet where supervisor s-dead did not answer (its entry,
// written 45 s ago, says it ran b and c; c runs on s1 now) and d is defined but
// nobody runs it: what `pitboss ctl list` shows as missing and unplaced rows.
type absentSource struct{ fakeSource }

func (*absentSource) Fleet(context.Context) (supervisor.Fleet, error) {
	now := fixtureEpoch.UnixMilli()
	run := func(id market.AgentID) supervisor.AgentView {
		return supervisor.AgentView{ID: id, Supervisor: "s1", Process: supervisor.ProcRunning, Liveness: "alive", Desired: natsbus.DesiredRunning,
			Status: &natsbus.Status{Agent: id, State: natsbus.StateRunning, LastEvent: now - 1000}}
	}
	return supervisor.Fleet{
		Supervisors: []supervisor.FleetView{{V: 1, Fleet: "f", Supervisor: "s1", Host: "h1", Time: now, Agents: []supervisor.AgentView{run("a"), run("c")}}},
		Missing:     []supervisor.SupervisorEntry{{V: 1, Name: "s-dead", Host: "h2", Agents: []market.AgentID{"b", "c"}, State: "running", Seen: now - 45000}},
		Unplaced:    []market.AgentID{"b", "d"},
	}, nil
}

// TestMissingSupervisorsAndUnplacedAgents: the dashboard's fleet state carries the
// rows `pitboss ctl list` adds — a supervisor that did not answer (with how long
// ago its entry was written) and the defined agents nobody runs (b, last run by the
// missing supervisor: unknown; d: unplaced) — and the page shows them, in headless
// Chromium, as rows of the supervisors' and agents' tables without actions.
func TestMissingSupervisorsAndUnplacedAgents(t *testing.T) {
	d, err := New(Config{Source: &absentSource{}, Title: "fleet f", Every: 50 * time.Millisecond, Now: func() time.Time { return fixtureEpoch }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)

	var st State
	getJSON(t, srv.URL+"/api/fleet", 200, &st)
	if len(st.Missing) != 1 || st.Missing[0].Name != "s-dead" || st.Missing[0].Host != "h2" || st.Missing[0].SeenAgeMS != 45000 ||
		!slices.Equal(st.Missing[0].Agents, []market.AgentID{"b", "c"}) {
		t.Fatalf("missing supervisors: %+v", st.Missing)
	}
	want := []supervisor.AbsentAgent{
		{ID: "b", State: supervisor.AbsentUnknown, Supervisor: "s-dead", Message: "its supervisor did not answer"},
		{ID: "d", State: supervisor.AbsentUnplaced, Message: "defined; no supervisor runs it"},
	}
	if !slices.Equal(st.Absent, want) {
		t.Fatalf("absent agents: %+v, want %+v", st.Absent, want)
	}
	if len(st.Agents) != 2 {
		t.Fatalf("agent rows %+v", st.Agents)
	}

	t.Run("in the page", func(t *testing.T) {
		browsertest.Chromium(t)
		b := browsertest.Start(t)
		p := b.Load(t, srv.URL+"/")
		p.WaitEval(t, `document.querySelectorAll('#agents tr').length === 4 && document.querySelectorAll('#supervisors tr').length === 2`, 20*time.Second)
		checks := []struct{ what, expr string }{
			{"rows in order: the running ones, then the absent ones", `[...document.querySelectorAll('#agents tr')].map(r => r.dataset.agent || ('absent:' + r.dataset.absent)).join(',') === 'a,c,absent:b,absent:d'`},
			{"b is unknown, on the missing supervisor", `(() => { const c = document.querySelector('#agents tr[data-absent="b"]').children;
				return c[1].textContent === 'unknown' && c[3].textContent === 's-dead (missing)' && c[15].textContent === 'its supervisor did not answer' && c.length === 16; })()`},
			{"d is unplaced", `(() => { const c = document.querySelector('#agents tr[data-absent="d"]').children;
				return c[1].textContent === 'unplaced' && c[3].textContent === '' && c[15].textContent === 'defined; no supervisor runs it'; })()`},
			{"absent rows have no detail button", `document.querySelectorAll('#agents tr[data-absent] button').length === 0`},
			{"unknown is red", `getComputedStyle(document.querySelector('#agents tr[data-absent="b"] td.state')).color === 'rgb(248, 81, 73)'`},
			{"the missing supervisor's row", `(() => { const t = document.querySelector('#supervisors tr[data-missing="1"]').textContent;
				return t.includes('s-dead') && t.includes('h2') && t.includes('last ran b, c') && t.includes('missing') && t.includes('45s ago') && t.includes('did not answer'); })()`},
			{"the summary counts them", `(() => { const s = document.getElementById('summary').textContent;
				return s.includes('2 agents: 2 running') && s.includes('not running: 1 unknown, 1 unplaced') && s.includes('1 supervisor(s), 1 missing'); })()`},
		}
		for _, c := range checks {
			if !p.EvalBool(t, c.expr) {
				t.Errorf("%s: not so; page:\n%s", c.what, p.EvalString(t, `document.body.innerText`))
			}
		}
	})
}

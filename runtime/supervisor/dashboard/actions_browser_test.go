package dashboard_test

import (
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/internal/browsertest"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestAgentButtonsEndToEnd presses every per-agent button of the dashboard in
// headless Chromium against a real supervisor of two agent processes on an
// embedded nats-server: each opens a confirmation whose button stays disabled
// until the agent's id is typed (another agent's id, or KILL, does not do), and
// confirming reaches the agent process — pause, resume, cancel-all (its orders
// disappear from the panel), flatten (its position goes), kill, resume-after-kill,
// restart (a new process). The other agent is never touched. The panel shows the
// agent's open orders, its fills and its audit trail (control records, the
// supervisor's lifecycle records), and no response carries a NATS password.
func TestAgentButtonsEndToEnd(t *testing.T) {
	f, rec, srv := fleetDashboard(t, "a", "b")
	b := browsertest.Start(t)
	p := b.Load(t, srv.URL+"/")
	p.WaitEval(t, `document.querySelectorAll('#agents tr[data-state="running"]').length === 2`, 20*time.Second)
	p.Click(t, `#agents tr[data-agent="a"] button[data-open]`)
	p.WaitEval(t, `document.querySelectorAll('#orders tr').length === 2 && document.querySelectorAll('#fills tr td:not(.empty)').length > 0`, 10*time.Second)

	posts := 0
	press := func(op, confirm string) {
		t.Helper()
		p.Click(t, `#actions button[data-op="`+op+`"]`)
		if !p.EvalBool(t, `document.getElementById('act-panel').classList.contains('open') && document.getElementById('act-confirm').disabled`) {
			t.Fatalf("%s: no confirmation, or its button enabled before typing", op)
		}
		p.Click(t, "#act-confirm") // disabled: nothing happens
		p.Click(t, "#act-word")
		for _, wrong := range []string{"b", "KILL"} {
			p.Eval(t, `document.getElementById('act-word').value = ''`)
			p.InsertText(t, wrong)
			if !p.EvalBool(t, `document.getElementById('act-confirm').disabled`) {
				t.Fatalf("%s: confirm enabled by %q", op, wrong)
			}
		}
		p.Eval(t, `document.getElementById('act-word').value = ''`)
		if rec.posts() != posts {
			t.Fatalf("%s: %d posts before confirming, want %d", op, rec.posts(), posts)
		}
		p.InsertText(t, confirm)
		p.Click(t, "#act-confirm")
		posts++
		p.WaitEval(t, `document.getElementById('act-result').dataset.done === `+browsertest.JSString(op+":ok"), 15*time.Second)
	}
	state := func(id string, st natsbus.AgentState) {
		t.Helper()
		f.WaitAgent(id, string(st), 10*time.Second, supervisortest.StateIs(st))
		p.WaitEval(t, `document.querySelector('#agents tr[data-agent="`+id+`"]').dataset.state === '`+string(st)+`'`, 10*time.Second)
	}

	press("pause", "a")
	state("a", natsbus.StatePaused)
	press("resume", "a")
	state("a", natsbus.StateRunning)
	press("cancel_all", "a")
	p.WaitEval(t, `document.querySelector('#orders tr td.empty') !== null && document.querySelector('#agents tr[data-agent="a"]').children[10].textContent === '0'`, 10*time.Second)
	press("flatten", "a")
	f.WaitAgent("a", "flat", 10*time.Second, func(v supervisor.AgentView) bool { return v.Status != nil && len(v.Status.Positions) == 0 })
	press("kill", "a")
	state("a", natsbus.StateKilled)
	press("resume_after_kill", "a")
	state("a", natsbus.StateRunning)
	pid := f.Agent("a").PID
	press("restart", "a")
	f.WaitAgent("a", "a new process", 20*time.Second, func(v supervisor.AgentView) bool {
		return v.PID != 0 && v.PID != pid && supervisortest.Alive(v)
	})
	p.WaitEval(t, `document.querySelector('#agents tr[data-agent="a"]').dataset.state === 'running'`, 10*time.Second)

	// The audit panel shows what happened, from the trail.
	p.WaitEval(t, `(() => { const t = document.getElementById('audit').textContent;
		return ['pause by dashboard', 'cancel_all by dashboard', 'kill by dashboard', 'resume_after_kill by dashboard'].every(s => t.includes(s)); })()`, 10*time.Second)
	if b := f.Agent("b"); b.Status == nil || b.Status.State != natsbus.StateRunning || len(b.Status.Orders) != 2 || b.Restarts != 0 {
		t.Fatalf("agent b was touched: %+v", b)
	}
	if rec.posts() != 7 {
		t.Fatalf("%d posts, want 7", rec.posts())
	}
	noSecrets(t, f, rec.bodies(), "a", "b")
}

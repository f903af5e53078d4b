package dashboard_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/internal/browsertest"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/dashboard"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestMain runs the tests, or a fake agent when a supervisor under test started
// this binary as one.
func TestMain(m *testing.M) { supervisortest.Main(m) }

// TestDashboardInHeadlessChromium opens the dashboard of a real supervisor (three
// fake agents on an embedded nats-server) in headless Chromium, driven through the
// DevTools protocol over a pipe (internal/browsertest):
// the page lists the agents live; the kill-all button opens a confirmation that
// stays disabled until KILL is typed; confirming throws every agent's kill switch,
// which the page then shows. No response body ever carries a NATS password.
func TestDashboardInHeadlessChromium(t *testing.T) {
	f, rec, srv := fleetDashboard(t, "a", "b", "c")
	b := browsertest.Start(t)
	p := b.Open(t, srv.URL+"/")
	p.WaitEval(t, `document.querySelectorAll('#agents tr[data-state="running"]').length === 3`, 20*time.Second)
	if ids := p.EvalString(t, `[...document.querySelectorAll('#agents tr')].map(r => r.dataset.agent).join(',')`); ids != "a,b,c" {
		t.Fatalf("rows %q", ids)
	}
	if s := p.EvalString(t, `document.getElementById('summary').textContent`); !strings.Contains(s, "3 agents: 3 running") {
		t.Fatalf("summary %q", s)
	}

	// The button only opens the confirmation.
	p.Click(t, "#kill-all")
	if !p.EvalBool(t, `document.getElementById('confirm-panel').classList.contains('open') && document.getElementById('confirm-kill').disabled`) {
		t.Fatal("the confirmation did not open, or its button is enabled before typing")
	}
	// The disabled confirm button does nothing.
	p.Click(t, "#confirm-kill")
	if s := p.EvalString(t, `document.getElementById('kill-result').textContent`); s != "" || rec.posts() != 0 {
		t.Fatalf("a click on the disabled button acted: %q, %d posts", s, rec.posts())
	}
	p.Click(t, "#confirm-word")
	p.InsertText(t, "KIL")
	if !p.EvalBool(t, `document.getElementById('confirm-kill').disabled`) {
		t.Fatal("confirm enabled before the word is complete")
	}
	p.InsertText(t, "L")
	if p.EvalBool(t, `document.getElementById('confirm-kill').disabled`) {
		t.Fatal("confirm still disabled after typing KILL")
	}
	for _, id := range []string{"a", "b", "c"} {
		if v := f.Agent(id); v.Status.State != natsbus.StateRunning {
			t.Fatalf("%s killed before the confirmation: %+v", id, v.Status)
		}
	}
	p.Click(t, "#confirm-kill")
	p.WaitEval(t, `document.getElementById('kill-result').dataset.done === '1'`, 20*time.Second)
	if s := p.EvalString(t, `document.getElementById('kill-result').textContent`); !strings.Contains(s, "kill switch thrown: 3 agent(s) answered") {
		t.Fatalf("result %q", s)
	}
	for _, id := range []string{"a", "b", "c"} {
		f.WaitAgent(id, "killed", 10*time.Second, supervisortest.StateIs(natsbus.StateKilled))
	}
	p.WaitEval(t, `document.querySelectorAll('#agents tr[data-state="killed"]').length === 3`, 20*time.Second)
	if rec.posts() != 1 {
		t.Fatalf("%d kill-all posts", rec.posts())
	}

	// Nothing the page received holds a secret.
	body := rec.bodies()
	if !strings.Contains(body, `"id":"a"`) {
		t.Fatal("the recorder saw no fleet state")
	}
	noSecrets(t, f, body, "a", "b", "c")
}

// noSecrets fails when body holds a NATS password (the supervisor's, the agents'
// shared one, each agent's own) or a credential-shaped field.
func noSecrets(t *testing.T, f *supervisortest.Fleet, body string, ids ...string) {
	t.Helper()
	secrets := []string{f.Sup.Endpoint().Password, f.Sup.AgentEndpoint().Password}
	for _, id := range ids {
		ep, err := f.Sup.AgentEndpointOf(market.AgentID(id))
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, ep.Password)
	}
	for _, s := range secrets {
		if s == "" || strings.Contains(body, s) {
			t.Fatalf("a NATS password (%d chars) reached the browser", len(s))
		}
	}
	noCredentials(t, body)
}

// fleetDashboard starts a supervisor of fake agent processes (one per id, mode
// run) on an embedded nats-server, waits for their heartbeats, and serves its
// dashboard through a recorder. It skips first without Chromium.
func fleetDashboard(t *testing.T, ids ...string) (*supervisortest.Fleet, *recorder, *httptest.Server) {
	t.Helper()
	browsertest.Chromium(t) // skip before starting a fleet without one
	var agents []supervisor.Agent
	for i, id := range ids {
		agents = append(agents, supervisortest.AgentSpec(id, byte(i+1), "run"))
	}
	f := supervisortest.Start(t, agents)
	for _, id := range ids {
		f.WaitAgent(id, "heartbeats", 20*time.Second, supervisortest.Alive)
	}
	d, err := dashboard.New(dashboard.Config{Source: f.Sup, Title: "pitboss fleet test", Every: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{h: d}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return f, rec, srv
}

// credentialField matches a field that would carry a credential: a password, a
// secret, an API key or passphrase, or a "token" that is not a market's token id
// (those are decimal numbers).
var credentialField = regexp.MustCompile(`"(password|secret|passphrase|api_key|apikey)"|"token":"[^0-9"]|PITBOSS_NATS`)

// noCredentials fails when body holds a credential-shaped field.
func noCredentials(t *testing.T, body string) {
	t.Helper()
	if m := credentialField.FindString(body); m != "" {
		t.Fatalf("credential field %s reached the browser", m)
	}
}

// recorder keeps every response body (and counts POSTs).
type recorder struct {
	h  http.Handler
	mu sync.Mutex
	b  bytes.Buffer
	np int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost {
		r.mu.Lock()
		r.np++
		r.mu.Unlock()
	}
	r.h.ServeHTTP(&recordingWriter{ResponseWriter: w, r: r}, req)
}

func (r *recorder) posts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.np
}

func (r *recorder) bodies() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b.String()
}

type recordingWriter struct {
	http.ResponseWriter
	r *recorder
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	w.r.b.Write(p)
	w.r.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

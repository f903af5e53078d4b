package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// fakeSource is a fleet of two agents whose kill-all and controls are recorded.
type fakeSource struct {
	mu     sync.Mutex
	kills  []string
	ops    []string
	failed bool
}

func (f *fakeSource) Control(_ context.Context, op supervisor.Op, id market.AgentID, by, reason string) (supervisor.ControlResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, string(op)+" "+string(id)+" "+by+": "+reason)
	return supervisor.ControlResult{Replies: []natsbus.ControlReply{{V: 1, Agent: id, OK: true, State: natsbus.StatePaused}}}, nil
}

func (f *fakeSource) RecentAudit(context.Context, market.AgentID, int) ([]natsbus.AuditEntry, []natsbus.AuditEntry, error) {
	return []natsbus.AuditEntry{{Seq: 1, Record: natsbus.AuditRecord{Kind: natsbus.AuditLifecycle, Agent: "a", Lifecycle: &natsbus.LifecycleRecord{Event: "started", PID: 7}}}}, nil, nil
}

func (f *fakeSource) Fleet(context.Context) (supervisor.Fleet, error) {
	if f.failed {
		return supervisor.Fleet{}, errors.New("no bus")
	}
	st := &natsbus.Status{Agent: "a", State: natsbus.StateRunning, Realized: natsbus.Amount(market.One), Markets: []market.ConditionID{"0x01"}}
	return supervisor.Fleet{Supervisors: []supervisor.FleetView{{V: 1, Fleet: "f", Supervisor: "s1", Agents: []supervisor.AgentView{
		{ID: "a", Supervisor: "s1", Process: supervisor.ProcRunning, Liveness: "alive", Status: st, WalletRef: "keyring:a"},
		{ID: "b", Supervisor: "s1", Process: supervisor.ProcCrashLoop, Liveness: "unknown", HeartbeatAgeMS: -1, Message: "crashed 5 times"},
	}}}}, nil
}

func (f *fakeSource) KillAll(_ context.Context, by, reason string) (supervisor.KillResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kills = append(f.kills, by+": "+reason)
	return supervisor.KillResult{Replies: []natsbus.ControlReply{{V: 1, Agent: "a", OK: true, State: natsbus.StateKilled}}, Missing: []market.AgentID{"b"}}, nil
}

func newTestServer(t *testing.T, src Source) (*httptest.Server, *Dashboard) {
	t.Helper()
	d, err := New(Config{Source: src, Title: "fleet f", Every: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return srv, d
}

var tokenRE = regexp.MustCompile(`name="pitboss-token" content="([^"]+)"`)

func pageToken(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := tokenRE.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no token in the page:\n%s", b)
	}
	return string(m[1])
}

func TestPageCarriesItsTokenAndSafeHeaders(t *testing.T) {
	srv, _ := newTestServer(t, &fakeSource{})
	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	checks := map[string]bool{
		"status 200":            res.StatusCode == 200,
		"no framing":            res.Header.Get("X-Frame-Options") == "DENY" && strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'"),
		"no cache":              res.Header.Get("Cache-Control") == "no-store",
		"scripts only by nonce": strings.Contains(res.Header.Get("Content-Security-Policy"), "script-src 'nonce-"),
		"no external resource":  !strings.Contains(string(b), "http://") && !strings.Contains(string(b), "https://"),
		"title":                 strings.Contains(string(b), "<title>fleet f</title>"),
		"kill button":           strings.Contains(string(b), `id="kill-all"`),
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("%s (headers %v)", name, res.Header)
		}
	}
	if a, b := pageToken(t, srv), pageToken(t, srv); a == b {
		t.Fatal("two pages got the same token")
	}
	if res, err := http.Get(srv.URL + "/nope"); err != nil || res.StatusCode != 404 {
		t.Fatalf("unknown path: %v %v", res.StatusCode, err)
	}
}

// TestKillAllNeedsOriginTokenAndConfirmation checks each guard of the kill-all
// endpoint: only a same-origin POST with the page's token and the typed word
// throws the switch.
func TestKillAllNeedsOriginTokenAndConfirmation(t *testing.T) {
	src := &fakeSource{}
	srv, _ := newTestServer(t, src)
	tok := pageToken(t, srv)
	origin := srv.URL
	cases := []struct {
		name    string
		method  string
		origin  string
		site    string
		token   string
		ctype   string
		body    string
		status  int
		errPart string
	}{
		{"a GET cannot kill", "GET", origin, "", tok, "application/json", `{"confirm":"KILL"}`, 405, ""},
		{"no origin", "POST", "", "", tok, "application/json", `{"confirm":"KILL"}`, 403, "cross-origin"},
		{"another origin", "POST", "http://evil.example", "", tok, "application/json", `{"confirm":"KILL"}`, 403, "cross-origin"},
		{"cross-site fetch", "POST", origin, "cross-site", tok, "application/json", `{"confirm":"KILL"}`, 403, "cross-origin"},
		{"no token", "POST", origin, "same-origin", "", "application/json", `{"confirm":"KILL"}`, 403, "invalid page token"},
		{"forged token", "POST", origin, "same-origin", "abc.def", "application/json", `{"confirm":"KILL"}`, 403, "invalid page token"},
		{"a form post", "POST", origin, "same-origin", tok, "application/x-www-form-urlencoded", "confirm=KILL", 415, "send JSON"},
		{"not confirmed", "POST", origin, "same-origin", tok, "application/json", `{"confirm":"kill"}`, 400, "type KILL"},
		{"bad json", "POST", origin, "same-origin", tok, "application/json", `{`, 400, "invalid JSON"},
		{"confirmed", "POST", origin, "same-origin", tok, "application/json", `{"confirm":"KILL","reason":"drill"}`, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, srv.URL+"/api/kill-all", strings.NewReader(c.body))
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			if c.site != "" {
				req.Header.Set("Sec-Fetch-Site", c.site)
			}
			if c.token != "" {
				req.Header.Set("X-Pitboss-Token", c.token)
			}
			req.Header.Set("Content-Type", c.ctype)
			b := expectAnswer(t, req, c.status, c.errPart)
			if c.status == 200 {
				var kr supervisor.KillResult
				if err := json.Unmarshal(b, &kr); err != nil || len(kr.Replies) != 1 || kr.Missing[0] != "b" {
					t.Fatalf("result %s", b)
				}
			}
		})
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.kills) != 1 || !strings.HasSuffix(src.kills[0], ": drill") || !strings.HasPrefix(src.kills[0], "dashboard 127.0.0.1:") {
		t.Fatalf("kill-all calls: %q", src.kills)
	}
}

func TestFleetStateAndEvents(t *testing.T) {
	srv, _ := newTestServer(t, &fakeSource{})
	res, err := http.Get(srv.URL + "/api/fleet")
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if len(st.Agents) != 2 || st.Agents[0].State != "running" || st.Agents[0].PnL != "1" || st.Agents[1].State != "crashloop" || len(st.Fleet[0].Agents) != 0 {
		t.Fatalf("state %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events", nil)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	events := 0
	for sc.Scan() && events < 3 {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var st State
			if err := json.Unmarshal([]byte(line), &st); err != nil || len(st.Agents) != 2 {
				t.Fatalf("event %q: %v", line, err)
			}
			events++
		}
	}
	if events != 3 {
		t.Fatalf("%d events", events)
	}
	srv2, _ := newTestServer(t, &fakeSource{failed: true})
	if res, err := http.Get(srv2.URL + "/api/fleet"); err != nil || res.StatusCode != 503 {
		t.Fatalf("unavailable source: %v %v", res.StatusCode, err)
	}
}

func TestListenRefusesOtherInterfaces(t *testing.T) {
	cases := []struct {
		addr  string
		allow bool
		ok    bool
	}{
		{"127.0.0.1:0", false, true},
		{"[::1]:0", false, true},
		{"localhost:0", false, true},
		{":0", false, false},
		{"0.0.0.0:0", false, false},
		{"192.0.2.1:0", false, false},
		{"0.0.0.0:0", true, true},
		{"nonsense", false, false},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			ln, err := Listen(c.addr, c.allow)
			if ln != nil {
				ln.Close()
			}
			if (err == nil) != c.ok {
				// ::1 may be missing on some hosts: only a refusal for the
				// loopback reason counts as a failure there.
				if c.addr == "[::1]:0" && !errors.Is(err, ErrNotLoopback) {
					t.Skipf("no IPv6 loopback: %v", err)
				}
				t.Fatalf("Listen(%q, %v): %v", c.addr, c.allow, err)
			}
			if !c.ok && c.addr != "nonsense" && !errors.Is(err, ErrNotLoopback) {
				t.Fatalf("refusal %v", err)
			}
		})
	}
}

func TestNewNeedsASource(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("dashboard without a source")
	}
}

// expectAnswer sends req and fails unless the answer has status and its body
// contains part; it returns the body.
func expectAnswer(t *testing.T, req *http.Request, status int, part string) []byte {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status || !strings.Contains(string(b), part) {
		t.Fatalf("status %d body %s", res.StatusCode, b)
	}
	return b
}

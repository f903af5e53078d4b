package dashboard

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAgentActionsNeedOriginTokenAndTheAgentsID checks the per-agent endpoint's
// guards: the kill-all's (same origin, page token, JSON) plus the agent's id typed
// as the confirmation; only the listed ops exist.
func TestAgentActionsNeedOriginTokenAndTheAgentsID(t *testing.T) {
	src := &fakeSource{}
	srv, _ := newTestServer(t, src)
	tok := pageToken(t, srv)
	cases := []struct {
		name, path, origin, token, body string
		status                          int
		errPart                         string
	}{
		{"unknown op", "/api/agents/a/withdraw", srv.URL, tok, `{"confirm":"a"}`, 404, "unknown action"},
		{"stop is ctl's", "/api/agents/a/stop", srv.URL, tok, `{"confirm":"a"}`, 404, "unknown action"},
		{"another origin", "/api/agents/a/pause", "http://evil.example", tok, `{"confirm":"a"}`, 403, "cross-origin"},
		{"no token", "/api/agents/a/pause", srv.URL, "", `{"confirm":"a"}`, 403, "invalid page token"},
		{"no confirmation", "/api/agents/a/pause", srv.URL, tok, `{}`, 400, "type the agent's id (a)"},
		{"another agent's id", "/api/agents/a/kill", srv.URL, tok, `{"confirm":"b"}`, 400, "type the agent's id"},
		{"the kill word is not enough", "/api/agents/a/kill", srv.URL, tok, `{"confirm":"KILL"}`, 400, "type the agent's id"},
		{"pause", "/api/agents/a/pause", srv.URL, tok, `{"confirm":"a"}`, 200, `"state":"paused"`},
		{"flatten", "/api/agents/a/flatten", srv.URL, tok, `{"confirm":"a","reason":"drill"}`, 200, `"ok":true`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", srv.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Origin", c.origin)
			if c.token != "" {
				req.Header.Set("X-Pitboss-Token", c.token)
			}
			req.Header.Set("Content-Type", "application/json")
			expectAnswer(t, req, c.status, c.errPart)
		})
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.ops) != 2 || !strings.HasPrefix(src.ops[0], "pause a dashboard 127.0.0.1:") || !strings.HasSuffix(src.ops[0], ": pause from the dashboard") ||
		!strings.HasPrefix(src.ops[1], "flatten a ") || !strings.HasSuffix(src.ops[1], ": drill") {
		t.Fatalf("controls: %q", src.ops)
	}
}

// TestAgentDetailAndState checks /api/agents/{id} (the running row of an agent a
// standby also lists, its audit records and fills) and the state's flags: a stale
// feed, desired running shown as fact only where the agent runs, fleet PnL.
func TestAgentDetailAndState(t *testing.T) {
	clk := &clock{t: fixtureEpoch}
	d, err := New(Config{Source: &fixtureSource{clk: clk}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	var dt AgentDetail
	getJSON(t, srv.URL+"/api/agents/quoter-1", 200, &dt)
	if dt.Agent.Process != "running" || dt.Agent.Status == nil || len(dt.Agent.Status.Orders) != 2 || len(dt.Audit) != 3 || len(dt.Fills) != 1 ||
		dt.Agent.EventAgeMS != 1500 || dt.Agent.Stale || !dt.Agent.DesiredOK {
		t.Fatalf("detail %+v", dt)
	}
	var e map[string]string
	getJSON(t, srv.URL+"/api/agents/nobody", 404, &e)
	if !strings.Contains(e["error"], "no agent nobody") {
		t.Fatalf("unknown agent: %v", e)
	}
	var st State
	getJSON(t, srv.URL+"/api/fleet", 200, &st)
	flags := map[string]string{}
	for _, a := range st.Agents {
		flags[string(a.ID)+"@"+a.Supervisor] = a.State + " stale=" + boolStr(a.Stale) + " desired_ok=" + boolStr(a.DesiredOK)
	}
	want := map[string]string{
		"quoter-1@sup-east":  "running stale=false desired_ok=true",
		"quoter-1@sup-west":  "refused stale=false desired_ok=false",
		"paused-2@sup-east":  "paused stale=false desired_ok=false",
		"stalled-3@sup-east": "running stale=true desired_ok=true",
	}
	for k, v := range want {
		if flags[k] != v {
			t.Errorf("%s: %q, want %q", k, flags[k], v)
		}
	}
	if len(st.Fleet) != 2 || st.Fleet[1].States["refused"] != 1 || st.Fleet[0].AgeMS != 120 || st.Time != fixtureEpoch.UnixMilli() {
		t.Fatalf("supervisors %+v", st.Fleet)
	}
	if st.FleetPnL != "-0.25" { // the third Fleet call: 2.10 - 2.75 + 0.4
		t.Fatalf("fleet pnl %s", st.FleetPnL)
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func getJSON(t *testing.T, url string, status int, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, b)
	}
}

// TestHistoryIsABoundedRing samples more points than the ring holds: the oldest go,
// times come from the dashboard's clock, and every agent with figures has a series.
func TestHistoryIsABoundedRing(t *testing.T) {
	clk := &clock{t: fixtureEpoch}
	d, err := New(Config{Source: &fixtureSource{clk: clk}, Now: clk.Now, HistoryPoints: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 7; i++ {
		if err := d.Sample(t.Context()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	var h History
	getJSON(t, srv.URL+"/api/history", 200, &h)
	if len(h.Fleet) != 4 || h.Fleet[0].T != fixtureEpoch.Add(15*time.Second).UnixMilli() || h.Fleet[3].T != fixtureEpoch.Add(30*time.Second).UnixMilli() {
		t.Fatalf("fleet series %+v", h.Fleet)
	}
	// Samples 3..6 of the fixture's wave: quoter-1's PnL 1.40, 3.05, 4.20, 3.60.
	q := h.Agents["quoter-1"]
	if len(q) != 4 || q[0].PnL != "1.4" || q[3].PnL != "3.6" || q[3].Equity != "1003.6" || h.Fleet[3].PnL != "1.25" {
		t.Fatalf("quoter-1 %+v, fleet %+v", q, h.Fleet[3])
	}
	if strings.Join([]string{string(h.Order[0]), string(h.Order[1]), string(h.Order[2])}, ",") != "paused-2,quoter-1,stalled-3" || len(h.Order) != 3 {
		t.Fatalf("order %v", h.Order)
	}
}

// TestNonLoopbackNeedsAToken: loopback works without a token; any other address
// is refused without one (CheckAddr); with one, every request must carry it — a
// real listener on all interfaces, reached over loopback — and the token never
// comes back in a response (the cookie is a MAC).
func TestNonLoopbackNeedsAToken(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8740", "", true}, {"localhost:0", "", true}, {"[::1]:0", "", true},
		{"0.0.0.0:8740", "", false}, {":8740", "", false}, {"192.0.2.1:80", "", false}, {"0.0.0.0:8740", "s3cret", true},
	} {
		err := CheckAddr(c.addr, c.token)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNeedsToken)) {
			t.Errorf("CheckAddr(%q, %q): %v", c.addr, c.token, err)
		}
	}

	const secret = "tok-7Hq2-not-for-pages"
	d, err := New(Config{Source: &fakeSource{}, AccessToken: secret})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("0.0.0.0:0", true)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	base := "http://127.0.0.1:" + port
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var seen strings.Builder
	do := func(method, path string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		seen.Write(b)
		for k, vs := range res.Header {
			seen.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
		}
		return res
	}
	for _, p := range []string{"/", "/api/fleet", "/api/history", "/api/agents/a"} {
		if res := do("GET", p, nil); res.StatusCode != 401 || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s without the token: %d", p, res.StatusCode)
		}
	}
	if res := do("GET", "/?token=wrong", nil); res.StatusCode != 401 {
		t.Fatalf("a wrong token: %d", res.StatusCode)
	}
	if res := do("GET", "/api/fleet", map[string]string{"Authorization": "Bearer wrong"}); res.StatusCode != 401 {
		t.Fatalf("a wrong bearer: %d", res.StatusCode)
	}
	res := do("GET", "/?token="+secret, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" || len(res.Cookies()) != 1 {
		t.Fatalf("token in the URL: %d %v", res.StatusCode, res.Header)
	}
	c := res.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v", c)
	}
	if res := do("GET", "/", map[string]string{"Cookie": c.Name + "=" + c.Value}); res.StatusCode != 200 {
		t.Fatalf("page with the cookie: %d", res.StatusCode)
	}
	if res := do("GET", "/api/fleet", map[string]string{"Authorization": "Bearer " + secret}); res.StatusCode != 200 {
		t.Fatalf("bearer: %d", res.StatusCode)
	}
	if strings.Contains(seen.String(), secret) {
		t.Fatal("the access token came back in a response")
	}
}

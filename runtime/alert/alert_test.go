package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/market"
)

// received is one request a receiver got.
type received struct {
	path string
	body map[string]any
	raw  string
}

// receiver is a webhook endpoint on loopback that records what it gets and
// answers with status (200 if zero).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	status int
	echo   bool // answer with the request's path in the body (as a careless server might)
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m map[string]any
		if req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &m) != nil {
			t.Errorf("%s: not a JSON body: %q", req.URL.Path, b)
		}
		r.mu.Lock()
		r.got = append(r.got, received{path: req.URL.Path, body: m, raw: string(b)})
		status, echo := r.status, r.echo
		r.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
		}
		if echo {
			fmt.Fprintf(w, "no such hook: %s", req.URL.Path)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// wait polls until the receiver has n requests.
func (r *receiver) wait(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.requests()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d requests, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// envResolver resolves env: references from a map (as the command line's
// resolver does from the environment).
func envResolver(env map[string]string) func(context.Context, string) ([]byte, error) {
	return func(_ context.Context, ref string) ([]byte, error) {
		name, ok := strings.CutPrefix(ref, "env:")
		if !ok || env[name] == "" {
			return nil, fmt.Errorf("%s is not set", ref)
		}
		return []byte(env[name]), nil
	}
}

// start runs s until the test ends, and waits for Run to return.
func start(t *testing.T, s *Sender) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return cancel
}

var t0 = time.Date(2026, 11, 29, 1, 52, 3, 0, time.UTC)

// TestEveryFormatReachesALoopbackReceiver sends one kill-switch alert to a Slack,
// a Discord, a Telegram and a generic JSON webhook served on loopback, and checks
// each body's shape: what those services accept.
func TestEveryFormatReachesALoopbackReceiver(t *testing.T) {
	rc := newReceiver(t)
	env := map[string]string{
		"SLACK":   rc.srv.URL + "/services/T000/B000/slacksecret",
		"DISCORD": rc.srv.URL + "/api/webhooks/1/discordsecret",
		"HOOK":    rc.srv.URL + "/hook/jsonsecret",
		"TG":      "123456:telegramsecret",
	}
	cfg, probs := Parse([]byte(`
webhooks:
  - {name: ops, format: slack, url: env:SLACK}
  - {name: chat, format: discord, url: env:DISCORD}
  - {name: phone, format: telegram, token: env:TG, chat_id: "-1001234", api_url: ` + rc.srv.URL + `}
  - {name: pager, format: json, url: env:HOOK, events: [kill_switch, fill]}
`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	s, err := New(context.Background(), cfg, Options{Source: "fleet-1", Resolve: envResolver(env)})
	if err != nil {
		t.Fatal(err)
	}
	start(t, s)
	s.Notify(KillSwitchEvent("mm-1", "daily loss 25.00 beyond the limit 25", t0))
	got := rc.wait(t, 4)
	byPath := map[string]received{}
	for _, r := range got {
		byPath[r.path] = r
	}
	want := "pitboss fleet-1 · kill switch tripped · agent mm-1\ndaily loss 25.00 beyond the limit 25\n2026-11-29 01:52:03 UTC"

	slack := byPath["/services/T000/B000/slacksecret"]
	if len(slack.body) != 1 || slack.body["text"] != want {
		t.Errorf("slack body %s", slack.raw)
	}
	discord := byPath["/api/webhooks/1/discordsecret"]
	if len(discord.body) != 2 || discord.body["content"] != want ||
		fmt.Sprint(discord.body["allowed_mentions"]) != "map[parse:[]]" {
		t.Errorf("discord body %s", discord.raw)
	}
	tg := byPath["/bot123456:telegramsecret/sendMessage"]
	if len(tg.body) != 3 || tg.body["chat_id"] != "-1001234" || tg.body["text"] != want || tg.body["disable_web_page_preview"] != true {
		t.Errorf("telegram request %s %s", tg.path, tg.raw)
	}
	js := byPath["/hook/jsonsecret"]
	var p Payload
	if err := json.Unmarshal([]byte(js.raw), &p); err != nil {
		t.Fatal(err)
	}
	if (p != Payload{V: 1, Source: "fleet-1", Kind: KillSwitch, Agent: "mm-1", Time: "2026-11-29T01:52:03Z", TimeMs: t0.UnixMilli(),
		Title: "kill switch tripped", Detail: "daily loss 25.00 beyond the limit 25", Text: want}) {
		t.Errorf("json payload %s", js.raw)
	}

	// A fill goes only to the webhook that asked for fills.
	s.Notify(FillEvent("mm-1", &market.Fill{Trade: "t1", Order: "o1", Side: market.Buy, Size: 10 * market.One, Outcome: market.Yes,
		Price: 420_000, Role: market.Maker, Time: t0.UnixMilli()}, "will-it-rain"))
	got = rc.wait(t, 5)
	if got[4].path != "/hook/jsonsecret" || got[4].body["detail"] != "BUY 10 YES @ 0.42 on will-it-rain (maker)" {
		t.Errorf("fill: %s %s", got[4].path, got[4].raw)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(rc.requests()); n != 5 {
		t.Errorf("%d requests, want 5: the fill reached a webhook that did not ask for fills", n)
	}
	st := s.Stats()
	if st.Webhooks[0].Sent != 1 || st.Webhooks[3].Sent != 2 {
		t.Errorf("stats %+v", st)
	}
}

// clock is a settable time for deduplication and rate-limit tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func jsonSender(t *testing.T, rc *receiver, c *clock, extra string) *Sender {
	t.Helper()
	cfg, probs := Parse([]byte("webhooks: [{name: j, format: json, url: env:HOOK, events: [kill_switch, fill, feed_stale, daily_loss, agent_failed]}]\n" + extra))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	s, err := New(context.Background(), cfg, Options{Source: "f", Resolve: envResolver(map[string]string{"HOOK": rc.srv.URL + "/h"}), Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func payloads(t *testing.T, got []received) []Payload {
	var out []Payload
	for _, r := range got {
		var p Payload
		if err := json.Unmarshal([]byte(r.raw), &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestDeduplicatesWithinTheWindow: the same alert five times within the window
// is sent once; after the window the next one says how many were left out;
// another agent's or another key's alert is not a duplicate.
func TestDeduplicatesWithinTheWindow(t *testing.T) {
	rc := newReceiver(t)
	c := &clock{t: t0}
	s := jsonSender(t, rc, c, "dedupe: 10m\n")
	start(t, s)
	for i := 0; i < 5; i++ {
		s.Notify(KillSwitchEvent("a", "daily loss", time.Time{}))
		c.add(time.Minute)
	}
	s.Notify(KillSwitchEvent("b", "daily loss", time.Time{}))
	rc.wait(t, 2)
	c.add(6 * time.Minute) // 11 minutes after the first
	s.Notify(KillSwitchEvent("a", "daily loss", time.Time{}))
	p := payloads(t, rc.wait(t, 3))
	if p[0].Agent != "a" || p[1].Agent != "b" || p[2].Agent != "a" || p[2].Repeats != 4 || !strings.Contains(p[2].Text, "(and 4 more like it)") {
		t.Fatalf("payloads %+v", p)
	}
	if st := s.Stats(); st.Deduplicated != 4 || st.Webhooks[0].Sent != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestRateLimitDropsAndSays: with 3 a minute, 5 distinct alerts at once send 3;
// a minute later the next message says 2 were dropped.
func TestRateLimitDropsAndSays(t *testing.T) {
	rc := newReceiver(t)
	c := &clock{t: t0}
	s := jsonSender(t, rc, c, "per_minute: 3\n")
	start(t, s)
	for i := 0; i < 5; i++ {
		s.Notify(FillEvent("a", &market.Fill{Trade: market.TradeID(fmt.Sprint("t", i)), Side: market.Sell, Outcome: market.No,
			Size: market.One, Price: 500_000, Time: t0.UnixMilli()}, "m"))
	}
	rc.wait(t, 3)
	if st := s.Stats(); st.Webhooks[0].RateLimited != 2 {
		t.Fatalf("stats %+v", st)
	}
	c.add(time.Minute)
	s.Notify(KillSwitchEvent("a", "", time.Time{}))
	p := payloads(t, rc.wait(t, 4))
	if p[3].Kind != KillSwitch || p[3].Dropped != 2 || !strings.Contains(p[3].Text, "2 earlier alert(s) were dropped") {
		t.Fatalf("payload %+v", p[3])
	}
}

// TestSlowWebhookNeverBlocks: a webhook that never answers costs Notify nothing
// (its bounded queue overflows, counted), a healthy webhook beside it still
// gets its alerts, and Run returns within the timeout and the flush bound once
// its context ends.
func TestSlowWebhookNeverBlocks(t *testing.T) {
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	rc := newReceiver(t)
	cfg, probs := Parse([]byte(`
timeout: 200ms
queue: 4
per_minute: 1000
webhooks:
  - {name: slow, format: slack, url: env:SLOW}
  - {name: fast, format: slack, url: env:FAST}
`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	s, err := New(context.Background(), cfg, Options{Resolve: envResolver(map[string]string{"SLOW": slow.URL + "/x", "FAST": rc.srv.URL + "/y"})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(ctx)
	}()
	for i := 0; i < 200; i++ { // would hang here if Notify waited for the slow webhook
		s.Notify(Event{Kind: CrashLoop, Agent: fmt.Sprint("a", i), Title: "crash loop"})
	}
	// The fast webhook's queue holds 4; whether its sender took one out before
	// the burst filled it (5 delivered) depends on scheduling.
	rc.wait(t, 4)
	st := s.Stats()
	if st.Webhooks[0].Overflow == 0 || st.Webhooks[0].Sent != 0 {
		t.Fatalf("slow webhook stats %+v", st.Webhooks[0])
	}
	cancel()
	select {
	case <-done:
	case <-time.After(3*FlushTimeout + time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestSecretsNeverLeak: webhook URLs and bot tokens appear in no log line, no
// error, no statistic and no printed or marshalled Config — when the server
// refuses the connection, answers 500 quoting the request's path, times out, or
// when a reference holds something that is not a URL.
func TestSecretsNeverLeak(t *testing.T) {
	rc := newReceiver(t)
	rc.status, rc.echo = http.StatusInternalServerError, true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	const secret = "s3cr3tPATHtoken"
	env := map[string]string{
		"ECHO":   rc.srv.URL + "/services/" + secret,
		"CLOSED": closed + "/services/" + secret,
		"TG":     "42:" + secret,
		"BAD":    "not a url " + secret,
		"BADTG":  "42/" + secret,
	}
	core, logs := observer.New(zap.DebugLevel)
	cfg, probs := Parse([]byte(`
timeout: 300ms
webhooks:
  - {name: echo, format: slack, url: env:ECHO}
  - {name: closed, format: discord, url: env:CLOSED}
  - {name: tg, format: telegram, token: env:TG, chat_id: "1", api_url: ` + rc.srv.URL + `}
`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	s, err := New(context.Background(), cfg, Options{Resolve: envResolver(env), Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	cancel := start(t, s)
	s.Notify(Event{Kind: LockLost, Agent: "a", Title: "lock lost"})
	deadline := time.Now().Add(15 * time.Second)
	for logs.FilterMessage("alert not delivered").Len() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d failures logged, want 3", logs.Len())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	var seen strings.Builder
	for _, e := range logs.All() {
		fmt.Fprintf(&seen, "%s %v\n", e.Message, e.ContextMap())
	}
	st, _ := json.Marshal(s.Stats())
	cj, _ := json.Marshal(cfg)
	fmt.Fprintf(&seen, "%s %s %v %+v %#v\n", st, cj, cfg, cfg, cfg)
	for _, bad := range []string{"BAD", "BADTG"} {
		c := cfg
		c.Webhooks = []Webhook{{Name: "x", Format: FormatSlack, URL: "env:" + bad}}
		if bad == "BADTG" {
			c.Webhooks = []Webhook{{Name: "x", Format: FormatTelegram, Token: "env:" + bad, ChatID: "1"}}
		}
		_, err := New(context.Background(), c, Options{Resolve: envResolver(env)})
		if err == nil {
			t.Fatalf("env:%s accepted", bad)
		}
		fmt.Fprintln(&seen, err)
	}
	_, probs = Parse([]byte("webhooks: [{name: x, format: slack, url: 'https://hooks.example/" + secret + "'}]"))
	fmt.Fprintln(&seen, probs)
	if len(probs) == 0 {
		t.Fatal("a URL in place of a reference was accepted")
	}
	if strings.Contains(seen.String(), secret) {
		t.Fatalf("the secret leaked:\n%s", seen.String())
	}
	if !strings.Contains(seen.String(), "[redacted]") || !strings.Contains(seen.String(), "status") {
		t.Fatalf("the failures were not described:\n%s", seen.String())
	}
}

// TestObserveDerivesStateAlerts: statuses of one agent give a kill-switch
// alert when it becomes killed, a failure, one stale-feed alert per episode and
// one daily-loss alert per UTC day.
func TestObserveDerivesStateAlerts(t *testing.T) {
	rc := newReceiver(t)
	c := &clock{t: t0}
	s := jsonSender(t, rc, c, "daily_loss: 25\nfeed_stale: 1m\ndedupe: 1s\n")
	start(t, s)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	obs := func(state string, pnl int64, last, now time.Duration) {
		c.t = at(now)
		s.Observe(Status{Agent: "mm", State: state, PnL: market.Micros(pnl) * market.One, LastEvent: at(last), Time: at(now)})
	}
	obs("running", 0, 0, 0)
	obs("running", -10, 50*time.Second, time.Minute)                         // fresh, small loss
	obs("running", -20, 50*time.Second, 3*time.Minute)                       // stale
	obs("running", -20, 50*time.Second, 4*time.Minute)                       // still stale: no second alert
	obs("running", -26, 5*time.Minute, 5*time.Minute)                        // fresh again; loss 26 > 25
	obs("running", -40, 6*time.Minute, 6*time.Minute)                        // loss already told today
	obs("killed", -40, 6*time.Minute, 7*time.Minute)                         // kill switch
	obs("killed", -40, 7*time.Minute, 8*time.Minute)                         // still killed
	obs("failed", -40, 8*time.Minute, 9*time.Minute)                         // failed
	obs("running", -80, 24*time.Hour, 24*time.Hour)                          // a new day: its base is -80
	obs("running", -100, 24*time.Hour+time.Minute, 24*time.Hour+time.Minute) // -20 today: no alert
	rc.wait(t, 4)
	time.Sleep(50 * time.Millisecond)
	p := payloads(t, rc.requests())
	var kinds []string
	for _, x := range p {
		kinds = append(kinds, string(x.Kind))
	}
	if strings.Join(kinds, ",") != "feed_stale,daily_loss,kill_switch,agent_failed" {
		t.Fatalf("alerts %v", kinds)
	}
	if p[1].Detail != "lost 26.00 since 00:00 UTC (limit 25.00; PnL -26.00)" || p[0].Detail != "last market event 2m10s ago (limit 1m0s)" {
		t.Fatalf("details %q, %q", p[0].Detail, p[1].Detail)
	}
}

// TestNilSenderDropsEverything: a nil *Sender (no alerts configured) is safe.
func TestNilSenderDropsEverything(t *testing.T) {
	var s *Sender
	s.Notify(Event{Kind: Fill})
	s.Observe(Status{Agent: "a", State: "killed"})
	if s.Wants(Fill) || len(s.Stats().Webhooks) != 0 {
		t.Fatal("a nil sender wants something")
	}
}

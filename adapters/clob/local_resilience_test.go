package clob_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// faultyProxy sits between a client and the local exchange and misbehaves on
// order posts as its mode says; everything else passes through.
type faultyProxy struct {
	t       *testing.T
	up      *httputil.ReverseProxy
	mode    atomic.Int32
	posts   atomic.Int32 // POST /order requests that reached the exchange
	reposts chan struct{}
	mu      sync.Mutex
	late    []int // status of the held first posts, once forwarded late
}

const (
	passThrough  = iota
	loseAnswer   // forward the post, then never answer (the client times out)
	dropRequest  // never forward the post and never answer
	answer500    // forward the post, then answer 500 "database error"
	deliverLate  // hold the post until the client's second post went through, then forward it
	breakLookups // lose the post's answer and answer every order lookup with 500
)

func newFaultyProxy(t *testing.T, target string) (*faultyProxy, *httptest.Server) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultyProxy{t: t, up: httputil.NewSingleHostReverseProxy(u), reposts: make(chan struct{}, 4)}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv
}

// forward sends r to the exchange and returns the status, whatever happens to the
// client.
func (p *faultyProxy) forward(r *http.Request) int {
	rec := httptest.NewRecorder()
	p.up.ServeHTTP(rec, r.WithContext(context.Background()))
	p.posts.Add(1)
	return rec.Code
}

func (p *faultyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	isPost := r.Method == "POST" && r.URL.Path == "/order"
	mode := int(p.mode.Load())
	if r.Method == "GET" && len(r.URL.Path) > len("/data/order/") && r.URL.Path[:len("/data/order/")] == "/data/order/" && mode == breakLookups {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(`{"error":"database error"}`))
		return
	}
	if !isPost || mode == passThrough {
		p.up.ServeHTTP(w, r)
		if isPost { // counted and signalled once the exchange has answered it
			p.posts.Add(1)
			select {
			case p.reposts <- struct{}{}:
			default:
			}
		}
		return
	}
	switch mode {
	case loseAnswer, breakLookups:
		if mode == loseAnswer {
			p.mode.Store(passThrough)
		}
		p.forward(r)
		<-r.Context().Done()
	case dropRequest:
		p.mode.Store(passThrough)
		_, _ = io.ReadAll(r.Body)
		<-r.Context().Done()
	case answer500:
		p.mode.Store(passThrough)
		p.forward(r)
		w.WriteHeader(500)
		_, _ = w.Write([]byte(`{"error":"database error"}`))
	case deliverLate:
		p.mode.Store(passThrough)
		body, _ := io.ReadAll(r.Body)
		go func() { // owned by the test: it finishes before the exchange stops (see below)
			select {
			case <-p.reposts:
			case <-time.After(10 * time.Second):
			}
			req, _ := http.NewRequest("POST", "/order", strings.NewReader(string(body)))
			req.Header = r.Header.Clone()
			code := p.forward(req)
			p.mu.Lock()
			p.late = append(p.late, code)
			p.mu.Unlock()
		}()
		<-r.Context().Done()
	}
}

func (p *faultyProxy) lateStatuses() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.late...)
}

// TestOrderPostWithOpenOutcomeIsReconciledNotDuplicated posts an order through a
// proxy that loses the answer, drops the request, answers 500 after the exchange
// accepted it, or delivers it only after the client's second post; in every case
// the client ends with the order placed exactly once, and says it reconciled.
func TestOrderPostWithOpenOutcomeIsReconciledNotDuplicated(t *testing.T) {
	tests := []struct {
		name      string
		mode      int32
		posts     int32 // POST /order that reached the exchange
		lateCodes []int // answers to late deliveries
	}{
		{"answer lost after acceptance: found by lookup, not re-posted", loseAnswer, 1, nil},
		{"request dropped: not found, posted again", dropRequest, 1, nil},
		{"500 after acceptance: found by lookup", answer500, 1, nil},
		{"first post arrives after the second: refused as Duplicated", deliverLate, 2, []int{400}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := startLocal(t)
			maker := l.client("reconcile")
			proxy, front := newFaultyProxy(t, l.clob.URL)
			cfg := l.config(signer(t, "reconcile"))
			cfg.CLOBURL, cfg.Timeout = front.URL, 300*time.Millisecond
			c, err := clob.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			useDerivedKey(t, ctxT(t, 10*time.Second), c)
			ctx := ctxT(t, 30*time.Second)
			yes := l.market(fedSlug).Tokens[market.Yes]
			o, err := c.CreateOrder(ctx, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.33"), Size: d("7")})
			if err != nil {
				t.Fatal(err)
			}
			proxy.mode.Store(tt.mode)
			p, err := c.PostOrder(ctx, o)
			if err != nil {
				t.Fatalf("PostOrder: %v", err)
			}
			if !p.Reconciled || !p.Success || p.ID != o.ID {
				t.Fatalf("placement = %+v, want a reconciled success for %s", p, o.ID)
			}
			if tt.lateCodes != nil { // wait for the late delivery to finish
				deadline := time.Now().Add(10 * time.Second)
				for len(proxy.lateStatuses()) < len(tt.lateCodes) && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if got := proxy.lateStatuses(); !slices.Equal(got, tt.lateCodes) {
					t.Fatalf("late deliveries answered %v, want %v", got, tt.lateCodes)
				}
			}
			if got := proxy.posts.Load(); got != tt.posts {
				t.Errorf("%d posts reached the exchange, want %d", got, tt.posts)
			}
			open := collect(t, maker.Orders(ctx, clob.OrderFilter{}))
			if len(open) != 1 || open[0].ID != o.ID || open[0].OriginalSize.String() != "7" {
				t.Fatalf("open orders = %+v, want exactly the one order", open)
			}
		})
	}
}

// TestOrderStatusUnknownWhenLookupsFail checks the last resort: the answer is lost
// and every lookup fails, so the client reports the order's id with an open
// outcome; posting the same signed order later is safe and says Duplicated.
func TestOrderStatusUnknownWhenLookupsFail(t *testing.T) {
	l := startLocal(t)
	proxy, front := newFaultyProxy(t, l.clob.URL)
	_ = l.client("unknown")
	cfg := l.config(signer(t, "unknown"))
	cfg.CLOBURL, cfg.Timeout = front.URL, 300*time.Millisecond
	cfg.Retry = clob.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}
	c, err := clob.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t, 30*time.Second)
	useDerivedKey(t, ctx, c)
	o, err := c.CreateOrder(ctx, clob.OrderArgs{Token: l.market(fedSlug).Tokens[market.Yes], Side: market.Buy, Price: d("0.3"), Size: d("5")})
	if err != nil {
		t.Fatal(err)
	}
	proxy.mode.Store(breakLookups)
	_, err = c.PostOrder(ctx, o)
	var unknown *clob.OrderStatusUnknownError
	if !errors.Is(err, clob.ErrOrderStatusUnknown) || !errors.As(err, &unknown) || unknown.ID != o.ID {
		t.Fatalf("err = %v, want an unknown status for %s", err, o.ID)
	}
	proxy.mode.Store(passThrough)
	if _, err := c.PostOrder(ctx, o); !errors.Is(err, market.ErrDuplicated) {
		t.Fatalf("posting the same order again: %v, want Duplicated (it was accepted)", err)
	}
	if got := proxy.posts.Load(); got != 2 {
		t.Fatalf("%d posts reached the exchange, want 2", got)
	}
}

// TestLocalRateLimitIsRespected runs requests against an exchange limited to 10
// requests per 500 ms: without a budget the client meets 429s and retries them;
// with a budget of 10/s and burst 3 (at most 8 in any 500 ms) it meets none.
func TestLocalRateLimitIsRespected(t *testing.T) {
	const n = 15
	for _, tt := range []struct {
		name   string
		budget clob.Limiter
		want   func(rejected int32) bool
	}{
		{"no budget: 429s, retried with backoff", clob.Unlimited(), func(r int32) bool { return r > 0 }},
		{"a budget under the limit: no 429", clob.NewBudget(clob.BudgetConfig{Rate: 10, Burst: 3, Reserve: -1}), func(r int32) bool { return r == 0 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := startLocal(t, func(c *server.Config) { c.RateLimit, c.RateWindow = 10, 500*time.Millisecond })
			var rejected atomic.Int32
			counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				l.srv.Handler().ServeHTTP(rec, r)
				if rec.Code == 429 {
					rejected.Add(1)
				}
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write(rec.Body.Bytes())
			}))
			defer counting.Close()
			cfg := l.config(nil)
			cfg.CLOBURL, cfg.Budget = counting.URL, tt.budget
			cfg.Retry = clob.RetryPolicy{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: 400 * time.Millisecond}
			c, err := clob.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := ctxT(t, 30*time.Second)
			for i := range n {
				if _, err := c.ServerTime(ctx); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
			}
			if r := rejected.Load(); !tt.want(r) {
				t.Fatalf("%d requests answered 429", r)
			}
		})
	}
}

// TestLocalClockSkewIsCorrected runs an exchange whose clock is 10 minutes ahead
// (twice its authentication window): the client's first signed requests are
// refused, it measures the offset from GET /time and signs again, and later
// requests go through at once.
func TestLocalClockSkewIsCorrected(t *testing.T) {
	ahead := 10 * time.Minute
	l := startLocal(t, func(c *server.Config) {
		c.Clock = func() int64 { return time.Now().Add(ahead).UnixMilli() }
	})
	c, err := clob.New(l.config(signer(t, "skewed")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t, 30*time.Second)
	cr, err := c.CreateAPIKey(ctx, clob.KeyOptions{}) // L1: refused, resynchronised, signed again
	if err != nil {
		t.Fatalf("CreateAPIKey with a skewed clock: %v", err)
	}
	if skew := c.Skew(); (skew - ahead).Abs() > 2*time.Second {
		t.Fatalf("Skew = %v, want about %v", skew, ahead)
	}
	if err := c.SetCredentials(cr); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BalanceAllowance(ctx, clob.BalanceParams{}); err != nil { // L2 with the measured offset
		t.Fatalf("L2 after the sync: %v", err)
	}
	if now := c.Now(); now.Sub(time.Now().Add(ahead)).Abs() > 2*time.Second {
		t.Fatalf("Now = %v, want the exchange's time", now)
	}

	// UseServerTime signs with GET /time instead of a measured offset.
	cfg := l.config(signer(t, "skewed"))
	cfg.UseServerTime = true
	cfg.Credentials = cr
	st, err := clob.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.APIKeys(ctx); err != nil || st.Skew() != 0 {
		t.Fatalf("UseServerTime: %v (skew %v)", err, st.Skew())
	}
}

// TestLocalHeartbeats checks the heartbeat chain and the dead-man's switch: while
// a Heartbeater runs the orders stay; once it stops, the exchange cancels them.
func TestLocalHeartbeats(t *testing.T) {
	l := startLocal(t, func(c *server.Config) { c.HeartbeatTimeout = time.Second })
	c := l.client("heartbeat")
	ctx := ctxT(t, 30*time.Second)
	id, err := c.Heartbeat(ctx, "")
	if err != nil || id == "" {
		t.Fatalf("first heartbeat = %q, %v", id, err)
	}
	next, err := c.Heartbeat(ctx, id)
	if err != nil || next != id {
		t.Fatalf("second heartbeat = %q, %v", next, err)
	}
	cur, err := c.Heartbeat(ctx, "00000000-0000-4000-8000-000000000000")
	if !is(err, market.CodeHeartbeatInvalid) || cur != id {
		t.Fatalf("stale heartbeat = %q, %v; want the current id %q", cur, err, id)
	}

	p := place(t, c, clob.OrderArgs{Token: l.market(fedSlug).Tokens[market.Yes], Side: market.Buy, Price: d("0.2"), Size: d("5")})
	hb := clob.NewHeartbeater(c, 100*time.Millisecond, func(err error) { t.Errorf("heartbeat: %v", err) })
	hctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- hb.Run(hctx) }()
	// Poll until the beats span twice the timeout (the exchange checks deadlines
	// every second): the order must still rest.
	var first time.Time
	for deadline := time.Now().Add(10 * time.Second); ; {
		last, _ := hb.LastBeat()
		if first.IsZero() {
			first = last
		}
		if !first.IsZero() && last.Sub(first) >= 2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("heartbeats did not span 2 s (first %v, last %v)", first, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rec, err := c.Order(ctx, p.ID); err != nil || rec.Status != "LIVE" {
		t.Fatalf("order while beating: %+v, %v", rec, err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, err := c.Order(ctx, p.ID)
		if err == nil && rec.Status == "CANCELED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("order not cancelled after the heartbeats stopped: %+v, %v", rec, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLocalBuilderOrders places and cancels an order through a builder key.
func TestLocalBuilderOrders(t *testing.T) {
	l := startLocal(t)
	c := l.client("builder")
	ctx := ctxT(t, 30*time.Second)
	if _, err := c.CreateBuilderAPIKey(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	yes := l.market(fedSlug).Tokens[market.Yes]
	req := api.BuilderOrderRequest{Order: api.BuilderOrder{
		TokenID: u256(t, string(yes)), Side: api.Side(market.Buy), MakerAmount: api.U256From(2_000_000), TakerAmount: api.U256From(10_000_000),
	}}
	r, err := c.BuilderOrder(ctx, "acme", req)
	if err != nil || !r.Success || r.BuilderID != "acme" || r.Status != "LIVE" || !api.ValidOrderID(r.OrderID) {
		t.Fatalf("BuilderOrder = %+v, %v", r, err)
	}
	if _, err := c.BuilderOrder(ctx, "", req); !is(err, market.CodeBuilderHeaderRequired) {
		t.Fatalf("without a builder id: %v", err)
	}
	if _, err := c.BuilderOrder(ctx, "someone-else", req); !is(err, market.CodeInvalidAuthorization) {
		t.Fatalf("with another builder id: %v", err)
	}
	cr, err := c.BuilderCancel(ctx, "acme", []market.OrderID{market.OrderID(r.OrderID)})
	if err != nil || !slices.Contains(cr.Canceled, market.OrderID(r.OrderID)) {
		t.Fatalf("BuilderCancel = %+v, %v", cr, err)
	}
}

func u256(t *testing.T, s string) api.U256 {
	t.Helper()
	v, err := api.ParseU256(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

package remote_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
	"github.com/pitbossdev/pitboss/sandbox/server"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// local is the local exchange on loopback: the engine host, the CLOB service with
// its WebSocket channels, over the demo catalogue. Tests talk to it over real HTTP
// and WebSockets with real signatures. A switchable fault injector sits in front of
// the CLOB routes (not the WebSockets) so that tests can lose answers.
type local struct {
	t     testing.TB
	cat   *catalog.Catalog
	srv   *server.Server
	http  *httptest.Server
	ws    *httptest.Server // the WebSocket channels, on their own listener so that tests can cut them
	wsURL string

	connMu sync.Mutex
	conns  []net.Conn // connections of the WebSocket listener

	// loseAnswer, when set, decides per request whether the exchange handles it but
	// the client never hears the answer (the connection is cut).
	loseAnswer atomic.Pointer[func(r *http.Request) bool]
	lost       atomic.Int64
}

const (
	fedSlug = "fed-cuts-rates-in-june-2026"     // tick 0.01, no fee, min size 5
	updown  = "bitcoin-up-or-down-march-2-2026" // outcomes Up and Down
)

func startLocal(t testing.TB, opts ...func(*server.Config)) *local {
	t.Helper()
	log := zaptest.NewLogger(t, zaptest.Level(zapcore.WarnLevel))
	l := &local{t: t, cat: catalog.Demo()}
	now := func() int64 { return time.Now().UnixMilli() }
	st := server.NewState(server.StateConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, host.Config{Clock: now, Logger: log.Named("host"), Sync: journal.SyncNone,
		Genesis: catalog.Genesis(l.cat, now()), Extensions: []host.Extension{st.Extension()}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cfg := server.Config{Catalog: l.cat, Logger: log.Named("server"), RateLimit: -1}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.New(h, st, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	hub, err := ws.New(ws.Config{Source: h, Credentials: srv, TradeID: server.TradeID, Logger: log.Named("ws")})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv.Handle("/ws/market", hub.MarketHandler())
	srv.Handle("/ws/user", hub.UserHandler())
	l.srv = srv
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{h.Run, srv.Run, hub.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = run(ctx)
		}()
	}
	handler := srv.Handler()
	l.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := l.loseAnswer.Load(); f != nil && !strings.HasPrefix(r.URL.Path, "/ws/") && (*f)(r) {
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, r) // the exchange does it ...
			l.lost.Add(1)
			if hj, ok := w.(http.Hijacker); ok { // ... and the answer is lost
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		handler.ServeHTTP(w, r)
	}))
	l.ws = httptest.NewUnstartedServer(handler)
	l.ws.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			l.connMu.Lock()
			l.conns = append(l.conns, c)
			l.connMu.Unlock()
		}
	}
	l.ws.Start()
	l.wsURL = "ws" + strings.TrimPrefix(l.ws.URL, "http")
	t.Cleanup(func() {
		l.cutWS()
		l.ws.Close()
		l.http.CloseClientConnections()
		l.http.Close()
		cancel()
		wg.Wait()
	})
	return l
}

// cutWS cuts every connection of the WebSocket listener.
func (l *local) cutWS() {
	l.connMu.Lock()
	defer l.connMu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// lose makes the exchange drop the answers of the requests f selects (nil: none).
func (l *local) lose(f func(r *http.Request) bool) {
	if f == nil {
		l.loseAnswer.Store(nil)
		return
	}
	l.loseAnswer.Store(&f)
}

func (l *local) market(slug string) market.Info {
	l.t.Helper()
	m, _, ok := l.cat.MarketBySlug(slug)
	if !ok {
		l.t.Fatalf("no demo market %s", slug)
	}
	return market.Info{Condition: m.Condition, Tokens: m.Tokens, TickSize: m.TickSize, MinSize: m.MinSize, FeeBps: m.FeeBps}
}

// signer returns a deterministic test wallet.
func signer(t testing.TB, name string) *auth.KeySigner {
	t.Helper()
	seed := sha256.Sum256([]byte("pitboss-remote-test:" + name))
	s, err := auth.NewKeySignerFromBytes(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// client returns a client of wallet s with API credentials created on the exchange
// (which credits the paper balance), and the credentials.
func (l *local) client(s auth.Signer) (*clob.Client, auth.Credentials) {
	l.t.Helper()
	c, err := clob.New(clob.Config{CLOBURL: l.http.URL, Signer: s, Exchange: server.DefaultExchange,
		NegRiskExchange: server.DefaultNegRiskExchange, Budget: clob.Unlimited(),
		Retry:  clob.RetryPolicy{MaxAttempts: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond},
		Logger: zaptest.NewLogger(l.t, zaptest.Level(zapcore.WarnLevel)).Named("client")})
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { c.Close() })
	cr, err := c.CreateOrDeriveAPIKey(ctxT(l.t, 10*time.Second), clob.KeyOptions{})
	if err != nil {
		l.t.Fatal(err)
	}
	if err := c.SetCredentials(cr); err != nil {
		l.t.Fatal(err)
	}
	return c, cr
}

// venue returns a remote venue of a new wallet, with the markets of slugs loaded.
func (l *local) venue(name string, slugs ...string) (*remote.Venue, *clob.Client, auth.Credentials) {
	l.t.Helper()
	s := signer(l.t, name)
	c, cr := l.client(s)
	v, err := remote.New(remote.Config{Client: c, Signer: s, Epoch: 7, Logger: zaptest.NewLogger(l.t, zaptest.Level(zapcore.WarnLevel))})
	if err != nil {
		l.t.Fatal(err)
	}
	var ids []market.ConditionID
	for _, sl := range slugs {
		ids = append(ids, l.market(sl).Condition)
	}
	if _, err := v.Markets(ctxT(l.t, 10*time.Second), ids); err != nil {
		l.t.Fatal(err)
	}
	return v, c, cr
}

// ask offers size shares of info's outcome oc at price for another wallet (the
// market's liquidity): a BUY of the other outcome at 1 − price, which needs only
// collateral and rests in the book as that ask.
func (l *local) ask(c *clob.Client, info market.Info, oc market.Outcome, price, size string) market.OrderID {
	l.t.Helper()
	px := decimal.NewFromInt(1).Sub(decimal.RequireFromString(price))
	p, err := c.PlaceOrder(ctxT(l.t, 10*time.Second), clob.OrderArgs{Token: info.Tokens[oc.Other()], Side: market.Buy,
		Price: px, Size: decimal.RequireFromString(size)})
	if err != nil {
		l.t.Fatalf("maker order: %v", err)
	}
	return p.ID
}

// openOrders lists a wallet's open orders through its client.
func openOrders(t *testing.T, c *clob.Client) []api.OpenOrder {
	t.Helper()
	var out []api.OpenOrder
	for o, err := range c.Orders(ctxT(t, 10*time.Second), clob.OrderFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mic(s string) market.Micros {
	m, err := market.ParseMicros(s)
	if err != nil {
		panic(err)
	}
	return m
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fastWS shortens the WebSocket client's reconnection delays.
func fastWS(c *wsfeed.Config) {
	c.MinBackoff, c.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
}

// collector gathers a feed's events.
type collector struct {
	mu  sync.Mutex
	evs []market.Event
}

func (c *collector) emit(ev *market.Event) bool {
	e := *ev
	e.Bids = append([]market.Level(nil), ev.Bids...)
	e.Asks = append([]market.Level(nil), ev.Asks...)
	e.Changes = append([]market.LevelChange(nil), ev.Changes...)
	c.mu.Lock()
	c.evs = append(c.evs, e)
	c.mu.Unlock()
	return true
}

func (c *collector) events(k market.EventKind) []market.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []market.Event
	for _, e := range c.evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// runFeed runs f until the test ends.
func runFeed(t *testing.T, f *remote.Feed, emit func(*market.Event) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, emit) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("feed: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("feed did not stop")
		}
	})
}

// Package remotetest runs the local exchange in process for tests of the remote
// venue: the engine host and the CLOB service with its WebSocket channels on
// loopback listeners, with the data service (positions with their cost basis) on
// a listener of its own, over the demo catalogue, with real HTTP, real WebSockets and
// real signatures. A fault injector in front of the REST routes can lose answers
// (the exchange acts, the client never hears), the WebSocket listener's connections
// can be cut, and every REST request is counted by method and path.
//
// It is test support: only _test.go files import it.
package remotetest

import (
	"context"
	"crypto/sha256"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/data"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
	"github.com/pitbossdev/pitboss/sandbox/server"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// Demo markets the tests trade.
const (
	FedSlug = "fed-cuts-rates-in-june-2026"     // tick 0.01, no fee, min size 5
	UpDown  = "bitcoin-up-or-down-march-2-2026" // outcomes Up and Down, with a taker fee
)

// Exchange is the local exchange of one test; Start creates it and the test's end
// stops it.
type Exchange struct {
	t       testing.TB
	Catalog *catalog.Catalog
	Server  *server.Server
	// URL is the CLOB service's base URL (REST, behind the fault injector);
	// WSURL the WebSocket base, on a listener of its own; DataURL the data
	// service's (GET /positions …), on a third.
	URL, WSURL, DataURL string

	http *httptest.Server
	ws   *httptest.Server
	data *httptest.Server

	connMu sync.Mutex
	conns  []net.Conn

	lose atomic.Pointer[func(r *http.Request) bool]
	lost atomic.Int64

	countMu sync.Mutex
	counts  map[reqKey]int
	wsPaths map[string]int // WebSocket listener requests by path
}

// reqKey is one kind of request of one wallet (the zero address: no wallet header).
type reqKey struct {
	addr  market.Address
	route string // "METHOD /path"
}

// Sender is the wallet a request names in its SERVICE_ADDRESS (or POLY_ADDRESS)
// header, the zero address when none.
func Sender(r *http.Request) market.Address {
	for _, h := range []string{"SERVICE_ADDRESS", "POLY_ADDRESS"} {
		if v := r.Header.Get(h); v != "" {
			if a, err := market.ParseAddress(v); err == nil {
				return a
			}
		}
	}
	return market.Address{}
}

// Start starts a fresh exchange; opts adjust the CLOB server's configuration.
func Start(t testing.TB, opts ...func(*server.Config)) *Exchange {
	t.Helper()
	log := zaptest.NewLogger(t, zaptest.Level(zapcore.WarnLevel))
	x := &Exchange{t: t, Catalog: catalog.Demo(), counts: map[reqKey]int{}, wsPaths: map[string]int{}}
	now := func() int64 { return time.Now().UnixMilli() }
	st := server.NewState(server.StateConfig{})
	ix := data.New(data.Config{Catalog: x.Catalog})
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, host.Config{Clock: now, Logger: log.Named("host"), Sync: journal.SyncNone,
		Genesis: catalog.Genesis(x.Catalog, now()), Extensions: []host.Extension{st.Extension(), ix}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	// Loopback is a trusted proxy: a test's client plays the CDN that sets the
	// country headers (docs/design/0132).
	cfg := server.Config{Catalog: x.Catalog, Logger: log.Named("server"), RateLimit: -1,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.New(h, st, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	hub, err := ws.New(ws.Config{Source: h, Credentials: srv, TradeID: srv.TradeID, Orders: srv.OrderMeta, Logger: log.Named("ws")})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv.Handle("/ws/market", hub.MarketHandler())
	srv.Handle("/ws/user", hub.UserHandler())
	x.Server = srv
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{h.Run, srv.Run, hub.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = run(ctx)
		}()
	}
	handler := srv.Handler()
	x.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.countMu.Lock()
		x.counts[reqKey{Sender(r), r.Method + " " + r.URL.Path}]++
		x.countMu.Unlock()
		if f := x.lose.Load(); f != nil && (*f)(r) {
			handler.ServeHTTP(httptest.NewRecorder(), r) // the exchange acts ...
			x.lost.Add(1)
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
	x.ws = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.countMu.Lock()
		x.wsPaths[r.URL.Path]++
		x.countMu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	x.ws.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			x.connMu.Lock()
			x.conns = append(x.conns, c)
			x.connMu.Unlock()
		}
	}
	x.ws.Start()
	x.data = httptest.NewServer(ix.Handler())
	x.URL, x.DataURL = x.http.URL, x.data.URL
	x.WSURL = "ws" + strings.TrimPrefix(x.ws.URL, "http")
	t.Cleanup(func() {
		x.data.Close()
		x.CutWS()
		x.ws.Close()
		x.http.CloseClientConnections()
		x.http.Close()
		cancel()
		wg.Wait()
	})
	return x
}

// CutWS cuts every connection of the WebSocket listener (clients reconnect).
func (x *Exchange) CutWS() {
	x.connMu.Lock()
	defer x.connMu.Unlock()
	for _, c := range x.conns {
		c.Close()
	}
	x.conns = nil
}

// Lose makes the exchange handle the REST requests f selects and drop their
// answers (nil: none).
func (x *Exchange) Lose(f func(r *http.Request) bool) {
	if f == nil {
		x.lose.Store(nil)
		return
	}
	x.lose.Store(&f)
}

// Lost returns how many answers were dropped.
func (x *Exchange) Lost() int64 { return x.lost.Load() }

// Count returns how many REST requests of method and path wallet a sent (the zero
// address: requests naming no wallet).
func (x *Exchange) Count(a market.Address, method, path string) int {
	x.countMu.Lock()
	defer x.countMu.Unlock()
	return x.counts[reqKey{a, method + " " + path}]
}

// WSRequests returns how many requests (connection attempts) for path ("/ws/market",
// "/ws/user") the WebSocket listener received.
func (x *Exchange) WSRequests(path string) int {
	x.countMu.Lock()
	defer x.countMu.Unlock()
	return x.wsPaths[path]
}

// Requests returns the REST requests that arrived, by "METHOD /path", except those
// of the wallets in exclude.
func (x *Exchange) Requests(exclude ...market.Address) map[string]int {
	x.countMu.Lock()
	defer x.countMu.Unlock()
	out := map[string]int{}
	for k, v := range x.counts {
		skip := false
		for _, a := range exclude {
			skip = skip || k.addr == a
		}
		if !skip {
			out[k.route] += v
		}
	}
	return out
}

// Market returns a demo market's metadata.
func (x *Exchange) Market(slug string) market.Info {
	x.t.Helper()
	m, _, ok := x.Catalog.MarketBySlug(slug)
	if !ok {
		x.t.Fatalf("no demo market %s", slug)
	}
	return market.Info{Condition: m.Condition, Slug: m.Slug, Tokens: m.Tokens, Outcomes: m.Outcomes, TickSize: m.TickSize,
		MinSize: m.MinSize, FeeBps: m.FeeBps, NegRisk: m.NegRisk}
}

// Signer returns a deterministic test wallet named name.
func Signer(t testing.TB, name string) *auth.KeySigner {
	t.Helper()
	s, err := auth.NewKeySignerFromBytes(Key(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Key returns the private key of the test wallet named name (32 bytes).
func Key(name string) []byte {
	seed := sha256.Sum256([]byte("pitboss-remote-test:" + name))
	return seed[:]
}

// Client returns a client of wallet s with API credentials created on the exchange
// (which credits the paper balance to a new wallet), and the credentials.
func (x *Exchange) Client(s auth.Signer) (*clob.Client, auth.Credentials) {
	x.t.Helper()
	c, err := clob.New(clob.Config{CLOBURL: x.URL, Signer: s, Exchange: server.DefaultExchange,
		NegRiskExchange: server.DefaultNegRiskExchange, Budget: clob.Unlimited(),
		Retry:  clob.RetryPolicy{MaxAttempts: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond},
		Logger: zaptest.NewLogger(x.t, zaptest.Level(zapcore.WarnLevel)).Named("client")})
	if err != nil {
		x.t.Fatal(err)
	}
	x.t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cr, err := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{})
	if err != nil {
		x.t.Fatal(err)
	}
	if err := c.SetCredentials(cr); err != nil {
		x.t.Fatal(err)
	}
	return c, cr
}

// Ask offers size shares of info's outcome oc at price from c's wallet (the
// market's liquidity): a BUY of the other outcome at 1 − price, which needs only
// collateral and rests in the book as that ask.
func (x *Exchange) Ask(c *clob.Client, info market.Info, oc market.Outcome, price, size string) market.OrderID {
	x.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	px := decimal.NewFromInt(1).Sub(decimal.RequireFromString(price))
	p, err := c.PlaceOrder(ctx, clob.OrderArgs{Token: info.Tokens[oc.Other()], Side: market.Buy,
		Price: px, Size: decimal.RequireFromString(size)})
	if err != nil {
		x.t.Fatalf("maker order: %v", err)
	}
	return p.ID
}

// OpenOrders lists the open orders of c's wallet.
func OpenOrders(t testing.TB, c *clob.Client) []api.OpenOrder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []api.OpenOrder
	for o, err := range c.Orders(ctx, clob.OrderFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

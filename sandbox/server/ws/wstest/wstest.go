// Package wstest provides test fixtures for the WebSocket hub and its clients: an
// engine host (an exchange.Engine with an asynchronous, ordered dispatcher, like
// sandbox/host in ephemeral mode), a credential store, a REST GET /book handler, a
// seeded random order flow, and a server that mounts the hub on a loopback
// httptest server. It is for tests only.
package wstest

import (
	"context"
	"crypto/subtle"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// Host is an engine host for tests: Apply runs commands on the engine under a
// mutex and queues a copy of their events; a dispatcher goroutine delivers queued
// batches to listeners in order, so listeners lag behind Read exactly as with the
// real host. It satisfies ws.Source.
type Host struct {
	mu  sync.Mutex // the engine and now
	e   *exchange.Engine
	now int64

	lmu       sync.Mutex // listeners
	listeners []*listener
	dmu       sync.Mutex // held while a batch is being delivered
	unsubs    int        // unsubscriptions completed (guarded by dmu)

	qmu     sync.Mutex
	queue   [][]exchange.Event
	cond    *sync.Cond
	closed  bool
	pending int // batches queued or being delivered
	drop    int // batches to drop (to simulate a gap)
	done    chan struct{}
}

type listener struct {
	fn func([]exchange.Event)
}

// NewHost starts a host at time start (Unix ms); t's cleanup stops its dispatcher.
func NewHost(t testing.TB, start int64) *Host {
	h := OpenHost(start)
	t.Cleanup(h.Close)
	return h
}

// OpenHost starts a host at time start (Unix ms); the caller stops it with Close.
func OpenHost(start int64) *Host {
	h := &Host{e: exchange.New(exchange.Config{}), now: start, done: make(chan struct{})}
	h.cond = sync.NewCond(&h.qmu)
	go h.dispatch()
	return h
}

// Close stops the dispatcher after it has delivered what is queued.
func (h *Host) Close() {
	h.qmu.Lock()
	if h.closed {
		h.qmu.Unlock()
		return
	}
	h.closed = true
	h.cond.Broadcast()
	h.qmu.Unlock()
	<-h.done
}

func (h *Host) dispatch() {
	defer close(h.done)
	for {
		h.qmu.Lock()
		for len(h.queue) == 0 && !h.closed {
			h.cond.Wait()
		}
		if len(h.queue) == 0 {
			h.qmu.Unlock()
			return
		}
		batch := h.queue[0]
		h.queue = h.queue[1:]
		drop := h.drop > 0
		if drop {
			h.drop--
		}
		h.qmu.Unlock()
		if !drop {
			h.dmu.Lock()
			h.lmu.Lock()
			ls := append([]*listener(nil), h.listeners...)
			h.lmu.Unlock()
			for _, l := range ls {
				l.fn(batch)
			}
			h.dmu.Unlock()
		}
		h.qmu.Lock()
		h.pending--
		h.cond.Broadcast()
		h.qmu.Unlock()
	}
}

// Subscribe implements ws.Source.
func (h *Host) Subscribe(_ string, fn func([]exchange.Event)) func() {
	l := &listener{fn: fn}
	h.lmu.Lock()
	h.listeners = append(h.listeners, l)
	h.lmu.Unlock()
	return func() {
		h.lmu.Lock()
		for i, x := range h.listeners {
			if x == l {
				h.listeners = append(h.listeners[:i:i], h.listeners[i+1:]...)
				break
			}
		}
		h.lmu.Unlock()
		h.dmu.Lock() // waits for a delivery in progress
		h.unsubs++
		h.dmu.Unlock()
	}
}

// Read implements ws.Source.
func (h *Host) Read(ctx context.Context, fn func(*exchange.Engine)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h.e)
	return nil
}

// Apply applies commands (Time 0 gets the host clock, which advances by 1 ms per
// command) as one published batch and returns their rejections (nil entries for
// accepted commands).
func (h *Host) Apply(cmds ...exchange.Command) []error {
	errs := make([]error, len(cmds))
	var batch []exchange.Event
	h.mu.Lock()
	for i := range cmds {
		c := cmds[i]
		if c.Time == 0 {
			h.now++
			c.Time = h.now
		}
		evs, err := h.e.Apply(&c)
		errs[i] = err
		batch = append(batch, evs...)
	}
	h.mu.Unlock()
	if len(batch) == 0 {
		return errs
	}
	h.qmu.Lock()
	h.queue = append(h.queue, batch)
	h.pending++
	h.cond.Broadcast()
	h.qmu.Unlock()
	return errs
}

// Must applies cmds and fails t on any rejection.
func (h *Host) Must(t testing.TB, cmds ...exchange.Command) {
	t.Helper()
	for i, err := range h.Apply(cmds...) {
		if err != nil {
			t.Fatalf("command %d (%s): %v", i, cmds[i].Kind, err)
		}
	}
}

// DropNext makes the dispatcher drop the next n batches (a gap, as when the host
// cannot make a batch durable).
func (h *Host) DropNext(n int) {
	h.qmu.Lock()
	h.drop += n
	h.qmu.Unlock()
}

// Flush waits until every batch applied so far has been delivered.
func (h *Host) Flush() {
	h.qmu.Lock()
	for h.pending > 0 {
		h.cond.Wait()
	}
	h.qmu.Unlock()
}

// Seq returns the engine's sequence number.
func (h *Host) Seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.e.Seq()
}

// Book returns token t's book as GET /book would (best-first).
func (h *Host) Book(t market.TokenID) market.Book {
	var b market.Book
	h.mu.Lock()
	h.e.Book(t, &b)
	h.mu.Unlock()
	return b
}

// BookHandler serves GET /book?token_id= from the engine (the REST summary with its
// hash), like sandbox/server.
func (h *Host) BookHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := market.TokenID(r.URL.Query().Get("token_id"))
		if tok == "" {
			api.WriteError(w, market.Errorf(market.CodeInvalidTokenID)) //nolint:errcheck // test server
			return
		}
		var ob api.OrderBook
		found := false
		h.mu.Lock()
		if mk, _, ok := h.e.TokenMarket(tok); ok {
			inf, _ := h.e.Market(mk)
			var b market.Book
			h.e.Book(tok, &b)
			last, _, _ := h.e.LastTrade(tok)
			ob = api.BookFrom(&inf, &b, last, h.e.Time())
			found = true
		}
		h.mu.Unlock()
		if !found {
			api.WriteError(w, market.Errorf(market.CodeNoOrderbook)) //nolint:errcheck // test server
			return
		}
		api.WriteJSON(w, http.StatusOK, ob) //nolint:errcheck // test server
	})
}

// Key is one API key of Keys.
type Key struct {
	Secret, Passphrase string
	Addr               market.Address
}

// Keys is a credential store (ws.Credentials): API key → its secrets and address.
type Keys map[string]Key

// LookupCredentials implements ws.Credentials.
func (k Keys) LookupCredentials(key, secret, passphrase string) (market.Address, bool) {
	v, ok := k[key]
	if !ok || subtle.ConstantTimeCompare([]byte(v.Secret), []byte(secret)) != 1 ||
		subtle.ConstantTimeCompare([]byte(v.Passphrase), []byte(passphrase)) != 1 {
		return market.Address{}, false
	}
	return v.Addr, true
}

// Addr returns the test address whose last byte is n.
func Addr(n byte) market.Address {
	var a market.Address
	a[0], a[19] = 0xaa, n
	return a
}

// Market is a test market.
type Market struct {
	Cond market.ConditionID
	Yes  market.TokenID
	No   market.TokenID
	Tick market.Micros
}

// NewMarket returns market number n (condition "0x…n", tokens n*2+1 and n*2+2)
// with tick 0.01.
func NewMarket(n int) Market {
	return Market{
		Cond: market.ConditionID(fmt.Sprintf("0x%064x", n)),
		Yes:  market.TokenID(fmt.Sprint(1000 + 2*n)),
		No:   market.TokenID(fmt.Sprint(1001 + 2*n)),
		Tick: 10_000,
	}
}

// Create returns the command that lists m (minimum size 1 share, fee 0).
func (m Market) Create() exchange.Command {
	return exchange.Command{Kind: exchange.CreateMarket, Market: m.Cond, Spec: exchange.MarketSpec{
		Tokens: [2]market.TokenID{m.Yes, m.No}, Question: "Will test market " + string(m.Yes) + " resolve YES?",
		Slug: "test-" + string(m.Yes), Outcomes: [2]string{"Yes", "No"}, TickSize: m.Tick, MinSize: market.One,
		Active: true, AcceptingOrders: true,
	}}
}

// Fund returns commands that deposit collateral for a and split some into YES+NO
// of m, so that a can buy and sell.
func Fund(a market.Address, m Market, collateral, split market.Micros) []exchange.Command {
	return []exchange.Command{
		{Kind: exchange.Deposit, Owner: a, Amount: collateral},
		{Kind: exchange.Split, Owner: a, Market: m.Cond, Amount: split},
	}
}

// Flow generates a seeded random order flow on markets by accounts: resting
// orders around a drifting mid, crossing orders, cancels. Not safe for concurrent
// use.
type Flow struct {
	rng      *rand.Rand
	markets  []Market
	accounts []market.Address
	live     []exchange.Command // orders that may rest (for cancels)
	n        int
	prefix   string
}

// NewFlow returns a flow with the given seed.
func NewFlow(seed uint64, markets []Market, accounts []market.Address) *Flow {
	return &Flow{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), markets: markets, accounts: accounts,
		prefix: fmt.Sprintf("o%d-", seed)}
}

// Next returns the next command (a Place or a Cancel).
func (f *Flow) Next() exchange.Command {
	if len(f.live) > 0 && f.rng.IntN(5) == 0 {
		i := f.rng.IntN(len(f.live))
		o := f.live[i]
		f.live[i] = f.live[len(f.live)-1]
		f.live = f.live[:len(f.live)-1]
		return exchange.Command{Kind: exchange.Cancel, Order: o.Order, Owner: o.Owner}
	}
	m := f.markets[f.rng.IntN(len(f.markets))]
	tok := m.Yes
	if f.rng.IntN(2) == 0 {
		tok = m.No
	}
	side := market.Buy
	if f.rng.IntN(2) == 0 {
		side = market.Sell
	}
	ticks := 30 + f.rng.IntN(41) // 0.30 .. 0.70
	f.n++
	c := exchange.Command{Kind: exchange.Place, Order: market.OrderID(f.prefix + fmt.Sprint(f.n)),
		Owner: f.accounts[f.rng.IntN(len(f.accounts))], Token: tok, Side: side,
		Price: market.Micros(ticks) * m.Tick, Size: market.Micros(1+f.rng.IntN(20)) * market.One}
	if f.rng.IntN(10) == 0 {
		c.Type = market.FAK
	}
	if c.Type.Rests() {
		f.live = append(f.live, c)
	}
	return c
}

// Server is a loopback HTTP server with a hub's channels and GET /book.
type Server struct {
	Hub  *ws.Hub
	Host *Host
	HTTP *httptest.Server
	// WS is the ws:// base URL (append /ws/market ...); URL the http:// base.
	WS, URL string
}

// Option adjusts the test server before it starts.
type Option func(*httptest.Server)

// SmallSendBuffer makes the server's sockets use a send buffer of n bytes (which
// also turns off the kernel's autotuning), so that a client that stops reading
// blocks the server's writes after a few kilobytes.
func SmallSendBuffer(n int) Option {
	return func(s *httptest.Server) { s.Listener = sndbufListener{s.Listener, n} }
}

type sndbufListener struct {
	net.Listener
	n int
}

func (l sndbufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		_ = tc.SetWriteBuffer(l.n)
	}
	return c, err
}

// StartServer starts a hub on host (cfg.Source is set to host) and a loopback
// server mounting it and GET /book; t's cleanup stops both and waits for the hub.
func StartServer(t testing.TB, host *Host, cfg ws.Config, opts ...Option) *Server {
	t.Helper()
	cfg.Source = host
	hub, err := ws.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hub.Run(ctx) }()
	mux := http.NewServeMux()
	hub.Mount(mux)
	mux.Handle("/ws/comments", hub.CommentsHandler())
	mux.Handle("/book", host.BookHandler())
	srv := httptest.NewUnstartedServer(mux)
	for _, o := range opts {
		o(srv)
	}
	srv.Start()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hub.Run: %v", err)
		}
		srv.Close()
	})
	s := &Server{Hub: hub, Host: host, HTTP: srv, URL: srv.URL, WS: "ws" + strings.TrimPrefix(srv.URL, "http")}
	// Wait until the hub has loaded (its handlers answer 503 before).
	select {
	case <-hub.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("timed out after 10s waiting for the hub to start")
	}
	return s
}

// Eventually polls cond every millisecond until it holds, failing t (with what)
// after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}

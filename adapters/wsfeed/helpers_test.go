package wsfeed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

// consumer applies a feed's events to its own books and checks the feed's
// promises: no change for a book that is not current (before its snapshot, after a
// disconnection), books never crossed.
type consumer struct {
	mu     sync.Mutex
	books  map[market.TokenID]*market.Book
	ready  map[market.TokenID]bool
	orders []market.Event
	fills  []market.Event
	kinds  map[market.TokenID][]market.EventKind
	states []string
	bad    error
}

func newConsumer() *consumer {
	return &consumer{books: map[market.TokenID]*market.Book{}, ready: map[market.TokenID]bool{}, kinds: map[market.TokenID][]market.EventKind{}}
}

func (c *consumer) fail(format string, args ...any) {
	if c.bad == nil {
		c.bad = fmt.Errorf(format, args...)
	}
}

func (c *consumer) handle(ev *market.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kinds[ev.Token] = append(c.kinds[ev.Token], ev.Kind)
	switch ev.Kind {
	case market.EventBook:
		b := c.books[ev.Token]
		if b == nil {
			b = &market.Book{Token: ev.Token}
			c.books[ev.Token] = b
		}
		b.Reset(ev.Bids, ev.Asks)
		c.ready[ev.Token] = true
	case market.EventPriceChange:
		if !c.ready[ev.Token] {
			c.fail("price change of %s before its snapshot", ev.Token)
			return
		}
		b := c.books[ev.Token]
		for _, ch := range ev.Changes {
			b.Set(ch.Side, ch.Price, ch.Size)
		}
		if b.Crossed() {
			c.fail("book %s crossed: %+v", ev.Token, b)
		}
	case market.EventLastTrade, market.EventTickSize:
		if !c.ready[ev.Token] {
			c.fail("%s of %s before its snapshot", ev.Kind, ev.Token)
		}
	case market.EventOrder:
		c.orders = append(c.orders, *ev)
	case market.EventFill:
		c.fills = append(c.fills, *ev)
	}
}

func (c *consumer) onState(ch wsfeed.Channel, s wsfeed.State, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.states = append(c.states, string(ch)+":"+s.String())
	if ch == wsfeed.MarketChannel && s != wsfeed.Connected {
		clear(c.ready)
	}
}

func (c *consumer) book(t market.TokenID) (market.Book, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.books[t]
	if b == nil || !c.ready[t] {
		return market.Book{}, false
	}
	var out market.Book
	out.CopyFrom(b)
	return out, true
}

func (c *consumer) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bad
}

// runFeed starts f.Run; t's cleanup stops it and checks its result.
func runFeed(t *testing.T, f *wsfeed.Feed) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var once sync.Once
	var res error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case res = <-done:
			case <-time.After(20 * time.Second):
				res = fmt.Errorf("Run did not return")
			}
		})
		return res
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return stop
}

// restBook fetches GET /book as a client would.
func restBook(t testing.TB, base string, tok market.TokenID) (market.Book, api.OrderBook) {
	t.Helper()
	resp, err := http.Get(base + "/book?token_id=" + string(tok))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var ob api.OrderBook
	if err := json.Unmarshal(body, &ob); err != nil {
		t.Fatalf("GET /book: %s: %v", body, err)
	}
	b, err := ob.Book()
	if err != nil {
		t.Fatal(err)
	}
	return b, ob
}

func sameBook(a, b market.Book) bool {
	eq := func(x, y []market.Level) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	return eq(a.Bids, b.Bids) && eq(a.Asks, b.Asks)
}

var (
	alice = wstest.Addr(1)
	bob   = wstest.Addr(2)
	carol = wstest.Addr(3)
)

var testKeys = wstest.Keys{
	"key-alice": {Secret: "sa", Passphrase: "pa", Addr: alice},
	"key-bob":   {Secret: "sb", Passphrase: "pb", Addr: bob},
	"key-carol": {Secret: "sc", Passphrase: "pc", Addr: carol},
}

func creds(key string) *api.APIKeyCreds {
	k := testKeys[key]
	return &api.APIKeyCreds{APIKey: key, Secret: k.Secret, Passphrase: k.Passphrase}
}

// exchangeFixture is a host with two funded markets and a running hub.
func exchangeFixture(t *testing.T) (*wstest.Host, *wstest.Server, []wstest.Market) {
	t.Helper()
	return exchangeFixtureWith(t, ws.Config{})
}

// exchangeFixtureWith is exchangeFixture with the hub's settings of cfg (its
// Credentials are always the test keys).
func exchangeFixtureWith(t *testing.T, cfg ws.Config) (*wstest.Host, *wstest.Server, []wstest.Market) {
	t.Helper()
	h := wstest.NewHost(t, 1_700_000_000_000)
	ms := []wstest.Market{wstest.NewMarket(1), wstest.NewMarket(2)}
	for _, m := range ms {
		h.Must(t, m.Create())
	}
	for _, a := range []market.Address{alice, bob, carol} {
		h.Must(t, exchange.Command{Kind: exchange.Deposit, Owner: a, Amount: 1_000_000 * market.One})
		for _, m := range ms {
			h.Must(t, exchange.Command{Kind: exchange.Split, Owner: a, Market: m.Cond, Amount: 10_000 * market.One})
		}
	}
	cfg.Credentials = testKeys
	srv := wstest.StartServer(t, h, cfg)
	return h, srv, ms
}

func flow(h *wstest.Host, fl *wstest.Flow, n int) {
	for i := 0; i < n; {
		k := min(1+i%5, n-i)
		cmds := make([]exchange.Command, k)
		for j := range cmds {
			cmds[j] = fl.Next()
		}
		h.Apply(cmds...)
		i += k
	}
}

func place(id string, owner market.Address, tok market.TokenID, side market.Side, price, size string) exchange.Command {
	p, _ := market.ParseMicros(price)
	s, _ := market.ParseMicros(size)
	return exchange.Command{Kind: exchange.Place, Order: market.OrderID(id), Owner: owner, Token: tok, Side: side, Price: p, Size: s}
}

// proxy forwards loopback TCP connections to target and can cut them all.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, targetURL string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: strings.TrimPrefix(targetURL, "http://")}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.kill()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); io.Copy(u, c); u.Close() }() //nolint:errcheck // ends when cut
		go func() { defer p.wg.Done(); io.Copy(c, u); c.Close() }() //nolint:errcheck // ends when cut
	}
}

// kill cuts every connection (like a network failure).
func (p *proxy) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) url() string { return "http://" + p.ln.Addr().String() }

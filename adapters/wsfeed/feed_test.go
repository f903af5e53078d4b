package wsfeed_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

func allTokens(ms []wstest.Market) []market.TokenID {
	var out []market.TokenID
	for _, m := range ms {
		out = append(out, m.Yes, m.No)
	}
	return out
}

// waitBooksEqualREST waits until, for every token, both the consumer's book (built
// from the events) and Feed.Book equal GET /book, with the hub caught up on the
// host's sequence (the same engine state on both paths).
func waitBooksEqualREST(t *testing.T, h *wstest.Host, srv *wstest.Server, f *wsfeed.Feed, c *consumer, toks []market.TokenID) {
	t.Helper()
	h.Flush()
	seq := h.Seq()
	wstest.Eventually(t, 30*time.Second, "the hub to reach the host's sequence", func() bool { return srv.Hub.Stats().Seq == seq })
	var last market.TokenID // the token that differed at the last poll, named if the wait fails
	defer func() {
		if t.Failed() && last != "" {
			t.Logf("token %s still differed from GET /book", last)
		}
	}()
	wstest.Eventually(t, 30*time.Second, "the feed's books to equal GET /book", func() bool {
		for _, tok := range toks {
			want, _ := restBook(t, srv.URL, tok)
			got, ok := c.book(tok)
			fb, fok := f.Book(tok)
			if !ok || !fok || !sameBook(got, want) || !sameBook(fb, want) {
				last = tok
				return false
			}
		}
		last = ""
		return true
	})
	if h.Seq() != seq {
		t.Fatal("the host moved during the comparison")
	}
}

// TestFeedBookEqualsRESTAfterRandomFlow: after thousands of random orders on two
// markets, the books rebuilt by the feed (and by a consumer of its events) equal
// GET /book at the same engine sequence, with no gap, mismatch or resync on a
// healthy connection. The test produces its flow in one burst, far faster than
// orders arrive at an exchange, and under -race on a shared machine the client
// can fall a thousand frames behind: the hub's queue is made large enough for the
// whole burst, so that "healthy" means what it says (recovering from a dropped
// connection is TestFeedRecoversAfterConnectionKilled's subject, not this one's).
func TestFeedBookEqualsRESTAfterRandomFlow(t *testing.T) {
	h, srv, ms := exchangeFixtureWith(t, ws.Config{QueueLen: 1 << 16})
	fl := wstest.NewFlow(11, ms, []market.Address{alice, bob, carol})
	flow(h, fl, 200)
	c := newConsumer()
	toks := allTokens(ms)
	f, err := wsfeed.New(wsfeed.Config{URL: srv.WS, Assets: toks, Handler: c.handle, OnState: c.onState})
	if err != nil {
		t.Fatal(err)
	}
	runFeed(t, f)
	wstest.Eventually(t, 10*time.Second, "the snapshots", func() bool {
		for _, tok := range toks {
			if _, ok := f.Book(tok); !ok {
				return false
			}
		}
		return true
	})
	n := 4000
	if testing.Short() {
		n = 1500
	}
	flow(h, fl, n)
	waitBooksEqualREST(t, h, srv, f, c, toks)
	if err := c.err(); err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Gaps != 0 || st.HashMismatches != 0 || st.Resyncs != 0 || st.RESTFetches != 0 || st.Reconnects != 0 {
		t.Fatalf("a healthy stream needed repairs: %+v (hub: %+v)", st, srv.Hub.Stats())
	}
	for _, tok := range toks {
		if k := c.kinds[tok]; len(k) == 0 || k[0] != market.EventBook {
			t.Fatalf("first event of %s is %v", tok, k)
		}
	}
}

// TestFeedRecoversAfterConnectionKilled: connections cut mid-stream (twice) are
// redialed and resubscribed; every book's first event after a cut is a snapshot
// (a stale book is never presented as current) and the books end equal to GET
// /book.
func TestFeedRecoversAfterConnectionKilled(t *testing.T) {
	h, srv, ms := exchangeFixture(t)
	px := newProxy(t, srv.URL)
	c := newConsumer()
	toks := allTokens(ms)
	f, err := wsfeed.New(wsfeed.Config{URL: "ws" + strings.TrimPrefix(px.url(), "http"), Assets: toks, Handler: c.handle,
		OnState: c.onState, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runFeed(t, f)
	wstest.Eventually(t, 10*time.Second, "the snapshots", func() bool { _, ok := f.Book(toks[0]); return ok })
	fl := wstest.NewFlow(12, ms, []market.Address{alice, bob, carol})
	for round := range 2 {
		flow(h, fl, 500)
		px.kill()
		flow(h, fl, 500) // while the feed reconnects
		wstest.Eventually(t, 10*time.Second, "the feed to reconnect", func() bool {
			_, ok := f.Book(toks[0])
			return f.Stats().Reconnects >= uint64(round+1) && ok
		})
	}
	flow(h, fl, 500)
	waitBooksEqualREST(t, h, srv, f, c, toks)
	if err := c.err(); err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Reconnects < 2 {
		t.Fatalf("reconnects %d after two cuts", st.Reconnects)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	disc := 0
	for _, s := range c.states {
		if s == "market:disconnected" {
			disc++
		}
	}
	if disc < 2 {
		t.Fatalf("states %v", c.states)
	}
}

// TestFeedUserChannel: each feed sees its key's orders and trades and nobody
// else's; the fills carry the right role, side, size and fee.
func TestFeedUserChannel(t *testing.T) {
	h, srv, ms := exchangeFixture(t)
	m := ms[0]
	consumers := map[string]*consumer{}
	for _, key := range []string{"key-alice", "key-bob", "key-carol"} {
		c := newConsumer()
		f, err := wsfeed.New(wsfeed.Config{URL: srv.WS, User: creds(key), Handler: c.handle, OnState: c.onState})
		if err != nil {
			t.Fatal(err)
		}
		runFeed(t, f)
		consumers[key] = c
	}
	wstest.Eventually(t, 10*time.Second, "three user subscriptions", func() bool { return srv.Hub.Stats().Users == 3 })
	h.Must(t,
		place("a-sell", alice, m.Yes, market.Sell, "0.55", "10"),
		place("b-buy", bob, m.Yes, market.Buy, "0.55", "4"),
		exchange.Command{Kind: exchange.Cancel, Order: "a-sell", Owner: alice})
	counts := func(c *consumer) (int, int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.orders), len(c.fills)
	}
	wstest.Eventually(t, 10*time.Second, "alice's and bob's events", func() bool {
		ao, af := counts(consumers["key-alice"])
		bo, bf := counts(consumers["key-bob"])
		return ao == 3 && af == 1 && bo == 1 && bf == 1
	})
	a := consumers["key-alice"]
	wantUpdates := []market.OrderUpdate{market.OrderPlacement, market.OrderUpdated, market.OrderCancellation}
	for i, ev := range a.orders {
		if ev.Order.ID != "a-sell" || ev.OrderUpdate != wantUpdates[i] || ev.Order.Owner != alice {
			t.Fatalf("alice's order event %d: %+v", i, ev.Order)
		}
	}
	if o := a.orders[1].Order; o.Matched != 4*market.One || o.Size != 10*market.One || o.Price != 550_000 {
		t.Fatalf("alice's update %+v", o)
	}
	if fl := a.fills[0].Fill; fl.Role != market.Maker || fl.Side != market.Sell || fl.Size != 4*market.One || fl.Order != "a-sell" {
		t.Fatalf("alice's fill %+v", fl)
	}
	b := consumers["key-bob"]
	if o := b.orders[0]; o.Order.ID != "b-buy" || o.OrderUpdate != market.OrderUpdated || o.Order.Status != market.StatusMatched {
		t.Fatalf("bob's order %+v", o)
	}
	if fl := b.fills[0].Fill; fl.Role != market.Taker || fl.Side != market.Buy || fl.Size != 4*market.One || fl.Price != 550_000 {
		t.Fatalf("bob's fill %+v", fl)
	}
	// Carol saw nothing of that; her own order reaches her alone.
	h.Must(t, place("c-buy", carol, m.No, market.Buy, "0.2", "1"))
	wstest.Eventually(t, 10*time.Second, "carol's order", func() bool { o, _ := counts(consumers["key-carol"]); return o == 1 })
	if o, fl := counts(consumers["key-carol"]); o != 1 || fl != 0 || consumers["key-carol"].orders[0].Order.ID != "c-buy" {
		t.Fatalf("carol saw %d orders, %d fills", o, fl)
	}
	if o, _ := counts(consumers["key-alice"]); o != 3 {
		t.Fatal("alice saw carol's order")
	}
}

// TestFeedUnauthorizedStopsRun: credentials the server refuses end Run with an
// error wrapping market.ErrUnauthorized (retrying cannot help), without leaking
// the secret into the error.
func TestFeedUnauthorizedStopsRun(t *testing.T) {
	_, srv, _ := exchangeFixture(t)
	c := newConsumer()
	bad := creds("key-bob")
	bad.Secret = "not-the-secret-xyz"
	core, logs := observer.New(zapcore.DebugLevel)
	f, err := wsfeed.New(wsfeed.Config{URL: srv.WS, User: bad, Handler: c.handle, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	runErr := f.Run(ctx) // returns on its own: no retry can fix the credentials
	if ctx.Err() != nil {
		t.Fatal("Run kept retrying refused credentials")
	}
	if !errors.Is(runErr, market.ErrUnauthorized) || strings.Contains(runErr.Error(), bad.Secret) {
		t.Fatalf("Run returned %v", runErr)
	}
	for _, e := range logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		if strings.Contains(line, bad.Secret) || strings.Contains(line, bad.Passphrase) {
			t.Fatalf("a credential reached the log: %s", line)
		}
	}
}

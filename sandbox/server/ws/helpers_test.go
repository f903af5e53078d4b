package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

const readTimeout = 10 * time.Second

// client is a raw WebSocket client for tests.
type client struct {
	t testing.TB
	c *websocket.Conn
}

func dial(t testing.TB, url string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return &client{t: t, c: c}
}

func (c *client) sendText(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendText(string(b))
}

// read returns the next frame (failing after readTimeout).
func (c *client) read() []byte {
	c.t.Helper()
	b, err := c.readErr()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return b
}

func (c *client) readErr() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	_, b, err := c.c.Read(ctx)
	return b, err
}

// next returns the messages of the next frame.
func (c *client) next() []api.WSMessage {
	c.t.Helper()
	b := c.read()
	msgs, err := api.DecodeWSFrame(b)
	if err != nil {
		c.t.Fatalf("decode %s: %v", b, err)
	}
	return msgs
}

// until reads frames until a message satisfies ok and returns it.
func (c *client) until(what string, ok func(m *api.WSMessage) bool) api.WSMessage {
	c.t.Helper()
	for range 100_000 {
		for _, m := range c.next() {
			if ok(&m) {
				return m
			}
		}
	}
	c.t.Fatalf("never got %s", what)
	return api.WSMessage{}
}

// drainAfterFlow waits until the hub has applied every event the host has
// published, then reads c's frames until a PONG — which proves the connection
// delivered every frame queued before it — passing each frame's messages to fn.
func (c *client) drainAfterFlow(f *fixture, fn func(frame []byte, msgs []api.WSMessage)) {
	c.t.Helper()
	target := f.host.Seq()
	wstest.Eventually(c.t, 20*time.Second, "the hub to catch up", func() bool { return f.srv.Hub.Stats().Seq == target })
	c.sendText("PING")
	for {
		b := c.read()
		if string(b) == "PONG" {
			return
		}
		msgs, err := api.DecodeWSFrame(b)
		if err != nil {
			c.t.Fatalf("decode %s: %v", b, err)
		}
		fn(b, msgs)
	}
}

// closed reads until the connection ends and returns its close error.
func (c *client) closed() websocket.CloseError {
	c.t.Helper()
	for range 1_000_000 {
		_, err := c.readErr()
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			c.t.Fatalf("connection ended without a close frame: %v", err)
		}
		return ce
	}
	c.t.Fatal("connection never closed")
	return websocket.CloseError{}
}

// fixture is a host with one funded market and a running hub.
type fixture struct {
	host *wstest.Host
	srv  *wstest.Server
	m    wstest.Market
	keys wstest.Keys
}

var (
	alice = wstest.Addr(1)
	bob   = wstest.Addr(2)
	carol = wstest.Addr(3)
)

func newFixture(t testing.TB, cfg ws.Config, opts ...wstest.Option) *fixture {
	t.Helper()
	h := wstest.NewHost(t, 1_700_000_000_000)
	m := wstest.NewMarket(1)
	h.Must(t, m.Create())
	for _, a := range []market.Address{alice, bob, carol} {
		h.Must(t, wstest.Fund(a, m, 1_000_000*market.One, 10_000*market.One)...)
	}
	keys := wstest.Keys{
		"key-alice":   {Secret: "sa", Passphrase: "pa", Addr: alice},
		"key-alice-2": {Secret: "sa2", Passphrase: "pa2", Addr: alice},
		"key-bob":     {Secret: "sb", Passphrase: "pb", Addr: bob},
		"key-carol":   {Secret: "sc", Passphrase: "pc", Addr: carol},
	}
	if cfg.Credentials == nil {
		cfg.Credentials = keys
	}
	srv := wstest.StartServer(t, h, cfg, opts...)
	return &fixture{host: h, srv: srv, m: m, keys: keys}
}

func (f *fixture) creds(key string) *api.APIKeyCreds {
	k := f.keys[key]
	return &api.APIKeyCreds{APIKey: key, Secret: k.Secret, Passphrase: k.Passphrase}
}

func place(id string, owner market.Address, tok market.TokenID, side market.Side, price, size string) exchange.Command {
	p, err := market.ParseMicros(price)
	if err != nil {
		panic(err)
	}
	s, err := market.ParseMicros(size)
	if err != nil {
		panic(err)
	}
	return exchange.Command{Kind: exchange.Place, Order: market.OrderID(id), Owner: owner, Token: tok, Side: side, Price: p, Size: s}
}

// tracked is a client-side book of one asset, verified like a careful client.
type tracked struct {
	book    market.Book
	market  market.ConditionID
	seq     uint64
	tick    market.Micros
	minSize market.Micros
	negRisk bool
	last    market.Micros
	h       api.BookHasher
}

func (tb *tracked) onBook(t testing.TB, b *api.WSBook) {
	t.Helper()
	ob := b.OrderBook()
	if ob.ComputeHash() != b.Hash {
		t.Fatalf("book frame hash %s does not verify", b.Hash)
	}
	bk, err := ob.Book()
	if err != nil {
		t.Fatal(err)
	}
	tb.book, tb.market, tb.seq = bk, b.Market, b.Seq
	tb.tick, tb.minSize, tb.negRisk, tb.last = market.Micros(b.TickSize), market.Micros(b.MinOrderSize), b.NegRisk, market.Micros(b.LastTradePrice)
}

// apply applies a message for the asset, checking the sequence and the hashes.
func (tb *tracked) apply(t testing.TB, m *api.WSMessage) {
	t.Helper()
	asset := tb.book.Token
	next := func(seq uint64) {
		t.Helper()
		if seq != tb.seq+1 {
			t.Fatalf("asset %s: seq %d after %d", asset, seq, tb.seq)
		}
		tb.seq = seq
	}
	switch {
	case m.Book != nil && m.Book.AssetID == asset:
		tb.onBook(t, m.Book)
	case m.LastTrade != nil && m.LastTrade.AssetID == asset:
		next(m.LastTrade.Seq)
		tb.last = market.Micros(m.LastTrade.Price)
	case m.TickSize != nil && m.TickSize.AssetID == asset:
		next(m.TickSize.Seq)
		tb.tick = market.Micros(m.TickSize.NewTickSize)
	case m.PriceChange != nil:
		first := true
		for _, e := range m.PriceChange.PriceChanges {
			if e.AssetID != asset {
				continue
			}
			if first {
				next(e.Seq)
				first = false
			} else if e.Seq != tb.seq {
				t.Fatalf("entries of one frame with different seqs")
			}
			c := e.Change()
			tb.book.Set(c.Side, c.Price, c.Size)
			if e.Hash != "" {
				got := tb.h.Hash(&api.BookState{Market: tb.market, Asset: asset, TimeMs: int64(m.PriceChange.Timestamp),
					Bids: tb.book.Bids, Asks: tb.book.Asks, MinSize: tb.minSize, Tick: tb.tick, NegRisk: tb.negRisk, LastTrade: tb.last})
				if got != e.Hash {
					t.Fatalf("asset %s seq %d: hash %s, computed %s", asset, e.Seq, e.Hash, got)
				}
			}
		}
		// The last entry's top of book is the book's after the whole frame.
		var lastEntry *api.WSPriceChangeEntry
		for i := range m.PriceChange.PriceChanges {
			if e := &m.PriceChange.PriceChanges[i]; e.AssetID == asset {
				lastEntry = e
			}
		}
		if lastEntry != nil {
			var bid, ask market.Micros
			if l, ok := tb.book.BestBid(); ok {
				bid = l.Price
			}
			if l, ok := tb.book.BestAsk(); ok {
				ask = l.Price
			}
			if market.Micros(lastEntry.BestBid) != bid || market.Micros(lastEntry.BestAsk) != ask {
				t.Fatalf("asset %s: best %s/%s in frame, book has %s/%s", asset, lastEntry.BestBid, lastEntry.BestAsk, bid, ask)
			}
		}
	}
}

func newLoopback(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

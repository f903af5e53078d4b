package wsfeed_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

// fakeServer is a scripted market channel: the test accepts each connection and
// writes the frames it wants; GET /book answers from rest.
type fakeServer struct {
	t     *testing.T
	srv   *httptest.Server
	conns chan *websocket.Conn
	mu    sync.Mutex
	rest  map[market.TokenID]api.OrderBook
	hits  atomic.Int64
}

func newFakeServer(t *testing.T) *fakeServer {
	fs := &fakeServer{t: t, conns: make(chan *websocket.Conn, 16), rest: map[market.TokenID]api.OrderBook{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws/market", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		fs.conns <- c
	})
	mux.HandleFunc("/book", func(w http.ResponseWriter, r *http.Request) {
		fs.hits.Add(1)
		fs.mu.Lock()
		ob, ok := fs.rest[market.TokenID(r.URL.Query().Get("token_id"))]
		fs.mu.Unlock()
		if !ok {
			api.WriteError(w, market.Errorf(market.CodeNoOrderbook)) //nolint:errcheck // test
			return
		}
		api.WriteJSON(w, http.StatusOK, ob) //nolint:errcheck // test
	})
	fs.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		fs.srv.Close()
		for {
			select {
			case c := <-fs.conns:
				_ = c.CloseNow()
			default:
				return
			}
		}
	})
	return fs
}

func (fs *fakeServer) ws() string { return "ws" + strings.TrimPrefix(fs.srv.URL, "http") }

func (fs *fakeServer) accept() *fconn {
	fs.t.Helper()
	select {
	case c := <-fs.conns:
		fs.t.Cleanup(func() { _ = c.CloseNow() })
		return &fconn{t: fs.t, c: c}
	case <-time.After(10 * time.Second):
		fs.t.Fatal("the feed did not connect")
		return nil
	}
}

type fconn struct {
	t *testing.T
	c *websocket.Conn
}

func (c *fconn) readSub() api.WSSubscribe {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.c.Read(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	s, err := api.DecodeWSSubscribe(b, 0)
	if err != nil {
		c.t.Fatalf("%s: %v", b, err)
	}
	return s
}

func (c *fconn) write(v any) {
	c.t.Helper()
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			c.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

// model is the server's view of one asset, to compute the hashes a correct server
// sends.
type model struct {
	st   api.BookState
	book market.Book
	h    api.BookHasher
}

func newModel(asset market.TokenID) *model {
	m := &model{}
	m.st = api.BookState{Market: "0xm", Asset: asset, Tick: 10_000, MinSize: market.One}
	m.book.Token = asset
	return m
}

func (m *model) state(ts int64) *api.BookState {
	m.st.Bids, m.st.Asks, m.st.TimeMs = m.book.Bids, m.book.Asks, ts
	return &m.st
}

func (m *model) bookFrame(seq uint64, ts int64) api.WSBook {
	return api.NewWSBook(m.state(ts), seq, &m.h)
}

func (m *model) rest(ts int64) api.OrderBook {
	inf := market.Info{Condition: m.st.Market, TickSize: m.st.Tick, MinSize: m.st.MinSize}
	return api.BookFrom(&inf, &m.book, m.st.LastTrade, ts)
}

// change sets a level and returns a price_change frame with seq and (if !badHash)
// the correct hash.
func (m *model) change(side market.Side, price, size market.Micros, seq uint64, ts int64, badHash bool) api.WSPriceChange {
	m.book.Set(side, price, size)
	h := m.h.Hash(m.state(ts))
	if badHash {
		h = strings.Repeat("0", 40)
	}
	return api.WSPriceChange{EventType: api.WSEventPriceChange, Market: m.st.Market, Timestamp: api.Int(ts),
		PriceChanges: []api.WSPriceChangeEntry{{AssetID: m.st.Asset, Price: api.Decimal(price), Size: api.Decimal(size),
			Side: api.Side(side), Hash: h, Seq: seq}}}
}

func (c *consumer) kindsOf(t market.TokenID) []market.EventKind {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]market.EventKind(nil), c.kinds[t]...)
}

func waitKinds(t *testing.T, c *consumer, tok market.TokenID, n int) []market.EventKind {
	t.Helper()
	wstest.Eventually(t, 10*time.Second, "feed events", func() bool { return len(c.kindsOf(tok)) >= n })
	return c.kindsOf(tok)
}

// TestFeedGapAndMismatchHealing: a sequence gap and a hash mismatch each heal with
// GET /book; a REST book that does not line up with the stream is replaced by a
// snapshot the feed asks for on the WebSocket; nothing is emitted for the asset
// between the detection and the fresh book.
func TestFeedGapAndMismatchHealing(t *testing.T) {
	fs := newFakeServer(t)
	c := newConsumer()
	f, err := wsfeed.New(wsfeed.Config{URL: fs.ws(), Assets: []market.TokenID{"1"}, Handler: c.handle, PingInterval: time.Hour, Watchdog: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runFeed(t, f)
	conn := fs.accept()
	if s := conn.readSub(); s.Type != "market" || len(s.AssetsIDs) != 1 || s.AssetsIDs[0] != "1" || !s.WantsDump() {
		t.Fatalf("subscription %+v", s)
	}
	m := newModel("1")
	m.book.Reset([]market.Level{{Price: 400_000, Size: 10 * market.One}}, []market.Level{{Price: 600_000, Size: 5 * market.One}})
	conn.write(m.bookFrame(5, 1000))
	conn.write(m.change(market.Buy, 410_000, market.One, 6, 1001, false))
	waitKinds(t, c, "1", 2)

	// A gap: seq 7 never arrives. The server's book then also has a level at 0.42.
	m.book.Set(market.Buy, 420_000, 2*market.One)
	pc8 := m.change(market.Buy, 430_000, 3*market.One, 8, 1003, false)
	fs.mu.Lock()
	fs.rest["1"] = m.rest(1003) // GET /book already includes seq 8
	fs.mu.Unlock()
	conn.write(pc8)
	k := waitKinds(t, c, "1", 3)
	if k[2] != market.EventBook || fs.hits.Load() != 1 {
		t.Fatalf("after a gap: %v, %d GET /book", k, fs.hits.Load())
	}
	if b, _ := c.book("1"); b.SizeAt(market.Buy, 420_000) != 2*market.One {
		t.Fatalf("resynced book %+v", b)
	}
	// The stream goes on; the REST book lines up with the next hash.
	conn.write(m.change(market.Buy, 440_000, market.One, 9, 1004, false))
	waitKinds(t, c, "1", 4)
	// A mismatch on a verified book: GET /book again.
	fs.mu.Lock()
	fs.rest["1"] = m.rest(1005)
	fs.mu.Unlock()
	conn.write(m.change(market.Sell, 650_000, market.One, 10, 1005, true))
	k = waitKinds(t, c, "1", 5)
	if k[4] != market.EventBook || fs.hits.Load() != 2 {
		t.Fatalf("after a mismatch: %v, %d GET /book", k, fs.hits.Load())
	}
	// The REST book does not line up with the stream (another mismatch): the feed
	// asks for a snapshot on the WebSocket and waits for it.
	conn.write(m.change(market.Sell, 660_000, market.One, 11, 1006, true))
	if s := conn.readSub(); s.Operation != api.WSOpSubscribe || len(s.AssetsIDs) != 1 || s.AssetsIDs[0] != "1" {
		t.Fatalf("resubscription %+v", s)
	}
	conn.write(m.change(market.Sell, 670_000, market.One, 12, 1007, false)) // before the snapshot: dropped
	conn.write(m.bookFrame(20, 1008))
	conn.write(m.change(market.Buy, 450_000, market.One, 21, 1009, false))
	k = waitKinds(t, c, "1", 7)
	want := []market.EventKind{market.EventBook, market.EventPriceChange, market.EventBook, market.EventPriceChange,
		market.EventBook, market.EventBook, market.EventPriceChange}
	if len(k) != len(want) {
		t.Fatalf("events %v, want %v", k, want)
	}
	for i := range want {
		if k[i] != want[i] {
			t.Fatalf("events %v, want %v", k, want)
		}
	}
	got, _ := f.Book("1")
	if !sameBook(got, m.book) {
		t.Fatalf("feed book %+v, server %+v", got, m.book)
	}
	if st := f.Stats(); st.Gaps != 1 || st.HashMismatches != 2 || st.RESTFetches != 2 || st.Resyncs != 3 {
		t.Fatalf("stats %+v", st)
	}
	if err := c.err(); err != nil {
		t.Fatal(err)
	}
}

// fakeClock is an injectable clock.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// TestFeedSnapshotTimeoutFallsBackToREST: when the server sends no snapshot (a
// server without initial dumps) the feed fetches the book after ResyncTimeout; an
// asset the server does not know is given up after a 404.
func TestFeedSnapshotTimeoutFallsBackToREST(t *testing.T) {
	fs := newFakeServer(t)
	m := newModel("1")
	m.book.Reset([]market.Level{{Price: 300_000, Size: market.One}}, nil)
	fs.rest["1"] = m.rest(7)
	clk := &fakeClock{}
	clk.ns.Store(1e18)
	c := newConsumer()
	f, err := wsfeed.New(wsfeed.Config{URL: fs.ws(), Assets: []market.TokenID{"1", "404"}, Handler: c.handle,
		PingInterval: time.Hour, Watchdog: time.Hour, ResyncTimeout: time.Second, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	runFeed(t, f)
	conn := fs.accept()
	conn.readSub()
	conn.write("PONG") // any frame lets the reader check its deadlines: none is due yet
	clk.advance(time.Second)
	conn.write("PONG")
	if k := waitKinds(t, c, "1", 1); k[0] != market.EventBook {
		t.Fatalf("events %v", k)
	}
	wstest.Eventually(t, 10*time.Second, "one GET /book per asset", func() bool { return fs.hits.Load() == 2 })
	hits := fs.hits.Load()
	clk.advance(10 * time.Second)
	conn.write("PONG")
	conn.write(m.change(market.Buy, 310_000, market.One, 0, 8, false)) // no seq: a stock server
	waitKinds(t, c, "1", 2)
	if fs.hits.Load() != hits {
		t.Fatal("the unknown asset was fetched again")
	}
}

// TestFeedWatchdogReconnects: a connection that delivers nothing (no frames, no
// PONG) is dropped after Watchdog and redialed.
func TestFeedWatchdogReconnects(t *testing.T) {
	fs := newFakeServer(t)
	c := newConsumer()
	var sleeps atomic.Int64
	f, err := wsfeed.New(wsfeed.Config{URL: fs.ws(), Assets: []market.TokenID{"1"}, Handler: c.handle, OnState: c.onState,
		PingInterval: 20 * time.Millisecond, Watchdog: 150 * time.Millisecond,
		Sleep: func(ctx context.Context, _ time.Duration) error { sleeps.Add(1); return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	runFeed(t, f)
	first := fs.accept()
	first.readSub() // then silence: PINGs are never answered
	second := fs.accept()
	second.readSub()
	if sleeps.Load() != 1 || f.Stats().Reconnects != 1 {
		t.Fatalf("sleeps %d, stats %+v", sleeps.Load(), f.Stats())
	}
}

// TestFeedBackoffDoublesWithJitter: redials of an unreachable server wait
// MinBackoff·2^n capped at MaxBackoff, drawn in [d/2, d] by the injected source.
func TestFeedBackoffDoublesWithJitter(t *testing.T) {
	fs := newFakeServer(t)
	url := fs.ws()
	fs.srv.Close() // nothing listens any more
	tests := []struct {
		name string
		rnd  func(n int64) int64
		want []time.Duration
	}{
		{"top of the range", func(n int64) int64 { return n - 1 }, []time.Duration{10, 20, 40, 80, 100, 100}},
		{"bottom of the range", func(int64) int64 { return 0 }, []time.Duration{5, 10, 20, 40, 50, 50}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []time.Duration
			f, err := wsfeed.New(wsfeed.Config{URL: url, Assets: []market.TokenID{"1"}, Handler: func(*market.Event) {},
				MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Rand: tc.rnd,
				Sleep: func(ctx context.Context, d time.Duration) error {
					got = append(got, d)
					if len(got) == len(tc.want) {
						cancel()
					}
					return ctx.Err()
				}})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Run(ctx); err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want {
				if got[i] != w*time.Millisecond {
					t.Fatalf("delays %v, want %v ms", got, tc.want)
				}
			}
		})
	}
}

// TestConfigErrors: a feed needs a ws:// or wss:// URL, Run needs a Handler,
// RunEmit an emit function.
func TestConfigErrors(t *testing.T) {
	if _, err := wsfeed.New(wsfeed.Config{URL: "http://127.0.0.1:1", Handler: func(*market.Event) {}}); !errors.Is(err, wsfeed.ErrConfig) {
		t.Fatalf("an http URL: %v", err)
	}
	f, err := wsfeed.New(wsfeed.Config{URL: "ws://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Run(context.Background()); !errors.Is(err, wsfeed.ErrConfig) {
		t.Fatalf("Run without a handler: %v", err)
	}
	if err := f.RunEmit(context.Background(), nil); !errors.Is(err, wsfeed.ErrConfig) {
		t.Fatalf("RunEmit without emit: %v", err)
	}
}

// TestRunEmitStopsWhenEmitSaysSo: RunEmit delivers the same events as Run and
// returns nil once emit returns false (the agent stopped).
func TestRunEmitStopsWhenEmitSaysSo(t *testing.T) {
	fs := newFakeServer(t)
	f, err := wsfeed.New(wsfeed.Config{URL: fs.ws(), Assets: []market.TokenID{"1"}, PingInterval: time.Hour, Watchdog: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var got []market.EventKind
	done := make(chan error, 1)
	go func() {
		done <- f.RunEmit(context.Background(), func(ev *market.Event) bool {
			got = append(got, ev.Kind)
			return len(got) < 2
		})
	}()
	conn := fs.accept()
	conn.readSub()
	conn.c.CloseRead(context.Background()) // answer the feed's close
	m := newModel("1")
	conn.write(m.bookFrame(1, 1))
	conn.write(m.change(market.Buy, 100_000, market.One, 2, 2, false))
	select {
	case err := <-done:
		if err != nil || len(got) != 2 || got[0] != market.EventBook || got[1] != market.EventPriceChange {
			t.Fatalf("RunEmit: %v, events %v", err, got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunEmit did not stop")
	}
}

// TestFeedDynamicSubscriptions: Subscribe asks the live connection for the new
// asset (whose snapshot comes first), Unsubscribe drops one: it is unsubscribed on
// the wire, its book is gone and its frames are ignored.
func TestFeedDynamicSubscriptions(t *testing.T) {
	fs := newFakeServer(t)
	c := newConsumer()
	f, err := wsfeed.New(wsfeed.Config{URL: fs.ws(), Assets: []market.TokenID{"1"}, Handler: c.handle, PingInterval: time.Hour, Watchdog: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runFeed(t, f)
	conn := fs.accept()
	conn.readSub()
	m1, m2 := newModel("1"), newModel("2")
	conn.write(m1.bookFrame(1, 1))
	waitKinds(t, c, "1", 1)
	if err := f.Subscribe(context.Background(), "2", "1"); err != nil {
		t.Fatal(err)
	}
	if s := conn.readSub(); s.Operation != api.WSOpSubscribe || len(s.AssetsIDs) != 1 || s.AssetsIDs[0] != "2" {
		t.Fatalf("dynamic subscription %+v", s)
	}
	conn.write(m2.change(market.Buy, 100_000, market.One, 2, 2, false)) // before its snapshot: ignored
	conn.write(m2.bookFrame(2, 3))
	if k := waitKinds(t, c, "2", 1); k[0] != market.EventBook {
		t.Fatalf("events of 2: %v", k)
	}
	if err := f.Unsubscribe(context.Background(), "1"); err != nil {
		t.Fatal(err)
	}
	if s := conn.readSub(); s.Operation != api.WSOpUnsubscribe || len(s.AssetsIDs) != 1 || s.AssetsIDs[0] != "1" {
		t.Fatalf("unsubscription %+v", s)
	}
	conn.write(m1.change(market.Buy, 100_000, market.One, 2, 4, false))
	conn.write(m2.change(market.Buy, 200_000, market.One, 3, 5, false))
	waitKinds(t, c, "2", 2)
	if k := c.kindsOf("1"); len(k) != 1 {
		t.Fatalf("events of an unsubscribed asset: %v", k)
	}
	if _, ok := f.Book("1"); ok {
		t.Fatal("the unsubscribed book is still there")
	}
}

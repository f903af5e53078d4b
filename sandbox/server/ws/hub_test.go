package ws_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

func subscribeMarket(c *client, assets ...market.TokenID) {
	c.send(api.WSSubscribe{Type: api.WSChannelMarket, AssetsIDs: assets})
}

// TestMarketSubscribeSnapshotThenDeltas: a subscriber first gets the asset's book
// (REST order, verifiable hash, current seq), then every change with consecutive
// seqs, best bid/ask and hashes that verify against its own copy.
func TestMarketSubscribeSnapshotThenDeltas(t *testing.T) {
	f := newFixture(t, ws.Config{})
	f.host.Must(t,
		place("a1", alice, f.m.Yes, market.Buy, "0.40", "10"),
		place("a2", alice, f.m.Yes, market.Buy, "0.45", "5"),
		place("b1", bob, f.m.Yes, market.Sell, "0.60", "7"))
	f.host.Flush()
	c := dial(t, f.srv.WS+"/ws/market")
	subscribeMarket(c, f.m.Yes)
	msgs := c.next()
	if len(msgs) != 1 || msgs[0].Book == nil {
		t.Fatalf("first frame is not a book: %+v", msgs)
	}
	b := msgs[0].Book
	if b.AssetID != f.m.Yes || b.Market != f.m.Cond || b.Seq == 0 || b.TickSize != api.Decimal(f.m.Tick) || b.MinOrderSize != api.Number(market.One) {
		t.Fatalf("book frame %+v", b)
	}
	if len(b.Bids) != 2 || b.Bids[0].Price != 400_000 || b.Bids[1].Price != 450_000 || len(b.Asks) != 1 {
		t.Fatalf("levels not in REST order (best last): %+v %+v", b.Bids, b.Asks)
	}
	var tb tracked
	tb.onBook(t, b)
	f.host.Must(t,
		place("c1", carol, f.m.Yes, market.Buy, "0.60", "3"), // trades 3 against b1
		place("c2", carol, f.m.No, market.Buy, "0.52", "2"),  // a YES ask at 0.48
		exchange.Command{Kind: exchange.Cancel, Order: "a1", Owner: alice})
	var last uint64
	for tb.book.SizeAt(market.Buy, 400_000) != 0 || last == 0 {
		for _, m := range c.next() {
			tb.apply(t, &m)
			if m.LastTrade != nil {
				last = m.LastTrade.Seq
				if m.LastTrade.Price != 600_000 || m.LastTrade.Side != api.Side(market.Buy) || m.LastTrade.Size != api.Decimal(3*market.One) {
					t.Fatalf("last trade %+v", m.LastTrade)
				}
			}
		}
	}
	want := f.host.Book(f.m.Yes)
	if !slices.Equal(tb.book.Bids, want.Bids) || !slices.Equal(tb.book.Asks, want.Asks) {
		t.Fatalf("client book %+v / %+v, engine %+v / %+v", tb.book.Bids, tb.book.Asks, want.Bids, want.Asks)
	}
}

// TestMarketFramesForBothTokens: a NO subscriber sees the mirrored book and prints
// in NO terms (a YES buy at 0.6 is a NO sell at 0.4).
func TestMarketFramesForBothTokens(t *testing.T) {
	f := newFixture(t, ws.Config{})
	f.host.Must(t, place("b1", bob, f.m.Yes, market.Sell, "0.60", "7"))
	f.host.Flush()
	c := dial(t, f.srv.WS+"/ws/market")
	subscribeMarket(c, f.m.No)
	var tb tracked
	tb.onBook(t, c.next()[0].Book)
	if l, ok := tb.book.BestBid(); !ok || l.Price != 400_000 || l.Size != 7*market.One {
		t.Fatalf("NO book %+v", tb.book)
	}
	f.host.Must(t, place("c1", carol, f.m.Yes, market.Buy, "0.60", "2"))
	m := c.until("a NO print", func(m *api.WSMessage) bool { tb.apply(t, m); return m.LastTrade != nil })
	if m.LastTrade.AssetID != f.m.No || m.LastTrade.Price != 400_000 || m.LastTrade.Side != api.Side(market.Sell) {
		t.Fatalf("NO print %+v", m.LastTrade)
	}
	c.until("the NO change", func(m *api.WSMessage) bool { tb.apply(t, m); return m.PriceChange != nil })
	if tb.book.SizeAt(market.Buy, 400_000) != 5*market.One {
		t.Fatalf("NO book after the trade %+v", tb.book)
	}
}

// TestTickSizeChangeAndResolution: a tick change is one tick_size_change per asset
// (seq'd), a resolution empties the book and sends market_resolved; a late
// subscriber to a resolved market gets the book and the resolution.
func TestTickSizeChangeAndResolution(t *testing.T) {
	f := newFixture(t, ws.Config{})
	f.host.Must(t, place("a1", alice, f.m.Yes, market.Buy, "0.40", "10"))
	f.host.Flush()
	c := dial(t, f.srv.WS+"/ws/market")
	subscribeMarket(c, f.m.Yes)
	var tb tracked
	tb.onBook(t, c.next()[0].Book)
	spec := f.m.Create().Spec
	spec.TickSize = 1_000
	f.host.Must(t, exchange.Command{Kind: exchange.UpdateMarket, Market: f.m.Cond, Spec: spec})
	m := c.until("tick_size_change", func(m *api.WSMessage) bool { tb.apply(t, m); return m.TickSize != nil })
	if m.TickSize.OldTickSize != 10_000 || m.TickSize.NewTickSize != 1_000 {
		t.Fatalf("tick change %+v", m.TickSize)
	}
	f.host.Must(t, place("a2", alice, f.m.Yes, market.Buy, "0.401", "1")) // on the new tick; the hash uses it
	c.until("the change on the new tick", func(m *api.WSMessage) bool { tb.apply(t, m); return m.PriceChange != nil })
	f.host.Must(t, exchange.Command{Kind: exchange.Resolve, Market: f.m.Cond, Winner: market.No})
	m = c.until("market_resolved", func(m *api.WSMessage) bool { tb.apply(t, m); return m.Market != nil })
	if m.EventType != api.WSEventMarketResolved || m.Market.WinningAssetID != f.m.No || m.Market.WinningOutcome != "No" {
		t.Fatalf("resolution %+v", m.Market)
	}
	if len(tb.book.Bids)+len(tb.book.Asks) != 0 {
		t.Fatalf("book not emptied by the resolution: %+v", tb.book)
	}
	late := dial(t, f.srv.WS+"/ws/market")
	subscribeMarket(late, f.m.No)
	if msgs := late.next(); msgs[0].Book == nil {
		t.Fatal("late subscriber got no book")
	}
	if msgs := late.next(); msgs[0].Market == nil || msgs[0].Market.WinningAssetID != f.m.No {
		t.Fatalf("late subscriber got no resolution: %+v", msgs)
	}
}

// TestMarketSubscriptionChanges: unknown assets are reported (the known ones are
// subscribed), unsubscribe stops the frames, subscribing again re-sends the
// snapshot, a message of another channel type is refused, PING gets PONG.
func TestMarketSubscriptionChanges(t *testing.T) {
	f := newFixture(t, ws.Config{})
	other := wstest.NewMarket(2)
	f.host.Must(t, other.Create())
	f.host.Flush()
	c := dial(t, f.srv.WS+"/ws/market")
	subscribeMarket(c, f.m.Yes, "999999")
	var gotBook, gotErr bool
	for !gotBook || !gotErr {
		for _, m := range c.next() {
			switch {
			case m.Book != nil:
				gotBook = true
			case m.Error != nil:
				gotErr = true
				if m.Error.Error != "No orderbook exists for the requested token id" || len(m.Error.AssetsIDs) != 1 || m.Error.AssetsIDs[0] != "999999" {
					t.Fatalf("error frame %+v", m.Error)
				}
			}
		}
	}
	c.sendText("PING")
	if b := c.read(); string(b) != "PONG" {
		t.Fatalf("PING answered %q", b)
	}
	c.sendText(`{"type":"user","auth":{}}`)
	if m := c.next(); m[0].Error == nil || !strings.Contains(m[0].Error.Error, "does not match this channel") {
		t.Fatalf("wrong channel type answered %+v", m)
	}
	c.send(api.WSSubscribe{Operation: api.WSOpUnsubscribe, AssetsIDs: []market.TokenID{f.m.Yes}})
	c.send(api.WSSubscribe{Operation: api.WSOpSubscribe, AssetsIDs: []market.TokenID{other.Yes}})
	if m := c.next(); m[0].Book == nil || m[0].Book.AssetID != other.Yes {
		t.Fatalf("dynamic subscribe answered %+v", m)
	}
	f.host.Must(t, place("x", alice, f.m.Yes, market.Buy, "0.3", "1"), place("y", alice, other.Yes, market.Buy, "0.3", "1"))
	m := c.until("a change", func(m *api.WSMessage) bool { return m.PriceChange != nil })
	if m.PriceChange.Market != other.Cond {
		t.Fatalf("got a change of an unsubscribed market: %+v", m.PriceChange)
	}
	c.send(api.WSSubscribe{Operation: api.WSOpSubscribe, AssetsIDs: []market.TokenID{other.Yes}})
	if m := c.next(); m[0].Book == nil || m[0].Book.AssetID != other.Yes || len(m[0].Book.Bids) != 1 {
		t.Fatalf("resubscribe did not re-send the snapshot: %+v", m)
	}
}

// TestUserChannelOnlyOwnEvents: each key sees its address's orders and trades and
// nobody else's, with its own key in the owner fields; other participants' keys
// never appear; a market filter restricts the events.
func TestUserChannelOnlyOwnEvents(t *testing.T) {
	f := newFixture(t, ws.Config{})
	other := wstest.NewMarket(2)
	f.host.Must(t, other.Create())
	f.host.Flush()
	conns := map[string]*client{}
	for _, k := range []string{"key-alice", "key-alice-2", "key-bob", "key-carol"} {
		c := dial(t, f.srv.WS+"/ws/user")
		c.send(api.WSSubscribe{Type: api.WSChannelUser, Auth: f.creds(k)})
		conns[k] = c
	}
	filtered := dial(t, f.srv.WS+"/ws/user")
	filtered.send(api.WSSubscribe{Type: api.WSChannelUser, Auth: f.creds("key-alice"), Markets: []market.ConditionID{other.Cond}})
	// Let the subscriptions land before the flow.
	wstest.Eventually(t, 5*time.Second, "five user connections", func() bool { return f.srv.Hub.Stats().Connections == 5 })
	for _, c := range conns {
		c.sendText("PING")
		if b := c.read(); string(b) != "PONG" {
			t.Fatalf("got %q", b)
		}
	}
	filtered.sendText("PING")
	filtered.read()

	f.host.Must(t,
		place("a-sell", alice, f.m.Yes, market.Sell, "0.55", "10"),
		place("b-buy", bob, f.m.Yes, market.Buy, "0.55", "4"),
		exchange.Command{Kind: exchange.Cancel, Order: "a-sell", Owner: alice},
		place("o-1", alice, other.Yes, market.Buy, "0.2", "1"))

	type seen struct {
		orders   map[string]bool // id/type
		trades   int             // trade events
		statuses []string        // their statuses, in order
	}
	collect := func(c *client, key string, until func(s *seen) bool) *seen {
		s := &seen{orders: map[string]bool{}}
		for !until(s) {
			for _, m := range c.next() {
				switch {
				case m.Order != nil:
					if m.Order.Owner != key || m.Order.OrderOwner != key {
						t.Fatalf("%s: order owner %q", key, m.Order.Owner)
					}
					s.orders[string(m.Order.ID)+"/"+m.Order.Type] = true
				case m.Trade != nil:
					s.trades++
					s.statuses = append(s.statuses, m.Trade.Status)
					if m.Trade.Owner != key {
						t.Fatalf("%s: trade owner %q", key, m.Trade.Owner)
					}
					for _, mo := range m.Trade.MakerOrders {
						if mo.Owner != "" && mo.Owner != key {
							t.Fatalf("%s: sees another key %q", key, mo.Owner)
						}
					}
					if key == "key-bob" && (m.Trade.TraderSide != "TAKER" || m.Trade.Size != api.Decimal(4*market.One)) {
						t.Fatalf("bob's trade %+v", m.Trade)
					}
					if strings.HasPrefix(key, "key-alice") && m.Trade.TraderSide != "MAKER" {
						t.Fatalf("alice's trade %+v", m.Trade)
					}
				}
			}
		}
		return s
	}
	for _, key := range []string{"key-alice", "key-alice-2"} {
		s := collect(conns[key], key, func(s *seen) bool { return s.orders["o-1/PLACEMENT"] })
		for _, want := range []string{"a-sell/PLACEMENT", "a-sell/UPDATE", "a-sell/CANCELLATION"} {
			if !s.orders[want] {
				t.Errorf("%s missed %s (got %v)", key, want, s.orders)
			}
		}
		if s.trades != 3 || strings.Join(s.statuses, ",") != "MATCHED,MINED,CONFIRMED" || s.orders["b-buy/UPDATE"] {
			t.Errorf("%s: trades %d, orders %v", key, s.trades, s.orders)
		}
	}
	s := collect(conns["key-bob"], "key-bob", func(s *seen) bool { return s.orders["b-buy/UPDATE"] && s.trades == 3 })
	if len(s.orders) != 1 {
		t.Errorf("bob saw %v", s.orders)
	}
	sf := collect(filtered, "key-alice", func(s *seen) bool { return s.orders["o-1/PLACEMENT"] })
	if len(sf.orders) != 1 || sf.trades != 0 {
		t.Errorf("market filter let through %v and %d trades", sf.orders, sf.trades)
	}
	// Carol saw nothing: her next frame is the answer to a PING sent now.
	conns["key-carol"].sendText("PING")
	if b := conns["key-carol"].read(); string(b) != "PONG" {
		t.Fatalf("carol received %s", b)
	}
}

// TestUserChannelRefusesBadCredentials: an unknown key, a wrong secret or a
// missing auth gets the error and a close with the same reason; a hub without a
// credential store refuses everyone.
func TestUserChannelRefusesBadCredentials(t *testing.T) {
	f := newFixture(t, ws.Config{})
	tests := []struct {
		name string
		msg  any
	}{
		{"unknown key", api.WSSubscribe{Type: "user", Auth: &api.APIKeyCreds{APIKey: "nope", Secret: "x", Passphrase: "y"}}},
		{"wrong secret", api.WSSubscribe{Type: "user", Auth: &api.APIKeyCreds{APIKey: "key-bob", Secret: "sa", Passphrase: "pb"}}},
		{"no auth", api.WSSubscribe{Type: "user"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, f.srv.WS+"/ws/user")
			c.send(tc.msg)
			if m := c.next(); m[0].Error == nil || m[0].Error.Error != "Unauthorized/Invalid api key" {
				t.Fatalf("answer %+v", m)
			}
			if ce := c.closed(); ce.Code != websocket.StatusPolicyViolation || ce.Reason != "Unauthorized/Invalid api key" {
				t.Fatalf("close %+v", ce)
			}
		})
	}
}

// TestSportsChannelRefuses: the local exchange has no sports data; a subscription
// is answered with an error and the connection is closed, never left silent.
func TestSportsChannelRefuses(t *testing.T) {
	f := newFixture(t, ws.Config{})
	c := dial(t, f.srv.WS+"/ws/sports")
	c.sendText(`{"type":"sports"}`)
	if m := c.next(); m[0].Error == nil || m[0].Error.Error != "the sports feed is not available on the local exchange" {
		t.Fatalf("answer %+v", m)
	}
	if ce := c.closed(); ce.Code != websocket.StatusPolicyViolation {
		t.Fatalf("close %+v", ce)
	}
}

// TestHandlersBeforeRun: until Run has loaded the books the handlers answer 503.
func TestHandlersBeforeRun(t *testing.T) {
	h, err := ws.New(ws.Config{Source: wstest.NewHost(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &statusRecorder{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "/ws/market", nil)
	h.MarketHandler().ServeHTTP(rec, req)
	if rec.status != http.StatusServiceUnavailable {
		t.Fatalf("status %d", rec.status)
	}
	if _, err := ws.New(ws.Config{}); err == nil {
		t.Fatal("a hub without a source was accepted")
	}
}

type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(s int)           { r.status = s }

// TestShutdownClosesConnections: when Run's context ends every connection is
// closed with 1001 and the reason, and Run returns after them.
func TestShutdownClosesConnections(t *testing.T) {
	h := wstest.NewHost(t, 1)
	m := wstest.NewMarket(1)
	h.Must(t, m.Create())
	hub, err := ws.New(ws.Config{Source: h})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hub.Run(ctx) }()
	mux := http.NewServeMux()
	hub.Mount(mux)
	srv := newLoopback(t, mux)
	wstest.Eventually(t, 5*time.Second, "the hub to load", func() bool {
		resp, err := http.Get(srv + "/ws/market")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode != http.StatusServiceUnavailable
	})
	c := dial(t, "ws"+strings.TrimPrefix(srv, "http")+"/ws/market")
	subscribeMarket(c, m.Yes)
	c.next()
	if err := hub.Run(ctx); err != ws.ErrRunning {
		t.Fatalf("second Run: %v", err)
	}
	cancel()
	if ce := c.closed(); ce.Code != websocket.StatusGoingAway || ce.Reason != ws.ReasonShutdown {
		t.Fatalf("close %+v", ce)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

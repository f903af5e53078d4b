package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// wsConn is a test client of one WebSocket channel.
type wsConn struct {
	t *testing.T
	c *websocket.Conn
}

func (e *env) dialWS(t *testing.T, url, path string, sub api.WSSubscribe) *wsConn {
	t.Helper()
	return e.dialWSWith(t, url, path, sub)
}

// dialWSWith connects to path and sends first (any JSON message: an RTDS request).
func (e *env) dialWSWith(t *testing.T, url, path string, first any) *wsConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, strings.Replace(url, "http://", "ws://", 1)+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { c.CloseNow() })
	if err := c.Write(ctx, websocket.MessageText, jsonOf(t, first)); err != nil {
		t.Fatal(err)
	}
	return &wsConn{t: t, c: c}
}

// read reads one WebSocket message and decodes its messages.
func (w *wsConn) read(ctx context.Context, what string) []api.WSMessage {
	w.t.Helper()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		w.t.Fatalf("waiting for %s: %v", what, err)
	}
	msgs, err := api.DecodeWSFrame(b)
	if err != nil {
		w.t.Fatalf("frame %s: %v", b, err)
	}
	return msgs
}

// until reads messages until ok accepts one, and returns it with every message read.
func (w *wsConn) until(what string, ok func(m *api.WSMessage) bool) (api.WSMessage, []api.WSMessage) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var all []api.WSMessage
	for {
		msgs := w.read(ctx, what)
		for i := range msgs {
			all = append(all, msgs[i])
			if ok(&msgs[i]) {
				return msgs[i], all
			}
		}
	}
}

// startHub runs a WebSocket hub over e's host and server, wired as `pitboss
// exchange` wires it (the server is its credentials and its RFQ feed), with
// /ws/user and /ws/market mounted, once it is ready, and returns a listener of e's
// public handler.
func (e *env) startHub(t *testing.T) *httptest.Server {
	t.Helper()
	hub, err := ws.New(ws.Config{Source: e.h, Credentials: e.srv, TradeID: e.srv.TradeID, Orders: e.srv.OrderMeta})
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Handle("/ws/user", hub.UserHandler())
	e.srv.Handle("/ws/market", hub.MarketHandler())
	e.srv.Handle("/ws/rtds", hub.RTDSHandler())
	ctx, cancel := context.WithCancel(context.Background())
	hubDone := make(chan error, 1)
	go func() { hubDone <- hub.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-hubDone })
	select { // before its load the hub answers 503
	case <-hub.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the hub did not load")
	}
	pub := httptest.NewServer(e.srv.Handler())
	t.Cleanup(pub.Close)
	return pub
}

// TestWSDialectDetails holds the user and market channels to the dialect's
// wording (issue 16, item 6; docs/design/0144-dialect-details.md): the open-order
// dump on subscribe; UPDATE and CANCELLATION order events with the real created_at
// and associate_trades after a partial fill; a trade event per status, MATCHED →
// MINED → CONFIRMED, the last as GET /data/trades and the TRADE_CONFIRMED
// notification show it; the maker's key in the taker's maker_orders[].owner as
// over REST; and a book message on the market channel after a trade.
func TestWSDialectDetails(t *testing.T) {
	e := newEnv(t)
	pub := e.startHub(t)

	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	mm, tk := e.register(newWallet(t, "dialect-mm")), e.register(newWallet(t, "dialect-tk"))
	e.split(mm, rain, 20*share)
	created := e.clock.now()
	resting := e.place(mm, rain, yes, market.Sell, 500_000, 10*share, orderOpts{})
	e.clock.advance(3 * time.Second)

	creds := func(w *wallet) *api.APIKeyCreds {
		return &api.APIKeyCreds{APIKey: w.creds.APIKey, Secret: w.creds.Secret, Passphrase: w.creds.Passphrase}
	}
	// The dump: the maker's open order, before any event.
	mu := e.dialWS(t, pub.URL, "/ws/user", api.WSSubscribe{Type: api.WSChannelUser, Auth: creds(mm)})
	dump, _ := mu.until("the dump", func(m *api.WSMessage) bool { return m.Order != nil })
	if dump.Order.ID != market.OrderID(resting.OrderID) || dump.Order.Type != api.WSOrderPlacement ||
		dump.Order.Status != "LIVE" || dump.Order.CreatedAt != api.Int(created/1000) || dump.Order.Owner != mm.creds.APIKey ||
		len(dump.Order.AssociateTrades) != 0 || dump.Order.OriginalSize != api.Decimal(10*share) {
		t.Fatalf("dump %+v", dump.Order)
	}
	tu := e.dialWS(t, pub.URL, "/ws/user", api.WSSubscribe{Type: api.WSChannelUser, Auth: creds(tk)})
	mk := e.dialWS(t, pub.URL, "/ws/market", api.WSSubscribe{Type: api.WSChannelMarket, AssetsIDs: []market.TokenID{yes}})
	mk.until("the snapshot", func(m *api.WSMessage) bool { return m.Book != nil })
	// The taker has no open order: its first message is an answer to a PING.
	if err := tu.c.Write(context.Background(), websocket.MessageText, []byte("PING")); err != nil {
		t.Fatal(err)
	}
	if _, b, err := tu.c.Read(context.Background()); err != nil || string(b) != "PONG" {
		t.Fatalf("taker's first message %q %v", b, err)
	}

	took := e.place(tk, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})
	if len(took.TradeIDs) != 1 {
		t.Fatalf("no trade %+v", took)
	}
	tradeID := market.TradeID(took.TradeIDs[0])

	// The maker: UPDATE with its trade and real creation time, the trade per status.
	upd, seen := mu.until("the UPDATE", func(m *api.WSMessage) bool { return m.Order != nil })
	if upd.Order.Type != api.WSOrderUpdate || upd.Order.CreatedAt != api.Int(created/1000) ||
		!slices.Equal(upd.Order.AssociateTrades, []market.TradeID{tradeID}) || upd.Order.SizeMatched != api.Decimal(5*share) {
		t.Fatalf("update %+v (after %d messages)", upd.Order, len(seen))
	}
	var statuses []string
	for len(statuses) < 3 {
		m, _ := mu.until("a trade event", func(m *api.WSMessage) bool { return m.Trade != nil })
		if m.Trade.ID != tradeID || m.Trade.TraderSide != "MAKER" {
			t.Fatalf("maker's trade %+v", m.Trade)
		}
		statuses = append(statuses, m.Trade.Status)
	}
	if strings.Join(statuses, ",") != "MATCHED,MINED,CONFIRMED" {
		t.Fatalf("statuses %v", statuses)
	}
	var rest api.Page[api.Trade]
	e.mustJSON(http.MethodGet, "/data/trades", nil, mm, &rest)
	if rest.Count != 1 || rest.Data[0].ID != tradeID || rest.Data[0].Status != api.TradeConfirmed {
		t.Fatalf("/data/trades %+v", rest.Data)
	}
	var notes []notification
	e.mustJSON(http.MethodGet, "/notifications", nil, mm, &notes)
	if len(notes) != 1 || notes[0].Type != "TRADE_CONFIRMED" || notes[0].Payload.TradeID != tradeID {
		t.Fatalf("notifications %+v", notes)
	}

	// The taker sees the maker's key, as GET /data/trades shows it.
	var last api.WSMessage
	for n := 0; n < 3; n++ {
		last, _ = tu.until("the taker's trade", func(m *api.WSMessage) bool { return m.Trade != nil })
	}
	var takerRest api.Page[api.Trade]
	e.mustJSON(http.MethodGet, "/data/trades", nil, tk, &takerRest)
	if len(last.Trade.MakerOrders) != 1 || last.Trade.MakerOrders[0].Owner != mm.creds.APIKey ||
		takerRest.Data[0].MakerOrders[0].Owner != last.Trade.MakerOrders[0].Owner || last.Trade.Owner != tk.creds.APIKey ||
		last.Trade.Status != api.TradeConfirmed {
		t.Fatalf("taker's trade %+v, REST %+v", last.Trade, takerRest.Data[0])
	}

	// The market channel: a book message after the trade, with the levels it left
	// and a hash that verifies.
	bk, _ := mk.until("a book after the trade", func(m *api.WSMessage) bool { return m.Book != nil })
	ob := bk.Book.OrderBook()
	if len(bk.Book.Asks) != 1 || bk.Book.Asks[0].Size != api.Decimal(5*share) || ob.ComputeHash() != bk.Book.Hash ||
		bk.Book.LastTradePrice != api.Decimal(500_000) {
		t.Fatalf("book after the trade %+v", bk.Book)
	}

	// CANCELLATION keeps the trades and the creation time.
	e.mustJSON(http.MethodDelete, "/order", []byte(`{"orderID":"`+resting.OrderID+`"}`), mm, nil)
	cx, _ := mu.until("the CANCELLATION", func(m *api.WSMessage) bool { return m.Order != nil })
	if cx.Order.Type != api.WSOrderCancellation || cx.Order.CreatedAt != api.Int(created/1000) ||
		!slices.Equal(cx.Order.AssociateTrades, []market.TradeID{tradeID}) || cx.Order.SizeMatched != api.Decimal(5*share) {
		t.Fatalf("cancellation %+v", cx.Order)
	}
}

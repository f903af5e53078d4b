package ws_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

func (c *client) rtds() api.RTDSMessage {
	c.t.Helper()
	b := c.read()
	m, err := api.DecodeRTDSMessage(b)
	if err != nil {
		c.t.Fatalf("not an RTDS envelope: %s: %v", b, err)
	}
	return m
}

// TestRTDSTopics: the dialect's subscribe format and envelope for the topics the
// local exchange feeds (clob_market with an agg_orderbook snapshot and short-key
// price changes, activity trades, clob_user for the authenticated key); other
// topics and malformed filters are refused with an error envelope, never silence;
// "ping" gets "pong".
func TestRTDSTopics(t *testing.T) {
	f := newFixture(t, ws.Config{})
	f.host.Must(t, place("a0", alice, f.m.Yes, market.Buy, "0.30", "2"))
	f.host.Flush()
	c := dial(t, f.srv.WS+"/ws/rtds")
	yes, _ := json.Marshal([]market.TokenID{f.m.Yes})
	c.send(api.RTDSRequest{Action: "subscribe", Subscriptions: []api.RTDSSubscription{
		{Topic: api.RTDSTopicClobMarket, Type: api.RTDSTypeAggOrderbook, Filters: string(yes)},
		{Topic: api.RTDSTopicClobMarket, Type: api.WSEventPriceChange, Filters: string(yes)},
		{Topic: "crypto_prices", Type: "update"},
		{Topic: api.RTDSTopicClobMarket, Type: api.WSEventPriceChange},
		{Topic: api.RTDSTopicActivity, Type: api.RTDSTypeTrades, Filters: `{"market_slug":"test-` + string(f.m.Yes) + `"}`},
		{Topic: api.RTDSTopicClobUser, Type: "*", ClobAuth: &api.RTDSAuth{Key: "key-alice", Secret: "sa", Passphrase: "pa"}},
		{Topic: api.RTDSTopicClobUser, Type: "*", ClobAuth: &api.RTDSAuth{Key: "key-alice", Secret: "wrong", Passphrase: "pa"}},
	}})
	snap := c.rtds()
	if snap.Topic != api.RTDSTopicClobMarket || snap.Type != api.RTDSTypeAggOrderbook || snap.ConnectionID == "" {
		t.Fatalf("snapshot envelope %+v", snap)
	}
	var book api.WSBook
	if err := json.Unmarshal(snap.Payload, &book); err != nil || book.AssetID != f.m.Yes || len(book.Bids) != 1 {
		t.Fatalf("agg_orderbook payload %s (%v)", snap.Payload, err)
	}
	var errs []string
	for range 3 {
		e := c.rtds()
		if e.Topic != api.RTDSTopicSubscription || e.Type != api.RTDSTypeError || e.ConnectionID != snap.ConnectionID {
			t.Fatalf("expected an error envelope, got %+v", e)
		}
		var p api.RTDSError
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		errs = append(errs, p.Topic+": "+p.Error)
	}
	want := []string{
		`crypto_prices: RTDS topic "crypto_prices" is not available on the local exchange`,
		`clob_market: invalid filters: type "price_change" needs a JSON array of token ids`,
		`clob_user: Unauthorized/Invalid api key`,
	}
	if strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	c.sendText("ping")
	if b := c.read(); string(b) != "pong" {
		t.Fatalf("ping answered %q", b)
	}

	f.host.Must(t, place("a1", alice, f.m.Yes, market.Sell, "0.55", "5"), place("b1", bob, f.m.Yes, market.Buy, "0.55", "2"))
	got := map[string]json.RawMessage{}
	for len(got) < 4 {
		m := c.rtds()
		got[m.Topic+"/"+m.Type] = m.Payload
	}
	var pc api.RTDSPriceChange
	if err := json.Unmarshal(got["clob_market/price_change"], &pc); err != nil || pc.M != f.m.Cond || len(pc.PC) == 0 || pc.PC[0].A != f.m.Yes {
		t.Fatalf("price_change payload %s", got["clob_market/price_change"])
	}
	var act api.RTDSActivityTrade
	if err := json.Unmarshal(got["activity/trades"], &act); err != nil || act.ProxyWallet != bob.String() ||
		act.Size != api.Number(2*market.One) || act.Price != api.Number(550_000) || act.Slug != "test-"+string(f.m.Yes) {
		t.Fatalf("activity payload %s", got["activity/trades"])
	}
	var ord api.WSOrder
	if err := json.Unmarshal(got["clob_user/order"], &ord); err != nil || ord.Owner != "key-alice" || ord.ID != "a1" {
		t.Fatalf("clob_user order payload %s", got["clob_user/order"])
	}
	if _, ok := got["clob_user/trade"]; !ok {
		t.Fatalf("no clob_user trade: %v", got)
	}
}

// TestCommentsChannel: the catalogue publishes comments through the hub; /ws/comments
// and RTDS comments subscribers get those their filters select, nothing else.
func TestCommentsChannel(t *testing.T) {
	f := newFixture(t, ws.Config{})
	c := dial(t, f.srv.WS+"/ws/comments")
	c.send(api.WSSubscribe{Type: api.WSChannelComments, ParentEntityType: "Event", ParentEntityIDs: []string{"12"}})
	r := dial(t, f.srv.WS+"/ws/rtds")
	r.send(api.RTDSRequest{Action: "subscribe", Subscriptions: []api.RTDSSubscription{
		{Topic: api.RTDSTopicComments, Type: api.RTDSTypeAll, Filters: `{"parentEntityType":"Square"}`}}})
	wstest.Eventually(t, 5*time.Second, "two subscriptions", func() bool { return f.srv.Hub.Stats().Connections == 2 })
	// Round trips make sure both subscriptions were processed.
	c.sendText("PING")
	c.read()
	r.sendText("PING")
	r.read()
	pub := func(typ, et, id, body string) {
		t.Helper()
		if err := f.srv.Hub.PublishComment(api.CommentEvent{Type: typ, ParentEntityType: et, ParentEntityID: id, TimeMs: 5,
			Payload: json.RawMessage(`{"body":"` + body + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	pub(api.CommentCreated, "Event", "13", "other thread")
	pub(api.SquareMessage, "Square", "", "gm")
	pub(api.CommentCreated, "Event", "12", "hello")
	cm, err := api.DecodeWSComment(c.read())
	if err != nil || cm.ParentEntityID != "12" || string(cm.Payload) != `{"body":"hello"}` || cm.EventType != api.CommentCreated {
		t.Fatalf("comment frame %+v (%v)", cm, err)
	}
	if m := r.rtds(); m.Topic != api.RTDSTopicComments || m.Type != api.SquareMessage || string(m.Payload) != `{"body":"gm"}` {
		t.Fatalf("rtds comment %+v", m)
	}
	if err := f.srv.Hub.PublishComment(api.CommentEvent{Type: "comment_edited", ParentEntityType: "Event", Payload: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("an invalid event was published")
	}
	c.sendText("PING")
	if b := c.read(); string(b) != "PONG" {
		t.Fatalf("unexpected frame %s", b)
	}
}

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// next reads the connection's next n messages.
func (w *wsConn) next(n int) []api.WSMessage {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []api.WSMessage
	for len(out) < n {
		out = append(out, w.read(ctx, fmt.Sprintf("message %d of %d", len(out)+1, n))...)
	}
	return out
}

// quiet checks that nothing is queued on the connection: the answer to a PING
// is its next message (the hub serves a connection's messages in order, so a
// subscription sent before is applied by then).
func (w *wsConn) quiet() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, []byte(api.WSPing)); err != nil {
		w.t.Fatal(err)
	}
	if _, b, err := w.c.Read(ctx); err != nil || string(b) != api.WSPong {
		w.t.Fatalf("next message %s (%v), want %s", b, err, api.WSPong)
	}
}

// userWS opens w's user-channel connection (every market) and waits until it is
// subscribed.
func (e *env) userWS(t *testing.T, url string, w *wallet) *wsConn {
	t.Helper()
	c := e.dialWS(t, url, "/ws/user", api.WSSubscribe{Type: api.WSChannelUser,
		Auth: &api.APIKeyCreds{APIKey: w.creds.APIKey, Secret: w.creds.Secret, Passphrase: w.creds.Passphrase}})
	c.quiet()
	return c
}

// rfqSummary names a user-channel message by what the RFQ test checks.
func rfqSummary(m *api.WSMessage) string {
	switch {
	case m.RFQRequest != nil:
		return "request " + m.RFQRequest.Type + " " + m.RFQRequest.State
	case m.RFQQuote != nil:
		return "quote " + m.RFQQuote.Type + " " + m.RFQQuote.State
	case m.Trade != nil:
		return "trade " + m.Trade.Status
	}
	return m.EventType
}

// expectRFQ reads len(want) messages and checks their summaries in order.
func (w *wsConn) expectRFQ(want ...string) []api.WSMessage {
	w.t.Helper()
	msgs := w.next(len(want))
	got := make([]string, len(msgs))
	for i := range msgs {
		got[i] = rfqSummary(&msgs[i])
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		w.t.Fatalf("messages\n  %s\nwant\n  %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	return msgs
}

// TestRFQEventsOnTheUserChannel follows RFQ lives on the user channel of the
// requester, the quoter and a bystander, over real WebSocket clients on loopback
// against the server and the hub wired as `pitboss exchange` wires them: rfq_request
// and rfq_quote events (CREATED, ACCEPTED, APPROVED, CANCELED, EXPIRED, each with
// the object as the /rfq/data listings show it), the approval's trade to both as
// MATCHED → MINED → CONFIRMED with the id, sides, orders and keys of GET
// /data/trades, the expiry once and only once, and nothing to anyone else.
func TestRFQEventsOnTheUserChannel(t *testing.T) {
	e := newEnv(t)
	pub := e.startHub(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	buyer, q, other := e.register(newWallet(t, "rfqws-b")), e.register(newWallet(t, "rfqws-q")), e.register(newWallet(t, "rfqws-o"))
	e.split(q, rain, 30*share)
	e.split(buyer, rain, 1*share)
	user := func(w *wallet) *wsConn { return e.userWS(t, pub.URL, w) }
	bu, qu, ou := user(buyer), user(q), user(other)
	// The requester's other connection follows another market only: it gets none.
	elsewhere := e.dialWS(t, pub.URL, "/ws/user", api.WSSubscribe{Type: api.WSChannelUser, Markets: []market.ConditionID{e.mkt("btc-above-100k").Condition},
		Auth: &api.APIKeyCreds{APIKey: buyer.creds.APIKey, Secret: buyer.creds.Secret, Passphrase: buyer.creds.Passphrase}})
	elsewhere.quiet()

	// A life that settles.
	id := e.rfqAsk(buyer, yes, market.Buy, 600_000, 10*share)
	m := bu.expectRFQ("request CREATED ACTIVE")[0].RFQRequest
	var listed api.Page[api.RFQRequest]
	e.mustJSON(http.MethodGet, "/rfq/data/requests?request_ids="+id, nil, buyer, &listed)
	if m.RFQRequest != listed.Data[0] || m.Timestamp != api.Int(e.clock.now()/1000) {
		t.Fatalf("CREATED %+v, listed %+v", m, listed.Data)
	}
	qid := e.rfqQuote(q, id, "0.55")
	for _, c := range []*wsConn{qu, bu} {
		if m := c.expectRFQ("quote CREATED PENDING")[0].RFQQuote; m.QuoteID != qid || m.RequestID != id ||
			m.Side != api.Side(market.Sell) || m.Price != api.Number(550_000) || m.UserAddress != q.addr.String() {
			t.Fatalf("quote CREATED %+v", m)
		}
	}
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`"}`), buyer, nil)
	for _, c := range []*wsConn{bu, qu} {
		if m := c.expectRFQ("request ACCEPTED ACCEPTED", "quote ACCEPTED ACCEPTED")[0].RFQRequest; m.AcceptedQuoteID != qid {
			t.Fatalf("request ACCEPTED %+v", m)
		}
	}
	e.mustJSON(http.MethodPost, "/rfq/quote/approve", []byte(`{"quote_id":"`+qid+`"}`), q, nil)
	var rest api.Page[api.Trade]
	e.mustJSON(http.MethodGet, "/data/trades", nil, buyer, &rest)
	if rest.Count != 1 {
		t.Fatalf("/data/trades %+v", rest.Data)
	}
	for _, c := range []struct {
		conn       *wsConn
		w          *wallet
		role, side string
	}{{bu, buyer, "TAKER", "BUY"}, {qu, q, "MAKER", "SELL"}} {
		msgs := c.conn.expectRFQ("request APPROVED FILLED", "quote APPROVED FILLED", "trade MATCHED", "trade MINED", "trade CONFIRMED")
		for _, m := range msgs[2:] {
			tr := m.Trade
			if tr.ID != rest.Data[0].ID || tr.TraderSide != c.role || tr.TakerOrderID != market.OrderID(id) || tr.Owner != c.w.creds.APIKey ||
				tr.Side != api.Side(market.Buy) || tr.Size != api.Decimal(10*share) || tr.Price != api.Decimal(550_000) ||
				len(tr.MakerOrders) != 1 || tr.MakerOrders[0].OrderID != market.OrderID(qid) || tr.MakerOrders[0].Owner != q.creds.APIKey ||
				tr.Fee != 0 || tr.MakerAddress != c.w.addr.String() {
				t.Fatalf("%s's trade %+v", c.role, tr)
			}
		}
	}

	// Cancellations: the quote's to both, the request's to the requester.
	id2 := e.rfqAsk(buyer, yes, market.Buy, 600_000, 5*share)
	bu.expectRFQ("request CREATED ACTIVE")
	qid2 := e.rfqQuote(q, id2, "0.5")
	qu.expectRFQ("quote CREATED PENDING")
	bu.expectRFQ("quote CREATED PENDING")
	e.mustJSON(http.MethodDelete, "/rfq/quote", []byte(`{"quote_id":"`+qid2+`"}`), q, nil)
	qu.expectRFQ("quote CANCELED CANCELED")
	bu.expectRFQ("quote CANCELED CANCELED")
	e.mustJSON(http.MethodDelete, "/rfq/request", []byte(`{"request_id":"`+id2+`"}`), buyer, nil)
	bu.expectRFQ("request CANCELED CANCELED")

	// Expiry: published by the sweep once the time passed, once.
	id3 := e.rfqAsk(buyer, yes, market.Buy, 600_000, 4*share)
	bu.expectRFQ("request CREATED ACTIVE")
	e.rfqQuote(q, id3, "0.52")
	qu.expectRFQ("quote CREATED PENDING")
	bu.expectRFQ("quote CREATED PENDING")
	if err := e.srv.sweepRFQ(context.Background()); err != nil {
		t.Fatal(err)
	}
	bu.quiet() // not yet due
	e.clock.advance(6 * time.Minute)
	for range 2 {
		if err := e.srv.sweepRFQ(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range bu.next(2) { // one of each, in no set order
		switch {
		case m.RFQRequest != nil && m.RFQRequest.RequestID == id3 && m.RFQRequest.Type == api.WSRFQExpired && m.RFQRequest.State == "EXPIRED":
		case m.RFQQuote != nil && m.RFQQuote.RequestID == id3 && m.RFQQuote.Type == api.WSRFQExpired && m.RFQQuote.State == "EXPIRED":
		default:
			t.Fatalf("expiry: %s", rfqSummary(&m))
		}
	}
	qu.expectRFQ("quote EXPIRED EXPIRED")
	for _, c := range []*wsConn{bu, qu, ou, elsewhere} {
		c.quiet()
	}
}

// expectClosed reads one rfq_quote frame on c and checks it is quote qid's
// cancellation with reason, equal to what GET /rfq/data/quotes shows w then.
func (e *env) expectClosed(c *wsConn, w *wallet, qid, reason string) {
	e.t.Helper()
	m := c.expectRFQ("quote CANCELED CANCELED")[0].RFQQuote
	var listed api.Page[api.RFQQuote]
	e.mustJSON(http.MethodGet, "/rfq/data/quotes?quote_ids="+qid, nil, w, &listed)
	if m.QuoteID != qid || m.Reason != reason || len(listed.Data) != 1 || m.RFQQuote != listed.Data[0] {
		e.t.Fatalf("closed quote %+v (want %s, %s), listed %+v", m, qid, reason, listed.Data)
	}
}

// TestRFQLosingQuotesAreClosed: accepting a quote cancels the request's other
// pending quotes (ANOTHER_QUOTE_ACCEPTED), cancelling a request cancels its open
// quotes, the accepted one included (REQUEST_CANCELED): each quoter gets exactly
// one terminal rfq_quote event per quote, equal to what GET /rfq/data/quotes then
// shows, and nothing more — no EXPIRED after the expiry passes, nothing at the
// approval — over real WebSocket clients on loopback.
func TestRFQLosingQuotesAreClosed(t *testing.T) {
	e := newEnv(t)
	pub := e.startHub(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	buyer := e.register(newWallet(t, "rfqlq-b"))
	qs := []*wallet{e.register(newWallet(t, "rfqlq-1")), e.register(newWallet(t, "rfqlq-2")), e.register(newWallet(t, "rfqlq-3"))}
	for _, q := range qs {
		e.split(q, rain, 30*share)
	}
	e.split(buyer, rain, 1*share)
	user := func(w *wallet) *wsConn { return e.userWS(t, pub.URL, w) }
	conns := []*wsConn{user(qs[0]), user(qs[1]), user(qs[2])}
	quoteAll := func(id string, prices ...string) []string {
		ids := make([]string, len(prices))
		for i, p := range prices {
			ids[i] = e.rfqQuote(qs[i], id, p)
			conns[i].expectRFQ("quote CREATED PENDING")
		}
		return ids
	}

	// Accepting the best quote closes the two others; the approval adds nothing
	// for the losers.
	id := e.rfqAsk(buyer, yes, market.Buy, 600_000, 10*share)
	qids := quoteAll(id, "0.57", "0.55", "0.56")
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`"}`), buyer, nil)
	conns[1].expectRFQ("request ACCEPTED ACCEPTED", "quote ACCEPTED ACCEPTED")
	e.expectClosed(conns[0], qs[0], qids[0], "ANOTHER_QUOTE_ACCEPTED")
	e.expectClosed(conns[2], qs[2], qids[2], "ANOTHER_QUOTE_ACCEPTED")
	e.mustJSON(http.MethodPost, "/rfq/quote/approve", []byte(`{"quote_id":"`+qids[1]+`"}`), qs[1], nil)
	conns[1].expectRFQ("request APPROVED FILLED", "quote APPROVED FILLED", "trade MATCHED", "trade MINED", "trade CONFIRMED")

	// Cancelling an accepted request closes the accepted quote (its quoter also
	// gets the request's cancellation) after the losers were closed at the accept.
	id2 := e.rfqAsk(buyer, yes, market.Buy, 600_000, 5*share)
	qids2 := quoteAll(id2, "0.5", "0.51")
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id2+`","quote_id":"`+qids2[1]+`"}`), buyer, nil)
	conns[1].expectRFQ("request ACCEPTED ACCEPTED", "quote ACCEPTED ACCEPTED")
	e.expectClosed(conns[0], qs[0], qids2[0], "ANOTHER_QUOTE_ACCEPTED")
	e.mustJSON(http.MethodDelete, "/rfq/request", []byte(`{"request_id":"`+id2+`"}`), buyer, nil)
	conns[1].expectRFQ("request CANCELED CANCELED")
	e.expectClosed(conns[1], qs[1], qids2[1], "REQUEST_CANCELED")

	// Cancelling an open request closes every pending quote.
	id3 := e.rfqAsk(buyer, yes, market.Buy, 600_000, 4*share)
	qids3 := quoteAll(id3, "0.5", "0.52", "0.53")
	e.mustJSON(http.MethodDelete, "/rfq/request", []byte(`{"request_id":"`+id3+`"}`), buyer, nil)
	for i := range qs {
		e.expectClosed(conns[i], qs[i], qids3[i], "REQUEST_CANCELED")
	}

	// Past every expiry the sweep announces none of them again.
	e.clock.advance(6 * time.Minute)
	if err := e.srv.sweepRFQ(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		c.quiet()
	}
}

// raw reads the connection's next n messages as sent.
func (w *wsConn) raw(n int) [][]byte {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := make([][]byte, n)
	for i := range out {
		_, b, err := w.c.Read(ctx)
		if err != nil {
			w.t.Fatalf("message %d of %d: %v", i+1, n, err)
		}
		out[i] = b
	}
	return out
}

// rtdsUser opens an RTDS connection with a clob_user subscription of typ for w.
func (e *env) rtdsUser(t *testing.T, url string, w *wallet, typ string) *wsConn {
	t.Helper()
	c := e.dialWSWith(t, url, "/ws/rtds", api.RTDSRequest{Action: api.RTDSSubscribe, Subscriptions: []api.RTDSSubscription{{
		Topic: api.RTDSTopicClobUser, Type: typ, ClobAuth: &api.RTDSAuth{Key: w.creds.APIKey, Secret: w.creds.Secret, Passphrase: w.creds.Passphrase}}}})
	c.quiet()
	return c
}

// TestRFQFramesOnRTDSClobUser: the RTDS clob_user topic mirrors the user
// channel's RFQ frames as it does orders and trades — each /ws/user frame, byte
// for byte, as the payload of an envelope whose type is the frame's event_type —
// and a subscription to one type (rfq_quote) gets only those.
func TestRFQFramesOnRTDSClobUser(t *testing.T) {
	e := newEnv(t)
	pub := e.startHub(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	buyer, qa, qb := e.register(newWallet(t, "rfqcu-b")), e.register(newWallet(t, "rfqcu-a")), e.register(newWallet(t, "rfqcu-c"))
	e.split(qa, rain, 30*share)
	e.split(qb, rain, 30*share)
	e.split(buyer, rain, 1*share)
	ua := e.userWS(t, pub.URL, qa)
	ra, rb := e.rtdsUser(t, pub.URL, qa, "*"), e.rtdsUser(t, pub.URL, qb, api.WSEventRFQQuote)

	id := e.rfqAsk(buyer, rain.Tokens[market.Yes], market.Buy, 600_000, 10*share)
	qid := e.rfqQuote(qa, id, "0.55")
	qidB := e.rfqQuote(qb, id, "0.56")
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`","quote_id":"`+qid+`"}`), buyer, nil)
	e.mustJSON(http.MethodPost, "/rfq/quote/approve", []byte(`{"quote_id":"`+qid+`"}`), qa, nil)

	const n = 8 // quote CREATED, request and quote ACCEPTED, request and quote APPROVED, the trade ×3
	frames, envs := ua.raw(n), ra.raw(n)
	for i := range frames {
		m, err := api.DecodeRTDSMessage(envs[i])
		var head struct {
			EventType string `json:"event_type"`
		}
		if err == nil {
			err = json.Unmarshal(frames[i], &head)
		}
		if err != nil || m.Topic != api.RTDSTopicClobUser || m.Type != head.EventType || string(m.Payload) != string(frames[i]) {
			t.Fatalf("envelope %d %s (%v), user frame %s", i, envs[i], err, frames[i])
		}
	}
	for _, b := range rb.raw(2) {
		m, err := api.DecodeRTDSMessage(b)
		var q api.WSRFQQuote
		if err == nil {
			err = json.Unmarshal(m.Payload, &q)
		}
		if err != nil || m.Type != api.WSEventRFQQuote || q.QuoteID != qidB {
			t.Fatalf("rfq_quote-only subscription got %s (%v)", b, err)
		}
	}
	for _, c := range []*wsConn{ua, ra, rb} {
		c.quiet()
	}
}

// rtdsRFQ opens an RTDS connection subscribed to the rfq topic with filters.
func (e *env) rtdsRFQ(t *testing.T, url, filters string) *wsConn {
	t.Helper()
	c := e.dialWSWith(t, url, "/ws/rtds", api.RTDSRequest{Action: api.RTDSSubscribe, Subscriptions: []api.RTDSSubscription{{
		Topic: api.RTDSTopicRFQ, Type: api.RTDSTypeAll, Filters: filters}}})
	c.quiet()
	return c
}

// expectPublic reads one rfq-topic message on c and checks its type, request and
// state, that it names nobody (no requester address), and that it is the request
// as GET /rfq/data/requests shows it to viewer when the request is open.
func (e *env) expectPublic(c *wsConn, typ, id, state string, requester, viewer *wallet) {
	e.t.Helper()
	b := c.raw(1)[0]
	m, err := api.DecodeRTDSMessage(b)
	var p api.RTDSRFQRequest
	if err == nil {
		err = json.Unmarshal(m.Payload, &p)
	}
	if err != nil || m.Topic != api.RTDSTopicRFQ || m.Type != typ || p.RequestID != id || p.State != state {
		e.t.Fatalf("rfq topic %s (%v), want %s of %s %s", b, err, typ, id, state)
	}
	if strings.Contains(strings.ToLower(string(b)), strings.ToLower(requester.addr.String()[2:])) {
		e.t.Fatalf("rfq topic names the requester: %s", b)
	}
	if state == "ACTIVE" {
		var listed api.Page[api.RFQRequest]
		e.mustJSON(http.MethodGet, "/rfq/data/requests?request_ids="+id, nil, viewer, &listed)
		if len(listed.Data) != 1 || api.NewRTDSRFQRequest(&listed.Data[0]) != p || m.Timestamp != e.clock.now() {
			e.t.Fatalf("rfq topic %+v at %d, listed %+v at %d", p, m.Timestamp, listed.Data, e.clock.now())
		}
	}
}

// TestRFQRequestsBroadcastOnRTDS: would-be quoters learn of requests without
// polling, on the RTDS rfq topic over real WebSockets on loopback: a subscriber of
// the request's market (or token) gets request_created as soon as the request is
// acknowledged — the request as the open listing shows it, without the requester's
// address — then its departure from the listing once (request_accepted,
// request_canceled, request_expired), nothing at the approval or at the expiry of
// an accepted request; a subscriber of another market gets nothing; bad filters
// and unknown types are refused with an error message.
func TestRFQRequestsBroadcastOnRTDS(t *testing.T) {
	e := newEnv(t)
	pub := e.startHub(t)
	rain, btc := e.mkt("rain-in-lisbon-tomorrow"), e.mkt("btc-above-100k")
	yes := rain.Tokens[market.Yes]
	buyer, q := e.register(newWallet(t, "rfqbc-b")), e.register(newWallet(t, "rfqbc-q"))
	e.split(q, rain, 30*share)
	e.split(buyer, rain, 1*share)
	byMarket := e.rtdsRFQ(t, pub.URL, `{"market":"`+string(rain.Condition)+`"}`)
	byToken := e.rtdsRFQ(t, pub.URL, `{"tokens":["`+string(yes)+`"]}`)
	bystander := e.rtdsRFQ(t, pub.URL, `{"markets":["`+string(btc.Condition)+`"]}`)
	watchers := []*wsConn{byMarket, byToken}

	// Created, then accepted (it leaves the listing); the approval is private.
	id := e.rfqAsk(buyer, yes, market.Buy, 600_000, 10*share)
	for _, c := range watchers {
		e.expectPublic(c, api.RTDSTypeRequestCreated, id, "ACTIVE", buyer, q)
	}
	qid := e.rfqQuote(q, id, "0.55")
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`"}`), buyer, nil)
	for _, c := range watchers {
		e.expectPublic(c, api.RTDSTypeRequestAccepted, id, "ACCEPTED", buyer, q)
	}
	e.mustJSON(http.MethodPost, "/rfq/quote/approve", []byte(`{"quote_id":"`+qid+`"}`), q, nil)

	// Cancelled while open.
	id2 := e.rfqAsk(buyer, yes, market.Buy, 600_000, 5*share)
	e.expectPublic(byMarket, api.RTDSTypeRequestCreated, id2, "ACTIVE", buyer, q)
	e.mustJSON(http.MethodDelete, "/rfq/request", []byte(`{"request_id":"`+id2+`"}`), buyer, nil)
	e.expectPublic(byMarket, api.RTDSTypeRequestCanceled, id2, "CANCELED", buyer, q)

	// Expired while open: once; an accepted request's expiry is not announced.
	id3 := e.rfqAsk(buyer, yes, market.Buy, 600_000, 4*share)
	id4 := e.rfqAsk(buyer, yes, market.Buy, 600_000, 3*share)
	e.expectPublic(byMarket, api.RTDSTypeRequestCreated, id3, "ACTIVE", buyer, q)
	e.expectPublic(byMarket, api.RTDSTypeRequestCreated, id4, "ACTIVE", buyer, q)
	e.rfqQuote(q, id4, "0.5")
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id4+`"}`), buyer, nil)
	e.expectPublic(byMarket, api.RTDSTypeRequestAccepted, id4, "ACCEPTED", buyer, q)
	e.clock.advance(6 * time.Minute)
	for range 2 {
		if err := e.srv.sweepRFQ(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	e.expectPublic(byMarket, api.RTDSTypeRequestExpired, id3, "EXPIRED", buyer, q)
	byMarket.quiet()
	bystander.quiet()

	// Unsubscribed, a connection gets no more: a fresh subscriber sees the next
	// request (queued in the same step as every other's), the former one nothing.
	if err := byMarket.c.Write(context.Background(), websocket.MessageText, jsonOf(t, api.RTDSRequest{Action: api.RTDSUnsubscribe,
		Subscriptions: []api.RTDSSubscription{{Topic: api.RTDSTopicRFQ, Type: api.RTDSTypeAll}}})); err != nil {
		t.Fatal(err)
	}
	byMarket.quiet()
	fresh := e.rtdsRFQ(t, pub.URL, "")
	id5 := e.rfqAsk(buyer, yes, market.Buy, 600_000, 2*share)
	e.expectPublic(fresh, api.RTDSTypeRequestCreated, id5, "ACTIVE", buyer, q)
	byMarket.quiet()
	bystander.quiet()

	// Refusals name the topic and type.
	for _, s := range []api.RTDSSubscription{
		{Topic: api.RTDSTopicRFQ, Type: "quote_created"},
		{Topic: api.RTDSTopicRFQ, Type: api.RTDSTypeAll, Filters: `{"market_slug":"rain"}`},
	} {
		c := e.dialWSWith(t, pub.URL, "/ws/rtds", api.RTDSRequest{Action: api.RTDSSubscribe, Subscriptions: []api.RTDSSubscription{s}})
		m, err := api.DecodeRTDSMessage(c.raw(1)[0])
		if err != nil || m.Topic != api.RTDSTopicSubscription || m.Type != api.RTDSTypeError || !strings.Contains(string(m.Payload), `"topic":"rfq"`) {
			t.Fatalf("%+v: %+v %v", s, m, err)
		}
	}
}

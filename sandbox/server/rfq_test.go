package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/host/hosttest"
)

// rfqAsk creates w's request to buy (or sell) size shares of tok at a limit of
// price, in the dialect's body, and returns its id.
func (e *env) rfqAsk(w *wallet, tok market.TokenID, side market.Side, price, size market.Micros) string {
	e.t.Helper()
	usdc, _ := market.MulDiv(size, price, market.One)
	in, out, ain, aout := string(tok), api.RFQCollateral, size, usdc
	if side == market.Sell {
		in, out, ain, aout = api.RFQCollateral, string(tok), usdc, size
	}
	var ack api.RFQAck
	e.mustJSON(http.MethodPost, "/rfq/request", []byte(fmt.Sprintf(`{"asset_in":%q,"asset_out":%q,"amount_in":"%d","amount_out":"%d","user_type":0}`,
		in, out, ain, aout)), w, &ack)
	if ack.State != "ACTIVE" || ack.RequestID == "" {
		e.t.Fatalf("request %+v", ack)
	}
	return ack.RequestID
}

func (e *env) rfqQuote(w *wallet, id, price string) string {
	e.t.Helper()
	var ack api.RFQAck
	e.mustJSON(http.MethodPost, "/rfq/quote", []byte(`{"request_id":"`+id+`","price":"`+price+`"}`), w, &ack)
	if ack.State != "PENDING" {
		e.t.Fatalf("quote %+v", ack)
	}
	return ack.QuoteID
}

// TestRFQ is the desk's life over HTTP: a request, two quotes, the best quote,
// acceptance by the requester, approval by the quoter settling through the
// ledger, the listings, and every error of the specification's RFQ table with its
// exact message, plus auth and the geoblock rules.
func TestRFQ(t *testing.T) {
	e := newEnv(t, withTrustedLoopback())
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	buyer, q1, q2 := e.register(newWallet(t, "rfq-buyer")), e.register(newWallet(t, "rfq-q1")), e.register(newWallet(t, "rfq-q2"))
	e.split(q1, rain, 20*share)
	e.split(q2, rain, 20*share)
	e.split(buyer, rain, 1*share) // funds the buyer (collateral minus 1)
	bal := func(w *wallet, tok market.TokenID) (c, n market.Micros) {
		if err := e.h.Read(context.Background(), func(eng *exchange.Engine) {
			c, _ = eng.Collateral(w.addr)
			n, _ = eng.TokenBalance(w.addr, tok)
		}); err != nil {
			t.Fatal(err)
		}
		return
	}
	c0, y0 := bal(buyer, yes)
	qc0, qy0 := bal(q1, yes)

	id := e.rfqAsk(buyer, yes, market.Buy, 600_000, 10*share)
	a := e.rfqQuote(q1, id, "0.58")
	b := e.rfqQuote(q2, id, "0.55")
	var best api.RFQQuote
	e.mustJSON(http.MethodGet, "/rfq/data/best-quote?request_id="+id, nil, buyer, &best)
	if best.QuoteID != b || best.Price != api.Number(550_000) || best.Side != api.Side(market.Sell) || best.State != "PENDING" ||
		best.SizeOut != api.Decimal(10*share) || best.SizeIn != api.Decimal(5_500_000) {
		t.Fatalf("best %+v", best)
	}
	// The quoters see the open request; the listing of quotes is per participant.
	var reqs api.Page[api.RFQRequest]
	e.mustJSON(http.MethodGet, "/rfq/data/requests?state=active", nil, q1, &reqs)
	if reqs.Count != 1 || reqs.Data[0].RequestID != id || reqs.Data[0].Side != api.Side(market.Buy) || reqs.Data[0].Price != api.Number(600_000) ||
		reqs.Data[0].SizeIn != api.Decimal(10*share) || reqs.Data[0].SizeOut != api.Decimal(6*share) || reqs.Data[0].UserAddress != buyer.addr.String() {
		t.Fatalf("requests %+v", reqs)
	}
	var qs api.Page[api.RFQQuote]
	e.mustJSON(http.MethodGet, "/rfq/data/quotes?request_ids="+id, nil, q1, &qs)
	if qs.Count != 1 || qs.Data[0].QuoteID != a {
		t.Fatalf("q1 sees %+v", qs.Data)
	}
	e.mustJSON(http.MethodGet, "/rfq/data/quotes", nil, buyer, &qs)
	if qs.Count != 2 {
		t.Fatalf("the requester sees %d quotes", qs.Count)
	}

	// Errors before acceptance.
	st, body := e.call(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`","quote_id":"`+b+`"}`), q1, nil)
	wantErr(t, st, body, 400, "RFQ not found or not owned by you")
	st, body = e.call(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"nope"}`), buyer, nil)
	wantErr(t, st, body, 400, "valid rfqId required")
	st, body = e.call(http.MethodPost, "/rfq/quote", []byte(`{"request_id":"`+id+`"}`), q1, nil)
	wantErr(t, st, body, 400, "price required")
	st, body = e.call(http.MethodPost, "/rfq/quote", []byte(`{"request_id":"`+id+`","price":"abc"}`), q1, nil)
	wantErr(t, st, body, 400, "price required")
	st, body = e.call(http.MethodPost, "/rfq/quote", []byte(`{"price":"0.5"}`), q1, nil)
	wantErr(t, st, body, 400, "valid rfqId required")
	st, body = e.call(http.MethodPost, "/rfq/quote/approve", []byte(`{}`), q1, nil)
	wantErr(t, st, body, 400, "rfqId or quoteId required")
	st, body = e.call(http.MethodPost, "/rfq/quote/approve", []byte(`{"quote_id":"`+a+`"}`), q1, nil)
	wantErr(t, st, body, 404, "quote not found, expired, or already processed")
	st, body = e.call(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`","quote_id":"00000000-0000-8000-8000-000000000000"}`), buyer, nil)
	wantErr(t, st, body, 404, "quote not found, expired, or already processed")
	st, body = e.call(http.MethodPost, "/rfq/request", []byte(`[1]`), buyer, nil)
	wantErr(t, st, body, 400, "Invalid payload")
	st, body = e.call(http.MethodGet, "/rfq/data/requests", nil, nil, nil)
	wantErr(t, st, body, 401, "L2 authentication failure")
	// Geoblock: a blocked region may not quote; a close-only one may not request.
	st, body = e.call(http.MethodPost, "/rfq/quote", []byte(`{"request_id":"`+id+`","price":"0.5"}`), q1, http.Header{"X-Country-Code": {"US"}})
	wantErr(t, st, body, 400, "Trading restricted in your region")
	st, body = e.call(http.MethodPost, "/rfq/request", []byte(`{"asset_in":"`+string(yes)+`","asset_out":"0","amount_in":"5000000","amount_out":"2500000"}`),
		buyer, http.Header{"X-Country-Code": {"TW"}})
	wantErr(t, st, body, 400, "'"+buyer.addr.String()+"' address in closed only mode")

	// Accept the best (no quote id), approve by the quoter: the swap settles.
	var ack api.RFQAck
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`"}`), buyer, &ack)
	if ack.QuoteID != b || ack.State != "ACCEPTED" {
		t.Fatalf("accept %+v", ack)
	}
	st, body = e.call(http.MethodPost, "/rfq/quote", []byte(`{"request_id":"`+id+`","price":"0.5"}`), q1, nil)
	wantErr(t, st, body, 400, "RFQ not found, expired, or already filled")
	st, body = e.call(http.MethodPost, "/rfq/quote/approve", []byte(`{"request_id":"`+id+`"}`), q1, nil)
	wantErr(t, st, body, 404, "quote not found, expired, or already processed")
	e.mustJSON(http.MethodPost, "/rfq/quote/approve", []byte(`{"rfqId":"`+id+`"}`), q2, &ack)
	if ack.State != "FILLED" {
		t.Fatalf("approve %+v", ack)
	}
	c1, y1 := bal(buyer, yes)
	if y1-y0 != 10*share || c0-c1 != 5_500_000 {
		t.Fatalf("buyer moved %s YES and %s collateral", y1-y0, c0-c1)
	}
	if qc, qy := bal(q1, yes); qc != qc0 || qy != qy0 {
		t.Fatal("the losing quoter's balances moved")
	}
	e.mustJSON(http.MethodGet, "/rfq/data/requests?state=inactive", nil, buyer, &reqs)
	if reqs.Count != 1 || reqs.Data[0].State != "FILLED" || reqs.Data[0].AcceptedQuoteID != b {
		t.Fatalf("after the fill %+v", reqs.Data)
	}
	st, body = e.call(http.MethodGet, "/rfq/data/best-quote?request_id="+id, nil, buyer, nil)
	wantErr(t, st, body, 400, "RFQ not found, expired, or already filled")
	e.engineCheck()

	// Expiry, cancellations, and no quotes.
	id2 := e.rfqAsk(buyer, yes, market.Sell, 400_000, 5*share)
	st, body = e.call(http.MethodGet, "/rfq/data/best-quote?request_id="+id2, nil, buyer, nil)
	wantErr(t, st, body, 404, "no valid quotes available")
	st, body = e.call(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id2+`"}`), buyer, nil)
	wantErr(t, st, body, 404, "no valid quotes available")
	qa := e.rfqQuote(q1, id2, "0.41")
	e.mustJSON(http.MethodDelete, "/rfq/quote", []byte(`{"quote_id":"`+qa+`"}`), q1, &ack)
	if ack.State != "CANCELED" {
		t.Fatalf("cancel quote %+v", ack)
	}
	e.rfqQuote(q2, id2, "0.42")
	e.clock.advance(6 * time.Minute) // past the default lifetime
	st, body = e.call(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id2+`"}`), buyer, nil)
	wantErr(t, st, body, 400, "RFQ not found, expired, or already filled")
	e.mustJSON(http.MethodGet, "/rfq/data/requests?request_ids="+id2, nil, buyer, &reqs)
	if reqs.Count != 1 || reqs.Data[0].State != "EXPIRED" {
		t.Fatalf("expired %+v", reqs.Data)
	}
	id3 := e.rfqAsk(buyer, yes, market.Buy, 990_000, 5*share)
	st, body = e.call(http.MethodDelete, "/rfq/request", []byte(`{"request_id":"`+id3+`"}`), q1, nil)
	wantErr(t, st, body, 400, "RFQ not found or not owned by you")
	e.mustJSON(http.MethodDelete, "/rfq/request", []byte(`{"request_id":"`+id3+`"}`), buyer, &ack)
	if ack.State != "CANCELED" {
		t.Fatalf("cancel request %+v", ack)
	}
}

// TestRFQSurvivesRestarts: requests, quotes and a settled fill come back after a
// restart from the journal and from snapshots, identical, with the ledger's
// invariants holding.
func TestRFQSurvivesRestarts(t *testing.T) {
	for _, every := range []int{-1, 3} {
		dir := t.TempDir()
		opt := func(_ *Config, h *host.Config) { h.Dir, h.SnapshotEvery = dir, every }
		e := newEnv(t, opt)
		rain := e.mkt("rain-in-lisbon-tomorrow")
		buyer, q := e.register(newWallet(t, "rfqp-b")), e.register(newWallet(t, "rfqp-q"))
		e.split(q, rain, 10*share)
		id := e.rfqAsk(buyer, rain.Tokens[market.No], market.Buy, 990_000, 4*share)
		qid := e.rfqQuote(q, id, "0.3")
		e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`","quote_id":"`+qid+`"}`), buyer, nil)
		e.mustJSON(http.MethodPost, "/rfq/quote/approve", []byte(`{"quote_id":"`+qid+`"}`), q, nil)
		open := e.rfqAsk(buyer, rain.Tokens[market.Yes], market.Buy, 990_000, 2*share)
		var wantTrades [2]string
		for i, w := range []*wallet{buyer, q} {
			if st, b := e.call(http.MethodGet, "/data/trades", nil, w, nil); st != 200 || !strings.Contains(string(b), `"taker_order_id":"`+id+`"`) {
				t.Fatalf("trades before the restart: %d %s", st, b)
			} else {
				wantTrades[i] = string(b)
			}
		}
		wantEng, _ := e.snapshotOf()
		wantRFQ := e.rfq.AppendSnapshot(nil)
		e.close()

		e2 := newEnv(t, opt)
		e2.clock.ms.Store(e.clock.now())
		gotEng, _ := e2.snapshotOf()
		if string(gotEng) != string(wantEng) || string(e2.rfq.AppendSnapshot(nil)) != string(wantRFQ) {
			t.Fatalf("every %d: state after restart differs", every)
		}
		if r, ok := e2.rfq.Request(open); !ok || r.State != "ACTIVE" {
			t.Fatalf("open request after restart %+v", r)
		}
		for i, w := range []*wallet{buyer, q} { // the swap's trade, id and keys included
			if st, b := e2.call(http.MethodGet, "/data/trades", nil, w, nil); st != 200 || string(b) != wantTrades[i] {
				t.Fatalf("every %d: trades after restart %s, before %s", every, b, wantTrades[i])
			}
		}
		// The user channel after the restart: the open request's expiry is
		// published once (the sweep starts from the recovered desk), the filled
		// one's never.
		bu := e2.dialWS(t, e2.startHub(t).URL, "/ws/user", api.WSSubscribe{Type: api.WSChannelUser,
			Auth: &api.APIKeyCreds{APIKey: buyer.creds.APIKey, Secret: buyer.creds.Secret, Passphrase: buyer.creds.Passphrase}})
		bu.quiet()
		e2.clock.advance(6 * time.Minute)
		for range 2 {
			if err := e2.srv.sweepRFQ(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if m := bu.expectRFQ("request EXPIRED EXPIRED")[0].RFQRequest; m.RequestID != open {
			t.Fatalf("every %d: expired after restart %+v", every, m)
		}
		bu.quiet()
		e2.engineCheck()
	}
}

// TestRFQApprovalIsAllOrNothing: an approval — the trade's meta, the Swap and the
// record — is all or nothing: a fault at any step leaves the journal's files as they were, the
// request ACCEPTED and the balances untouched; then the approval settles.
func TestRFQApprovalIsAllOrNothing(t *testing.T) {
	var f hosttest.Faults
	e := newEnv(t, withStore(t), withFaults(&f))
	rain := e.mkt("rain-in-lisbon-tomorrow")
	buyer, q := e.register(newWallet(t, "rfqa-b")), e.register(newWallet(t, "rfqa-q"))
	e.split(q, rain, 10*share)
	id := e.rfqAsk(buyer, rain.Tokens[market.Yes], market.Buy, 700_000, 3*share)
	qid := e.rfqQuote(q, id, "0.7")
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`"}`), buyer, nil)
	approve := func() error {
		st, b := e.call(http.MethodPost, "/rfq/quote/approve", []byte(`{"quote_id":"`+qid+`"}`), q, nil)
		return httpErr(st, b)
	}
	if n := hosttest.EveryStep(t, &f, e.dir, 4, approve, func(k int) {
		if r, _ := e.rfq.Request(id); r.State != "ACCEPTED" || balanceOf(e, buyer) != "1000" {
			t.Fatalf("after a fault at step %d: request %s, buyer's balance %s", k, r.State, balanceOf(e, buyer))
		}
		e.engineCheck()
		if st, b := e.call(http.MethodGet, "/data/trades", nil, buyer, nil); st != 200 || !strings.Contains(string(b), `"data":[]`) {
			t.Fatalf("after a fault at step %d: trades %d %s", k, st, b)
		}
	}); n != 3 { // the trade's meta, the Swap, the record
		t.Fatalf("approve took %d steps", n)
	}
	if r, _ := e.rfq.Request(id); r.State != "FILLED" || balanceOf(e, buyer) != "997.9" {
		t.Fatalf("after the approval: %s, balance %s", r.State, balanceOf(e, buyer))
	}
}

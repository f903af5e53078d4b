package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

const share = market.One

// rawOrder signs an order with explicit amounts (for shapes BuildOrder refuses).
func (e *env) rawOrder(w *wallet, signer *wallet, tok string, side market.Side, maker, taker market.Micros, typ market.OrderType, exp, nonce, fee uint64, sigType api.SignatureType) []byte {
	e.t.Helper()
	tid, _ := api.ParseU256(tok)
	o := auth.Order{Salt: api.U256From(saltSeq.Add(1)), Maker: signer.addr, Signer: signer.addr, TokenID: tid,
		MakerAmount: api.U256From(uint64(maker)), TakerAmount: api.U256From(uint64(taker)), Expiration: api.U256From(exp),
		Nonce: api.U256From(nonce), FeeRateBps: api.U256From(fee), Side: side}
	dom := auth.ExchangeDomain(DefaultChainID, DefaultExchange)
	so := auth.SignedOrder{Order: o}
	sig, err := signer.signer.SignDigest(dom.OrderDigest(&o))
	if err != nil {
		e.t.Fatal(err)
	}
	so.Signature = sig
	so.SignatureType = sigType
	return jsonOf(e.t, api.PostOrderRequest{Order: so.API(), Owner: w.creds.APIKey, OrderType: api.OrderType(typ)})
}

func TestPlaceAndMatch(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	alice := e.register(newWallet(t, "alice"))
	bob := e.register(newWallet(t, "bob"))
	e.split(bob, rain, 20*share)

	live := e.place(alice, rain, yes, market.Buy, 500_000, 10*share, orderOpts{})
	if !live.Success || live.Status != api.PlacementLive || len(live.TradeIDs) != 0 || !api.ValidOrderID(live.OrderID) {
		t.Fatalf("resting order: %+v", live)
	}
	m := e.place(bob, rain, yes, market.Sell, 450_000, 6*share, orderOpts{})
	if m.Status != api.PlacementMatched || len(m.TradeIDs) != 1 || !uuidRE.MatchString(m.TradeIDs[0]) {
		t.Fatalf("matching order: %+v", m)
	}
	// A SELL taker: making = shares, taking = collateral at the maker's price.
	if m.MakingAmount.String() != "6" || m.TakingAmount.String() != "3" {
		t.Fatalf("amounts making %s taking %s, want 6 and 3", m.MakingAmount, m.TakingAmount)
	}
	// A BUY taker meets bob's resting ask.
	e.place(bob, rain, yes, market.Sell, 600_000, 5*share, orderOpts{})
	m2 := e.place(alice, rain, yes, market.Buy, 700_000, 5*share, orderOpts{})
	if m2.MakingAmount.String() != "3" || m2.TakingAmount.String() != "5" {
		t.Fatalf("buy taker amounts %s/%s, want 3/5", m2.MakingAmount, m2.TakingAmount)
	}
	e.engineCheck()

	var open api.Page[api.OpenOrder]
	e.mustJSON(http.MethodGet, "/data/orders", nil, alice, &open)
	if open.Count != 1 || open.NextCursor != api.EndCursor || open.Data[0].ID != market.OrderID(live.OrderID) ||
		open.Data[0].SizeMatched.String() != "6" || open.Data[0].Owner != alice.creds.APIKey ||
		len(open.Data[0].AssociateTrades) != 1 || open.Data[0].Outcome != "Yes" || open.Data[0].CreatedAt != t0/1000 {
		t.Fatalf("open orders %+v", open)
	}
	var trades api.Page[api.Trade]
	e.mustJSON(http.MethodGet, "/data/trades", nil, bob, &trades)
	if trades.Count != 2 || trades.NextCursor != api.EndCursor {
		t.Fatalf("bob's trades: %+v", trades)
	}
	first := trades.Data[0]
	if first.TraderSide != "TAKER" || first.Side != api.Side(market.Sell) || first.Size.String() != "6" || first.Price.String() != "0.5" ||
		first.Status != api.TradeConfirmed || len(first.MakerOrders) != 1 || first.MakerOrders[0].Owner != alice.creds.APIKey ||
		first.Owner != bob.creds.APIKey || first.ID != market.TradeID(m.TradeIDs[0]) {
		t.Fatalf("bob's first trade %+v", first)
	}
	if trades.Data[1].TraderSide != "MAKER" {
		t.Fatalf("bob's second trade should be as maker: %+v", trades.Data[1])
	}
	e.mustJSON(http.MethodGet, "/data/trades?market="+string(rain.Condition)+"&after="+fmt.Sprint(t0/1000-1), nil, alice, &trades)
	if trades.Count != 2 {
		t.Fatalf("alice's trades by market: %d", trades.Count)
	}
	e.mustJSON(http.MethodGet, "/data/trades?before="+fmt.Sprint(t0/1000), nil, alice, &trades)
	if trades.Count != 0 {
		t.Fatalf("before filter: %d", trades.Count)
	}
	e.mustJSON(http.MethodGet, "/data/trades?id="+m.TradeIDs[0], nil, alice, &trades)
	if trades.Count != 1 || trades.Data[0].TraderSide != "MAKER" {
		t.Fatalf("alice's view of the first trade: %+v", trades)
	}
	e.mustJSON(http.MethodGet, "/data/trades?maker_address="+bob.addr.String(), nil, alice, &trades)
	if trades.Count != 0 {
		t.Fatal("maker_address of another wallet matched alice's trades")
	}
}

func TestPlaceOrderErrors(t *testing.T) {
	e := newEnv(t, withTrustedLoopback())
	rain, btc := e.mkt("rain-in-lisbon-tomorrow"), e.mkt("btc-above-100k")
	alice, paused, neg := e.mkt("alice-wins-2028"), e.mkt("paused-market"), false
	yes := rain.Tokens[market.Yes]
	w := e.register(newWallet(t, "trader"))
	other := e.register(newWallet(t, "trader-2"))
	e.split(other, rain, 50*share)
	e.place(other, rain, yes, market.Sell, 600_000, 10*share, orderOpts{})
	dupBody, dupID := e.order(w, rain, yes, market.Buy, 100_000, 5*share, orderOpts{})
	e.mustJSON(http.MethodPost, "/order", dupBody, w, nil)
	e.place(other, rain, yes, market.Buy, 300_000, 5*share, orderOpts{}) // another wallet's resting bid

	body := func(b []byte, _ market.OrderID) []byte { return b }
	tickBody := e.rawOrder(w, w, string(yes), market.Buy, 5_050_000, 10*share, market.GTC, 0, 0, 0, 0)
	var tickID market.OrderID
	{
		var req api.PostOrderRequest
		json.Unmarshal(tickBody, &req)
		so, _ := auth.OrderFromAPI(&req.Order)
		tickID = auth.OrderID(auth.ExchangeDomain(DefaultChainID, DefaultExchange).OrderDigest(&so.Order))
	}
	minB, minID := e.order(w, rain, yes, market.Buy, 500_000, 1*share, orderOpts{})
	feeB, feeID := e.order(w, btc, btc.Tokens[market.Yes], market.Buy, 500_000, 2*share, orderOpts{fee: 1})
	tamper := func() []byte {
		var req api.PostOrderRequest
		json.Unmarshal(body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})), &req)
		req.Order.MakerAmount = api.U256From(2_600_000)
		return jsonOf(t, req)
	}
	highSBody := func() []byte {
		var req api.PostOrderRequest
		json.Unmarshal(body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})), &req)
		sig, _ := auth.DecodeSignature(req.Order.Signature)
		req.Order.Signature = auth.EncodeSignature(highS(sig))
		return jsonOf(t, req)
	}

	tests := []struct {
		name   string
		body   []byte
		hdr    http.Header
		status int
		msg    string
	}{
		{"malformed JSON", []byte(`{"order":`), nil, 400, "Invalid order payload"},
		{"missing order", []byte(`{"owner":"x"}`), nil, 400, "Invalid order payload"},
		{"owner is another API key", body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{owner: other.creds.APIKey})), nil, 400,
			"the order owner has to be the owner of the API KEY"},
		{"signed by another wallet", e.rawOrder(w, other, string(yes), market.Buy, 2_500_000, 5*share, market.GTC, 0, 0, 0, 0), nil, 400,
			"the order owner has to be the owner of the API KEY"},
		{"signature does not match the order", tamper(), nil, 400, "Invalid order payload"},
		{"high-s signature", highSBody(), nil, 400, "Invalid order payload"},
		{"signed for the wrong exchange", body(e.order(w, alice, alice.Tokens[market.Yes], market.Buy, 500_000, 5*share, orderOpts{negRisk: &neg})), nil, 400, "Invalid order payload"},
		{"proxy signature type", e.rawOrder(w, w, string(yes), market.Buy, 2_500_000, 5*share, market.GTC, 0, 0, 0, api.SignaturePolyProxy), nil, 400, "Invalid order payload"},
		{"post-only FOK", func() []byte {
			var req api.PostOrderRequest
			json.Unmarshal(body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{typ: market.FOK})), &req)
			req.PostOnly = true
			return jsonOf(t, req)
		}(), nil, 400, "Invalid order payload"},
		{"unknown token", e.rawOrder(w, w, "999", market.Buy, 2_500_000, 5*share, market.GTC, 0, 0, 0, 0), nil, 404, "No orderbook exists for the requested token id"},
		{"price off the tick", tickBody, nil, 400, fmt.Sprintf("order %s is invalid. Price (0.505) breaks minimum tick size rule: 0.01", tickID)},
		{"size off the lot (5.000001) is a payload error, not a tick error", e.rawOrder(w, w, string(yes), market.Buy, 2_500_000, 5_000_001, market.GTC, 0, 0, 0, 0), nil, 400, "Invalid order payload"},
		{"size below the minimum", minB, nil, 400, fmt.Sprintf("order %s is invalid. Size (1) lower than the minimum: 5", minID)},
		{"duplicated", dupBody, nil, 400, fmt.Sprintf("order %s is invalid. Duplicated.", dupID)},
		{"not enough balance", body(e.order(w, rain, yes, market.Buy, 500_000, 5000*share, orderOpts{})), nil, 400, "not enough balance / allowance"},
		{"invalid nonce", body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{nonce: 1})), nil, 400, "invalid nonce"},
		{"GTD within the safety minute", body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{typ: market.GTD, expiration: t0/1000 + 59})), nil, 400, "invalid expiration"},
		{"GTD in the past", body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{typ: market.GTD, expiration: t0/1000 - 10})), nil, 400, "invalid expiration"},
		{"GTC with an expiration", e.rawOrder(w, w, string(yes), market.Buy, 2_500_000, 5*share, market.GTC, uint64(t0/1000+3600), 0, 0, 0), nil, 400, "invalid expiration"},
		{"FOK not fillable", body(e.order(w, rain, yes, market.Buy, 600_000, 50*share, orderOpts{typ: market.FOK})), nil, 400,
			"order couldn't be fully filled. FOK orders are fully filled or killed."},
		{"FAK without a match", body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{typ: market.FAK})), nil, 400, "no orders found to match with FAK order."},
		{"post-only crossing", body(e.order(w, rain, yes, market.Buy, 600_000, 5*share, orderOpts{postOnly: true})), nil, 400, "invalid post-only order: order crosses book"},
		{"fee rate below the market's", feeB, nil, 400, fmt.Sprintf("order %s is invalid. Fee rate (1 bps) lower than the market fee rate: 100 bps", feeID)},
		{"market not accepting orders", body(e.order(w, paused, paused.Tokens[market.Yes], market.Buy, 500_000, 5*share, orderOpts{})), nil, 400, "market is not accepting orders"},
		{"blocked country", body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})), http.Header{"Cf-Ipcountry": {"US"}}, 400, "Trading restricted in your region"},
		{"close-only country buying", body(e.order(w, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})), http.Header{"X-Country-Code": {"pl"}}, 400,
			fmt.Sprintf("'%s' address in closed only mode", w.addr)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, b := e.call(http.MethodPost, "/order", tc.body, w, tc.hdr)
			wantErr(t, st, b, tc.status, tc.msg)
		})
	}

	t.Run("close-only country may sell", func(t *testing.T) {
		e.split(w, rain, 10*share)
		b, _ := e.order(w, rain, yes, market.Sell, 900_000, 5*share, orderOpts{})
		if st, body := e.call(http.MethodPost, "/order", b, w, http.Header{"X-Country-Code": {"SG"}}); st != 200 {
			t.Fatalf("%d %s", st, body)
		}
	})
	for _, mode := range []string{"banned", "close-only"} {
		t.Run("account "+mode, func(t *testing.T) {
			v := e.register(newWallet(t, "mode-"+mode))
			st, b := e.callURL(e.int.URL, http.MethodPost, "/internal/account-mode", []byte(`{"address":"`+v.addr.String()+`","mode":"`+mode+`"}`), nil, nil)
			if st != 200 {
				t.Fatalf("%d %s", st, b)
			}
			ob, _ := e.order(v, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})
			st, b = e.call(http.MethodPost, "/order", ob, v, nil)
			msg := fmt.Sprintf("'%s' address banned", v.addr)
			if mode == "close-only" {
				msg = fmt.Sprintf("'%s' address in closed only mode", v.addr)
			}
			wantErr(t, st, b, 400, msg)
		})
	}
	e.engineCheck()
}

func TestMarketOrders(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	mm := e.register(newWallet(t, "mm"))
	taker := e.register(newWallet(t, "taker"))
	e.split(mm, rain, 120*share)
	e.place(mm, rain, yes, market.Sell, 500_000, 10*share, orderOpts{})
	e.place(mm, rain, yes, market.Sell, 560_000, 100*share, orderOpts{})
	// A FOK market BUY of $10 with worst price 0.56: 10/0.56 = 17.857 shares → 17.85.
	r := e.place(taker, rain, yes, market.Buy, 560_000, 10*share, orderOpts{typ: market.FOK})
	if r.Status != api.PlacementMatched || r.TakingAmount.String() != "17.85" {
		t.Fatalf("market buy %+v", r)
	}
	// A FAK market SELL of 5 shares at worst 0.1 with no bids is refused; after a bid it fills partly.
	e.split(taker, rain, 8*share)
	b, _ := e.order(taker, rain, yes, market.Sell, 100_000, 8*share, orderOpts{typ: market.FAK})
	st, body := e.call(http.MethodPost, "/order", b, taker, nil)
	wantErr(t, st, body, 400, "no orders found to match with FAK order.")
	e.place(mm, rain, yes, market.Buy, 200_000, 5*share, orderOpts{})
	r = e.place(taker, rain, yes, market.Sell, 100_000, 8*share, orderOpts{typ: market.FAK})
	if r.Status != api.PlacementMatched || r.MakingAmount.String() != "5" || r.TakingAmount.String() != "1" {
		t.Fatalf("partial FAK %+v", r)
	}
	e.engineCheck()
}

func TestBatchOrders(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	w := e.register(newWallet(t, "batch"))
	var items []json.RawMessage
	for i := range 16 {
		b, _ := e.order(w, rain, yes, market.Buy, market.Micros(100_000+10_000*i), 5*share, orderOpts{})
		items = append(items, b)
	}
	st, body := e.call(http.MethodPost, "/orders", jsonOf(t, items), w, nil)
	wantErr(t, st, body, 400, "Too many orders in payload: 16, max allowed: 15")
	st, body = e.call(http.MethodPost, "/orders", []byte(`{}`), w, nil)
	wantErr(t, st, body, 400, "Invalid order payload")
	st, body = e.call(http.MethodPost, "/orders", []byte(`[]`), w, nil)
	wantErr(t, st, body, 400, "Invalid order payload")

	poor, _ := e.order(w, rain, yes, market.Buy, 500_000, 5000*share, orderOpts{})
	batch := []json.RawMessage{items[0], json.RawMessage(`{"order":{}}`), poor, items[1], items[0]}
	var out []api.PostOrderResponse
	e.mustJSON(http.MethodPost, "/orders", jsonOf(t, batch), w, &out)
	want := []struct {
		ok  bool
		msg string
	}{{true, ""}, {false, "Invalid order payload"}, {false, "not enough balance / allowance"}, {true, ""}, {false, "Duplicated."}}
	if len(out) != len(want) {
		t.Fatalf("%d answers", len(out))
	}
	for i, wnt := range want {
		if out[i].Success != wnt.ok || !strings.HasSuffix(out[i].ErrorMsg, wnt.msg) {
			t.Errorf("answer %d: %+v, want success=%v %q", i, out[i], wnt.ok, wnt.msg)
		}
	}
}

func TestCancels(t *testing.T) {
	e := newEnv(t)
	rain, btc := e.mkt("rain-in-lisbon-tomorrow"), e.mkt("btc-above-100k")
	yes := rain.Tokens[market.Yes]
	w := e.register(newWallet(t, "canceller"))
	other := e.register(newWallet(t, "stranger"))
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = e.place(w, rain, yes, market.Buy, market.Micros(100_000+10_000*i), 5*share, orderOpts{}).OrderID
	}
	btcID := e.place(w, btc, btc.Tokens[market.No], market.Buy, 300_000, 2*share, orderOpts{}).OrderID
	theirs := e.place(other, rain, yes, market.Buy, 100_000, 5*share, orderOpts{}).OrderID

	var cr api.CancelResponse
	e.mustJSON(http.MethodDelete, "/order", []byte(`{"orderID":"`+ids[0]+`"}`), w, &cr)
	if len(cr.Canceled) != 1 || cr.Canceled[0] != market.OrderID(ids[0]) || len(cr.NotCanceled) != 0 {
		t.Fatalf("cancel: %+v", cr)
	}
	e.mustJSON(http.MethodDelete, "/order", []byte(`{"orderId":"`+ids[0]+`"}`), w, &cr)
	if cr.NotCanceled[market.OrderID(ids[0])] != api.ReasonAlreadyCanceled {
		t.Fatalf("second cancel: %+v", cr)
	}
	e.mustJSON(http.MethodDelete, "/order", []byte(`{"orderID":"`+theirs+`"}`), w, &cr)
	if cr.NotCanceled[market.OrderID(theirs)] != api.ReasonNotFound {
		t.Fatalf("cancel of another wallet's order: %+v", cr)
	}
	st, body := e.call(http.MethodDelete, "/order", []byte(`{"orderID":"0x12"}`), w, nil)
	wantErr(t, st, body, 400, "Invalid orderID")
	st, body = e.call(http.MethodDelete, "/order", []byte(`{}`), w, nil)
	wantErr(t, st, body, 400, "Invalid order payload")
	st, body = e.call(http.MethodDelete, "/order", []byte(`{"orderID":""}`), w, nil)
	wantErr(t, st, body, 400, "Invalid orderID") // issue 20, point 10
	st, body = e.call(http.MethodDelete, "/orders", []byte(`"x"`), w, nil)
	wantErr(t, st, body, 400, "Invalid order payload")
	many := make([]string, 3001)
	for i := range many {
		many[i] = ids[1]
	}
	st, body = e.call(http.MethodDelete, "/orders", jsonOf(t, many), w, nil)
	wantErr(t, st, body, 400, "Too many orders in payload, max allowed: 3000")

	e.mustJSON(http.MethodDelete, "/orders", jsonOf(t, []string{ids[1], ids[2], ids[1]}), w, &cr)
	if len(cr.Canceled) != 2 {
		t.Fatalf("batch cancel: %+v", cr)
	}
	e.mustJSON(http.MethodDelete, "/cancel-market-orders", []byte(`{"market":"`+string(btc.Condition)+`","asset_id":""}`), w, &cr)
	if len(cr.Canceled) != 1 || cr.Canceled[0] != market.OrderID(btcID) {
		t.Fatalf("cancel market orders: %+v", cr)
	}
	e.mustJSON(http.MethodDelete, "/cancel-all", nil, w, &cr)
	if len(cr.Canceled) != 2 {
		t.Fatalf("cancel all: %+v", cr)
	}
	var open api.Page[api.OpenOrder]
	e.mustJSON(http.MethodGet, "/data/orders", nil, w, &open)
	if open.Count != 0 {
		t.Fatalf("%d open orders after cancel-all", open.Count)
	}
	// A final order is still readable by its owner, with its final status.
	var o api.OpenOrder
	e.mustJSON(http.MethodGet, "/data/order/"+ids[0], nil, w, &o)
	if o.Status != "CANCELED" || o.Owner != w.creds.APIKey {
		t.Fatalf("final order %+v", o)
	}
	st, body = e.call(http.MethodGet, "/data/order/"+theirs, nil, w, nil)
	wantErr(t, st, body, 404, "order not found")
	st, body = e.call(http.MethodGet, "/data/order/0xzz", nil, w, nil)
	wantErr(t, st, body, 400, "Invalid orderID")
	e.engineCheck()
}

func TestOpenOrdersPaging(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	w := e.register(newWallet(t, "pager"))
	for i := range 150 {
		e.place(w, rain, rain.Tokens[i%2], market.Buy, 10_000, 5*share, orderOpts{})
	}
	var p1, p2 api.Page[api.OpenOrder]
	e.mustJSON(http.MethodGet, "/data/orders", nil, w, &p1)
	if p1.Count != 100 || p1.NextCursor == api.EndCursor {
		t.Fatalf("first page: %d %q", p1.Count, p1.NextCursor)
	}
	e.mustJSON(http.MethodGet, "/data/orders?next_cursor="+p1.NextCursor, nil, w, &p2)
	if p2.Count != 50 || p2.NextCursor != api.EndCursor {
		t.Fatalf("second page: %d %q", p2.Count, p2.NextCursor)
	}
	e.mustJSON(http.MethodGet, "/data/orders?asset_id="+string(rain.Tokens[market.No]), nil, w, &p1)
	if p1.Count != 75 {
		t.Fatalf("filter by asset: %d", p1.Count)
	}
	e.mustJSON(http.MethodGet, "/data/orders?id="+string(p2.Data[0].ID), nil, w, &p1)
	if p1.Count != 1 {
		t.Fatalf("filter by id: %d", p1.Count)
	}
	st, body := e.call(http.MethodGet, "/data/orders?next_cursor=!!", nil, w, nil)
	wantErr(t, st, body, 400, "invalid next_cursor")
}

func TestGTDOrdersExpire(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	w := e.register(newWallet(t, "gtd"))
	r := e.place(w, rain, rain.Tokens[market.Yes], market.Buy, 400_000, 5*share, orderOpts{typ: market.GTD, expiration: t0/1000 + 120})
	e.clock.advance(121 * time.Second)
	if err := e.h.Expire(context.Background()); err != nil {
		t.Fatal(err)
	}
	var o api.OpenOrder
	e.mustJSON(http.MethodGet, "/data/order/"+r.OrderID, nil, w, &o)
	if o.Status != "EXPIRED" || o.Expiration != api.Int(t0/1000+120) || o.OrderType != api.OrderType(market.GTD) {
		t.Fatalf("expired order %+v", o)
	}
	if got := balanceOf(e, w); got != "1000" {
		t.Fatalf("balance %s after expiry", got)
	}
}

func TestBuilderOrders(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	w := e.register(newWallet(t, "app"))
	mm := e.register(newWallet(t, "app-mm"))
	e.mustJSON(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), w, nil)
	e.split(mm, rain, 10*share)
	e.place(mm, rain, yes, market.Sell, 500_000, 5*share, orderOpts{})
	order := `{"order":{"tokenId":"` + string(yes) + `","side":"BUY","makerAmount":"5000000","takerAmount":"10000000","expiration":"0"},"orderType":"GTC"}`
	bid := http.Header{"SERVICE_BUILDER_ID": {"acme"}}

	tests := []struct {
		name   string
		body   string
		hdr    http.Header
		signed bool
		status int
		msg    string
	}{
		{"without the builder header", order, nil, true, 400, "SERVICE_BUILDER_ID header required"},
		{"without authentication", order, bid, false, 401, "invalid authorization"},
		{"with a builder id the wallet does not own", order, http.Header{"SERVICE_BUILDER_ID": {"other"}}, true, 401, "invalid authorization"},
		{"invalid JSON", `{"order":`, bid, true, 400, "invalid JSON: unexpected end of JSON input"},
		{"without order", `{"orderType":"GTC"}`, bid, true, 400, "missing 'order' field"},
		{"for another maker", strings.Replace(order, `"side"`, `"maker":"`+mm.addr.String()+`","side"`, 1), bid, true, 400, "the order owner has to be the owner of the API KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			signer := w
			if !tc.signed {
				signer = nil
			}
			st, b := e.call(http.MethodPost, "/builder/order", []byte(tc.body), signer, tc.hdr)
			wantErr(t, st, b, tc.status, tc.msg)
		})
	}
	var res api.BuilderOrderResponse
	st, b := e.call(http.MethodPost, "/builder/order", []byte(order), w, bid)
	if st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	json.Unmarshal(b, &res)
	if !res.Success || res.BuilderID != "acme" || res.Status != "LIVE" || len(res.TradeIDs) != 1 {
		t.Fatalf("builder order %+v", res)
	}
	// The trade carries the builder id.
	st, b = e.call(http.MethodGet, "/data/trades", nil, w, nil)
	if st != 200 || !strings.Contains(string(b), `"builder_id":"acme"`) {
		t.Fatalf("trades %d %s", st, b)
	}
	// Builder cancel: only this builder's orders of the caller.
	own := e.place(w, rain, yes, market.Buy, 100_000, 5*share, orderOpts{})
	var cr api.CancelResponse
	st, b = e.call(http.MethodDelete, "/builder/cancel", []byte(`{"orderIDs":["`+res.OrderID+`","`+own.OrderID+`"]}`), w, bid)
	if st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	json.Unmarshal(b, &cr)
	if len(cr.Canceled) != 1 || cr.Canceled[0] != market.OrderID(res.OrderID) || cr.NotCanceled[market.OrderID(own.OrderID)] != api.ReasonNotFound {
		t.Fatalf("builder cancel %+v", cr)
	}
	st, b = e.call(http.MethodPost, "/builder/cancel", []byte(`[1,`), w, bid)
	wantErr(t, st, b, 400, "invalid JSON: unexpected end of JSON input")
	st, b = e.call(http.MethodPost, "/builder/cancel", []byte(`{}`), w, nil)
	wantErr(t, st, b, 400, "SERVICE_BUILDER_ID header required")
}

func TestHeartbeats(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	w := e.register(newWallet(t, "beat"))
	idle := e.register(newWallet(t, "no-beat"))
	ord := e.place(w, rain, rain.Tokens[market.Yes], market.Buy, 300_000, 5*share, orderOpts{})
	kept := e.place(idle, rain, rain.Tokens[market.Yes], market.Buy, 300_000, 5*share, orderOpts{})

	var hb api.HeartbeatResponse
	e.mustJSON(http.MethodPost, "/v1/heartbeats", []byte(`{"heartbeat_id":null}`), w, &hb)
	if !uuidRE.MatchString(hb.HeartbeatID) || hb.Status != "ok" {
		t.Fatalf("start: %+v", hb)
	}
	st, b := e.call(http.MethodPost, "/v1/heartbeats", []byte(`{"heartbeat_id":"stale"}`), w, nil)
	if st != 400 || !strings.Contains(string(b), `"heartbeat_id":"`+hb.HeartbeatID+`"`) || !strings.Contains(string(b), `"error":"invalid heartbeat id"`) {
		t.Fatalf("stale beat: %d %s", st, b)
	}
	st, b = e.call(http.MethodPost, "/v1/heartbeats", []byte(`[`), w, nil)
	wantErr(t, st, b, 400, "Invalid payload")
	for range 3 {
		e.clock.advance(9 * time.Second)
		e.mustJSON(http.MethodPost, "/heartbeats", []byte(`{"heartbeat_id":"`+hb.HeartbeatID+`"}`), w, &hb)
		if err := e.srv.CheckHeartbeats(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var o api.OpenOrder
	e.mustJSON(http.MethodGet, "/data/order/"+ord.OrderID, nil, w, &o)
	if o.Status != "LIVE" {
		t.Fatalf("order cancelled while beating: %s", o.Status)
	}
	e.clock.advance(10*time.Second + time.Millisecond)
	if err := e.srv.CheckHeartbeats(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.mustJSON(http.MethodGet, "/data/order/"+ord.OrderID, nil, w, &o)
	if o.Status != "CANCELED" {
		t.Fatalf("order not cancelled after a missed beat: %s", o.Status)
	}
	e.mustJSON(http.MethodGet, "/data/order/"+kept.OrderID, nil, idle, &o)
	if o.Status != "LIVE" {
		t.Fatal("a wallet without heartbeats lost its order")
	}
	// The chain is over: the old id is stale; a new chain starts with null.
	st, b = e.call(http.MethodPost, "/v1/heartbeats", []byte(`{"heartbeat_id":"`+hb.HeartbeatID+`"}`), w, nil)
	if st != 400 || !strings.Contains(string(b), `"heartbeat_id":""`) {
		t.Fatalf("beat after expiry: %d %s", st, b)
	}
	e.mustJSON(http.MethodPost, "/v1/heartbeats", nil, w, &hb)
}

func TestCTFSplitMergeRedeem(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	w := e.register(newWallet(t, "ctf"))
	st, b := e.call(http.MethodPost, "/ctf/split", []byte(`{"tokenId":"1234"}`), w, nil)
	wantErr(t, st, b, 400, "tokenId and size required")
	st, b = e.call(http.MethodPost, "/ctf/split", []byte(`{"size":"5"}`), w, nil)
	wantErr(t, st, b, 400, "tokenId and size required")
	st, b = e.call(http.MethodPost, "/ctf/split", []byte(`{"tokenId":"77","size":"5"}`), w, nil)
	wantErr(t, st, b, 404, "market not found")
	var r api.CTFResponse
	e.mustJSON(http.MethodPost, "/ctf/split", []byte(`{"tokenId":"1234","size":"100"}`), w, &r)
	e.mustJSON(http.MethodPost, "/ctf/merge", []byte(`{"conditionId":"`+string(rain.Condition)+`","size":"40"}`), w, &r)
	if got := balanceOf(e, w); got != "940" {
		t.Fatalf("balance %s after split 100 and merge 40", got)
	}
	st, b = e.call(http.MethodPost, "/ctf/redeem", []byte(`{"tokenId":"1234"}`), w, nil)
	wantErr(t, st, b, 400, fmt.Sprintf("market %s is not resolved", rain.Condition))
	st, b = e.callURL(e.int.URL, http.MethodPost, "/internal/markets/resolve", []byte(`{"market":"`+string(rain.Condition)+`","outcome":"YES"}`), nil, nil)
	if st != 200 {
		t.Fatalf("resolve: %d %s", st, b)
	}
	e.mustJSON(http.MethodPost, "/ctf/redeem", []byte(`{"tokenId":"1234"}`), w, &r)
	if r.Amount.String() != "60" || balanceOf(e, w) != "1000" {
		t.Fatalf("redeem %+v, balance %s", r, balanceOf(e, w))
	}
	e.engineCheck()
}

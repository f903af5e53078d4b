package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/data"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// withData registers the data service's index with the host.
func withData(ix *data.Index) envOpt {
	return func(_ *Config, h *host.Config) { h.Extensions = append(h.Extensions, ix) }
}

// TestRFQSwapIsATrade: an approved RFQ is a trade of both parties over HTTP — in
// GET /data/trades (the requester TAKER with its request id as taker order, the
// quoter MAKER with its quote id and key in maker_orders, the quote's price, no
// fee, CONFIRMED), numbered with the book's trades, in the TRADE_CONFIRMED
// notifications, and in the data service's /positions of both, whose sizes equal
// the ledger's.
func TestRFQSwapIsATrade(t *testing.T) {
	ix := data.New(data.Config{})
	e := newEnv(t, withData(ix))
	dsrv := httptest.NewServer(ix.Handler())
	t.Cleanup(dsrv.Close)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes, no := rain.Tokens[market.Yes], rain.Tokens[market.No]
	buyer, q := e.register(newWallet(t, "rfqt-buyer")), e.register(newWallet(t, "rfqt-quoter"))
	e.split(q, rain, 20*share)
	e.split(buyer, rain, 1*share)

	// A book trade first: trade numbers are shared by matches and swaps.
	e.place(q, rain, yes, market.Sell, 600_000, 5*share, orderOpts{})
	if took := e.place(buyer, rain, yes, market.Buy, 600_000, 5*share, orderOpts{}); len(took.TradeIDs) != 1 {
		t.Fatalf("book trade %+v", took)
	}
	id := e.rfqAsk(buyer, yes, market.Buy, 600_000, 10*share)
	qid := e.rfqQuote(q, id, "0.555555")
	e.mustJSON(http.MethodPost, "/rfq/request/accept", []byte(`{"request_id":"`+id+`"}`), buyer, nil)
	e.mustJSON(http.MethodPost, "/rfq/quote/approve", []byte(`{"quote_id":"`+qid+`"}`), q, nil)

	trades := func(w *wallet, query string) []api.Trade {
		t.Helper()
		var p api.Page[api.Trade]
		e.mustJSON(http.MethodGet, "/data/trades"+query, nil, w, &p)
		return p.Data
	}
	bt, qt := trades(buyer, ""), trades(q, "")
	if len(bt) != 2 || len(qt) != 2 || bt[0].ID == bt[1].ID || bt[1].ID != qt[1].ID || bt[0].ID != qt[0].ID {
		t.Fatalf("trades: buyer %+v, quoter %+v", bt, qt)
	}
	sw := bt[1]
	if sw.TakerOrderID != market.OrderID(id) || sw.TraderSide != "TAKER" || sw.Side != api.Side(market.Buy) || sw.AssetID != yes ||
		sw.Size != api.Decimal(10*share) || sw.Price != api.Decimal(555_555) || sw.Status != api.TradeConfirmed || sw.FeeRateBps != 0 ||
		sw.Owner != buyer.creds.APIKey || sw.MakerAddress != buyer.addr.String() || sw.Market != rain.Condition || len(sw.MakerOrders) != 1 {
		t.Fatalf("the requester's swap %+v", sw)
	}
	if m := sw.MakerOrders[0]; m.OrderID != market.OrderID(qid) || m.Owner != q.creds.APIKey || m.MakerAddress != q.addr.String() ||
		m.Side != api.Side(market.Sell) || m.MatchedAmount != api.Decimal(10*share) || m.Price != api.Decimal(555_555) || m.AssetID != yes {
		t.Fatalf("the swap's maker %+v", m)
	}
	if m := qt[1]; m.TraderSide != "MAKER" || m.Owner != q.creds.APIKey || m.MakerAddress != q.addr.String() ||
		m.TakerOrderID != market.OrderID(id) || m.MakerOrders[0].Owner != q.creds.APIKey {
		t.Fatalf("the quoter's swap %+v", m)
	}
	if got := trades(buyer, "?id="+string(sw.ID)); len(got) != 1 || got[0].ID != sw.ID {
		t.Fatalf("by id %+v", got)
	}
	if got := trades(q, "?asset_id="+string(yes)); len(got) != 2 {
		t.Fatalf("by asset %+v", got)
	}
	// The notifications of both name the swap.
	for _, w := range []*wallet{buyer, q} {
		st, b := e.call(http.MethodGet, "/notifications", nil, w, nil)
		if st != 200 || strings.Count(string(b), "TRADE_CONFIRMED") != 2 || !strings.Contains(string(b), string(sw.ID)) {
			t.Fatalf("notifications %d %s", st, b)
		}
	}

	// The data service: both parties' positions equal the ledger, the swap included.
	for _, w := range []*wallet{buyer, q} {
		resp, err := http.Get(dsrv.URL + "/positions?user=" + w.addr.String())
		if err != nil {
			t.Fatal(err)
		}
		var ps []api.Position
		err = json.NewDecoder(resp.Body).Decode(&ps)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("positions: %d %v", resp.StatusCode, err)
		}
		got := map[market.TokenID]market.Micros{}
		for _, p := range ps {
			got[p.Asset] = market.Micros(p.Size)
		}
		if err := e.h.Read(context.Background(), func(eng *exchange.Engine) {
			for _, tok := range []market.TokenID{yes, no} {
				a, r := eng.TokenBalance(w.addr, tok)
				if got[tok] != a+r {
					t.Errorf("%s %s: position %s, ledger %s", w.addr, tok, got[tok], a+r)
				}
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	// 1 split + 5 from the book + 10 from the swap.
	if yb, _ := e.tokenBalance(buyer, yes); yb != 16*share {
		t.Fatalf("buyer YES %s", yb)
	}
}

// tokenBalance is w's available and reserved balance of tok.
func (e *env) tokenBalance(w *wallet, tok market.TokenID) (market.Micros, error) {
	var n market.Micros
	err := e.h.Read(context.Background(), func(eng *exchange.Engine) {
		a, r := eng.TokenBalance(w.addr, tok)
		n = a + r
	})
	return n, err
}

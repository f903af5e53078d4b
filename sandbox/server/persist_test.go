package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// snapshotOf returns the engine and server-state encodings.
func (e *env) snapshotOf() (eng, st []byte) {
	e.t.Helper()
	err := e.h.Read(context.Background(), func(en *exchange.Engine) {
		eng = en.AppendSnapshot(nil)
		st = e.st.st.AppendSnapshot(nil)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return eng, st
}

func TestServerStateSurvivesRestarts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every int
	}{{"journal replay", -1}, {"snapshots", 5}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opt := func(_ *Config, h *host.Config) { h.Dir, h.SnapshotEvery = dir, tc.every }
			e := newEnv(t, opt, withInvitations())
			rain := e.mkt("rain-in-lisbon-tomorrow")
			yes := rain.Tokens[market.Yes]
			var a Invitation
			st, b := e.callURL(e.int.URL, http.MethodPost, "/internal/waitlist/approve", []byte(`{"email":"x@example.com"}`), nil, nil)
			if st != 200 {
				t.Fatalf("%d %s", st, b)
			}
			decode(t, b, &a)
			mm := newWallet(t, "persist-mm")
			st, b = e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(mm, 0, a.Code))
			if st != 200 {
				t.Fatalf("%d %s", st, b)
			}
			e.useCreds(mm, b)
			tk := newWallet(t, "persist-taker")
			e.importKey(tk, dialectCreds) // a registered wallet needs no code
			e.mustJSON(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), mm, nil)
			e.split(mm, rain, 50*share)
			resting := e.place(mm, rain, yes, market.Sell, 600_000, 10*share, orderOpts{})
			e.place(mm, rain, yes, market.Sell, 500_000, 5*share, orderOpts{})
			trade := e.place(tk, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})
			var hb api.HeartbeatResponse
			e.mustJSON(http.MethodPost, "/v1/heartbeats", nil, mm, &hb)
			wantEng, wantSt := e.snapshotOf()
			e.close()

			e2 := newEnv(t, opt, withInvitations())
			e2.clock.ms.Store(e.clock.now())
			gotEng, gotSt := e2.snapshotOf()
			if !bytes.Equal(gotEng, wantEng) || !bytes.Equal(gotSt, wantSt) {
				t.Fatal("state after restart differs")
			}
			// Credentials still authenticate; orders, trades, notifications are there.
			var o api.OpenOrder
			e2.mustJSON(http.MethodGet, "/data/order/"+resting.OrderID, nil, mm, &o)
			if o.Status != "LIVE" || o.Owner != mm.creds.APIKey {
				t.Fatalf("order after restart %+v", o)
			}
			var trades api.Page[api.Trade]
			e2.mustJSON(http.MethodGet, "/data/trades", nil, tk, &trades)
			if trades.Count != 1 || string(trades.Data[0].ID) != trade.TradeIDs[0] {
				t.Fatalf("trades after restart %+v", trades)
			}
			var notes []notification
			e2.mustJSON(http.MethodGet, "/notifications", nil, mm, &notes)
			if len(notes) != 1 {
				t.Fatalf("notifications after restart: %d", len(notes))
			}
			var ph api.PriceHistory
			e2.mustJSON(http.MethodGet, "/prices-history?market="+string(rain.Condition), nil, nil, &ph)
			if len(ph.History) != 1 || ph.History[0].P.String() != "0.5" {
				t.Fatalf("history after restart %+v", ph)
			}
			// The invitation code stays used; the heartbeat chain still runs and expires.
			w3 := newWallet(t, "persist-3")
			st, b = e2.call(http.MethodPost, "/auth/api-key", nil, nil, e2.l1(w3, 0, a.Code))
			wantErr(t, st, b, 400, "invalid or expired invitation code")
			e2.clock.advance(11 * time.Second)
			if err := e2.srv.CheckHeartbeats(context.Background()); err != nil {
				t.Fatal(err)
			}
			e2.mustJSON(http.MethodGet, "/data/order/"+resting.OrderID, nil, mm, &o)
			if o.Status != "CANCELED" {
				t.Fatalf("heartbeat after restart did not cancel: %s", o.Status)
			}
			e2.engineCheck()
		})
	}
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
}

// TestTradeIDsDifferBetweenFreshExchanges: two fresh exchanges (as two --ephemeral
// runs) started at different times number their first trade 1 alike, but give it
// different ids; one started at the same time gives the same id (the ids are a
// function of the event stream, the engine stays deterministic).
func TestTradeIDsDifferBetweenFreshExchanges(t *testing.T) {
	firstTrade := func(start int64) string {
		clk := &testClock{}
		clk.ms.Store(start) // the genesis runs at start: the epoch
		e := newEnv(t, func(c *Config, h *host.Config) { c.Clock, h.Clock = clk.now, clk.now })
		defer e.close()
		rain := e.mkt("rain-in-lisbon-tomorrow")
		mm, tk := e.register(newWallet(t, "ids-mm")), e.register(newWallet(t, "ids-tk"))
		e.split(mm, rain, 10*share)
		e.place(mm, rain, rain.Tokens[market.Yes], market.Sell, 500_000, 5*share, orderOpts{})
		r := e.place(tk, rain, rain.Tokens[market.Yes], market.Buy, 500_000, 5*share, orderOpts{})
		if len(r.TradeIDs) != 1 {
			t.Fatalf("no trade: %+v", r)
		}
		return r.TradeIDs[0]
	}
	a, b, c := firstTrade(t0), firstTrade(t0), firstTrade(t0+1)
	if a != b || a == c {
		t.Fatalf("start t0: %s and %s; t0+1 ms: %s", a, b, c)
	}
	if a == string(tradeIDAt(0, 1)) {
		t.Fatalf("the id is not seeded: %s", a)
	}
}

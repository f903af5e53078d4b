package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// TestExchangeResolvesItsUpDownMarkets (issue 19, item 2): `pitboss exchange --sim`
// with 3-second up/down windows lists window 0 and resolves it at its end by
// itself, with the outcome of sim.NewPrices(seed, origin) at the window's two
// ends; the catalogue service shows it resolved with that outcome, the market
// channel sends market_resolved with the winning token, and the next window is
// listed.
func TestExchangeResolvesItsUpDownMarkets(t *testing.T) {
	const seed = 7
	origin := time.Now().UnixMilli()
	r := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral", "--sync", "none", "--sim", "--sim-seed", strconv.Itoa(seed),
		"--sim-prices-origin", strconv.FormatInt(origin, 10), "--sim-updown-window", "3s")
	defer r.stop(t)
	cat, base := r.url(t, "catalogue service"), r.url(t, "CLOB service")
	u, err := sim.NewUpDown(seed, origin, market.FeedSymbol{}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w0, w1 := u.Market(0), u.Market(1)
	start, end := u.Window(0)
	ref := sim.NewPrices(seed, origin, []market.FeedSymbol{sim.DefaultUpDownSymbol})
	var first, last float64
	for ref.Next() <= end {
		ev := ref.Step(nil)[0]
		if ev.Time == start {
			first = ev.Value
		}
		last = ev.Value
	}
	want := market.No
	if last >= first {
		want = market.Yes
	}

	// The catalogue service: window 0 resolved with the process's outcome, window 1 listed.
	find := func(slug string) *api.CatalogueMarket {
		var ms []api.CatalogueMarket
		_, b := get(t, cat+"/markets?slug="+slug, nil)
		if err := json.Unmarshal(b, &ms); err != nil {
			t.Fatalf("markets: %s", b)
		}
		if len(ms) != 1 {
			return nil
		}
		return &ms[0]
	}
	deadline := time.Now().Add(20 * time.Second)
	var m0, m1 *api.CatalogueMarket
	for {
		if m0, m1 = find(w0.Spec.Slug), find(w1.Spec.Slug); m0 != nil && m0.Resolved && m1 != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("window 0 %+v, window 1 %+v: not resolved and listed in 20 s", m0, m1)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if m0.ConditionID != w0.Market || m0.WinningOutcome != w0.Spec.Outcomes[want] || m1.Resolved || !m1.AcceptingOrders {
		t.Fatalf("window 0 %s won (want %s: %.2f → %.2f); window 1 %+v", m0.WinningOutcome, w0.Spec.Outcomes[want], first, last, m1)
	}

	// The market channel: a subscriber to window 0's tokens gets its resolution.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws/market", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	sub := `{"assets_ids":["` + string(w0.Spec.Tokens[0]) + `","` + string(w0.Spec.Tokens[1]) + `"],"type":"market"}`
	if err := c.Write(ctx, websocket.MessageText, []byte(sub)); err != nil {
		t.Fatal(err)
	}
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("no market_resolved: %v", err)
		}
		if strings.Contains(string(msg), `"event_type":"market_resolved"`) {
			if !strings.Contains(string(msg), `"winning_asset_id":"`+string(w0.Spec.Tokens[want])+`"`) {
				t.Fatalf("resolution %s, want %s winning", msg, w0.Spec.Outcomes[want])
			}
			break
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

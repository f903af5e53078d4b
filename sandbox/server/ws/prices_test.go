package ws_test

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// TestRTDSPrices: with a price source, the RTDS price topics deliver the newest
// price on subscription and then every price of the process as the clock passes
// it — the values sim.NewPrices gives from the same origin and seed, in the
// service's envelope and payload; unknown types and an equity subscription
// without symbols are refused; an unsubscribed symbol stops.
func TestRTDSPrices(t *testing.T) {
	const origin = 1_700_000_000_000
	var clock atomic.Int64
	clock.Store(origin + 2500)
	f := newFixture(t, ws.Config{Prices: sim.NewPriceService(3, origin), PriceInterval: 5 * time.Millisecond,
		Now: func() time.Time { return time.UnixMilli(clock.Load()) }})
	btc := market.FeedSymbol{Source: market.FeedCrypto, Symbol: "btcusdt"}
	eth := market.FeedSymbol{Source: market.FeedChainlink, Symbol: "eth/usd"}
	ref := sim.NewPrices(3, origin, []market.FeedSymbol{btc, eth})
	want := map[string]map[int64]float64{}
	for range 12 {
		for _, ev := range ref.Step(nil) {
			if want[ev.Name] == nil {
				want[ev.Name] = map[int64]float64{}
			}
			want[ev.Name][ev.Time] = ev.Value
		}
	}
	c := dial(t, f.srv.WS+"/ws/rtds")
	c.send(api.RTDSRequest{Action: "subscribe", Subscriptions: []api.RTDSSubscription{
		{Topic: api.RTDSTopicCryptoPrices, Type: "trades"},
		{Topic: api.RTDSTopicEquityPrices, Type: "update"},
		{Topic: api.RTDSTopicCryptoPrices, Type: "update", Filters: "btcusdt"},
		{Topic: api.RTDSTopicChainlinkPrices, Type: "*", Filters: `{"symbol":"eth/usd"}`},
	}})
	for range 2 {
		if e := c.rtds(); e.Topic != api.RTDSTopicSubscription || e.Type != api.RTDSTypeError {
			t.Fatalf("expected a refusal, got %+v", e)
		}
	}
	// got reads n price updates and checks each against the process.
	got := func(n int) map[string][]int64 {
		t.Helper()
		out := map[string][]int64{}
		for range n {
			m := c.rtds()
			src, ok := api.RTDSPriceSource(m.Topic)
			p, err := api.DecodeRTDSPrice(m.Payload)
			if !ok || m.Type != api.RTDSTypeUpdate || err != nil {
				t.Fatalf("price envelope %+v (%v)", m, err)
			}
			name := market.FeedSymbol{Source: src, Symbol: p.Symbol}.String()
			if v, ok := want[name][p.Timestamp]; !ok || v != p.Value {
				t.Fatalf("%s at %d: %v, want %v", name, p.Timestamp, p.Value, v)
			}
			out[name] = append(out[name], p.Timestamp)
		}
		return out
	}
	first := got(2)
	if first[btc.String()][0] != origin+2000 || first[eth.String()][0] != origin+2000 {
		t.Fatalf("first prices %v", first)
	}
	clock.Store(origin + 5000)
	next := got(6)
	for _, s := range []string{btc.String(), eth.String()} {
		if ts := next[s]; len(ts) != 3 || ts[0] != origin+3000 || ts[2] != origin+5000 {
			t.Fatalf("%s: %v", s, ts)
		}
	}
	c.send(api.RTDSRequest{Action: "unsubscribe", Subscriptions: []api.RTDSSubscription{{Topic: api.RTDSTopicCryptoPrices, Type: "update", Filters: "btcusdt"}}})
	c.sendText("ping") // answered after the unsubscription is handled
	if b := c.read(); string(b) != "pong" {
		t.Fatalf("ping answered %q", b)
	}
	clock.Store(origin + 7000)
	if last := got(2); len(last[eth.String()]) != 2 || len(last) != 1 {
		t.Fatalf("after unsubscribing btcusdt: %v", last)
	}
	var raw map[string]json.RawMessage
	c.send(api.RTDSRequest{Action: "subscribe", Subscriptions: []api.RTDSSubscription{{Topic: api.RTDSTopicCryptoPrices, Type: "update", Filters: "BTCUSDT"}}})
	m := c.rtds()
	if err := json.Unmarshal(m.Payload, &raw); err != nil || len(raw) != 3 || string(raw["symbol"]) != `"btcusdt"` {
		t.Fatalf("payload %s", m.Payload)
	}
}

package wsfeed_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// TestPricesFromTheRealTimeDataSocket: a feed with Prices reads the local
// exchange's /ws/rtds price topics (a price process started a minute ago on the
// wall clock), delivers the process's own prices as EventFeed events — each time
// once, in time order — and after its connection is cut reconnects and goes on
// without repeating a price.
func TestPricesFromTheRealTimeDataSocket(t *testing.T) {
	origin := time.Now().Add(-time.Minute).UnixMilli()
	syms := []market.FeedSymbol{{Source: market.FeedCrypto, Symbol: "btcusdt"}, {Source: market.FeedChainlink, Symbol: "eth/usd"}}
	_, srv, _ := exchangeFixtureWith(t, ws.Config{Prices: sim.NewPriceService(5, origin), PriceInterval: 20 * time.Millisecond})
	px := newProxy(t, srv.URL)
	var mu sync.Mutex
	got := map[string][]market.Event{}
	fd, err := wsfeed.New(wsfeed.Config{URL: "ws" + px.url()[len("http"):], Prices: syms,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		Handler: func(ev *market.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Kind != market.EventFeed {
				t.Errorf("event %v", ev.Kind)
			}
			got[ev.Name] = append(got[ev.Name], *ev)
		}})
	if err != nil {
		t.Fatal(err)
	}
	stop := runFeed(t, fd)
	count := func(name string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(got[name])
	}
	waitFor(t, "two prices of each symbol", func() bool { return count("crypto:btcusdt") >= 2 && count("chainlink:eth/usd") >= 2 })
	px.kill()
	n := count("crypto:btcusdt")
	waitFor(t, "two more prices after the cut", func() bool { return count("crypto:btcusdt") >= n+2 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if fd.Stats().Reconnects == 0 {
		t.Fatal("no reconnection counted")
	}
	ref := sim.NewPrices(5, origin, syms)
	want := map[string]map[int64]float64{}
	until := time.Now().Add(time.Minute).UnixMilli()
	for ref.Next() <= until {
		for _, ev := range ref.Step(nil) {
			if want[ev.Name] == nil {
				want[ev.Name] = map[int64]float64{}
			}
			want[ev.Name][ev.Time] = ev.Value
		}
	}
	for name, evs := range got {
		for i, ev := range evs {
			if v, ok := want[name][ev.Time]; !ok || v != ev.Value {
				t.Fatalf("%s at %d: %v, want %v", name, ev.Time, ev.Value, v)
			}
			if i > 0 && ev.Time <= evs[i-1].Time {
				t.Fatalf("%s: price at %d after %d", name, ev.Time, evs[i-1].Time)
			}
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

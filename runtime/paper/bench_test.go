package paper_test

import (
	"context"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
)

// BenchmarkObserveMarket measures the paper venue as a backtest fill model: market
// events (level changes and trades alternately) against a resting order that keeps
// being filled and replaced (the replacements, about one per eight events, are
// included).
func BenchmarkObserveMarket(b *testing.B) {
	// A balance that lasts for any b.N: every placement spends 4.5 of it.
	v, _ := paper.New(paper.Config{Address: addr, Balance: market.MaxMicros / 2}, source{mkInfo(100)})
	open := 0
	v.Attach(func(ev *market.Event) {
		if ev.Kind != market.EventOrder {
			return
		}
		if ev.OrderUpdate == market.OrderPlacement {
			open++
		} else if ev.Order.Status.Final() {
			open--
		}
	})
	v.Markets(context.Background(), nil)
	now := int64(1_000_000)
	bk := market.Event{Kind: market.EventBook, Time: now, Market: cond, Token: yes,
		Bids: []market.Level{lv("0.45", "100"), lv("0.44", "100")}, Asks: []market.Level{lv("0.50", "100")}}
	v.ObserveMarket(&bk)
	var client uint64
	place := func() {
		client++
		p, _ := v.Prepare(context.Background(), agent.OrderRequest{ClientID: client, Market: cond, Token: yes, Side: market.Buy,
			Price: mic("0.45"), Size: mic("10"), Time: now})
		if _, err := v.Submit(context.Background(), &p); err != nil {
			b.Fatal(err)
		}
	}
	place()
	change := market.Event{Kind: market.EventPriceChange, Market: cond, Token: yes,
		Changes: []market.LevelChange{{Token: yes, Side: market.Buy, Price: mic("0.45"), Size: mic("100")}}}
	trade := market.Event{Kind: market.EventLastTrade, Market: cond, Token: yes, Price: mic("0.45"), Size: mic("40"), Side: market.Sell}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now++
		if i%2 == 0 {
			change.Time = now
			v.ObserveMarket(&change)
		} else {
			trade.Time = now
			v.ObserveMarket(&trade)
		}
		if open == 0 {
			place() // part of the work: a fill model sees new orders too
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

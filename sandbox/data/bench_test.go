package data

import (
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// BenchmarkObserveTrade: the index's cost on the engine goroutine for one matching
// order (three maker fills, the taker's summary, book changes).
func BenchmarkObserveTrade(b *testing.B) {
	cat := testCatalog(b)
	ix := New(Config{Catalog: cat, MaxActivity: 1 << 16})
	m := cat.Events()[0].Markets[0]
	ix.Observe(&exchange.Command{Kind: exchange.CreateMarket, Market: m.Condition, Spec: m.Spec()},
		[]exchange.Event{{Kind: exchange.MarketCreated, Market: m.Condition}})
	cmd := &exchange.Command{Kind: exchange.Place}
	evs := []exchange.Event{
		{Kind: exchange.OrderAccepted, Market: m.Condition},
		{Kind: exchange.OrderFilled, Market: m.Condition, Owner: bob, Token: m.Tokens[1], Outcome: market.No, Side: market.Buy, Price: 600_000, Size: market.One, Amount: 600_000},
		{Kind: exchange.OrderFilled, Market: m.Condition, Owner: carol, Token: m.Tokens[0], Outcome: market.Yes, Side: market.Sell, Price: 410_000, Size: market.One, Amount: 410_000},
		{Kind: exchange.OrderFilled, Market: m.Condition, Owner: dave, Token: m.Tokens[1], Outcome: market.No, Side: market.Buy, Price: 580_000, Size: market.One, Amount: 580_000},
		{Kind: exchange.TradeExecuted, Market: m.Condition, Owner: alice, Token: m.Tokens[0], Outcome: market.Yes, Side: market.Buy, Size: 3 * market.One, Amount: 1_230_000},
		{Kind: exchange.BookChanged, Market: m.Condition, BestBid: 400_000, BestAsk: 430_000},
		{Kind: exchange.BalanceChanged},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for k := range evs {
			evs[k].Time, evs[k].Trade = int64(i), uint64(i)
		}
		ix.Observe(cmd, evs)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
}

// BenchmarkObserveIrrelevant: a command whose events do not concern the index (a
// resting order) costs only the scan.
func BenchmarkObserveIrrelevant(b *testing.B) {
	ix := New(Config{})
	cmd := &exchange.Command{Kind: exchange.Place}
	evs := []exchange.Event{{Kind: exchange.OrderAccepted}, {Kind: exchange.OrderRested}, {Kind: exchange.BalanceChanged}}
	b.ReportAllocs()
	for b.Loop() {
		ix.Observe(cmd, evs)
	}
}

func benchIndex(b *testing.B, wallets, rows int) (*Index, market.Address) {
	cat := testCatalog(b)
	ix := New(Config{Catalog: cat, Clock: func() int64 { return int64(rows) * 1000 }})
	m := cat.Events()[0].Markets[0]
	ix.Observe(&exchange.Command{Kind: exchange.CreateMarket, Market: m.Condition, Spec: m.Spec()},
		[]exchange.Event{{Kind: exchange.MarketCreated, Market: m.Condition}})
	var w market.Address
	for i := range rows {
		w = addr(byte(i % wallets))
		w[1] = byte(i % wallets >> 8)
		side := market.Buy
		if i%3 == 2 {
			side = market.Sell
		}
		ix.Observe(&exchange.Command{Kind: exchange.Place}, []exchange.Event{{Kind: exchange.TradeExecuted, Time: int64(i) * 1000,
			Trade: uint64(i), Market: m.Condition, Owner: w, Token: m.Tokens[0], Side: side, Size: market.One, Amount: 500_000}})
	}
	return ix, w
}

// BenchmarkLeaderboard: a 7-day leaderboard over 1 000 wallets and 200 000 rows.
func BenchmarkLeaderboard(b *testing.B) {
	for _, period := range []string{api.PeriodAll, api.Period7D, api.Period365D} {
		b.Run(period, func(b *testing.B) {
			ix, _ := benchIndex(b, 1000, 200_000)
			q := api.LeaderboardQuery{TimePeriod: period, OrderBy: api.OrderByPnl, Limit: 25}
			b.ReportAllocs()
			for b.Loop() {
				if len(ix.Leaderboard(q)) != 25 {
					b.Fatal("short leaderboard")
				}
			}
		})
	}
}

// BenchmarkActivity: one page of a wallet with 2 000 rows.
func BenchmarkActivity(b *testing.B) {
	ix, w := benchIndex(b, 100, 200_000)
	q := api.ActivityQuery{User: w, Limit: 100, SortBy: api.ActivitySortTimestamp, SortDirection: api.Desc}
	b.ReportAllocs()
	for b.Loop() {
		if len(ix.Activity(q)) != 100 {
			b.Fatal("short page")
		}
	}
}

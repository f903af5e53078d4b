package report_test

import (
	"fmt"
	"os"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/report"
)

// A run's loop feeds the collector; the report comes out at the end.
func ExampleCollector() {
	info := market.Info{Condition: "0xc1", Slug: "rain", Tokens: [2]market.TokenID{"1", "2"}, TickSize: 10_000,
		Active: true, AcceptingOrders: true}
	var st market.State
	st.Init()
	st.Markets[info.Condition] = &info
	st.Balance = 100 * market.One

	c, err := report.NewCollector(report.Config{})
	if err != nil {
		panic(err)
	}
	c.Begin(1_700_000_000_000, &st, []market.Info{info})
	apply := func(ev market.Event) { st.Apply(&ev); c.Event(&ev, &st) }

	// Buy 10 YES at 0.40, then the market resolves YES.
	fill := market.Fill{Trade: "t1", Order: "o1", Market: "0xc1", Token: "1", Side: market.Buy, Role: market.Taker,
		Price: 400_000, Size: 10 * market.One, Time: 1_700_000_001_000}
	c.Fill(&fill, "bid")
	apply(market.Event{Kind: market.EventFill, Time: fill.Time, Fill: fill})
	c.Forecast("0xc1", 0.7)
	apply(market.Event{Kind: market.EventResolved, Time: 1_700_000_060_000, Market: "0xc1", Winner: "1"})

	r := c.Finish(&st, report.Run{Agent: "example"})
	s := r.Summary
	fmt.Println("pnl", s.PnL, "settlement", s.Settlement, "win rate", float64(s.WinRate), "brier (last forecast)", s.BrierLast.Fixed())
	fmt.Println("round trip:", r.RoundTrips[0].Outcome, r.RoundTrips[0].EntryBy, "→", r.RoundTrips[0].ExitReason, r.RoundTrips[0].PnL)
	_ = r.WriteFillsCSV(os.Stdout)
	// Output:
	// pnl 6 settlement 6 win rate 1 brier (last forecast) 0.09
	// round trip: YES bid → resolution 6
	// time_ms,time_utc,market,slug,token,outcome,side,role,price,size,notional,fee,realized,order,trade,key
	// 1700000001000,2023-11-14 22:13:21,0xc1,rain,1,YES,BUY,TAKER,0.4,10,4,0,0,o1,t1,bid
}

package policies

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestUsage: each limit's use in a state with positions in both tokens of a
// market, open buys and sells, orders sent in the last minute, and a loss since
// the day's start and the high-water mark.
func TestUsage(t *testing.T) {
	c, _ := newChain(t, Config{MaxPosition: m("50"), MaxMarketPosition: m("80"), MaxGrossExposure: m("40"), MaxOpenOrders: 4,
		MaxOrdersPerMinute: 10, MaxDailyLoss: m("20"), MaxDrawdown: m("30")})
	s := fixture()
	hold(s, yes, "20", "0.40") // marked at the mid 0.45: 9
	hold(s, no, "10", "0.50")  // marked at 1 - 0.45: 5.5
	openOrder(s, "b1", yes, market.Buy, "0.43", "15")
	openOrder(s, "s1", yes, market.Sell, "0.47", "5")
	openOrder(s, "b2", yes2, market.Buy, "0.40", "10")
	s.Orders["b2"].Matched = m("4")
	c.Observe(s) // baselines: equity 100 + 9 + 5.5 = 114.5
	s.Balance = m("90")
	c.RecordOrder(s.Time - 70_000) // older than a minute: not counted
	c.RecordOrder(s.Time - 10_000)
	c.RecordOrder(s.Time)
	got := map[string]string{}
	for _, u := range c.Usage(s) {
		got[u.Guard] = u.Used.String() + "/" + u.Limit.String() + " " + u.Unit
	}
	want := map[string]string{
		"max_position":          "35/50 shares",  // YES: 20 held + 15 to buy
		"max_market_position":   "45/80 shares",  // YES 35 + NO 10
		"max_gross_exposure":    "23.35/40 USDC", // 9 + 5.5 at their marks + 0.43×15 + 0.40×6
		"max_open_orders":       "3/4 orders",
		"max_orders_per_minute": "2/10 orders",
		"max_daily_loss":        "10/20 USDC", // 114.5 → 104.5
		"max_drawdown":          "10/30 USDC",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("usage %v", got)
	}
}

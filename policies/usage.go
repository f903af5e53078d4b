package policies

import (
	"github.com/pitbossdev/pitboss/market"
)

// Usage is one limit of the chain and how much of it a state uses, in the limit's
// own unit ("shares", "USDC", "orders"): what `pitboss status` and the dashboard
// show as "guards near their limits". Used is never negative.
type Usage struct {
	Guard string
	Unit  string
	Used  market.Micros
	Limit market.Micros
}

// Usage returns the use of the chain's position, exposure, order and loss limits by
// s, in a fixed order: max_position (the most-held token, its open buys counted as
// filled, as the guard counts them), max_market_position, max_gross_exposure,
// max_open_orders, max_orders_per_minute (at s.Time), max_daily_loss and
// max_drawdown (from the kill switch's baselines; 0 before the first Observe).
// Counts are whole numbers in micro-units (market.One per order). Call it from the
// goroutine that owns the chain.
func (c *Chain) Usage(s *market.State) []Usage {
	held := map[market.TokenID]market.Micros{}
	var buys market.Micros
	open := 0
	for _, o := range s.Orders {
		if o.Status.Final() {
			continue
		}
		open++
		if o.Side == market.Buy {
			rem := o.Size - o.Matched
			held[o.Token] += rem
			buys += notional(o.Price, rem)
		}
	}
	for t, p := range s.Positions {
		if _, resolved := s.PayoutOf(p); p.Size > 0 && !resolved { // a resolved market's tokens await a redeem: no risk
			held[t] += p.Size
		}
	}
	var maxTok, maxMkt market.Micros
	perMarket := map[market.ConditionID]market.Micros{}
	for t, n := range held {
		maxTok = max(maxTok, n)
		if m, _, ok := s.MarketOf(t); ok {
			perMarket[m.Condition] += n
		}
	}
	for _, n := range perMarket {
		maxMkt = max(maxMkt, n)
	}
	pv, claims := c.positionsValue(s)
	eq := s.Balance + s.Reserved + pv + claims
	var dayLoss, dd market.Micros
	if k := c.kill; k.Baseline {
		dayLoss, dd = max(k.DayStart-eq, 0), max(k.HighWater-eq, 0)
	}
	c.rate.full(s.Time, 0) // drop the times older than a minute
	cfg := c.cfg
	count := func(n int) market.Micros { return market.Micros(n) * market.One }
	return []Usage{
		{GuardPosition, "shares", maxTok, cfg.MaxPosition},
		{GuardMarketPos, "shares", maxMkt, cfg.MaxMarketPosition},
		{GuardGross, "USDC", pv + buys, cfg.MaxGrossExposure},
		{GuardOpenOrders, "orders", count(open), count(cfg.MaxOpenOrders)},
		{GuardRate, "orders", count(c.rate.n), count(cfg.MaxOrdersPerMinute)},
		{"max_daily_loss", "USDC", dayLoss, cfg.MaxDailyLoss},
		{"max_drawdown", "USDC", dd, cfg.MaxDrawdown},
	}
}

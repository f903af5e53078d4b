package report

import (
	"math"

	"github.com/pitbossdev/pitboss/market"
)

// quote is the agent's best own buy and sell of one market, in YES terms.
type quote struct{ buy, sell market.Micros }

// samplePrices appends a price sample of every open market (see PricePoint).
func (c *Collector) samplePrices(t int64, st *market.State) {
	if cap(c.quotes) < len(c.mkts) {
		c.quotes = make([]quote, len(c.mkts))
	}
	q := c.quotes[:len(c.mkts)]
	clear(q)
	if len(st.Orders) > 0 {
		idx := c.mktIndex
		if idx == nil {
			idx = make(map[market.ConditionID]int, len(c.mkts))
			for i, m := range c.mkts {
				idx[m.info.Condition] = i
			}
			c.mktIndex = idx
		}
		for _, o := range st.Orders {
			i, ok := idx[o.Market]
			if !ok {
				m := c.byToken[o.Token]
				if m == nil {
					continue
				}
				i = idx[m.info.Condition]
			}
			price, side := o.Price, o.Side
			if o.Outcome == market.No { // a NO order is the opposite YES order at 1 − q
				price, side = market.One-price, side.Opposite()
			}
			switch side {
			case market.Buy:
				q[i].buy = max(q[i].buy, price)
			case market.Sell:
				if q[i].sell == 0 || price < q[i].sell {
					q[i].sell = price
				}
			}
		}
	}
	for i, m := range c.mkts {
		if m.resolved {
			continue
		}
		bid, ask := yesQuotes(st, &m.info)
		pp := PricePoint{Time: t, Bid: Money(bid), Ask: Money(ask), Buy: Money(q[i].buy), Sell: Money(q[i].sell)}
		if bid > 0 && ask > 0 {
			pp.Mid = Money((bid + ask) / 2)
		}
		if m.fc.has {
			pp.Fair = Money(math.Round(m.fc.p * float64(market.One)))
		}
		if pp == (PricePoint{Time: t}) {
			continue
		}
		if m.prices == nil {
			m.prices = make([]PricePoint, 0, c.pointsCap())
		}
		m.prices = append(m.prices, pp)
	}
}

// halve keeps every other element of s (the first included), in place.
func halve[T any](s []T) []T {
	out := s[:0]
	for i := 0; i < len(s); i += 2 {
		out = append(out, s[i])
	}
	clear(s[len(out):])
	return out
}

package report

import (
	"math"

	"github.com/pitbossdev/pitboss/market"
)

// holdBaseline is "buy and hold" one outcome: the starting equity split equally
// between the run's markets, each part spent on the outcome's token at the first
// ask the run saw (YES: the best YES ask; NO: one minus the best YES bid), with the
// market's taker fee; the shares are held to the end (valued at their mark) or to
// the market's resolution (paid 1 or 0).
type holdBaseline struct {
	outcome market.Outcome
	cash    market.Micros
	alloc   market.Micros // per market
	legs    []holdLeg
	entered int
}

type holdLeg struct {
	m      *mkt
	tok    market.TokenID
	shares market.Micros
	in     bool
	paid   bool          // resolved: shares paid out into cash
	mark   market.Micros // the last mid of the token (its value while a side of the book is empty)
}

// beginHold sets up both baselines over the markets known at the start.
func (c *Collector) beginHold() {
	var ms []*mkt
	for _, m := range c.mkts {
		if m.info.Tokens[market.Yes] != "" && m.info.Tokens[market.No] != "" {
			ms = append(ms, m)
		}
	}
	for o := range c.hold {
		h := &c.hold[o]
		*h = holdBaseline{outcome: market.Outcome(o), cash: c.startEquity}
		if len(ms) == 0 || c.startEquity <= 0 {
			continue
		}
		h.alloc = c.startEquity / market.Micros(len(ms))
		for _, m := range ms {
			h.legs = append(h.legs, holdLeg{m: m, tok: m.info.Tokens[o]})
		}
	}
}

// enterHold buys the legs that have not bought yet and now can.
func (c *Collector) enterHold(st *market.State) {
	for o := range c.hold {
		h := &c.hold[o]
		if h.entered == len(h.legs) {
			continue
		}
		for i := range h.legs {
			l := &h.legs[i]
			if l.in || l.m.resolved {
				continue
			}
			bid, ask := yesQuotes(st, &l.m.info)
			price := ask
			if h.outcome == market.No {
				price = 0
				if bid > 0 {
					price = market.One - bid
				}
			}
			if price <= 0 || price >= market.One {
				continue
			}
			shares, ok := market.MulDiv(h.alloc, market.One, price)
			if !ok {
				continue
			}
			shares -= shares % market.Lot
			cost, _ := market.Notional(price, shares)
			fee := market.TakerFee(l.m.info.FeeBps, price, shares)
			h.cash -= cost + fee
			l.shares, l.in, l.mark = shares, true, price
			h.entered++
		}
	}
}

// settleHold pays out the legs of a market that resolved.
func (c *Collector) settleHold(m *mkt, winner market.Outcome) {
	for o := range c.hold {
		h := &c.hold[o]
		for i := range h.legs {
			l := &h.legs[i]
			if l.m != m || l.paid {
				continue
			}
			l.paid = true
			if l.in && h.outcome == winner {
				h.cash += l.shares
			}
		}
	}
}

// value is the baseline's equity: cash plus the shares still held at the mid of
// their market (in the outcome's terms), or at the last mid seen while a side of
// the book is empty.
func (h *holdBaseline) value(st *market.State) market.Micros {
	v := h.cash
	for i := range h.legs {
		l := &h.legs[i]
		if !l.in || l.paid {
			continue
		}
		if bid, ask := yesQuotes(st, &l.m.info); bid > 0 && ask > 0 {
			l.mark = (bid + ask) / 2
			if h.outcome == market.No {
				l.mark = market.One - l.mark
			}
		}
		x, _ := market.Notional(l.mark, l.shares)
		v += x
	}
	return v
}

// baselines returns the report's baselines at the end of the run.
func (c *Collector) baselines(st *market.State) []Baseline {
	ret := func(end market.Micros) Ratio {
		if c.startEquity <= 0 {
			return Ratio(math.NaN())
		}
		return Ratio(float64(end-c.startEquity) / float64(c.startEquity))
	}
	out := []Baseline{{Name: BaselineNothing, EndEquity: Money(c.startEquity), Return: ret(c.startEquity),
		Description: "no order: the starting equity, unchanged"}}
	for o, name := range [2]string{BaselineHoldYes, BaselineHoldNo} {
		h := &c.hold[o]
		if h.entered == 0 {
			continue
		}
		end := h.value(st)
		out = append(out, Baseline{Name: name, EndEquity: Money(end), PnL: Money(end - c.startEquity), Return: ret(end),
			Markets: h.entered, Description: "the starting equity split equally between the run's markets, each part spent on " +
				market.Outcome(o).String() + " at the first ask (taker fee included), held to the resolution (paid 1 or 0) or the end (at the mark)"})
	}
	return out
}

// yesQuotes returns a market's best bid and ask in YES terms: the better of the
// YES book's and the NO book's mirror (a NO bid q is a YES ask 1 − q). 0 when a side
// is empty.
func yesQuotes(st *market.State, info *market.Info) (bid, ask market.Micros) {
	if b := st.Books[info.Tokens[market.Yes]]; b != nil && info.Tokens[market.Yes] != "" {
		if l, ok := b.BestBid(); ok {
			bid = l.Price
		}
		if l, ok := b.BestAsk(); ok {
			ask = l.Price
		}
	}
	if b := st.Books[info.Tokens[market.No]]; b != nil && info.Tokens[market.No] != "" {
		if l, ok := b.BestAsk(); ok && market.One-l.Price > bid {
			bid = market.One - l.Price
		}
		if l, ok := b.BestBid(); ok && (ask == 0 || market.One-l.Price < ask) {
			ask = market.One - l.Price
		}
	}
	return bid, ask
}

package report

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// roundTrip is a round trip in progress.
type roundTrip struct {
	m        *mkt
	outcome  market.Outcome
	entry    int64
	entryBy  string
	bought   market.Micros
	cost     market.Micros // notional of the buys
	sold     market.Micros
	proceeds market.Micros // notional of the sells and settlements
	fees     market.Micros
	realized market.Micros
	maxSize  market.Micros
	fills    int
}

// tripBuy adds a buy to the token's round trip, opening one from flat.
func (c *Collector) tripBuy(m *mkt, p *market.Position, f *market.Fill, notional market.Micros, key string) {
	rt := c.open[f.Token]
	if rt == nil {
		rt = &roundTrip{m: m, outcome: f.Outcome, entry: f.Time, entryBy: key}
		if o, ok := m.info.OutcomeOf(f.Token); ok {
			rt.outcome = o
		}
		c.open[f.Token] = rt
	}
	rt.bought += f.Size
	rt.cost += notional
	rt.fees += f.Fee
	rt.fills++
	rt.maxSize = max(rt.maxSize, p.Size)
}

// tripSell adds a sell to the token's round trip and closes it when the position
// is flat.
func (c *Collector) tripSell(m *mkt, p *market.Position, f *market.Fill, notional, realized market.Micros, key string) {
	rt := c.open[f.Token]
	if rt == nil {
		return
	}
	rt.sold += f.Size
	rt.proceeds += notional
	rt.fees += f.Fee
	rt.realized += realized
	rt.fills++
	if p.Size == 0 {
		reason := "sell"
		switch {
		case strings.HasPrefix(key, "flatten/"):
			reason = "flatten"
			if m.flattenWhy != "" {
				reason += " (" + m.flattenWhy + ")"
			}
		case key != "":
			reason = "sell " + key
		}
		c.closeTrip(f.Token, rt, f.Time, reason, 0, rt.proceeds, rt.sold)
	}
}

// Merge records the merge of n complete sets of market cond at time t (the agent's
// audit record "merge"): both tokens' positions sell n shares for half of n each
// (market.MergeSets), their round trips close when flat ("merge"), and the run's
// events gain a merge mark saying how many sets and why.
func (c *Collector) Merge(t int64, cond market.ConditionID, n market.Micros, why string) {
	c.rollDay(t)
	m := c.byCond[cond]
	if m == nil {
		c.Note("merge of %s sets in market %s, which the run does not know: not counted", n, cond)
		return
	}
	yes, no := c.pos[m.info.Tokens[market.Yes]], c.pos[m.info.Tokens[market.No]]
	if yes == nil || no == nil || n > yes.Size || n > no.Size || n <= 0 {
		c.Note("merge of %s sets in market %s, more than held: not counted in the ledger", n, m.label())
		return
	}
	half := n / 2
	var side [2]market.Micros // realized by YES, NO
	for o, part := range [2]market.Micros{n - half, half} {
		tok := m.info.Tokens[o]
		p := c.pos[tok]
		r, _ := p.SellProceeds(n, part, 0)
		side[o] = r
		c.realized = append(c.realized, r)
		c.day.realize(r)
		if rt := c.open[tok]; rt != nil {
			rt.sold += n
			rt.proceeds += part
			rt.realized += r
			if p.Size == 0 {
				c.closeTrip(tok, rt, t, "merge", 0, rt.proceeds, rt.sold)
			}
		}
	}
	c.merges = append(c.merges, MergeRow{Time: t, Market: cond, Slug: m.label(), Sets: Money(n), Collateral: Money(n),
		Realized: Money(side[market.Yes] + side[market.No]), YesRealized: Money(side[market.Yes]), NoRealized: Money(side[market.No]),
		Reason: why})
	c.Mark(Mark{Time: t, Kind: MarkMerge, Market: cond, Reason: n.String() + " sets → " + n.String() + " collateral (" + why + ")"})
	c.dirty = true
}

// Redeem records the redeem of resolved market cond's tokens at time t (the agent's
// audit record "redeem"), which paid the collateral paid: the run's events gain a
// redeem mark. The report's ledger settled the market's positions when it resolved
// (their payout was certain then), so the redeem changes no figure: it turns that
// payout into collateral. A redeem in a market the run does not know is noted.
func (c *Collector) Redeem(t int64, cond market.ConditionID, paid market.Micros, why string) {
	if c.byCond[cond] == nil {
		c.Note("redeem in market %s, which the run does not know: not shown", cond)
		return
	}
	c.redeems++
	c.redeemed += paid
	c.Mark(Mark{Time: t, Kind: MarkRedeem, Market: cond, Reason: "tokens → " + paid.String() + " collateral (" + why + ")"})
}

// tripSettle closes the token's round trip at a resolution: size shares paid 1
// (won) or 0.
func (c *Collector) tripSettle(tok market.TokenID, size market.Micros, won bool, realized market.Micros, t int64) {
	rt := c.open[tok]
	if rt == nil {
		return
	}
	rt.sold += size
	if won {
		rt.proceeds += size
	}
	rt.realized += realized
	c.closeTrip(tok, rt, t, ExitResolved, 0, rt.proceeds, rt.sold)
}

// closeTrip moves a round trip to the closed list: unrealized is added to its PnL
// (a position still open at the end) and its exit price is exitNotional over
// exitShares.
func (c *Collector) closeTrip(tok market.TokenID, rt *roundTrip, t int64, reason string, unrealized, exitNotional, exitShares market.Micros) {
	delete(c.open, tok)
	if len(c.closed) >= MaxRoundTrips {
		c.tripsOut++
		return
	}
	pnl := rt.realized + unrealized
	out := RoundTrip{Market: rt.m.info.Condition, Slug: rt.m.label(), Outcome: rt.outcome.String(), Entry: rt.entry, Exit: t,
		DurationMs: t - rt.entry, Bought: Money(rt.bought), Sold: Money(rt.sold), MaxSize: Money(rt.maxSize),
		EntryPrice: avgPrice(rt.cost, rt.bought), ExitPrice: avgPrice(exitNotional, exitShares), PnL: Money(pnl),
		Fees: Money(rt.fees), Return: Ratio(math.NaN()), Fills: rt.fills, EntryBy: rt.entryBy, ExitReason: reason}
	if rt.cost > 0 {
		out.Return = Ratio(float64(pnl) / float64(rt.cost))
	}
	c.closed = append(c.closed, out)
}

// closeOpenTrips ends the round trips still open at time t, valuing what is held
// at st's marks (which are also their exit price), in the order they were opened
// (by entry time, then token).
func (c *Collector) closeOpenTrips(t int64, st *market.State) {
	toks := make([]market.TokenID, 0, len(c.open))
	for tok := range c.open {
		toks = append(toks, tok)
	}
	slices.SortFunc(toks, func(a, b market.TokenID) int {
		if ea, eb := c.open[a].entry, c.open[b].entry; ea != eb {
			return cmp.Compare(ea, eb)
		}
		return cmp.Compare(a, b)
	})
	for _, tok := range toks {
		rt := c.open[tok]
		var unrealized, value, held market.Micros
		if p := c.pos[tok]; p != nil && p.Size > 0 {
			mark := st.Mark(tok)
			unrealized, held = p.Unrealized(mark), p.Size
			value, _ = market.Notional(mark, held)
		}
		c.closeTrip(tok, rt, t, ExitOpen, unrealized, rt.proceeds+value, rt.sold+held)
	}
}

// avgPrice is notional / shares as a price, rounded to the micro-unit (0 when no
// shares).
func avgPrice(notional, shares market.Micros) Money {
	if shares <= 0 || notional < 0 {
		return 0
	}
	v, ok := market.MulDiv(notional, market.One, shares)
	if !ok {
		return 0
	}
	return Money(v)
}

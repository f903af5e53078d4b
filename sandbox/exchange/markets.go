package exchange

import (
	"github.com/pitbossdev/pitboss/market"
)

// maxFeeBps is the highest fee rate a market may have (100%): a taker's fee never
// exceeds the collateral of its trade.
const maxFeeBps = 10_000

// checkParams validates the tradable parameters of a spec.
func checkParams(s *MarketSpec) *market.Error {
	switch {
	case !market.ValidTick(s.TickSize):
		return market.Errorf(market.CodeBadRequest, "tick size")
	case s.MinSize < 0 || s.MinSize > market.MaxMicros:
		return market.Errorf(market.CodeBadRequest, "minimum order size")
	case s.FeeBps > maxFeeBps:
		return market.Errorf(market.CodeBadRequest, "fee rate")
	}
	return nil
}

func (e *Engine) createMarket(c *Command) *market.Error {
	s := &c.Spec
	if c.Market == "" || s.Tokens[market.Yes] == "" || s.Tokens[market.No] == "" {
		return market.Errorf(market.CodeBadRequest, "market")
	}
	if err := checkParams(s); err != nil {
		return err
	}
	if _, dup := e.marketIdx[c.Market]; dup {
		return market.Errorf(market.CodeMarketExists, string(c.Market))
	}
	for _, t := range s.Tokens {
		if _, dup := e.tokenIdx[t]; dup {
			return market.Errorf(market.CodeTokenInUse, string(t))
		}
	}
	if s.Tokens[market.Yes] == s.Tokens[market.No] {
		return market.Errorf(market.CodeTokenInUse, string(s.Tokens[market.No]))
	}
	mi := int32(len(e.markets))
	e.markets = append(e.markets, mkt{id: c.Market, tokens: s.Tokens, negRisk: s.NegRisk, head: -1, tail: -1})
	m := &e.markets[mi]
	m.setSpec(s)
	m.unit = s.TickSize
	m.book[sideBid] = newBookSide(levelsFor(m.unit), true)
	m.book[sideAsk] = newBookSide(levelsFor(m.unit), false)
	e.marketIdx[c.Market] = mi
	e.tokenIdx[s.Tokens[market.Yes]] = mi * 2
	e.tokenIdx[s.Tokens[market.No]] = mi*2 + 1
	ev := e.emit(MarketCreated)
	m.describe(ev)
	ev.OldTick = 0
	return nil
}

// setSpec copies the mutable fields of s into m.
func (m *mkt) setSpec(s *MarketSpec) {
	m.question, m.slug, m.outcomes, m.endDate = s.Question, s.Slug, s.Outcomes, s.EndDate
	m.tick, m.minSize, m.feeBps = s.TickSize, s.MinSize, s.FeeBps
	m.active, m.closed, m.archived, m.accepting = s.Active, s.Closed, s.Archived, s.AcceptingOrders
}

func (m *mkt) describe(ev *Event) {
	ev.Market, ev.Token, ev.Other = m.id, m.tokens[market.Yes], m.tokens[market.No]
	ev.Tick, ev.OldTick, ev.Size, ev.FeeBps, ev.Flags = m.tick, m.tick, m.minSize, m.feeBps, m.flags()
}

// unresolved looks up the market a command changes: one that exists and is not
// resolved.
func (e *Engine) unresolved(id market.ConditionID) (int32, *market.Error) {
	mi, ok := e.marketIdx[id]
	if !ok {
		return 0, market.Errorf(market.CodeMarketNotFound)
	}
	if e.markets[mi].resolved {
		return 0, market.Errorf(market.CodeMarketResolved)
	}
	return mi, nil
}

func (e *Engine) updateMarket(c *Command) *market.Error {
	mi, err := e.unresolved(c.Market)
	if err != nil {
		return err
	}
	m := &e.markets[mi]
	s := &c.Spec
	if err := checkParams(s); err != nil {
		return err
	}
	old := m.tick
	if s.TickSize < m.unit {
		e.reindex(m, s.TickSize)
	}
	wasClosed := m.closed
	m.setSpec(s)
	if m.closed && !wasClosed {
		e.cancelMarket(mi, ReasonClosed)
	}
	ev := e.emit(MarketUpdated)
	m.describe(ev)
	ev.OldTick = old
	return nil
}

func (e *Engine) resolve(c *Command) *market.Error {
	mi, err := e.unresolved(c.Market)
	if err != nil {
		return err
	}
	m := &e.markets[mi]
	if c.Winner != market.Yes && c.Winner != market.No {
		return market.Errorf(market.CodeBadRequest, "outcome")
	}
	e.cancelMarket(mi, ReasonResolved)
	m.resolved, m.winner = true, c.Winner
	m.closed, m.accepting = true, false
	ev := e.emit(MarketResolved)
	ev.Market, ev.Token, ev.Other = m.id, m.tokens[c.Winner], m.tokens[c.Winner.Other()]
	ev.Outcome, ev.Flags = c.Winner, m.flags()
	return nil
}

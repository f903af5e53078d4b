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
		if _, dup := e.lookupToken(t); dup {
			return market.Errorf(market.CodeTokenInUse, string(t))
		}
	}
	if s.Tokens[market.Yes] == s.Tokens[market.No] {
		return market.Errorf(market.CodeTokenInUse, string(s.Tokens[market.No]))
	}
	gi, err := e.joinGroup(s)
	if err != nil {
		return err
	}
	mi := int32(len(e.markets))
	e.markets = append(e.markets, mkt{id: c.Market, tokens: s.Tokens, negRisk: s.NegRisk, group: -1})
	m := &e.markets[mi]
	if s.NegRiskID != "" {
		if gi < 0 {
			gi = int32(len(e.groups))
			e.groups = append(e.groups, negGroup{id: s.NegRiskID})
			e.groupIdx[s.NegRiskID] = gi
		}
		e.groups[gi].markets = append(e.groups[gi].markets, mi)
		m.group = gi
	}
	m.setSpec(s)
	m.unit = s.TickSize
	m.book[sideBid] = newBookSide(levelsFor(m.unit), true)
	m.book[sideAsk] = newBookSide(levelsFor(m.unit), false)
	e.marketIdx[c.Market] = mi
	e.addToken(s.Tokens[market.Yes], mi*2)
	e.addToken(s.Tokens[market.No], mi*2+1)
	ev := e.emit(MarketCreated)
	m.describe(ev)
	ev.OldTick = 0
	return nil
}

// joinGroup checks that a new market may join the neg-risk event its spec names and
// returns the event's index (-1 when the event is new or none is named). A market
// joins only an event without conversions or resolutions: the vault's basket holds
// NO tokens of the markets that existed when it converted, and a resolved event is
// settled.
func (e *Engine) joinGroup(s *MarketSpec) (int32, *market.Error) {
	if s.NegRiskID == "" {
		return -1, nil
	}
	if !s.NegRisk {
		return 0, market.Errorf(market.CodeBadRequest, "neg-risk market id (the market is not neg-risk)")
	}
	gi, ok := e.groupIdx[s.NegRiskID]
	if !ok {
		return -1, nil
	}
	g := &e.groups[gi]
	if g.vault > 0 || e.unresolvedIn(g) < len(g.markets) {
		return 0, market.Errorf(market.CodeNegRiskClosed, s.NegRiskID)
	}
	return gi, nil
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
	if m.group < 0 {
		e.resolveOne(mi, c.Winner)
		return nil
	}
	g := &e.groups[m.group]
	if c.Winner == market.No && e.unresolvedIn(g) < 2 {
		return market.Errorf(market.CodeNegRiskNeedsWinner, g.id)
	}
	e.resolveOne(mi, c.Winner)
	if c.Winner == market.Yes {
		for _, mj := range g.markets {
			if !e.markets[mj].resolved {
				e.resolveOne(mj, market.No)
			}
		}
	}
	if e.unresolvedIn(g) == 0 {
		g.vault = 0
	}
	return nil
}

// resolveOne resolves market mi: its open orders are cancelled, it is marked resolved
// (closed, not accepting) with its winner. In a neg-risk event, a market resolving NO
// pays the vault's NO tokens: its locked collateral shrinks by them, which repays
// that part of the vault's debt.
func (e *Engine) resolveOne(mi int32, win market.Outcome) {
	m := &e.markets[mi]
	e.cancelMarket(mi, ReasonResolved)
	if win == market.No {
		m.locked -= e.vaultIn(m)
	}
	m.resolved, m.winner = true, win
	m.closed, m.accepting = true, false
	ev := e.emit(MarketResolved)
	ev.Market, ev.Token, ev.Other = m.id, m.tokens[win], m.tokens[win.Other()]
	ev.Outcome, ev.Flags = win, m.flags()
}

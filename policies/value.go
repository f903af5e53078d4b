package policies

import "github.com/pitbossdev/pitboss/market"

// valuation caches, for a state of a declared version (SetStateVersion), where the
// mark of every open position comes from: the position and the books its mark is
// read from, found once instead of through the state's maps (keyed by long token
// ids) on every event. Within one version positions, markets and existing books do
// not change; a new book (market data may create one) changes the number of books
// and rebuilds the cache.
type valuation struct {
	state   *market.State
	version uint64
	books   int
	marks   []mark
	settled []settled // positions of resolved markets (their payout is fixed)
}

// mark is one open position and the books it is marked from.
type mark struct {
	pos   *market.Position
	own   *market.Book // the token's book, or nil
	other *market.Book // the complementary token's book, or nil
}

// settled is one position of a resolved market, not yet redeemed, and its payout
// per share (market.State.Payout).
type settled struct {
	pos    *market.Position
	payout market.Micros
}

// value returns the position at its mark: the mid of its own book, else one minus
// the mid of the complementary book, else its average cost (market.State.Mark).
func (m *mark) value() market.Micros {
	if m.own != nil {
		if mid, ok := m.own.Mid(); ok {
			return notional(mid, m.pos.Size)
		}
	}
	if m.other != nil {
		if mid, ok := m.other.Mid(); ok {
			return notional(market.One-mid, m.pos.Size)
		}
	}
	return notional(m.pos.AvgPrice(), m.pos.Size)
}

// positionsValue returns the value of every open position of s at its mark, the
// market risk max_gross_exposure bounds, and apart from it the payout of the
// positions of resolved markets not yet redeemed (a winning share pays one, a losing
// one nothing, whatever the books say): claims on collateral, not market risk, which
// equity counts and exposure does not. open + claims is what market.State.Equity
// adds to the collateral.
func (c *Chain) positionsValue(s *market.State) (open, claims market.Micros) {
	cv := &c.values
	if !c.versioned(s) {
		cv.state = nil
		var sum market.Micros
		for tok, p := range s.Positions {
			if p.Size <= 0 {
				continue
			}
			if v, ok := s.PayoutOf(p); ok {
				claims += notional(v, p.Size)
				continue
			}
			own := s.Books[tok]
			if own != nil {
				if mid, ok := own.Mid(); ok { // the usual case: no other lookup
					sum += notional(mid, p.Size)
					continue
				}
			}
			m := markOf(s, tok, p, own)
			sum += m.value()
		}
		return sum, claims
	}
	if cv.state != s || cv.version != c.version || cv.books != len(s.Books) {
		cv.rebuild(s, c.version)
	}
	var sum market.Micros
	for i := range cv.marks {
		sum += cv.marks[i].value()
	}
	for _, st := range cv.settled {
		claims += notional(st.payout, st.pos.Size)
	}
	return sum, claims
}

func (cv *valuation) rebuild(s *market.State, version uint64) {
	clear(cv.marks)
	cv.marks, cv.settled = cv.marks[:0], cv.settled[:0]
	cv.state, cv.version, cv.books = s, version, len(s.Books)
	for tok, p := range s.Positions {
		switch v, ok := s.PayoutOf(p); {
		case p.Size <= 0:
		case ok:
			cv.settled = append(cv.settled, settled{pos: p, payout: v})
		default:
			cv.marks = append(cv.marks, markOf(s, tok, p, s.Books[tok]))
		}
	}
}

// markOf finds the books position p in token tok is marked from: its own (given),
// and the complementary token's of its market — the position's market when it
// holds tok, else the one market.State.MarketOf finds (a token belongs to one
// market).
func markOf(s *market.State, tok market.TokenID, p *market.Position, own *market.Book) mark {
	m := mark{pos: p, own: own}
	info := s.Markets[p.Market]
	o, ok := market.Outcome(0), false
	if info != nil {
		o, ok = info.OutcomeOf(tok)
	}
	if !ok {
		info, o, ok = s.MarketOf(tok)
	}
	if ok {
		m.other = s.Books[info.Tokens[o.Other()]]
	}
	return m
}

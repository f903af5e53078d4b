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
}

// mark is one open position and the books it is marked from.
type mark struct {
	pos   *market.Position
	own   *market.Book // the token's book, or nil
	other *market.Book // the complementary token's book, or nil
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

// positionsValue returns the value of every open position of s at its mark: what
// market.State.Equity adds to the collateral.
func (c *Chain) positionsValue(s *market.State) market.Micros {
	cv := &c.values
	if !c.versioned(s) {
		cv.state = nil
		var sum market.Micros
		for tok, p := range s.Positions {
			if p.Size <= 0 {
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
		return sum
	}
	if cv.state != s || cv.version != c.version || cv.books != len(s.Books) {
		cv.rebuild(s, c.version)
	}
	var sum market.Micros
	for i := range cv.marks {
		sum += cv.marks[i].value()
	}
	return sum
}

func (cv *valuation) rebuild(s *market.State, version uint64) {
	clear(cv.marks)
	cv.marks = cv.marks[:0]
	cv.state, cv.version, cv.books = s, version, len(s.Books)
	for tok, p := range s.Positions {
		if p.Size > 0 {
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

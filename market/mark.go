package market

// Mark returns the price a holding of token t is valued at: its payout when the
// position's market has resolved (Payout: One a winning share, 0 a losing one, until
// it is redeemed), else the mid of t's book, else one minus the mid of the
// complementary token's book (when t's market is known), else the position's average
// cost, else 0. The loss limits of policies value
// positions by the same rule (policies/value.go keeps its books found per state
// version); runtime/agent's status reports use this one.
func (s *State) Mark(t TokenID) Micros {
	if v, ok := s.Payout(t); ok {
		return v
	}
	if b := s.Books[t]; b != nil {
		if mid, ok := b.Mid(); ok {
			return mid
		}
	}
	if m, o, ok := s.MarketOf(t); ok {
		if b := s.Books[m.Tokens[o.Other()]]; b != nil {
			if mid, ok := b.Mid(); ok {
				return One - mid
			}
		}
	}
	if p := s.Positions[t]; p != nil {
		return p.AvgPrice()
	}
	return 0
}

// Payout returns what one share of token t pays when the market of t's position
// (Position.Market) has resolved: One for the winner, 0 for the loser. ok is false
// while that market is open, unknown, or t is not held.
func (s *State) Payout(t TokenID) (Micros, bool) {
	if p := s.Positions[t]; p != nil {
		return s.PayoutOf(p)
	}
	return 0, false
}

// PayoutOf is Payout for position p (of s, or shaped like one of its positions),
// without looking it up: one lookup of its market.
func (s *State) PayoutOf(p *Position) (Micros, bool) {
	m := s.Markets[p.Market]
	if m == nil || !m.Resolved {
		return 0, false
	}
	o, ok := m.OutcomeOf(p.Token)
	if !ok {
		return 0, false
	}
	if o == m.Winner {
		return One, true
	}
	return 0, true
}

// Equity returns available plus reserved collateral plus every position valued at its
// Mark: what the loss limits of policies watch (they add the same value of the
// positions to the collateral).
func (s *State) Equity() Micros {
	eq := s.Balance + s.Reserved
	for t, p := range s.Positions {
		if p.Size > 0 {
			eq += p.Value(s.Mark(t))
		}
	}
	return eq
}

// PnL returns the realized PnL of every position and the unrealized PnL of the open
// ones, marked with Mark. Fees are included in both (see Position).
func (s *State) PnL() (realized, unrealized Micros) {
	for t, p := range s.Positions {
		realized += p.Realized
		if p.Size > 0 {
			unrealized += p.Unrealized(s.Mark(t))
		}
	}
	return realized, unrealized
}

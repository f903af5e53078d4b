package market

// BuyCost records a purchase of size shares whose collateral cost was notional, plus
// fee paid on top: the same accounting as Buy, for fills whose cost is known as an
// amount rather than a price (a taker that swept several levels pays the sum of the
// levels' notionals; a split allocates its collateral between the two tokens). It
// reports false (and changes nothing) for a non-positive size or a negative notional
// or fee.
func (p *Position) BuyCost(size, notional, fee Micros) bool {
	if size <= 0 || notional < 0 || fee < 0 {
		return false
	}
	p.Size += size
	p.Cost += notional + fee
	p.Fees += fee
	p.Bought += size
	return true
}

// SellProceeds records a sale of size shares for proceeds (before the fee, which is
// deducted from them) and returns the PnL it realized: the same accounting as Sell,
// for sales known by amount (a swept taker sale, a merge, a redemption). It reports
// ok=false (and changes nothing) when size is not positive or exceeds the position,
// or proceeds or fee is negative.
func (p *Position) SellProceeds(size, proceeds, fee Micros) (realized Micros, ok bool) {
	if size <= 0 || size > p.Size || proceeds < 0 || fee < 0 {
		return 0, false
	}
	removed := p.Cost
	if size < p.Size {
		removed, _ = MulDiv(p.Cost, size, p.Size)
	}
	p.Size -= size
	p.Cost -= removed
	p.Fees += fee
	p.Sold += size
	realized = proceeds - removed - fee
	p.Realized += realized
	return realized, true
}

// MergeSets records the merge of n complete sets: n shares of yes and of no are
// burned for n of collateral, each sold for half of it (yes gets the odd
// micro-unit), as the data service accounts a merge. It returns the PnL realized
// and reports false (changing nothing) when n is not positive or exceeds either
// position.
func MergeSets(yes, no *Position, n Micros) (realized Micros, ok bool) {
	if n <= 0 || n > yes.Size || n > no.Size {
		return 0, false
	}
	half := n / 2
	ry, _ := yes.SellProceeds(n, n-half, 0)
	rn, _ := no.SellProceeds(n, half, 0)
	return ry + rn, true
}

// Redeem records the redemption of a resolved market's tokens held in s (as the
// venue's redeem does): the winning shares pay One each into Balance, both positions
// close at their payout (Position.Settle: the PnL is realized now), and the collateral
// paid is returned. It reports false, changing nothing, when market m is unknown or
// not resolved; a market where nothing is held pays 0.
func (s *State) Redeem(m ConditionID) (paid Micros, ok bool) {
	info := s.Markets[m]
	if info == nil || !info.Resolved {
		return 0, false
	}
	for o, tok := range info.Tokens {
		p := s.Positions[tok]
		if p == nil || p.Size == 0 {
			continue
		}
		won := Outcome(o) == info.Winner
		if won {
			paid += p.Size // One per share
		}
		p.Settle(won)
	}
	s.Balance += paid
	return paid, true
}

// Redeemable returns what redeeming resolved market m would pay (its winning shares
// held) and the shares of both tokens held there; ok is false when m is unknown or
// not resolved.
func (s *State) Redeemable(m ConditionID) (payout, held Micros, ok bool) {
	info := s.Markets[m]
	if info == nil || !info.Resolved {
		return 0, 0, false
	}
	for o, tok := range info.Tokens {
		if p := s.Positions[tok]; p != nil && p.Size > 0 {
			held += p.Size
			if Outcome(o) == info.Winner {
				payout += p.Size
			}
		}
	}
	return payout, held, true
}

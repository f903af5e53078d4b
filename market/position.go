package market

// Position is a holding of one outcome token with exact cost-basis accounting. Size is
// never negative: on a binary market a short YES is a long NO, so selling more than is
// held is refused, never turned into a short.
//
// Accounting (average cost): a buy adds price×size plus its fee to Cost; a sell removes
// the sold fraction of Cost (the whole of it when the position closes, so rounding never
// leaves residue) and realizes proceeds − removed cost − fee. Settlement of a resolved
// market is a sale at 1 (winner) or 0 (loser) with no fee. All figures are collateral
// micro-units.
type Position struct {
	Market   ConditionID
	Token    TokenID
	Outcome  Outcome
	Size     Micros // shares held
	Cost     Micros // cost basis of Size, fees on buys included
	Realized Micros // realized PnL, fees included
	Fees     Micros // all fees paid
	Bought   Micros // shares bought, cumulative
	Sold     Micros // shares sold or settled, cumulative
}

// AvgPrice returns Cost/Size rounded down, or 0 for an empty position.
func (p *Position) AvgPrice() Micros {
	if p.Size == 0 {
		return 0
	}
	v, _ := MulDiv(p.Cost, One, p.Size)
	return v
}

// Buy records a purchase of size shares at price, paying fee on top. It reports false
// (and changes nothing) for a non-positive size, a negative price or fee, or overflow.
func (p *Position) Buy(price, size, fee Micros) bool {
	if size <= 0 || price < 0 || fee < 0 {
		return false
	}
	n, ok := Notional(price, size)
	return ok && p.BuyCost(size, n, fee)
}

// Sell records a sale of size shares at price with fee deducted from the proceeds and
// returns the PnL it realized. It reports ok=false (and changes nothing) when size is
// not positive or exceeds the position.
func (p *Position) Sell(price, size, fee Micros) (realized Micros, ok bool) {
	if size <= 0 || size > p.Size || price < 0 || fee < 0 {
		return 0, false
	}
	proceeds, ok := Notional(price, size)
	if !ok {
		return 0, false
	}
	return p.SellProceeds(size, proceeds, fee)
}

// Settle closes the position at the resolution payout (One for the winning token, 0
// for the losing one) and returns the PnL realized.
func (p *Position) Settle(won bool) Micros {
	if p.Size == 0 {
		return 0
	}
	payout := Micros(0)
	if won {
		payout = One
	}
	r, _ := p.Sell(payout, p.Size, 0)
	return r
}

// Value returns the position marked at price (size × mark).
func (p *Position) Value(mark Micros) Micros {
	v, _ := Notional(mark, p.Size)
	return v
}

// Unrealized returns the PnL of the open size marked at price.
func (p *Position) Unrealized(mark Micros) Micros { return p.Value(mark) - p.Cost }

// State is everything an agent knows at one instant: the markets it trades, their
// books, its positions, open orders and collateral. The agent's loop is its only
// writer; strategies and guards read it during one evaluation and must not keep
// references past it. Maps are keyed by the venue's identifiers. The zero value is
// usable after Init.
type State struct {
	Time      int64 // Unix milliseconds of the last event applied (the venue's clock)
	Markets   map[ConditionID]*Info
	Books     map[TokenID]*Book
	Positions map[TokenID]*Position
	Orders    map[OrderID]*Order // this wallet's open orders
	Balance   Micros             // available collateral
	Reserved  Micros             // collateral locked by open buy orders
	Mode      AccountMode
	// Last is the last public trade printed for each token (see Apply); nil until
	// the first trade event.
	Last map[TokenID]LastTrade
	// Feeds and Signals are the last value of each real-time feed (by symbol) and
	// outside signal (by name), with its time (EventFeed, EventSignal); nil until
	// the first.
	Feeds   map[string]Input
	Signals map[string]Input

	// spare holds orders Apply removed from Orders, reused for the next ones
	// (readers keep no references past an evaluation, so none is still read).
	spare []*Order
	// recent holds the two books Apply found last (book), so that the events of
	// one market (its two tokens) cost no lookups by token id. Apply creates a
	// token's book on first use and never removes or replaces one, so an entry
	// holds while Books is the map it was found in (recentOf); a caller that
	// writes Books directly must not replace a book Apply has already used.
	recent   [2]recentBook
	recentOf map[TokenID]*Book
	next     uint8
}

// recentBook is one entry of State.recent.
type recentBook struct {
	token TokenID
	book  *Book
}

// Input is the last value of a feed or a signal and its time (Unix ms).
type Input struct {
	Value float64
	Time  int64
}

// maxSpareOrders bounds State.spare.
const maxSpareOrders = 64

// Init allocates the maps of a zero State.
func (s *State) Init() {
	if s.Markets == nil {
		s.Markets = make(map[ConditionID]*Info)
	}
	if s.Books == nil {
		s.Books = make(map[TokenID]*Book)
	}
	if s.Positions == nil {
		s.Positions = make(map[TokenID]*Position)
	}
	if s.Orders == nil {
		s.Orders = make(map[OrderID]*Order)
	}
}

// MarketOf returns the market that token t belongs to and t's outcome in it.
func (s *State) MarketOf(t TokenID) (*Info, Outcome, bool) {
	for _, m := range s.Markets {
		if o, ok := m.OutcomeOf(t); ok {
			return m, o, true
		}
	}
	return nil, 0, false
}

// PositionSize returns the shares held of token t (0 if none).
func (s *State) PositionSize(t TokenID) Micros {
	if p := s.Positions[t]; p != nil {
		return p.Size
	}
	return 0
}

package market

import "unsafe"

// LastTrade is the last public trade printed for a token (an EventLastTrade).
type LastTrade struct {
	Price Micros
	Size  Micros
	Side  Side  // the taker's side
	Time  int64 // Unix milliseconds
}

// Apply updates s from one event. It is the one deterministic state transition shared
// by the agent loop, the paper venue and backtests: the same events applied in the same
// order give the same State. It never reads the clock; s.Time becomes ev.Time when that
// is set. Apply calls Init itself, so the zero State is usable.
//
// What each event does:
//   - EventBook: replaces the token's book (best-first levels are copied as they are;
//     unsorted input is sorted). EventPriceChange: sets each changed level.
//   - EventLastTrade: records the print in s.Last.
//   - EventTickSize: sets the market's TickSize.
//   - EventResolved: marks the market resolved with its winner and drops the market's
//     open orders, releasing their reserved collateral. The positions stay until they
//     are redeemed (Redeem), as the tokens stay in a wallet until it redeems them:
//     Mark values them at their payout (One a winning share, 0 a losing one).
//   - EventOrder: keeps s.Orders in step with this wallet's orders (placed, matched,
//     cancelled) and moves the collateral a BUY order locks (price × remaining) between
//     Balance and Reserved.
//   - EventFill: buys add to the token's position and pay price × size + fee out of
//     Balance; sells reduce it and pay proceeds − fee into Balance. The release of the
//     order's reservation comes with its EventOrder, in either order, so the net effect
//     of a buy filled at a better price than its limit is exactly the fill's cost.
//   - EventTimer: only advances s.Time.
//   - EventFeed, EventSignal: record Value with the event's time (s.Time when the
//     event has none) in s.Feeds or s.Signals under Name.
//
// Events for unknown markets update what they can (books, prints, orders, fills) and
// ignore the rest. For book events Apply does not allocate once the token's book
// exists and its level slices have grown to their working size. Apply is not safe for
// concurrent use (the agent loop is the single writer); ev is not retained.
func (s *State) Apply(ev *Event) {
	if s.Books == nil || s.Positions == nil || s.Orders == nil || s.Markets == nil {
		s.Init()
	}
	if ev.Time != 0 {
		s.Time = ev.Time
	}
	switch ev.Kind {
	case EventBook:
		b := s.book(ev.Token)
		b.Reset(ev.Bids, ev.Asks)
		b.Time, b.Hash = ev.Time, ev.Hash
	case EventPriceChange:
		for i := range ev.Changes {
			c := &ev.Changes[i]
			tok := c.Token
			if tok == "" {
				tok = ev.Token
			}
			b := s.book(tok)
			b.Set(c.Side, c.Price, c.Size)
			b.Time = ev.Time
		}
	case EventLastTrade:
		if s.Last == nil {
			s.Last = make(map[TokenID]LastTrade)
		}
		s.Last[ev.Token] = LastTrade{Price: ev.Price, Size: ev.Size, Side: ev.Side, Time: ev.Time}
	case EventTickSize:
		if m := s.marketFor(ev.Market, ev.Token); m != nil && ev.NewTick > 0 {
			m.TickSize = ev.NewTick
		}
	case EventResolved:
		s.resolve(ev)
	case EventOrder:
		s.applyOrder(&ev.Order, ev.OrderUpdate)
	case EventFill:
		s.applyFill(&ev.Fill)
	case EventFeed:
		if s.Feeds == nil {
			s.Feeds = make(map[string]Input)
		}
		s.Feeds[ev.Name] = Input{Value: ev.Value, Time: s.Time}
	case EventSignal:
		if s.Signals == nil {
			s.Signals = make(map[string]Input)
		}
		s.Signals[ev.Name] = Input{Value: ev.Value, Time: s.Time}
	}
}

// book returns the book of token t, creating it on first use.
func (s *State) book(t TokenID) *Book {
	if sameMap(s.recentOf, s.Books) {
		for i := range s.recent {
			if r := &s.recent[i]; r.book != nil && Same(r.token, t) {
				return r.book
			}
		}
	} else {
		s.recent, s.recentOf = [2]recentBook{}, s.Books
	}
	b := s.Books[t]
	if b == nil {
		b = &Book{Token: t}
		s.Books[t] = b
	}
	s.recent[s.next] = recentBook{token: t, book: b}
	s.next ^= 1
	return b
}

// sameMap reports whether a and b are the same map (not two equal maps).
func sameMap(a, b map[TokenID]*Book) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

// marketFor finds a market by condition id or, failing that, by token.
func (s *State) marketFor(c ConditionID, t TokenID) *Info {
	if m := s.Markets[c]; m != nil {
		return m
	}
	if t != "" {
		if m, _, ok := s.MarketOf(t); ok {
			return m
		}
	}
	return nil
}

func (s *State) resolve(ev *Event) {
	m := s.marketFor(ev.Market, ev.Winner)
	if m == nil {
		return
	}
	m.Resolved = true
	if o, ok := m.OutcomeOf(ev.Winner); ok {
		m.Winner = o
	}
	for id, ord := range s.Orders {
		if ord.Market == m.Condition || ord.Token == m.Tokens[Yes] || ord.Token == m.Tokens[No] {
			s.release(ord)
			delete(s.Orders, id)
			s.recycle(ord)
		}
	}
}

// reservation is the collateral an open order locks: price × remaining for a live
// BUY, nothing otherwise.
func reservation(o *Order) Micros {
	if o.Side != Buy || o.Status.Final() || o.Remaining() <= 0 {
		return 0
	}
	n, _ := Notional(o.Price, o.Remaining())
	return n
}

func (s *State) release(o *Order) {
	r := reservation(o)
	s.Reserved -= r
	s.Balance += r
}

func (s *State) applyOrder(o *Order, u OrderUpdate) {
	old := s.Orders[o.ID]
	if old != nil {
		s.release(old)
	}
	if u == OrderCancellation || o.Status.Final() || o.Remaining() <= 0 {
		if old != nil {
			delete(s.Orders, o.ID)
			s.recycle(old)
		}
		return
	}
	if old == nil {
		if n := len(s.spare); n > 0 {
			old, s.spare = s.spare[n-1], s.spare[:n-1]
		} else {
			old = new(Order)
		}
		s.Orders[o.ID] = old
	}
	*old = *o
	r := reservation(old)
	s.Reserved += r
	s.Balance -= r
}

// recycle keeps an order removed from s.Orders for reuse (at most maxSpareOrders).
func (s *State) recycle(o *Order) {
	if len(s.spare) < maxSpareOrders {
		*o = Order{}
		s.spare = append(s.spare, o)
	}
}

func (s *State) applyFill(f *Fill) {
	p := s.Positions[f.Token]
	if p == nil {
		p = &Position{Market: f.Market, Token: f.Token, Outcome: f.Outcome}
		s.Positions[f.Token] = p
	}
	switch f.Side {
	case Buy:
		if p.Buy(f.Price, f.Size, f.Fee) {
			n, _ := Notional(f.Price, f.Size)
			s.Balance -= n + f.Fee
		}
	case Sell:
		if _, ok := p.Sell(f.Price, f.Size, f.Fee); ok {
			n, _ := Notional(f.Price, f.Size)
			s.Balance += n - f.Fee
		}
	}
}

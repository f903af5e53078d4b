package exchange

import (
	"github.com/pitbossdev/pitboss/market"
)

// Views are read-only queries of the current state. Like Apply, they must be called
// from the engine's single writer (or serialized with it). Those that take a dst slice
// append to it and return it, so a caller that reuses its buffer does not allocate.

// Market returns the trading metadata of market id.
func (e *Engine) Market(id market.ConditionID) (market.Info, bool) {
	mi, ok := e.marketIdx[id]
	if !ok {
		return market.Info{}, false
	}
	return e.marketInfo(mi), true
}

// marketInfo is the market's info with its neg-risk event's id.
func (e *Engine) marketInfo(mi int32) market.Info {
	info := e.markets[mi].info()
	if g := e.markets[mi].group; g >= 0 {
		info.NegRiskID = e.groups[g].id
	}
	return info
}

func (m *mkt) info() market.Info {
	return market.Info{
		Condition: m.id, Question: m.question, Slug: m.slug, Tokens: m.tokens, Outcomes: m.outcomes,
		TickSize: m.tick, MinSize: m.minSize, FeeBps: m.feeBps, NegRisk: m.negRisk, EndDate: m.endDate,
		Active: m.active, Closed: m.closed, Archived: m.archived, AcceptingOrders: m.accepting,
		Resolved: m.resolved, Winner: m.winner,
	}
}

// NegRiskEvent returns the markets of the neg-risk event id, in creation order,
// appended to dst, and the NO tokens its vault holds in each unresolved market (see
// negGroup); ok is false for an unknown event.
func (e *Engine) NegRiskEvent(id string, dst []market.ConditionID) (markets []market.ConditionID, vault market.Micros, ok bool) {
	gi, ok := e.groupIdx[id]
	if !ok {
		return dst, 0, false
	}
	g := &e.groups[gi]
	for _, mi := range g.markets {
		dst = append(dst, e.markets[mi].id)
	}
	return dst, g.vault, true
}

// MarketNegRiskID returns the neg-risk event of market id ("" for none or an
// unknown market).
func (e *Engine) MarketNegRiskID(id market.ConditionID) string {
	if mi, ok := e.marketIdx[id]; ok && e.markets[mi].group >= 0 {
		return e.groups[e.markets[mi].group].id
	}
	return ""
}

// Markets appends the Info of every market, in creation order, to dst.
func (e *Engine) Markets(dst []market.Info) []market.Info {
	for i := range e.markets {
		dst = append(dst, e.marketInfo(int32(i)))
	}
	return dst
}

// TokenMarket returns the market token t belongs to and its outcome there.
func (e *Engine) TokenMarket(t market.TokenID) (market.ConditionID, market.Outcome, bool) {
	tok, ok := e.lookupToken(t)
	if !ok {
		return "", 0, false
	}
	return e.markets[tok>>1].id, market.Outcome(tok & 1), true
}

// yesSide maps a side of token tok's book to the YES-book side that holds it: the NO
// book's bids are the YES book's asks mirrored, and its asks the YES bids.
func yesSide(tok int32, side market.Side) uint8 {
	s := uint8(sideBid)
	if side == market.Sell {
		s = sideAsk
	}
	if tok&1 == 1 {
		s ^= 1
	}
	return s
}

// Levels appends up to max levels (all if max <= 0) of one side of token t's book to
// dst, best first (bids descending, asks ascending), in t's own prices: the NO book is
// the mirror of the YES book. It returns dst unchanged for an unknown token or side.
func (e *Engine) Levels(t market.TokenID, side market.Side, dst []market.Level, max int) []market.Level {
	tok, ok := e.lookupToken(t)
	if !ok || !side.Valid() {
		return dst
	}
	m := &e.markets[tok>>1]
	s := &m.book[yesSide(tok, side)]
	n := 0
	for li := s.best; li >= 0 && (max <= 0 || n < max); li = s.after(li) {
		px := market.Micros(li) * m.unit
		if tok&1 == 1 {
			px = market.One - px
		}
		dst = append(dst, market.Level{Price: px, Size: s.levels[li].size})
		n++
	}
	return dst
}

// BestBid returns the best bid of token t's book, in t's prices.
func (e *Engine) BestBid(t market.TokenID) (market.Level, bool) { return e.best(t, market.Buy) }

// BestAsk returns the best ask of token t's book, in t's prices.
func (e *Engine) BestAsk(t market.TokenID) (market.Level, bool) { return e.best(t, market.Sell) }

func (e *Engine) best(t market.TokenID, side market.Side) (market.Level, bool) {
	tok, ok := e.lookupToken(t)
	if !ok {
		return market.Level{}, false
	}
	m := &e.markets[tok>>1]
	s := &m.book[yesSide(tok, side)]
	if s.best < 0 {
		return market.Level{}, false
	}
	px := market.Micros(s.best) * m.unit
	if tok&1 == 1 {
		px = market.One - px
	}
	return market.Level{Price: px, Size: s.levels[s.best].size}, true
}

// Depth returns the total size of the best n levels (all if n <= 0) of one side of
// token t's book.
func (e *Engine) Depth(t market.TokenID, side market.Side, n int) market.Micros {
	tok, ok := e.lookupToken(t)
	if !ok || !side.Valid() {
		return 0
	}
	s := &e.markets[tok>>1].book[yesSide(tok, side)]
	var sum market.Micros
	k := 0
	for li := s.best; li >= 0 && (n <= 0 || k < n); li = s.after(li) {
		sum += s.levels[li].size
		k++
	}
	return sum
}

// Book fills dst with token t's whole book (reusing dst's storage), best first, with
// dst.Time the engine clock. It reports false for an unknown token.
func (e *Engine) Book(t market.TokenID, dst *market.Book) bool {
	if _, ok := e.lookupToken(t); !ok {
		return false
	}
	dst.Token, dst.Time, dst.Hash = t, e.now, ""
	dst.Bids = e.Levels(t, market.Buy, dst.Bids[:0], 0)
	dst.Asks = e.Levels(t, market.Sell, dst.Asks[:0], 0)
	return true
}

// LastTrade returns the price of the last fill in token t's market, in t's prices,
// and the side of the taker in t's terms (a taker buying NO sold YES). ok is false
// before the first trade.
func (e *Engine) LastTrade(t market.TokenID) (price market.Micros, side market.Side, ok bool) {
	tok, found := e.lookupToken(t)
	if !found {
		return 0, 0, false
	}
	m := &e.markets[tok>>1]
	if m.lastSide == 0 {
		return 0, 0, false
	}
	if tok&1 == 1 {
		return market.One - m.lastPx, m.lastSide.Opposite(), true
	}
	return m.lastPx, m.lastSide, true
}

// Order returns the open order id. Final orders are not kept (see OrderStatus).
func (e *Engine) Order(id market.OrderID) (market.Order, bool) {
	oi := e.liveOrder(id)
	if oi < 0 {
		return market.Order{}, false
	}
	return e.orderView(oi), true
}

func (e *Engine) orderView(oi int32) market.Order {
	o := &e.orders[oi]
	m := &e.markets[o.mkt]
	return market.Order{
		ID: o.id, Owner: e.accts[o.acct].addr, Market: m.id, Token: m.tokens[o.outcome], Outcome: o.outcome,
		Side: o.side, Price: o.price, Size: o.size, Matched: o.filled, Type: o.typ, PostOnly: o.postOnly,
		Expiration: o.expiration, CreatedAt: o.created, Status: market.StatusLive,
	}
}

// OrderStatus returns the status of any order the engine accepted: Live while open,
// then its final status (Matched, Canceled, Expired). With Config.ForgetFinal, final
// orders are unknown.
func (e *Engine) OrderStatus(id market.OrderID) (market.OrderStatus, bool) {
	if e.liveOrder(id) >= 0 {
		return market.StatusLive, true
	}
	return e.finalStatus(id)
}

// Filter selects open orders; each zero field means "any".
type Filter struct {
	Owner  market.Address
	Market market.ConditionID
	Token  market.TokenID
}

// OpenOrders appends the open orders that match f to dst. With an Owner they come in
// that owner's acceptance order; otherwise grouped by market (creation order), in
// acceptance order within a market. Unknown owners, markets or tokens match nothing.
func (e *Engine) OpenOrders(dst []market.Order, f Filter) []market.Order {
	mi, tok, ok := e.scope(f.Market, f.Token)
	if !ok {
		return dst
	}
	match := func(o *order) bool {
		return (mi < 0 || o.mkt == mi) && (tok < 0 || o.mkt*2+int32(o.outcome) == tok)
	}
	if !f.Owner.IsZero() {
		a, ok := e.lookupAccount(f.Owner)
		if !ok {
			return dst
		}
		for oi := e.accts[a].head; oi >= 0; oi = e.orders[oi].anext {
			if match(&e.orders[oi]) {
				dst = append(dst, e.orderView(oi))
			}
		}
		return dst
	}
	for i := range e.markets {
		if mi >= 0 && int32(i) != mi {
			continue
		}
		list := e.marketOrders(int32(i), e.scratch[:0])
		for _, oi := range list {
			if match(&e.orders[oi]) {
				dst = append(dst, e.orderView(oi))
			}
		}
		e.scratch = list[:0]
	}
	return dst
}

// Collateral returns account a's available and reserved collateral.
func (e *Engine) Collateral(a market.Address) (available, reserved market.Micros) {
	if i, ok := e.lookupAccount(a); ok {
		return e.accts[i].avail, e.accts[i].res
	}
	return 0, 0
}

// TokenBalance returns account a's available and reserved balance of token t.
func (e *Engine) TokenBalance(a market.Address, t market.TokenID) (available, reserved market.Micros) {
	i, ok := e.lookupAccount(a)
	if !ok {
		return 0, 0
	}
	tok, ok := e.lookupToken(t)
	if !ok {
		return 0, 0
	}
	if p := e.lookupPosition(i, tok); p >= 0 {
		return e.pos[p].avail, e.pos[p].res
	}
	return 0, 0
}

// Holding is one token balance of an account.
type Holding struct {
	Market    market.ConditionID
	Token     market.TokenID
	Outcome   market.Outcome
	Available market.Micros
	Reserved  market.Micros
}

// Holdings appends account a's token balances to dst, in the order the account first
// held each token (zero balances included once held).
func (e *Engine) Holdings(a market.Address, dst []Holding) []Holding {
	i, ok := e.lookupAccount(a)
	if !ok {
		return dst
	}
	for p := e.accts[i].posHead; p >= 0; p = e.pos[p].next {
		ps := &e.pos[p]
		m := &e.markets[ps.tok>>1]
		dst = append(dst, Holding{Market: m.id, Token: m.tokens[ps.tok&1], Outcome: market.Outcome(ps.tok & 1),
			Available: ps.avail, Reserved: ps.res})
	}
	return dst
}

// Mode returns account a's mode (normal for unknown accounts).
func (e *Engine) Mode(a market.Address) market.AccountMode {
	if i, ok := e.lookupAccount(a); ok {
		return e.accts[i].mode
	}
	return market.ModeNormal
}

// Nonce returns account a's current exchange nonce (0 for unknown accounts): the
// nonce its next orders must carry.
func (e *Engine) Nonce(a market.Address) uint64 {
	if i, ok := e.lookupAccount(a); ok {
		return e.accts[i].nonce
	}
	return 0
}

// Accounts appends every known account address to dst, in creation order (the fee
// account first).
func (e *Engine) Accounts(dst []market.Address) []market.Address {
	for i := range e.accts {
		dst = append(dst, e.accts[i].addr)
	}
	return dst
}

// Totals are venue-wide sums. Conservation: Net == Available + Reserved + Locked.
type Totals struct {
	Net        market.Micros // deposits − withdrawals: the collateral the venue holds
	Available  market.Micros // available collateral of all accounts, the fee account included
	Reserved   market.Micros // collateral reserved by open BUY orders
	Locked     market.Micros // collateral backing complete sets (winning tokens after resolution), net of the neg-risk vaults' debt
	OpenOrders int
	Accounts   int
	Markets    int
}

// Totals computes the venue-wide sums (it walks every account and market).
func (e *Engine) Totals() Totals {
	t := Totals{Net: e.net, Accounts: len(e.accts), Markets: len(e.markets)}
	for i := range e.accts {
		t.Available += e.accts[i].avail
		t.Reserved += e.accts[i].res
	}
	for i := range e.markets {
		t.Locked += e.markets[i].locked
		t.OpenOrders += int(e.markets[i].open)
	}
	for i := range e.groups {
		t.Locked -= e.debt(&e.groups[i])
	}
	return t
}

// DepositRoom is the largest Deposit the engine would accept now: the venue-wide
// bound on collateral less what it holds (deposits − withdrawals), capped at
// market.MaxMicros. A service that must not see a deposit rejected half-way through
// a request checks it first.
func (e *Engine) DepositRoom() market.Micros {
	return min(maxTotal-e.net, market.MaxMicros)
}

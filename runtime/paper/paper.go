package paper

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// DefaultBalance is the paper account's starting collateral when Config.Balance is
// zero.
const DefaultBalance = 1000 * market.One

// MarketSource gives market metadata: the live venue's catalogue (read only).
type MarketSource interface {
	Markets(ctx context.Context, ids []market.ConditionID) ([]market.Info, error)
}

// Config configures a paper venue. The zero value is usable except for Address.
type Config struct {
	// Address is the paper wallet's address (the owner of its orders). Required.
	Address market.Address
	// Balance is the starting collateral. If zero, DefaultBalance (1000).
	Balance market.Micros
	// Latency is how long, in event time, an order takes to reach the paper book
	// after the event that caused it. If zero, it arrives at once.
	Latency time.Duration
}

// Venue is the paper venue. Create it with New.
type Venue struct {
	cfg  Config
	src  MarketSource
	emit func(*market.Event)

	now     int64 // event time, Unix ms
	markets map[market.ConditionID]*market.Info
	tokens  map[market.TokenID]tokenRef
	books   map[market.TokenID]*market.Book

	balance  market.Micros // available collateral
	reserved market.Micros // collateral reserved by open buys
	pos      map[market.TokenID]*holding
	orders   []*order // open, in placement order
	byID     map[market.OrderID]*order
	final    map[market.OrderID]market.Order // recent final orders, for Order and duplicates
	finals   []market.OrderID                // ring of the final ids in v.final, at most maxFinal
	finalAt  int                             // the ring's oldest entry once it is full
	trades   uint64
	scratch  []market.Level
	ev       market.Event  // the event being emitted (emit copies it)
	recent   [2]recentBook // the books found last (lookup)
	next     int           // the entry of recent to replace next
}

// recentBook is a book found by lookup, kept with its token: books are never
// removed or replaced, so the pair stays true.
type recentBook struct {
	token market.TokenID
	book  *market.Book
}

type tokenRef struct {
	info    *market.Info
	outcome market.Outcome
}

// holding is one token of the paper account: the position with its cost basis and
// the part reserved by open sells.
type holding struct {
	market.Position
	reserved market.Micros
}

// order is one open paper order.
type order struct {
	market.Order
	arrival  int64 // event time it reaches the book
	active   bool
	ahead    market.Micros // queue ahead at its level
	reserved market.Micros // collateral (buy) or tokens (sell) still reserved
}

var (
	_ agent.Venue       = (*Venue)(nil)
	_ agent.Synchronous = (*Venue)(nil)
	_ agent.Simulator   = (*Venue)(nil)
	_ agent.Persistent  = (*Venue)(nil)
	_ agent.Merger      = (*Venue)(nil)
	_ agent.Redeemer    = (*Venue)(nil)
)

// New returns a paper venue with cfg's starting balance, taking market metadata
// from src.
func New(cfg Config, src MarketSource) (*Venue, error) {
	if cfg.Address.IsZero() {
		return nil, errors.New("paper: no wallet address")
	}
	if cfg.Balance < 0 || cfg.Latency < 0 {
		return nil, errors.New("paper: negative balance or latency")
	}
	if cfg.Balance == 0 {
		cfg.Balance = DefaultBalance
	}
	return &Venue{cfg: cfg, src: src, emit: func(*market.Event) {}, balance: cfg.Balance,
		markets: map[market.ConditionID]*market.Info{}, tokens: map[market.TokenID]tokenRef{},
		books: map[market.TokenID]*market.Book{}, pos: map[market.TokenID]*holding{},
		byID: map[market.OrderID]*order{}, final: map[market.OrderID]market.Order{}}, nil
}

// Synchronous implements agent.Synchronous: every call is in process.
func (v *Venue) Synchronous() bool { return true }

// Attach implements agent.Simulator.
func (v *Venue) Attach(emit func(*market.Event)) {
	if emit != nil {
		v.emit = emit
	}
}

// Markets implements agent.Venue: the source's metadata, remembered for validation.
func (v *Venue) Markets(ctx context.Context, ids []market.ConditionID) ([]market.Info, error) {
	infos, err := v.src.Markets(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range infos {
		v.learn(infos[i])
	}
	return infos, nil
}

func (v *Venue) learn(info market.Info) {
	m := v.markets[info.Condition]
	if m == nil {
		m = new(market.Info)
		v.markets[info.Condition] = m
	}
	*m = info
	for o, t := range info.Tokens {
		v.tokens[t] = tokenRef{info: m, outcome: market.Outcome(o)}
	}
}

// Account implements agent.Venue. Positions carry their cost basis.
func (v *Venue) Account(context.Context) (agent.Account, error) {
	a := agent.Account{Address: v.cfg.Address, Balance: v.balance, Reserved: v.reserved, Mode: market.ModeNormal}
	for _, t := range v.sortedTokens() {
		h := v.pos[t]
		if h.Size > 0 || h.Realized != 0 || h.Fees != 0 {
			a.Positions = append(a.Positions, h.Position)
		}
	}
	return a, nil
}

// OpenOrders implements agent.Venue, in placement order.
func (v *Venue) OpenOrders(context.Context) ([]market.Order, error) {
	out := make([]market.Order, 0, len(v.orders))
	for _, o := range v.orders {
		out = append(out, o.Order)
	}
	return out, nil
}

// Order implements agent.Venue.
func (v *Venue) Order(_ context.Context, id market.OrderID) (market.Order, error) {
	if o := v.byID[id]; o != nil {
		return o.Order, nil
	}
	if o, ok := v.final[id]; ok {
		return o, nil
	}
	return market.Order{}, market.ErrUnknownOrder
}

// Heartbeat implements agent.Venue. The paper book lives and dies with the agent's
// process, so there is nothing to keep alive.
func (v *Venue) Heartbeat(context.Context) error { return nil }

// Prepare implements agent.Venue: the id is agent.DeriveOrderID(address, req.ClientID).
func (v *Venue) Prepare(_ context.Context, req agent.OrderRequest) (agent.PreparedOrder, error) {
	return agent.PreparedOrder{ID: agent.DeriveOrderID(v.cfg.Address, req.ClientID), Request: req}, nil
}

// Submit implements agent.Venue.
func (v *Venue) Submit(_ context.Context, p *agent.PreparedOrder) (market.Order, error) {
	q := &p.Request
	if _, ok := v.byID[p.ID]; ok {
		return market.Order{}, market.Errorf(market.CodeDuplicated, string(p.ID))
	}
	if _, ok := v.final[p.ID]; ok {
		return market.Order{}, market.Errorf(market.CodeDuplicated, string(p.ID))
	}
	ref, ok := v.tokens[q.Token]
	if !ok {
		return market.Order{}, market.ErrNoOrderbook
	}
	m := ref.info
	if q.Time > v.now {
		v.now = q.Time
	}
	if err := v.validate(p.ID, q, m); err != nil {
		return market.Order{}, err
	}
	o := &order{Order: market.Order{ID: p.ID, Owner: v.cfg.Address, Market: m.Condition, Token: q.Token,
		Outcome: ref.outcome, Side: q.Side, Price: q.Price, Size: q.Size, Type: q.Type, PostOnly: q.PostOnly,
		Expiration: q.Expiration, CreatedAt: v.now, Status: market.StatusLive}}
	o.arrival = v.now + v.cfg.Latency.Milliseconds()
	if q.Time > 0 {
		o.arrival = q.Time + v.cfg.Latency.Milliseconds()
	}
	// Reserve what the order may need.
	if q.Side == market.Buy {
		n, _ := market.Notional(q.Price, q.Size)
		need := n
		if v.crosses(o) {
			need += market.TakerFeeBound(m.FeeBps, q.Price, q.Size)
		}
		if need > v.balance {
			return market.Order{}, market.ErrInsufficientBalance
		}
		o.reserved = n
		v.balance -= n
		v.reserved += n
	} else {
		h := v.pos[q.Token]
		if h == nil || h.Size-h.reserved < q.Size {
			return market.Order{}, market.ErrInsufficientBalance
		}
		o.reserved = q.Size
		h.reserved += q.Size
	}
	if o.arrival <= v.now {
		// Arrives at once: FOK, FAK and post-only are decided now.
		if err := v.precheck(o, m); err != nil {
			v.release(o)
			return market.Order{}, err
		}
	}
	v.orders = append(v.orders, o)
	v.byID[o.ID] = o
	v.emitOrder(o, market.OrderPlacement)
	if o.arrival <= v.now {
		v.arrive(o)
	}
	return o.Order, nil
}

// validate checks a request as the venue would, in the exchange core's order.
func (v *Venue) validate(id market.OrderID, q *agent.OrderRequest, m *market.Info) error {
	switch {
	case !q.Side.Valid() || !q.Type.Valid():
		return market.ErrInvalidOrderPayload
	case m.Resolved:
		return market.ErrMarketResolved
	case !m.Tradable():
		return market.ErrMarketNotAccepting
	case q.PostOnly && !q.Type.Rests():
		return market.ErrInvalidOrderPayload
	case !m.OnTick(q.Price):
		return market.Errorf(market.CodeTickSize, string(id), q.Price.String(), m.TickSize.String())
	case q.Size <= 0 || q.Size > market.MaxMicros:
		return market.ErrInvalidAmount
	case q.Size%market.Lot != 0:
		return market.Errorf(market.CodeAmountNotExact, q.Size.String())
	case q.Type.Rests() && q.Size < m.MinSize:
		return market.Errorf(market.CodeMinSize, string(id), q.Size.String(), m.MinSize.String())
	case q.Type == market.GTD && (q.Expiration <= 0 || q.Expiration*1000 < v.now):
		return market.ErrInvalidExpiration
	case q.Type != market.GTD && q.Expiration != 0:
		return market.ErrInvalidExpiration
	}
	return nil
}

// precheck decides, for an order arriving now, what the venue decides at
// acceptance: post-only crossing, FOK fillable, FAK has a match.
func (v *Venue) precheck(o *order, m *market.Info) error {
	switch {
	case o.PostOnly && v.crosses(o):
		return market.ErrPostOnlyCrosses
	case o.Type == market.FOK && v.available(o) < o.Size:
		return market.ErrFOKNotFilled
	case o.Type == market.FAK && !v.crosses(o):
		return market.ErrFAKNoMatch
	}
	return nil
}

// Cancel implements agent.Venue.
func (v *Venue) Cancel(_ context.Context, id market.OrderID) error {
	o := v.byID[id]
	if o == nil {
		if f, ok := v.final[id]; ok {
			if f.Status == market.StatusMatched {
				return market.Errorf(market.CodeAlreadyMatchedOrCxl)
			}
			return market.Errorf(market.CodeAlreadyCanceled)
		}
		return market.ErrUnknownOrder
	}
	v.close(o, market.StatusCanceled)
	return nil
}

// CancelAll implements agent.Venue.
func (v *Venue) CancelAll(_ context.Context, m market.ConditionID) error {
	for _, o := range append([]*order(nil), v.orders...) {
		if m == "" || o.Market == m {
			v.close(o, market.StatusCanceled)
		}
	}
	return nil
}

// ObserveMarket implements agent.Simulator: the paper book follows the market.
func (v *Venue) ObserveMarket(ev *market.Event) {
	if ev.Time > v.now {
		v.now = ev.Time
	}
	v.expire()
	v.arrivals()
	switch ev.Kind {
	case market.EventBook:
		b := v.book(ev.Token)
		b.Reset(ev.Bids, ev.Asks)
		v.levelsChanged(ev.Token, b)
	case market.EventPriceChange:
		// The book of the change before, while the changes name the same token (a
		// price_change is nearly always one token's): one lookup per run.
		var b *market.Book
		var bt market.TokenID
		for i := range ev.Changes {
			c := &ev.Changes[i]
			tok := c.Token
			if tok == "" {
				tok = ev.Token
			}
			if b == nil || !market.Same(tok, bt) {
				b, bt = v.book(tok), tok
			}
			b.Set(c.Side, c.Price, c.Size)
			// Each change in order: a level that empties and refills (a cancel and
			// a re-quote) puts those orders behind ours.
			for _, o := range v.orders {
				if o.active && market.Same(o.Token, tok) && o.Side == c.Side && o.Price == c.Price && c.Size < o.ahead {
					o.ahead = c.Size
				}
			}
		}
		for i := range ev.Changes {
			tok := ev.Changes[i].Token
			if tok == "" {
				tok = ev.Token
			}
			if i == 0 || !market.Same(tok, ev.Changes[i-1].Token) {
				v.levelsChanged(tok, v.lookup(tok))
			}
		}
	case market.EventLastTrade:
		v.traded(ev.Token, ev.Price, ev.Size, ev.Side)
	case market.EventTickSize:
		if ref, ok := v.tokens[ev.Token]; ok && ev.NewTick > 0 {
			ref.info.TickSize = ev.NewTick
		} else if m := v.markets[ev.Market]; m != nil && ev.NewTick > 0 {
			m.TickSize = ev.NewTick
		}
	case market.EventResolved:
		v.resolve(ev)
	}
}

// lookup returns token t's book, nil if it has none yet. The two books found last
// are remembered, so that the events of one market (its two tokens) cost no lookups
// by token id.
func (v *Venue) lookup(t market.TokenID) *market.Book {
	for i := range v.recent {
		if r := &v.recent[i]; r.book != nil && market.Same(r.token, t) {
			return r.book
		}
	}
	b := v.books[t]
	if b != nil {
		v.recent[v.next] = recentBook{token: t, book: b}
		v.next ^= 1
	}
	return b
}

func (v *Venue) book(t market.TokenID) *market.Book {
	b := v.lookup(t)
	if b == nil {
		b = &market.Book{Token: t}
		v.books[t] = b
	}
	return b
}

// expire closes GTD orders whose expiration event time has passed.
func (v *Venue) expire() {
	for i := 0; i < len(v.orders); i++ {
		o := v.orders[i]
		if o.Type == market.GTD && o.Expiration > 0 && v.now > o.Expiration*1000 {
			v.close(o, market.StatusExpired)
			i--
		}
	}
}

// arrivals puts orders whose latency has passed on the book.
func (v *Venue) arrivals() {
	for i := 0; i < len(v.orders); i++ {
		o := v.orders[i]
		if !o.active && o.arrival <= v.now {
			m := v.tokens[o.Token].info
			if err := v.precheck(o, m); err != nil {
				v.close(o, market.StatusCanceled)
				i--
				continue
			}
			if v.arrive(o) {
				i--
			}
		}
	}
}

// arrive puts o on the paper book: it takes what it crosses, then rests (with its
// queue ahead) or, for FOK/FAK, ends. It reports whether o left the open orders.
func (v *Venue) arrive(o *order) bool {
	o.active = true
	v.take(o)
	if o.Remaining() <= 0 {
		return true // closed by its last fill
	}
	if !o.Type.Rests() {
		v.close(o, market.StatusCanceled) // FAK rest
		return true
	}
	o.ahead = v.book(o.Token).SizeAt(o.Side, o.Price)
	return false
}

// crosses reports whether o's price meets the opposite side of its token's mirror.
func (v *Venue) crosses(o *order) bool {
	return crossesBook(o, v.lookup(o.Token))
}

// crossesBook reports whether o's price meets the opposite side of b, its token's
// mirror (nil while it has none).
func crossesBook(o *order, b *market.Book) bool {
	if b == nil {
		return false
	}
	if o.Side == market.Buy {
		l, ok := b.BestAsk()
		return ok && l.Price <= o.Price
	}
	l, ok := b.BestBid()
	return ok && l.Price >= o.Price
}

// available is the opposite size o can take within its limit.
func (v *Venue) available(o *order) market.Micros {
	b := v.lookup(o.Token)
	if b == nil {
		return 0
	}
	var sum market.Micros
	for _, l := range v.opposite(b, o.Side) {
		if !v.within(o, l.Price) {
			break
		}
		sum += l.Size
	}
	return sum
}

func (v *Venue) opposite(b *market.Book, s market.Side) []market.Level {
	if s == market.Buy {
		return b.Asks
	}
	return b.Bids
}

func (v *Venue) within(o *order, px market.Micros) bool {
	if o.Side == market.Buy {
		return px <= o.Price
	}
	return px >= o.Price
}

// take fills o as a taker against the opposite side of its mirror, removing what it
// takes from the mirror.
func (v *Venue) take(o *order) {
	b := v.lookup(o.Token)
	if b == nil {
		return
	}
	v.sweep(o, b, market.Taker, v.tokens[o.Token].info)
}

// sweep fills o against the opposite side of its mirror b, best level first, while
// a level is within o's price and o has a lot left, removing what it takes from b.
// As the taker o fills at each level's price and pays the taker fee of its market m;
// as the maker (the opposite side moved through its resting price; m unused) it
// fills at its own price, first in its queue, without a fee.
func (v *Venue) sweep(o *order, b *market.Book, role market.Role, m *market.Info) {
	v.scratch = append(v.scratch[:0], v.opposite(b, o.Side)...)
	for _, l := range v.scratch {
		if o.Remaining() <= 0 || !v.within(o, l.Price) {
			break
		}
		n := min(o.Remaining(), l.Size)
		n -= n % market.Lot
		if n <= 0 {
			break
		}
		b.Set(o.Side.Opposite(), l.Price, l.Size-n)
		if role == market.Maker {
			o.ahead = 0
			v.fill(o, o.Price, n, 0, market.Maker)
		} else {
			v.fill(o, l.Price, n, market.TakerFee(m.FeeBps, l.Price, n), market.Taker)
		}
	}
}

// levelsChanged re-checks the resting orders of token t after its mirror b (nil
// while t has none) changed: queue ahead shrinks to the visible size, and an
// opposite side that moved through an order's price fills it.
func (v *Venue) levelsChanged(t market.TokenID, b *market.Book) {
	if b == nil {
		return
	}
	for i := 0; i < len(v.orders); i++ {
		o := v.orders[i]
		if !o.active || !market.Same(o.Token, t) {
			continue
		}
		if vis := b.SizeAt(o.Side, o.Price); vis < o.ahead {
			o.ahead = vis
		}
		if !crossesBook(o, b) {
			continue
		}
		// The opposite side reached our price: the venue would have matched us as
		// the maker, at our price, before anything behind us.
		v.sweep(o, b, market.Maker, nil)
		if o.Status.Final() {
			i--
		}
	}
}

// traded applies a trade printed on token t at price px for size n, taker side
// taker, to the resting orders of t.
func (v *Venue) traded(t market.TokenID, px, n market.Micros, taker market.Side) {
	left := n
	for i := 0; i < len(v.orders) && left > 0; i++ {
		o := v.orders[i]
		if !o.active || !market.Same(o.Token, t) || o.Side == taker {
			continue // only a taker of the other side trades with a resting order
		}
		var fill market.Micros
		switch {
		case o.Side == market.Buy && px < o.Price, o.Side == market.Sell && px > o.Price:
			fill = min(o.Remaining(), left) // swept through our level
			o.ahead = 0
		case px == o.Price:
			if o.ahead >= left {
				o.ahead -= left
				continue
			}
			fill = min(o.Remaining(), left-o.ahead)
			o.ahead = 0
		default:
			continue
		}
		fill -= fill % market.Lot
		if fill <= 0 {
			continue
		}
		left -= fill
		v.fill(o, o.Price, fill, 0, market.Maker)
		if o.Status.Final() {
			i--
		}
	}
}

// fill books one fill of o at price px for n shares with fee, and emits it.
func (v *Venue) fill(o *order, px, n, fee market.Micros, role market.Role) {
	cost, _ := market.Notional(px, n)
	h := v.holding(o)
	if o.Side == market.Buy {
		reservedPart, _ := market.Notional(o.Price, n)
		reservedPart = min(reservedPart, o.reserved)
		o.reserved -= reservedPart
		v.reserved -= reservedPart
		v.balance += reservedPart - cost - fee
		h.Buy(px, n, fee)
	} else {
		o.reserved -= n
		h.reserved -= n
		h.Sell(px, n, fee)
		v.balance += cost - fee
	}
	o.Matched += n
	v.trades++
	v.ev = market.Event{Kind: market.EventFill, Time: v.now, Market: o.Market, Token: o.Token,
		Fill: market.Fill{Trade: market.TradeID("paper-" + strconv.FormatUint(v.trades, 10)), Order: o.ID,
			Owner: o.Owner, Market: o.Market, Token: o.Token, Outcome: o.Outcome, Side: o.Side, Role: role,
			Price: px, Size: n, Fee: fee, Time: v.now}}
	v.emit(&v.ev)
	if o.Remaining() <= 0 {
		v.close(o, market.StatusMatched)
		return
	}
	v.emitOrder(o, market.OrderUpdated)
}

func (v *Venue) holding(o *order) *holding {
	h := v.pos[o.Token]
	if h == nil {
		h = &holding{Position: market.Position{Market: o.Market, Token: o.Token, Outcome: o.Outcome}}
		v.pos[o.Token] = h
	}
	return h
}

// close ends o with status st: its reservation is released and it is reported.
func (v *Venue) close(o *order, st market.OrderStatus) {
	v.release(o)
	o.Status = st
	for i, x := range v.orders {
		if x == o {
			copy(v.orders[i:], v.orders[i+1:])
			v.orders[len(v.orders)-1] = nil
			v.orders = v.orders[:len(v.orders)-1]
			break
		}
	}
	delete(v.byID, o.ID)
	v.remember(o.Order)
	u := market.OrderCancellation
	if st == market.StatusMatched {
		u = market.OrderUpdated
	}
	v.emitOrder(o, u)
}

// maxFinal bounds the final orders the venue remembers (for Order lookups and
// duplicate submissions): a long backtest must not grow without bound. Ids are
// unique per client id, so forgetting old final orders loses nothing a caller can
// still ask about in practice.
const maxFinal = 4096

func (v *Venue) remember(o market.Order) {
	if _, ok := v.final[o.ID]; !ok {
		if len(v.finals) < maxFinal {
			v.finals = append(v.finals, o.ID)
		} else {
			delete(v.final, v.finals[v.finalAt])
			v.finals[v.finalAt] = o.ID
			v.finalAt = (v.finalAt + 1) % maxFinal
		}
	}
	v.final[o.ID] = o
}

func (v *Venue) release(o *order) {
	if o.reserved == 0 {
		return
	}
	if o.Side == market.Buy {
		v.reserved -= o.reserved
		v.balance += o.reserved
	} else if h := v.pos[o.Token]; h != nil {
		h.reserved -= o.reserved
	}
	o.reserved = 0
}

func (v *Venue) emitOrder(o *order, u market.OrderUpdate) {
	v.ev = market.Event{Kind: market.EventOrder, Time: v.now, Market: o.Market, Token: o.Token, Order: o.Order, OrderUpdate: u}
	v.emit(&v.ev)
}

// resolve marks a market resolved: open orders there are cancelled; the holdings
// stay until redeemed (Redeem), as on the venue.
func (v *Venue) resolve(ev *market.Event) {
	m := v.markets[ev.Market]
	if m == nil {
		if ref, ok := v.tokens[ev.Winner]; ok {
			m = ref.info
		}
	}
	if m == nil {
		return
	}
	for _, o := range append([]*order(nil), v.orders...) {
		if o.Market == m.Condition {
			v.close(o, market.StatusCanceled)
		}
	}
	m.Resolved, m.AcceptingOrders = true, false
	if o, ok := m.OutcomeOf(ev.Winner); ok {
		m.Winner = o
	}
}

// Redeem implements agent.Redeemer: the holdings of resolved market m are redeemed,
// each winning share for one unit of collateral, the losing ones for nothing (both
// close at their payout, market.Position.Settle). It refuses an unknown market
// (market.ErrMarketNotFound), one not resolved yet (market.CodeMarketNotResolved)
// and one where nothing is held (market.CodeNothingToRedeem), changing nothing.
func (v *Venue) Redeem(_ context.Context, m market.ConditionID) error {
	info := v.markets[m]
	switch {
	case info == nil:
		return fmt.Errorf("paper: redeem: %w", market.ErrMarketNotFound)
	case !info.Resolved:
		return fmt.Errorf("paper: redeem: %w", market.Errorf(market.CodeMarketNotResolved, string(m)))
	}
	held := false
	for _, t := range info.Tokens {
		if h := v.pos[t]; h != nil && h.Size > 0 {
			held = true
		}
	}
	if !held {
		return fmt.Errorf("paper: redeem: %w", market.Errorf(market.CodeNothingToRedeem, string(m)))
	}
	for o, t := range info.Tokens {
		if h := v.pos[t]; h != nil && h.Size > 0 {
			won := market.Outcome(o) == info.Winner
			if won {
				v.balance += h.Size
			}
			h.Settle(won)
			h.reserved = 0
		}
	}
	return nil
}

// Merge implements agent.Merger: size complete sets of market m (shares of both
// tokens not reserved by open sells) are burned for size of collateral, each token
// sold for half of it (market.MergeSets). It refuses an unknown market
// (market.ErrMarketNotFound) and more sets than are free
// (market.ErrInsufficientBalance), changing nothing.
func (v *Venue) Merge(_ context.Context, m market.ConditionID, size market.Micros) error {
	info := v.markets[m]
	if info == nil {
		return fmt.Errorf("paper: merge: %w", market.ErrMarketNotFound)
	}
	yes, no := v.pos[info.Tokens[market.Yes]], v.pos[info.Tokens[market.No]]
	if yes == nil || no == nil || size <= 0 || size > yes.Size-yes.reserved || size > no.Size-no.reserved {
		return fmt.Errorf("paper: merge of %s sets: %w", size, market.ErrInsufficientBalance)
	}
	market.MergeSets(&yes.Position, &no.Position, size)
	v.balance += size
	return nil
}

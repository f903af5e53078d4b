package data

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// ExtensionName is the name of the index among the host's extensions. It appears in
// journals and snapshots and never changes.
const ExtensionName = "data"

// DefaultMaxActivity is the number of activity rows kept per wallet when
// Config.MaxActivity is zero.
const DefaultMaxActivity = 200_000

// Config configures an Index. The zero value is usable: no catalogue, the wall
// clock, no excluded account, DefaultMaxActivity.
type Config struct {
	// Catalog adds titles, icons and event slugs and ids to rows. If nil, rows carry
	// only what the exchange listing holds (question, slug, outcomes, end date).
	Catalog *catalog.Catalog
	// Clock returns now in Unix milliseconds; it ends the leaderboard's windows and
	// the markets' 24-hour volume. If nil, the wall clock. Tests inject one.
	Clock func() int64
	// Exclude lists accounts left out of leaderboards (the exchange's fee account,
	// the bridge's fee sink).
	Exclude []market.Address
	// MaxActivity bounds the activity rows kept per wallet: beyond it the oldest
	// quarter is dropped (all-time totals are kept; windowed leaderboard figures
	// then start at the oldest kept row). If zero, DefaultMaxActivity; negative
	// keeps everything.
	MaxActivity int
}

// Index is the data service's view of the exchange: every wallet's positions with
// their cost basis (market.Position accounting, from fills, splits, merges and
// redemptions), its activity as one chronological stream, and per-market marks and
// volume. It is a sandbox/host Extension: the host calls Observe with every command's
// events on the engine goroutine (live and during recovery) and snapshots it with the
// engine, so it is always consistent with the ledger and survives restarts without a
// separate store (docs/design/0091-data-index.md).
//
// Methods are safe for concurrent use: the host's goroutine writes under a lock,
// queries read under a read lock and copy what they return, and long scans run on
// append-only slices outside the lock.
type Index struct {
	cfg     Config
	exclude map[market.Address]bool
	catalog atomic.Pointer[catalog.Catalog]

	mu      sync.RWMutex
	markets []*mkt
	byCond  map[market.ConditionID]*mkt
	byToken map[market.TokenID]tokenRef
	users   map[market.Address]*user
	last    int64 // time of the last event applied (Unix ms)
	// unknownCost counts shares sold, merged or redeemed that the index never saw
	// acquired (an index added to an existing store): they get a zero cost basis.
	unknownCost market.Micros
}

type tokenRef struct {
	m *mkt
	o market.Outcome
}

// mkt is what the index knows of a market.
type mkt struct {
	idx       int32
	cond      market.ConditionID
	question  string
	slug      string
	outcomes  [2]string
	tokens    [2]market.TokenID
	endDate   int64
	negRisk   bool
	resolved  bool
	winner    market.Outcome
	bestBid   market.Micros // YES book, after the last command; 0 when empty
	bestAsk   market.Micros
	last      market.Micros // YES price of the last fill
	hasLast   bool
	volume    market.Micros // Σ taker collateral of the market's trades
	trades    int64
	hourVol   [24]market.Micros // taker collateral per hour of the last 24 (ring)
	hourOf    [24]int64         // the hour (Unix ms / 3.6e6) each slot holds
	holders   []*user           // wallets that ever held one of its tokens, first-seen order
	holderSet map[market.Address]bool
}

// user is one wallet.
type user struct {
	addr     market.Address
	pos      map[market.TokenID]*holding
	posOrder []market.TokenID // creation order
	rows     []row            // chronological; append-only (retention replaces the slice)
	dropped  int64            // rows dropped by retention
	vol      market.Micros    // Σ trade collateral, all time
	realized market.Micros    // Σ realized PnL, all time
	trades   int64
}

// holding is a wallet's position in one token plus what it ever paid for it (the
// base of percentRealizedPnl: the cost of what was sold is invested − Cost).
type holding struct {
	market.Position
	invested market.Micros
}

func (h *holding) buy(size, notional, fee market.Micros) {
	if h.BuyCost(size, notional, fee) {
		h.invested += notional + fee
	}
}

// Row kinds (activity types the exchange produces).
const (
	kindTrade uint8 = iota + 1
	kindSplit
	kindMerge
	kindRedeem
	kindConversion
)

// row is one activity of a wallet.
type row struct {
	time     int64  // Unix ms
	ref      uint64 // trade number (trades) or event sequence (others): the hash input
	mkt      int32  // index in Index.markets
	kind     uint8
	side     market.Side
	outcome  market.Outcome
	price    market.Micros // trades: price in the row's token (taker: average)
	size     market.Micros // shares
	cash     market.Micros // collateral
	realized market.Micros // PnL realized by this row
}

// New returns an empty index.
func New(cfg Config) *Index {
	if cfg.Clock == nil {
		cfg.Clock = func() int64 { return time.Now().UnixMilli() }
	}
	if cfg.MaxActivity == 0 {
		cfg.MaxActivity = DefaultMaxActivity
	}
	ix := &Index{cfg: cfg, exclude: map[market.Address]bool{}}
	for _, a := range cfg.Exclude {
		ix.exclude[a] = true
	}
	ix.catalog.Store(cfg.Catalog)
	ix.reset()
	return ix
}

// SetCatalog replaces the catalogue that rows are enriched from (Config.Catalog): for
// wiring that registers the index with the host before the catalogue is known. Safe
// for concurrent use.
func (ix *Index) SetCatalog(c *catalog.Catalog) { ix.catalog.Store(c) }

func (ix *Index) reset() {
	ix.markets = nil
	ix.byCond = map[market.ConditionID]*mkt{}
	ix.byToken = map[market.TokenID]tokenRef{}
	ix.users = map[market.Address]*user{}
	ix.last = 0
	ix.unknownCost = 0
}

// Name implements host.Extension.
func (ix *Index) Name() string { return ExtensionName }

// errNoRecords: the index writes no records of its own.
var errNoRecords = errors.New("data: the index has no records")

// ApplyRecord implements host.Extension; the index keeps no records of its own (all
// it knows comes from events), so any record is refused.
func (ix *Index) ApplyRecord([]byte) error { return errNoRecords }

// relevant reports whether an event kind changes the index.
func relevant(k exchange.EventKind) bool {
	switch k {
	case exchange.MarketCreated, exchange.MarketUpdated, exchange.MarketResolved, exchange.BookChanged,
		exchange.OrderFilled, exchange.TradeExecuted, exchange.PositionsSplit, exchange.PositionsMerged,
		exchange.Redeemed, exchange.Converted, exchange.Swapped:
		return true
	}
	return false
}

// Observe implements host.Extension: it applies a command's events. It is
// deterministic and takes the write lock only when an event matters.
func (ix *Index) Observe(cmd *exchange.Command, events []exchange.Event) {
	i := 0
	for i < len(events) && !relevant(events[i].Kind) {
		i++
	}
	if i == len(events) {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for ; i < len(events); i++ {
		ix.apply(cmd, &events[i])
	}
	if cmd.Kind == exchange.Convert {
		ix.converted(events)
	}
}

// converted books a neg-risk conversion (a Converted event): the NO tokens leave
// the position of their market, their cost basis moves in equal parts to the YES
// tokens credited in the event's other markets (the BalanceChanged events of the
// same command name them) — a conversion exchanges equal values, so it realizes
// nothing — and a CONVERSION row is added.
func (ix *Index) converted(events []exchange.Event) {
	k := slices.IndexFunc(events, func(ev exchange.Event) bool { return ev.Kind == exchange.Converted })
	if k < 0 {
		return
	}
	ev := &events[k]
	m := ix.byCond[ev.Market]
	if m == nil || ev.Amount <= 0 {
		return
	}
	var credited []*mkt
	for i := k + 1; i < len(events); i++ {
		b := &events[i]
		if b.Kind == exchange.BalanceChanged && b.Owner == ev.Owner && b.Token != "" && b.Outcome == market.Yes && b.Market != ev.Market {
			if cm := ix.byCond[b.Market]; cm != nil {
				credited = append(credited, cm)
			}
		}
	}
	u := ix.user(ev.Owner)
	no := u.position(m, market.No)
	if ev.Amount > no.Size { // shares the index never saw acquired: zero cost, as sell books them
		ix.unknownCost += ev.Amount - no.Size
		no.buy(ev.Amount-no.Size, 0, 0)
	}
	cost, _ := market.MulDiv(no.Cost, ev.Amount, no.Size)
	ix.sell(no, ev.Amount, cost, 0)
	for i, cm := range credited {
		part := cost / market.Micros(len(credited))
		if i == 0 {
			part += cost % market.Micros(len(credited))
		}
		u.position(cm, market.Yes).buy(ev.Amount, part, 0)
	}
	ix.addRow(u, row{time: ev.Time, ref: ev.Seq, mkt: m.idx, kind: kindConversion, outcome: market.No, size: ev.Amount})
}

func (ix *Index) apply(cmd *exchange.Command, ev *exchange.Event) {
	if ev.Time > ix.last {
		ix.last = ev.Time
	}
	switch ev.Kind {
	case exchange.MarketCreated:
		if cmd.Kind != exchange.CreateMarket || cmd.Market != ev.Market || ix.byCond[ev.Market] != nil {
			return
		}
		m := &mkt{idx: int32(len(ix.markets)), cond: ev.Market, tokens: cmd.Spec.Tokens, negRisk: cmd.Spec.NegRisk,
			holderSet: map[market.Address]bool{}}
		m.describe(&cmd.Spec)
		ix.markets = append(ix.markets, m)
		ix.byCond[m.cond] = m
		ix.byToken[m.tokens[market.Yes]] = tokenRef{m, market.Yes}
		ix.byToken[m.tokens[market.No]] = tokenRef{m, market.No}
	case exchange.MarketUpdated:
		if m := ix.byCond[ev.Market]; m != nil && cmd.Kind == exchange.UpdateMarket && cmd.Market == ev.Market {
			m.describe(&cmd.Spec)
		}
	case exchange.MarketResolved:
		if m := ix.byCond[ev.Market]; m != nil {
			m.resolved, m.winner = true, ev.Outcome
		}
	case exchange.BookChanged:
		if m := ix.byCond[ev.Market]; m != nil {
			m.bestBid, m.bestAsk = ev.BestBid, ev.BestAsk
		}
	case exchange.OrderFilled:
		m := ix.byCond[ev.Market]
		if m == nil {
			return
		}
		m.last, m.hasLast = yesPrice(ev.Outcome, ev.Price), true
		ix.trade(m, ev, ev.Price)
	case exchange.TradeExecuted:
		m := ix.byCond[ev.Market]
		if m == nil || ev.Size <= 0 {
			return
		}
		m.traded(ev)
		avg, _ := market.MulDiv(ev.Amount, market.One, ev.Size)
		ix.trade(m, ev, avg)
	case exchange.Swapped:
		// A negotiated (RFQ) trade: the buyer (To) buys and the seller (Owner) sells
		// Size at the swap's price, no fee; it counts in the market's volume like a
		// match but does not move its mark (it is off the book).
		m := ix.byCond[ev.Market]
		if m == nil || ev.Size <= 0 {
			return
		}
		m.traded(ev)
		buy, sell := *ev, *ev
		buy.Owner, buy.Side, sell.Side = ev.To, market.Buy, market.Sell
		ix.trade(m, &buy, ev.Price)
		ix.trade(m, &sell, ev.Price)
	case exchange.PositionsSplit:
		if m := ix.byCond[ev.Market]; m != nil && ev.Amount > 0 {
			u := ix.user(ev.Owner)
			half := ev.Amount / 2
			u.position(m, market.Yes).buy(ev.Amount, half, 0)
			u.position(m, market.No).buy(ev.Amount, ev.Amount-half, 0)
			ix.addRow(u, row{time: ev.Time, ref: ev.Seq, mkt: m.idx, kind: kindSplit, size: ev.Amount, cash: ev.Amount})
		}
	case exchange.PositionsMerged:
		if m := ix.byCond[ev.Market]; m != nil && ev.Amount > 0 {
			u := ix.user(ev.Owner)
			half := ev.Amount / 2
			r := ix.sell(u.position(m, market.Yes), ev.Amount, half, 0) +
				ix.sell(u.position(m, market.No), ev.Amount, ev.Amount-half, 0)
			u.realized += r
			ix.addRow(u, row{time: ev.Time, ref: ev.Seq, mkt: m.idx, kind: kindMerge, size: ev.Amount, cash: ev.Amount, realized: r})
		}
	case exchange.Redeemed:
		m := ix.byCond[ev.Market]
		if m == nil {
			return
		}
		u := ix.user(ev.Owner)
		won, ok := m.outcomeOf(ev.Token)
		if !ok {
			won = m.winner
		}
		var r market.Micros
		if ev.Amount > 0 {
			r += ix.sell(u.position(m, won), ev.Amount, ev.Amount, 0)
		}
		if ev.Size > 0 {
			r += ix.sell(u.position(m, won.Other()), ev.Size, 0, 0)
		}
		u.realized += r
		ix.addRow(u, row{time: ev.Time, ref: ev.Seq, mkt: m.idx, kind: kindRedeem, outcome: won,
			size: ev.Amount + ev.Size, cash: ev.Amount, realized: r})
	}
}

// trade books one fill of ev.Owner: a maker's OrderFilled or a taker's
// TradeExecuted, at price (the taker's average).
func (ix *Index) trade(m *mkt, ev *exchange.Event, price market.Micros) {
	u := ix.user(ev.Owner)
	p := u.position(m, ev.Outcome)
	var r market.Micros
	if ev.Side == market.Buy {
		p.buy(ev.Size, ev.Amount, ev.Fee)
	} else {
		r = ix.sell(p, ev.Size, ev.Amount, ev.Fee)
	}
	u.vol += ev.Amount
	u.realized += r
	u.trades++
	ix.addRow(u, row{time: ev.Time, ref: ev.Trade, mkt: m.idx, kind: kindTrade, side: ev.Side, outcome: ev.Outcome,
		price: price, size: ev.Size, cash: ev.Amount, realized: r})
}

// sell removes size shares from p for proceeds. Shares the index never saw acquired
// (it was added to an existing store) are first booked at zero cost, so sizes always
// match the ledger.
func (ix *Index) sell(p *holding, size, proceeds, fee market.Micros) market.Micros {
	if size > p.Size {
		missing := size - p.Size
		ix.unknownCost += missing
		p.buy(missing, 0, 0)
	}
	fee = min(fee, proceeds)
	r, _ := p.SellProceeds(size, proceeds, fee)
	return r
}

func (ix *Index) user(a market.Address) *user {
	u := ix.users[a]
	if u == nil {
		u = &user{addr: a, pos: map[market.TokenID]*holding{}}
		ix.users[a] = u
	}
	return u
}

func (u *user) position(m *mkt, o market.Outcome) *holding {
	t := m.tokens[o]
	p := u.pos[t]
	if p == nil {
		p = &holding{Position: market.Position{Market: m.cond, Token: t, Outcome: o}}
		u.pos[t] = p
		u.posOrder = append(u.posOrder, t)
		if !m.holderSet[u.addr] {
			m.holderSet[u.addr] = true
			m.holders = append(m.holders, u)
		}
	}
	return p
}

// addRow appends r, dropping the oldest quarter of the rows beyond MaxActivity. The
// kept rows are copied to a new array, so readers holding the old slice are safe.
func (ix *Index) addRow(u *user, r row) {
	if limit := ix.cfg.MaxActivity; limit > 0 && len(u.rows) >= limit {
		drop := max(len(u.rows)/4, 1)
		kept := make([]row, len(u.rows)-drop, limit)
		copy(kept, u.rows[drop:])
		u.rows = kept
		u.dropped += int64(drop)
	}
	u.rows = append(u.rows, r)
}

func (m *mkt) describe(s *exchange.MarketSpec) {
	m.question, m.slug, m.outcomes, m.endDate = s.Question, s.Slug, s.Outcomes, s.EndDate
}

func (m *mkt) outcomeOf(t market.TokenID) (market.Outcome, bool) {
	switch t {
	case m.tokens[market.Yes]:
		return market.Yes, true
	case m.tokens[market.No]:
		return market.No, true
	}
	return 0, false
}

const hourMs = 3_600_000

// traded counts a trade's collateral (a TradeExecuted's or a Swapped's Amount) in
// the market's volume, trades and the hour's volume.
func (m *mkt) traded(ev *exchange.Event) {
	m.volume += ev.Amount
	m.trades++
	m.addHourVolume(ev.Time, ev.Amount)
}

func (m *mkt) addHourVolume(t int64, amount market.Micros) {
	h := t / hourMs
	slot := int(h % 24)
	if m.hourOf[slot] != h {
		m.hourOf[slot], m.hourVol[slot] = h, 0
	}
	m.hourVol[slot] += amount
}

// volume24h returns the taker collateral of the last 24 hours before now (by hour).
func (m *mkt) volume24h(now int64) market.Micros {
	h := now / hourMs
	var v market.Micros
	for i := range m.hourVol {
		if m.hourOf[i] > h-24 && m.hourOf[i] <= h {
			v += m.hourVol[i]
		}
	}
	return v
}

// yesPrice converts a price of outcome o into the YES token's price.
func yesPrice(o market.Outcome, p market.Micros) market.Micros {
	if o == market.No {
		return market.One - p
	}
	return p
}

// MaxMarkSpread is the widest spread at which a token is marked at its midpoint;
// wider books are marked at the last trade (the service's display rule).
const MaxMarkSpread market.Micros = 100_000 // 0.10

// mark returns the YES token's current price and whether there is one: the
// midpoint when both sides are quoted and the spread is at most MaxMarkSpread, else
// the last trade, else the midpoint of a wide book.
func (m *mkt) mark() (market.Micros, bool) {
	both := m.bestBid > 0 && m.bestAsk > 0
	mid := (m.bestBid + m.bestAsk) / 2
	switch {
	case both && m.bestAsk-m.bestBid <= MaxMarkSpread:
		return mid, true
	case m.hasLast:
		return m.last, true
	case both:
		return mid, true
	}
	return 0, false
}

// price returns the current price of outcome o: 1 or 0 once resolved, otherwise
// the mark in o's terms.
func (m *mkt) price(o market.Outcome) (market.Micros, bool) {
	if m.resolved {
		if o == m.winner {
			return market.One, true
		}
		return 0, true
	}
	y, ok := m.mark()
	if !ok {
		return 0, false
	}
	if o == market.No {
		return market.One - y, true
	}
	return y, true
}

// priceFor returns the price a holding h of outcome o is valued at in rows: o's
// current price (see price), or h's average price when m has none.
func (m *mkt) priceFor(o market.Outcome, h *holding) market.Micros {
	if p, ok := m.price(o); ok {
		return p
	}
	return h.AvgPrice()
}

package exchange

import (
	"github.com/pitbossdev/pitboss/market"
)

// Config configures a new Engine. The zero value is valid.
type Config struct {
	// FeeAccount receives every taker fee as available collateral. It is an ordinary
	// account (it can withdraw) and part of the conservation invariant. If zero, fees
	// accrue to the zero address, which can hold and withdraw nothing but counts.
	FeeAccount market.Address

	// ForgetFinal, if true, drops the id of an order once it is final (filled,
	// cancelled, expired), so memory stays bounded by the open orders: a final order's
	// id may then be reused, and Cancel of it reports an unknown order. For backtests
	// and simulations whose ids are unique by construction. If false (the default and
	// the right choice for a server), every accepted id is remembered forever and a
	// resubmission is rejected as duplicated. It is part of the snapshot.
	ForgetFinal bool

	// Capacity hints: the engine pre-sizes its tables for this many open orders,
	// accounts and markets. They change no behaviour. If zero, small defaults.
	Orders, Accounts, Markets int
}

// Engine is the exchange core: markets, their books, the ledger and the clock, a
// deterministic state machine over Commands. The same sequence of commands always
// produces the same events and the same state, byte for byte.
//
// An Engine is not safe for concurrent use: it has a single writer (the goroutine that
// calls Apply), and views must be called by that goroutine too, or serialized with
// Apply by the caller. It reads no clock, does no I/O and uses no randomness. Create
// one with New or Restore; the zero Engine is not usable.
type Engine struct {
	cfg Config

	now    int64 // engine clock, Unix ms
	seq    uint64
	trades uint64
	net    market.Micros // deposits − withdrawals
	cmdNo  uint64        // commands applied since New/Restore (for dirty marks; not state)

	markets   []mkt
	marketIdx map[market.ConditionID]int32
	tokenIdx  denseTable // token → market*2 + outcome (lookupToken)
	groups    []negGroup // neg-risk events, creation order
	groupIdx  map[string]int32

	accts   []account
	acctIdx denseTable // address → account (lookupAccount)
	pos     []position
	posIdx  posTable // account, token → position (lookupPosition)
	seed    hashSeed // of the dense tables

	orders []order
	free   int32     // head of the free list of order slots (linked by next)
	live   liveTable // open orders (and the taker in flight) → slot
	index  idIndex   // every accepted id and its state (unless ForgetFinal)
	// admitted: Place trusts its caller to have refused every id accepted before
	// (SetAdmitted); not state, not in the snapshot.
	admitted bool
	expiry   []heapEntry

	events   []Event
	dirtyBal []balRef
	dirtyLvl []lvlRef
	scratch  []int32
}

// feeAccount is the account index of Config.FeeAccount: New creates it first and
// Restore checks that it comes first.
const feeAccount = 0

// maxTotal bounds the collateral in the system (deposits − withdrawals), so that no
// sum the ledger forms can overflow int64.
const maxTotal = market.Micros(1) << 61

// maxExpiration bounds a GTD expiration (Unix seconds) so that ×1000 never overflows.
const maxExpiration = int64(1) << 42

type mkt struct {
	id       market.ConditionID
	tokens   [2]market.TokenID
	question string
	slug     string
	outcomes [2]string
	endDate  int64

	tick    market.Micros
	minSize market.Micros
	feeBps  uint32
	negRisk bool

	active, closed, archived, accepting bool
	resolved                            bool
	winner                              market.Outcome

	unit   market.Micros // level granularity: the finest tick the market has had
	book   [2]bookSide   // YES book: [sideBid], [sideAsk]
	locked market.Micros // collateral backing outstanding complete sets (winning tokens after resolution)

	lastPx   market.Micros // last trade, YES price
	lastSide market.Side   // taker side of the last trade in YES terms; 0: none yet

	group int32 // index of its neg-risk event in Engine.groups; -1 for none

	open int32 // open orders (marketOrders lists them)
}

func (m *mkt) flags() MarketFlags {
	var f MarketFlags
	if m.active {
		f |= FlagActive
	}
	if m.closed {
		f |= FlagClosed
	}
	if m.archived {
		f |= FlagArchived
	}
	if m.accepting {
		f |= FlagAcceptingOrders
	}
	if m.negRisk {
		f |= FlagNegRisk
	}
	if m.resolved {
		f |= FlagResolved
	}
	return f
}

// negGroup is a neg-risk event: markets of which exactly one resolves YES. Convert
// burns an account's NO tokens of one market and credits as many YES tokens of every
// other unresolved market of the event. The engine books it as the dialect's
// neg-risk adapter does: the converted NO goes to the event's vault, and for every
// other unresolved market a complete set is created (its locked collateral grows),
// its YES credited to the account and its NO kept by the vault. The vault then holds
// vault NO tokens of every unresolved market — a basket that pays exactly
// (unresolved − 1) × vault whatever the winner — so the collateral those sets lock is
// owed by the basket, not paid by anyone: debt() is that amount. When a market
// resolves NO, the vault's NO tokens in it are winners and repay their part of the
// debt (the market's locked collateral shrinks by vault); when one resolves YES, the
// rest of the event resolves NO and the debt is repaid in full.
type negGroup struct {
	id      string
	markets []int32       // creation order
	vault   market.Micros // NO tokens the vault holds in each unresolved market
}

// unresolved returns the number of unresolved markets of g.
func (e *Engine) unresolvedIn(g *negGroup) int {
	n := 0
	for _, mi := range g.markets {
		if !e.markets[mi].resolved {
			n++
		}
	}
	return n
}

// debt returns the collateral the vault of g owes to its markets' locked amounts:
// (unresolved − 1) × vault.
func (e *Engine) debt(g *negGroup) market.Micros {
	n := e.unresolvedIn(g)
	if n < 1 || g.vault == 0 {
		return 0
	}
	return market.Micros(n-1) * g.vault
}

// vaultIn returns the NO tokens the neg-risk vault holds in market m.
func (e *Engine) vaultIn(m *mkt) market.Micros {
	if m.group < 0 || m.resolved {
		return 0
	}
	return e.groups[m.group].vault
}

func (m *mkt) tradable() bool { return m.active && !m.closed && m.accepting && !m.resolved }

type account struct {
	addr       market.Address
	mode       market.AccountMode
	nonce      uint64
	avail, res market.Micros // collateral
	mark       uint64
	head, tail int32 // open orders, acceptance order
	posHead    int32 // positions, creation order
	posTail    int32
	open       int32
}

type position struct {
	acct       int32
	tok        int32 // market*2 + outcome
	avail, res market.Micros
	mark       uint64
	next       int32 // next position of the same account
}

type order struct {
	id         market.OrderID
	price      market.Micros // in the owner's token
	size       market.Micros
	filled     market.Micros
	reserved   market.Micros // collateral (BUY) or tokens (SELL) still reserved
	expiration int64         // Unix seconds
	created    int64         // Unix ms
	seq        uint64        // Seq of its OrderAccepted event
	nonce      uint64
	ref        int32  // its reference in the id index, -1 with ForgetFinal
	fp         uint32 // fingerprint of id

	next, prev   int32 // level FIFO
	anext, aprev int32 // owner's open orders
	heap         int32 // index in the expiry heap, -1 if none
	li           int32 // level index in its book side
	acct, pos    int32
	mkt          int32

	feeBps   uint32
	outcome  market.Outcome
	side     market.Side
	typ      market.OrderType
	bs       uint8 // book side in the YES book: sideBid or sideAsk
	postOnly bool
}

func (o *order) remaining() market.Micros { return o.size - o.filled }

// balRef names one balance: an account's collateral (pos < 0) or a position.
type balRef struct{ acct, pos int32 }

type lvlRef struct {
	mkt int32
	bs  uint8
	li  int32
}

// New returns an empty engine at time 0.
func New(cfg Config) *Engine {
	e := newEngine(cfg)
	e.account(cfg.FeeAccount)
	return e
}

func newEngine(cfg Config) *Engine {
	if cfg.Orders <= 0 {
		cfg.Orders = 1024
	}
	if cfg.Accounts <= 0 {
		cfg.Accounts = 64
	}
	if cfg.Markets <= 0 {
		cfg.Markets = 16
	}
	return &Engine{
		cfg:       cfg,
		free:      -1,
		marketIdx: make(map[market.ConditionID]int32, cfg.Markets),
		tokenIdx:  newDenseTable(2 * cfg.Markets),
		groupIdx:  map[string]int32{},
		markets:   make([]mkt, 0, cfg.Markets),
		accts:     make([]account, 0, cfg.Accounts),
		acctIdx:   newDenseTable(cfg.Accounts),
		pos:       make([]position, 0, 4*cfg.Accounts),
		posIdx:    newPosTable(4 * cfg.Accounts),
		seed:      newHashSeed(),
		orders:    make([]order, 0, cfg.Orders),
		live:      newLiveTable(0), // grows with the open orders: a table sized for the hint would not stay in L1
		index:     newIDIndex(),
		events:    make([]Event, 0, 64),
		dirtyBal:  make([]balRef, 0, 16),
		dirtyLvl:  make([]lvlRef, 0, 16),
	}
}

// Apply executes one command and returns the events it produced, in order. The
// returned slice is owned by the engine and valid until the next call of Apply; c
// must not be nil and is not retained (its strings are).
//
// A command is either applied completely or rejected: a rejected command changes no
// state except that the clock advances to its time (expiring GTD orders that are due)
// and the sequence number advances past its CommandRejected event. The error is then a
// *market.Error from the catalog (errors.Is against the market.Err* sentinels), and the
// last event is the CommandRejected event carrying the same code. Because rejections
// consume sequence numbers and move the clock, a journal must hold every command passed
// to Apply, rejected or not, for a replay to reproduce the event log.
func (e *Engine) Apply(c *Command) ([]Event, error) {
	// The last command's events are zeroed here in one pass (a bulk clear of a
	// few hot cache lines), so that emit can hand out slots past len(e.events),
	// which are always zero, without clearing 280 bytes per event.
	clear(e.events)
	e.events = e.events[:0]
	e.cmdNo++
	if c.Time > e.now {
		e.now = c.Time
	}
	if e.expire() {
		e.flush()
	}
	var err *market.Error
	switch c.Kind {
	case CreateMarket:
		err = e.createMarket(c)
	case UpdateMarket:
		err = e.updateMarket(c)
	case Resolve:
		err = e.resolve(c)
	case Deposit:
		err = e.deposit(c)
	case Withdraw:
		err = e.withdraw(c)
	case Split:
		err = e.split(c)
	case Merge:
		err = e.merge(c)
	case Redeem:
		err = e.redeem(c)
	case Place:
		err = e.place(c)
	case Cancel:
		err = e.cancelOne(c)
	case CancelAll:
		err = e.cancelAll(c)
	case IncrementNonce:
		err = e.incrementNonce(c)
	case SetAccountMode:
		err = e.setMode(c)
	case AdvanceTime:
		// the clock moved above
	case Transfer:
		err = e.transfer(c)
	case Convert:
		err = e.convert(c)
	case Swap:
		err = e.swap(c)
	default:
		err = market.Errorf(market.CodeBadRequest, "command kind")
	}
	if err != nil {
		e.reject(c, err)
		return e.events[:len(e.events):len(e.events)], err
	}
	e.flush()
	return e.events[:len(e.events):len(e.events)], nil // capped: a caller's append cannot write into the free slots
}

// SetAdmitted sets whether the engine's caller has already refused every Place whose
// id the engine accepted before: the admission layer of a server, which checks each
// signed order's id against the set of every accepted id in its own goroutines,
// beside the signature's recovery, before the command reaches the engine
// (docs/design/0169). An admitted engine then keeps the duplicate check of open ids
// only (a probe of the small table of open orders) and records a new id in
// acceptance order without indexing it; the index of every id is brought up to date
// when something looks a final id up (a Cancel of an order that is not open,
// OrderStatus, Check). Nothing else changes: for a command stream without such
// duplicates, every event, error, view and snapshot is byte for byte what the engine
// produces with the check. A duplicate of a final id that reaches an admitted engine
// is accepted — a breach of this contract, which a later Restore of its snapshot
// refuses. Replays (a journal that may hold duplicates refused by the engine) must
// run with the check, i.e. not admitted, which is how New and Restore return an
// engine. Without Config.ForgetFinal only; with it, the setting has no effect.
func (e *Engine) SetAdmitted(on bool) {
	if !on {
		e.index.catchUp() // place reads the filter before any lookup: it must be complete
	}
	e.admitted = on && !e.cfg.ForgetFinal
}

// Admitted reports whether the engine is admitted (SetAdmitted).
func (e *Engine) Admitted() bool { return e.admitted }

// AdmissionError returns the error Apply returns, at the engine's current state,
// for c, a Place whose id the engine accepted before: the first of the checks that
// precede the duplicate check that fails (the owner's account mode, the market, the
// order's price, size, expiration against the engine clock, fee rate, nonce), else
// Duplicated. An admission layer answers a refused duplicate with it, so that the
// answer is the one the engine would give. It changes nothing.
func (e *Engine) AdmissionError(c *Command) *market.Error {
	if _, _, _, err := e.placeCheck(c); err != nil {
		return err
	}
	return market.Errorf(market.CodeDuplicated, string(c.Order))
}

// AcceptedIDs calls fn with every order id the engine accepted, open or final, in
// acceptance order (with Config.ForgetFinal: the open orders' ids, in no particular
// order). An admission layer builds its set of ids from it.
func (e *Engine) AcceptedIDs(fn func(market.OrderID)) {
	if e.cfg.ForgetFinal {
		for i := range e.orders {
			if e.orders[i].id != "" {
				fn(e.orders[i].id)
			}
		}
		return
	}
	for ref := int32(0); int(ref) < e.index.n; ref++ {
		fn(e.index.id(ref))
	}
}

// Time returns the engine clock, Unix milliseconds.
func (e *Engine) Time() int64 { return e.now }

// Seq returns the sequence number of the last event produced (0 before any).
func (e *Engine) Seq() uint64 { return e.seq }

// Config returns the configuration the engine was created or restored with.
func (e *Engine) Config() Config { return e.cfg }

// emit appends a zeroed event of kind k with its sequence number and time. The
// slots past len(e.events) are zero (Apply clears the used ones).
func (e *Engine) emit(k EventKind) *Event {
	n := len(e.events)
	if n < cap(e.events) {
		e.events = e.events[:n+1]
	} else {
		e.events = append(e.events, Event{})
	}
	ev := &e.events[n]
	e.seq++
	ev.Seq, ev.Time, ev.Kind = e.seq, e.now, k
	return ev
}

func (e *Engine) reject(c *Command, err *market.Error) {
	ev := e.emit(CommandRejected)
	ev.Code = err.Code
	ev.Order, ev.Owner, ev.Market, ev.Token = c.Order, c.Owner, c.Market, c.Token
	ev.Side, ev.Type, ev.Price, ev.Size, ev.Amount = c.Side, c.Type, c.Price, c.Size, c.Amount
}

// touchCollateral records that account a's collateral changed in this command.
func (e *Engine) touchCollateral(a int32) {
	ac := &e.accts[a]
	if ac.mark != e.cmdNo {
		ac.mark = e.cmdNo
		e.dirtyBal = append(e.dirtyBal, balRef{acct: a, pos: -1})
	}
}

// touchPosition records that position p changed in this command.
func (e *Engine) touchPosition(p int32) {
	ps := &e.pos[p]
	if ps.mark != e.cmdNo {
		ps.mark = e.cmdNo
		e.dirtyBal = append(e.dirtyBal, balRef{acct: ps.acct, pos: p})
	}
}

// touchLevel records that a level's aggregate changed in this command.
func (e *Engine) touchLevel(mi int32, bs uint8, li int32) {
	lv := &e.markets[mi].book[bs].levels[li]
	if lv.mark != e.cmdNo {
		lv.mark = e.cmdNo
		e.dirtyLvl = append(e.dirtyLvl, lvlRef{mkt: mi, bs: bs, li: li})
	}
}

// flush emits BookChanged and BalanceChanged for everything touched since the last
// flush and clears the dirty lists. A later flush in the same command re-reports a
// balance only if it changed again (marks are reset here).
func (e *Engine) flush() {
	for _, r := range e.dirtyLvl {
		m := &e.markets[r.mkt]
		lv := &m.book[r.bs].levels[r.li]
		lv.mark = 0
		ev := e.emit(BookChanged)
		ev.Market, ev.Token, ev.Other = m.id, m.tokens[market.Yes], m.tokens[market.No]
		ev.Side = market.Buy
		if r.bs == sideAsk {
			ev.Side = market.Sell
		}
		ev.Price = market.Micros(r.li) * m.unit
		ev.Size = lv.size
		ev.BestBid, ev.BestAsk = m.bestPrice(sideBid), m.bestPrice(sideAsk)
	}
	e.dirtyLvl = e.dirtyLvl[:0]
	for _, r := range e.dirtyBal {
		ev := e.emit(BalanceChanged)
		ac := &e.accts[r.acct]
		ev.Owner = ac.addr
		if r.pos < 0 {
			ac.mark = 0
			ev.Available, ev.Reserved = ac.avail, ac.res
			continue
		}
		ps := &e.pos[r.pos]
		ps.mark = 0
		m := &e.markets[ps.tok>>1]
		ev.Market, ev.Outcome, ev.Token = m.id, market.Outcome(ps.tok&1), m.tokens[ps.tok&1]
		ev.Available, ev.Reserved = ps.avail, ps.res
	}
	e.dirtyBal = e.dirtyBal[:0]
}

// account returns the index of a's account, creating it.
func (e *Engine) account(a market.Address) int32 {
	if i, ok := e.lookupAccount(a); ok {
		return i
	}
	i := int32(len(e.accts))
	e.accts = append(e.accts, account{addr: a, head: -1, tail: -1, posHead: -1, posTail: -1})
	e.acctIdx.insert(e.seed.addr(&a), i)
	return i
}

func posKey(acct, tok int32) uint64 { return uint64(uint32(acct))<<32 | uint64(uint32(tok)) }

// position returns the index of account a's position in token tok, creating it.
func (e *Engine) position(a, tok int32) int32 {
	if i := e.lookupPosition(a, tok); i >= 0 {
		return i
	}
	i := int32(len(e.pos))
	e.pos = append(e.pos, position{acct: a, tok: tok, next: -1})
	e.posIdx.insert(e.seed, posKey(a, tok), i)
	ac := &e.accts[a]
	if ac.posTail >= 0 {
		e.pos[ac.posTail].next = i
	} else {
		ac.posHead = i
	}
	ac.posTail = i
	return i
}

// --- expiry heap: GTD orders by (expiration, acceptance seq) ---

type heapEntry struct {
	at  int64 // expiration in Unix ms
	seq uint64
	oi  int32
}

func (h heapEntry) less(o heapEntry) bool {
	return h.at < o.at || h.at == o.at && h.seq < o.seq
}

func (e *Engine) heapPush(oi int32) {
	o := &e.orders[oi]
	e.expiry = append(e.expiry, heapEntry{at: o.expiration * 1000, seq: o.seq, oi: oi})
	i := len(e.expiry) - 1
	o.heap = int32(i)
	e.heapUp(i)
}

func (e *Engine) heapRemove(oi int32) {
	i := int(e.orders[oi].heap)
	if i < 0 {
		return
	}
	e.orders[oi].heap = -1
	last := len(e.expiry) - 1
	if i != last {
		e.expiry[i] = e.expiry[last]
		e.orders[e.expiry[i].oi].heap = int32(i)
	}
	e.expiry = e.expiry[:last]
	if i != last {
		e.heapDown(i)
		e.heapUp(i)
	}
}

func (e *Engine) heapUp(i int) {
	h := e.expiry
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		e.orders[h[i].oi].heap = int32(i)
		e.orders[h[p].oi].heap = int32(p)
		i = p
	}
}

func (e *Engine) heapDown(i int) {
	h := e.expiry
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h[r].less(h[l]) {
			c = r
		}
		if !h[c].less(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		e.orders[h[i].oi].heap = int32(i)
		e.orders[h[c].oi].heap = int32(c)
		i = c
	}
}

// expire removes every GTD order whose expiration the clock has passed (a GTD order is
// live while the clock is at or before its expiration second) and reports whether any
// did.
func (e *Engine) expire() bool {
	any := false
	for len(e.expiry) > 0 && e.expiry[0].at < e.now {
		e.removeOrder(e.expiry[0].oi, ReasonExpired)
		any = true
	}
	return any
}

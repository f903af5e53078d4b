package policies

import (
	"math"

	"github.com/pitbossdev/pitboss/market"
)

// Decisions on quotes are remembered per quote key and reused while nothing they
// depend on has changed (docs/design/0105). A decision on a quote is a function of
// exactly these inputs:
//
//   - the intent (every field) and the open order it keeps, if any;
//   - the chain's configuration (fixed for a Chain), its kill switch and loss-limit
//     baselines, and the geoblock status: the chain's epoch counts their changes;
//   - the agent's state other than books and time — balance, reservations,
//     positions, open orders, markets, account mode: the caller's state version
//     (see SetStateVersion), which changes whenever any of them does;
//   - of the books, only the best bid and ask prices of the intent's market's two
//     tokens (mid, price band, post-only, the custom guards' book figures), compared
//     as values — when they moved, the decision holds if the checks of the guards
//     reached that read them pass again on the new books (post-only, price_band, the
//     custom guards reading book figures) and its denier does not read them — and
//     the value of every position at its mark, read by
//     max_gross_exposure for buys (which allows while it stays under the limit less
//     the other figures, all unchanged) and by custom guards reading equity,
//     exposure, day_pnl or drawdown (compared as a value);
//   - what the intents allowed earlier in the same batch add (compared as values);
//   - event time, read only by GTD expirations (GTD intents are never reused), by
//     max_orders_per_minute (never run for a kept order; a denial reused is one of
//     a guard before it) and by custom guards that read time or hours_to_end
//     (re-run on the remembered environment with the new time).
//
// Guards added with WithGuards are opaque, so a chain that has any never reuses.

// memo is the last decision on one quote key and the inputs it was made from.
type memo struct {
	valid   bool
	state   *market.State
	version uint64
	epoch   uint64
	it      market.Intent
	keeps   market.OrderID
	// order is the open order keeps (State.Orders), replaced or not. Whether it was
	// replaced earlier in its batch is not kept: it is a function of order and p
	// (pending.isReplaced), both compared by reused.
	order    *market.Order
	market   *market.Info
	outcome  market.Outcome
	notional market.Micros
	// mb is market's books in the chain's book cache while its generation is mbGen.
	mb    *marketBooks
	mbGen uint64
	// The decision holds for every value of the positions in [posMin, posMax]:
	// exactly the value it was made with when a reached custom guard reads equity
	// figures or max_gross_exposure denied; below what max_gross_exposure allows
	// when that guard allowed a buy; any value when neither read it.
	posMin, posMax market.Micros
	top            top
	// What the decision read of the books beyond top, to re-check when the top moved
	// (docs/design/0105, "A move of the top of the book"): topExact, the denier reads
	// the books (pre-flight, price_band), so the top must be unchanged; postOnly,
	// pre-flight passed a post-only intent, which must still not cross; band,
	// price_band passed, and the mid must still be within it.
	topExact, postOnly, band bool
	p                        pending
	denied                   *Denied // nil: allowed (a kept order)
	// env is the custom guards' environment (hasEnv: when some guard reads time or
	// the books), kept up to date with the time and the books of each reuse: its
	// Time is the event time the decision was last made or re-checked at.
	env    Env
	hasEnv bool
	// rep is the Repeat call that last looked at the memo (Chain.repeats).
	rep uint64
}

// top is the best bid and ask prices of both tokens of a market (0 when absent):
// everything the guards read of its books.
type top [4]market.Micros

// SetStateVersion declares that s is at version v: a number the caller changes
// whenever anything in s changes other than what Apply does for market data (books
// of EventBook and EventPriceChange, prints, time) — any order, fill, balance,
// position, market or account-mode change, and every direct write. With a version
// the chain reuses decisions whose inputs did not change (see EvaluateKeeping) and
// caches how it values positions. Zero (the default) means "unknown": nothing is
// reused. A caller that cannot keep this promise must not call it.
func (c *Chain) SetStateVersion(s *market.State, v uint64) { c.vstate, c.version = s, v }

// versioned reports whether s is the state whose version the caller declared.
func (c *Chain) versioned(s *market.State) bool { return c.version != 0 && c.vstate == s }

// memoFor returns the memo of it's key when the decision on it may be reused or
// remembered, else nil.
func (c *Chain) memoFor(b *Batch, it *market.Intent, replaces market.OrderID, keep bool) *memo {
	if !c.reuse || !c.versioned(b.state) || it.Kind != market.IntentQuote || it.Key == "" ||
		it.Type == market.GTD || b.action != (Action{}) || replaces != "" && !keep {
		return nil
	}
	// A strategy asks for the same few keys on every event, and mostly with the
	// same strings: recent finds them without hashing (memos are never removed).
	for i := range c.recent {
		if r := &c.recent[i]; r.m != nil && market.Same(r.key, it.Key) {
			return r.m
		}
	}
	m := c.memos[it.Key]
	if m == nil {
		if c.memos == nil {
			c.memos = make(map[string]*memo)
		}
		m = new(memo)
		c.memos[it.Key] = m
	}
	c.recent[c.nrecent] = keyMemo{key: it.Key, m: m}
	c.nrecent = (c.nrecent + 1) % len(c.recent)
	return m
}

// keyMemo is a memo and its key (Chain.recent).
type keyMemo struct {
	key string
	m   *memo
}

// order returns the open order id of s (nil if none). When m remembers a decision
// made at the state's current version on the same order, that order is the one it
// found: the orders of s change only with its version (SetStateVersion).
func (c *Chain) order(s *market.State, m *memo, id market.OrderID) *market.Order {
	if m != nil && m.valid && m.state == s && m.version == c.version && m.keeps == id && c.versioned(s) {
		return m.order
	}
	return s.Orders[id]
}

// reused returns the remembered decision of m when every input it was made from is
// unchanged (re-running the custom guards that read time), or when only the top of
// the books moved and every check of the guards reached that reads the books
// passes as before (re-run on the new books), and ok=false otherwise. A decision
// kept over a move of the top is reported as made anew (Reused false), to be
// audited as the full evaluation it stands for.
func (c *Chain) reused(b *Batch, m *memo, it *market.Intent, replaces market.OrderID, rep *market.Order) (d Decision, ok bool) {
	s := b.state
	if !m.valid || m.state != s || m.version != c.version || m.epoch != c.epoch || m.keeps != replaces ||
		b.posValue < m.posMin || b.posValue > m.posMax || !m.it.Same(it) || !m.p.equal(b.p) {
		return d, false
	}
	mb := b.booksOf(m)
	moved := b.top != m.top
	var books [2]*market.Book
	if moved {
		if m.topExact {
			return d, false
		}
		books = mb.books // mb is not nil: a market without books has no top to move
		if m.postOnly && crosses(books, m.outcome, it) ||
			m.band && !inBand(books, m.outcome, it.Price, c.cfg.PriceBand) {
			return d, false
		}
	}
	if m.denied != nil {
		if moved {
			m.top = b.top
			c.revalidated++
			return Decision{Denied: m.denied}, true
		}
		return Decision{Denied: m.denied, Reused: true}, true
	}
	if m.hasEnv && !c.recheck(m, s, books, moved) {
		return d, false // a new decision: made in full, and audited
	}
	b.p.addIntent(it, rep, m.notional, m.market, true)
	if moved {
		m.top = b.top
		c.revalidated++
		return Decision{Allowed: true}, true
	}
	return Decision{Allowed: true, Reused: true}, true
}

// recheck re-runs, on m's environment brought to the time of s (and, when the top
// moved, to books), the custom guards of the allowance m remembers that read what
// changed, and reports whether they still allow.
func (c *Chain) recheck(m *memo, s *market.State, books [2]*market.Book, moved bool) bool {
	timed := c.custom.timed && m.env.Time != s.Time
	if timed {
		m.env.Time = s.Time
		if m.market.EndDate > 0 {
			m.env.HoursToEnd = hoursToEnd(m.market, s.Time)
		}
	}
	if moved {
		m.env.setBooks(books, m.outcome)
	}
	return !(timed || moved && c.custom.booked) || c.custom.allow(&m.env, timed, moved)
}

// Repeat is for a batch that repeats the last one: the caller is about to check
// the same n intents, in the same order, each as it did in the last batch (kept
// with the same open order, or new), and no batch was started in between. Call it
// right after Chain.Batch, before any evaluation. It reports whether every one of
// those decisions would be reused unchanged (Decision.Reused: every input the
// same, the top of the books included, the custom guards that read the time still
// allowing at the new time); then it has made them — the denials audited as
// evaluate audits a reused denial, the batch's pending set what the n
// evaluations would leave — and the caller treats each intent as its last
// decision. Otherwise nothing was decided and the caller evaluates as usual. It
// is the per-intent reuse of reused, checked once per batch: the memo, the pending
// set (the same decisions before it, so the same set) and the intent (the caller
// compared it) are not looked at again.
func (b *Batch) Repeat(n int) bool {
	c, s := b.c, b.state
	if !c.lastOK || len(c.lastTrace) != n || n == 0 || len(c.trace) != 0 || b.action != (Action{}) || !c.reuse ||
		!c.versioned(s) {
		return false
	}
	c.repeats++
	for _, m := range c.lastTrace {
		if m.rep == c.repeats {
			return false // two decisions on one key: the memo holds only the second
		}
		m.rep = c.repeats
		if !m.valid || m.state != s || m.version != c.version || m.epoch != c.epoch ||
			b.posValue < m.posMin || b.posValue > m.posMax {
			return false
		}
		b.booksOf(m)
		if b.top != m.top {
			return false
		}
		if m.denied == nil && m.hasEnv && !c.recheck(m, s, [2]*market.Book{}, false) {
			m.valid = false // its environment moved on: decided anew, in full
			return false
		}
	}
	for _, m := range c.lastTrace {
		if m.denied != nil {
			c.audit(s, &m.it, m.denied)
		}
	}
	// The batch is the last one again: its pending set and its trace.
	b.p, c.lastPending = c.lastPending, b.p
	c.trace, c.lastTrace = c.lastTrace, c.trace
	return true
}

// remember records the decision just made on it in m, or forgets m when the
// decision may not be reused: an allowed new order (it goes out), or a denial by a
// guard whose inputs are not all covered (max_orders_per_minute, custom guards,
// guards added with WithGuards). p is the batch's pending set before the decision.
func (c *Chain) remember(b *Batch, m *memo, v *View, replaces market.OrderID, order *market.Order, keep bool, den *Denied, at int, p *pending) {
	m.valid = false
	switch {
	case den == nil && !keep:
		return
	case den != nil && (at >= c.builtin || den.Guard == GuardRate):
		return
	}
	s := b.state
	m.valid, m.state, m.version, m.epoch = true, s, c.version, c.epoch
	m.it, m.keeps, m.order, m.market, m.outcome, m.notional = *v.Intent, replaces, order, v.Market, v.Outcome, v.Notional
	m.mb, m.mbGen = v.mb, c.books.gen
	m.top, m.denied = b.topOf(v.Market), den
	m.posMin, m.posMax = math.MinInt64, math.MaxInt64
	reached := len(c.guards) // guards that ran: all, or up to the denier
	if den != nil {
		reached = at + 1
	}
	passed := func(i int) bool { return den == nil || at > i }
	m.topExact = den != nil && (at == c.preflightAt || at == c.bandAt)
	m.postOnly = passed(c.preflightAt) && v.Intent.PostOnly
	m.band = passed(c.bandAt)
	switch {
	case den != nil && den.Guard == GuardGross, reached > c.builtin && c.custom != nil && c.custom.valued:
		m.posMin, m.posMax = b.posValue, b.posValue
	case reached > c.grossAt && v.Intent.Side == market.Buy:
		m.posMax = v.Config.MaxGrossExposure - v.OpenBuyNotional() - v.Notional
	}
	m.p.copyFrom(p)
	m.hasEnv = den == nil && c.custom != nil && (c.custom.timed || c.custom.booked)
	if m.hasEnv {
		if !v.envReady {
			c.custom.fill(v)
		}
		m.env = c.custom.env
	}
}

// topOf returns the top of m's books, once per batch and market.
func (b *Batch) topOf(m *market.Info) top {
	if m == nil {
		return top{}
	}
	if b.topMarket != m {
		mb := b.c.books.of(b.state, b.c.version, m)
		b.topMarket, b.topMB, b.top = m, mb, mb.top()
	}
	return b.top
}

// booksOf returns the books of memo m's market (nil without a market) and sets
// b.top to their top, once per batch and market. It finds them through m while the
// book cache's generation is the one m found them in: no lookup by market.
func (b *Batch) booksOf(m *memo) *marketBooks {
	if m.market == nil {
		b.topMarket, b.topMB, b.top = nil, nil, top{}
		return nil
	}
	if b.topMarket == m.market {
		return b.topMB
	}
	c := &b.c.books
	c.check(b.state, b.c.version)
	mb := m.mb
	if mb == nil || m.mbGen != c.gen {
		mb = c.get(b.state, m.market)
		m.mb, m.mbGen = mb, c.gen
	}
	b.topMarket, b.topMB, b.top = m.market, mb, mb.top()
	return mb
}

// bookCache keeps, per market, its two books (nil while missing) between batches,
// so that finding the top of a market's books costs no lookups by token id. Its
// entries hold while the state, its declared version (SetStateVersion: every direct
// write changes it) and its number of books are unchanged: Apply creates a token's
// book on first use and never removes or replaces one, so a book that appears
// changes the count and the entries are looked up again.
//
// The entries also hold the market's positions, which only fills create (a new
// state version, and a new number of positions) and only direct writes replace.
type bookCache struct {
	st      *market.State
	version uint64
	n, np   int
	gen     uint64 // counts the times the entries were dropped
	markets map[*market.Info]*marketBooks
}

// marketBooks are a market's books and positions, for the tokens they were looked
// up for (nil while missing).
type marketBooks struct {
	tokens [2]market.TokenID
	books  [2]*market.Book
	pos    [2]*market.Position
}

// of returns m's books in s.
func (c *bookCache) of(s *market.State, version uint64, m *market.Info) *marketBooks {
	c.check(s, version)
	return c.get(s, m)
}

// check drops the entries unless they hold for s at version (a new generation).
func (c *bookCache) check(s *market.State, version uint64) {
	if c.st != s || c.version != version || c.n != len(s.Books) || c.np != len(s.Positions) {
		clear(c.markets)
		c.st, c.version, c.n, c.np = s, version, len(s.Books), len(s.Positions)
		c.gen++
	}
}

// get returns m's books in s, the entries holding (check).
func (c *bookCache) get(s *market.State, m *market.Info) *marketBooks {
	mb := c.markets[m]
	if mb == nil || mb.tokens != m.Tokens {
		if c.markets == nil {
			c.markets = make(map[*market.Info]*marketBooks)
		}
		mb = &marketBooks{tokens: m.Tokens, books: [2]*market.Book{s.Books[m.Tokens[0]], s.Books[m.Tokens[1]]},
			pos: [2]*market.Position{s.Positions[m.Tokens[0]], s.Positions[m.Tokens[1]]}}
		c.markets[m] = mb
	}
	return mb
}

// top returns the best prices of the books (as topOf).
func (mb *marketBooks) top() (t top) {
	for o, b := range mb.books {
		if b != nil {
			if len(b.Bids) > 0 {
				t[2*o] = b.Bids[0].Price
			}
			if len(b.Asks) > 0 {
				t[2*o+1] = b.Asks[0].Price
			}
		}
	}
	return t
}

func (p *pending) equal(q *pending) bool {
	if p.buyCost != q.buyCost || p.freed != q.freed || p.notional != q.notional || p.quotes != q.quotes ||
		p.orders != q.orders || p.added != q.added || len(p.tokens) != len(q.tokens) || len(p.replaced) != len(q.replaced) {
		return false
	}
	for i := range p.tokens {
		if pt, qt := &p.tokens[i], &q.tokens[i]; pt.buys != qt.buys || pt.sells != qt.sells || !market.Same(pt.token, qt.token) {
			return false
		}
	}
	for i := range p.replaced {
		if p.replaced[i] != q.replaced[i] {
			return false
		}
	}
	return true
}

func (p *pending) copyFrom(q *pending) {
	tokens, replaced := append(p.tokens[:0], q.tokens...), append(p.replaced[:0], q.replaced...)
	*p = *q
	p.tokens, p.replaced = tokens, replaced
}

package exchange

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/pitbossdev/pitboss/market"
)

// ErrInvariant is wrapped by Check's errors: the state breaks one of the engine's
// invariants. It never happens to an engine driven only by Apply; Restore refuses a
// snapshot that would produce it.
var ErrInvariant = errors.New("exchange: invariant violated")

func violation(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvariant}, args...)...)
}

// Check verifies every invariant of the state and returns the first violation found:
//
//   - no available or reserved balance is negative;
//   - conservation: the collateral of all accounts (available and reserved, the fee
//     account included) plus the collateral locked in complete sets, minus what the
//     neg-risk vaults owe (see negGroup), equals deposits minus withdrawals, to the
//     micro-unit;
//   - before resolution each market's YES supply, NO supply (the vault's NO tokens
//     included) and locked collateral are equal; after it, the winning supply equals
//     the locked collateral and no order is open;
//   - neg-risk events list their markets exactly once, each market names its event,
//     a settled event (one market resolved YES) is resolved entirely and its vault
//     is empty;
//   - every reservation equals what its open orders need (price × remaining for a
//     BUY, remaining for a SELL), and accounts' and positions' reserved amounts are
//     the sums of their orders';
//   - every level's size is the sum of its orders' remaining sizes, the level bitmap
//     and best levels agree with the levels, and no book is crossed;
//   - owner and market lists, the id index and the expiry heap agree with the orders.
//
// It walks the whole state (allocating scratch space) and is meant for tests, audits
// and recovery, not for the hot path.
func (e *Engine) Check() error {
	acctRes := make([]market.Micros, len(e.accts))
	acctOpen := make([]int32, len(e.accts))
	posRes := make([]market.Micros, len(e.pos))
	var total market.Micros
	for i := range e.accts {
		ac := &e.accts[i]
		if ac.avail < 0 || ac.res < 0 {
			return violation("account %s has collateral %d available, %d reserved", ac.addr, ac.avail, ac.res)
		}
		total += ac.avail + ac.res
		if j, ok := e.lookupAccount(ac.addr); !ok || j != int32(i) {
			return violation("account %s is not indexed", ac.addr)
		}
	}
	if e.acctIdx.n != len(e.accts) {
		return violation("account index has %d entries for %d accounts", e.acctIdx.n, len(e.accts))
	}
	if i, ok := e.lookupAccount(e.cfg.FeeAccount); !ok || i != 0 {
		return violation("fee account is not account 0")
	}
	supply := make([]market.Micros, 2*len(e.markets))
	for i := range e.pos {
		ps := &e.pos[i]
		if ps.avail < 0 || ps.res < 0 {
			return violation("position %d has %d available, %d reserved", i, ps.avail, ps.res)
		}
		if int(ps.tok) >= len(supply) || ps.acct < 0 || int(ps.acct) >= len(e.accts) {
			return violation("position %d refers to token %d of account %d", i, ps.tok, ps.acct)
		}
		supply[ps.tok] += ps.avail + ps.res
		if e.lookupPosition(ps.acct, ps.tok) != int32(i) {
			return violation("position %d (account %d, token %d) is not indexed", i, ps.acct, ps.tok)
		}
	}
	if e.posIdx.n != len(e.pos) {
		return violation("position index has %d entries for %d positions", e.posIdx.n, len(e.pos))
	}
	for mi := range e.markets {
		for o, t := range e.markets[mi].tokens {
			if v, ok := e.lookupToken(t); !ok || v != int32(mi*2+o) {
				return violation("token %s is not indexed", t)
			}
		}
	}
	if e.tokenIdx.n != 2*len(e.markets) {
		return violation("token index has %d entries for %d markets", e.tokenIdx.n, len(e.markets))
	}
	if err := e.checkGroups(); err != nil {
		return err
	}
	for gi := range e.groups {
		total -= e.debt(&e.groups[gi])
	}
	open, gtd := 0, 0
	for mi := range e.markets {
		m := &e.markets[mi]
		total += m.locked
		y, n := supply[2*mi], supply[2*mi+1]+e.vaultIn(m)
		if m.resolved {
			if supply[2*mi+int(m.winner)] != m.locked {
				return violation("market %s: winning supply %d, locked %d", m.id, supply[2*mi+int(m.winner)], m.locked)
			}
			if m.open != 0 {
				return violation("market %s is resolved with %d open orders", m.id, m.open)
			}
		} else if y != m.locked || n != m.locked {
			return violation("market %s: YES supply %d, NO supply %d, locked %d", m.id, y, n, m.locked)
		}
		g, err := e.checkBook(m, int32(mi), acctRes, acctOpen, posRes)
		if err != nil {
			return err
		}
		gtd += g
		open += int(m.open)
	}
	if total != e.net {
		return violation("conservation: accounts and sets hold %d, deposits − withdrawals are %d", total, e.net)
	}
	for i := range e.accts {
		ac := &e.accts[i]
		if ac.res != acctRes[i] {
			return violation("account %s reserves %d collateral, its orders need %d", ac.addr, ac.res, acctRes[i])
		}
		if ac.open != acctOpen[i] {
			return violation("account %s counts %d open orders, books hold %d", ac.addr, ac.open, acctOpen[i])
		}
		cnt := int32(0)
		prev := int32(-1)
		for oi := ac.head; oi >= 0 && cnt <= ac.open; oi = e.orders[oi].anext {
			if e.orders[oi].aprev != prev || e.orders[oi].acct != int32(i) {
				return violation("account %s: broken order list", ac.addr)
			}
			prev = oi
			cnt++
		}
		if cnt != ac.open || ac.tail != prev {
			return violation("account %s lists %d orders, counts %d", ac.addr, cnt, ac.open)
		}
	}
	for i := range e.pos {
		if e.pos[i].res != posRes[i] {
			return violation("position %d reserves %d tokens, its orders need %d", i, e.pos[i].res, posRes[i])
		}
	}
	deferred, err := e.deferredIDs()
	if err != nil {
		return err
	}
	for i := range e.markets {
		for _, oi := range e.marketOrders(int32(i), nil) {
			if e.liveOrder(e.orders[oi].id) != oi || e.orders[oi].fp != e.index.fingerprint(e.orders[oi].id) {
				return violation("order %q is not indexed", e.orders[oi].id)
			}
			if o := &e.orders[oi]; !e.cfg.ForgetFinal && (e.findRecorded(o.id, deferred) != o.ref || e.index.state(o.ref) != market.StatusLive) {
				return violation("open order %q is not live in the id index", o.id)
			}
		}
	}
	if e.live.len() != open {
		return violation("%d live ids, %d open orders", e.live.len(), open)
	}
	if err := e.checkIndex(open); err != nil {
		return err
	}
	if gtd != len(e.expiry) {
		return violation("%d open GTD orders, %d in the expiry heap", gtd, len(e.expiry))
	}
	for i, h := range e.expiry {
		if h.oi < 0 || int(h.oi) >= len(e.orders) || e.orders[h.oi].heap != int32(i) || e.orders[h.oi].typ != market.GTD {
			return violation("expiry heap entry %d is stale", i)
		}
		if i > 0 && h.less(e.expiry[(i-1)/2]) {
			return violation("expiry heap out of order at %d", i)
		}
		if h.at < e.now {
			return violation("order %q should have expired", e.orders[h.oi].id)
		}
	}
	return nil
}

// checkGroups verifies the neg-risk events' membership and settlement.
func (e *Engine) checkGroups() error {
	if len(e.groupIdx) != len(e.groups) {
		return violation("%d neg-risk events indexed, %d listed", len(e.groupIdx), len(e.groups))
	}
	member := 0
	for gi := range e.groups {
		g := &e.groups[gi]
		if j, ok := e.groupIdx[g.id]; !ok || j != int32(gi) || g.id == "" || len(g.markets) == 0 {
			return violation("neg-risk event %d (%q) is not indexed or empty", gi, g.id)
		}
		won := false
		for k, mi := range g.markets {
			if mi < 0 || int(mi) >= len(e.markets) || e.markets[mi].group != int32(gi) || !e.markets[mi].negRisk ||
				k > 0 && mi <= g.markets[k-1] {
				return violation("neg-risk event %q lists market %d wrongly", g.id, mi)
			}
			if m := &e.markets[mi]; m.resolved && m.winner == market.Yes {
				won = true
			}
		}
		member += len(g.markets)
		n := e.unresolvedIn(g)
		switch {
		case g.vault < 0:
			return violation("neg-risk event %q: vault %d", g.id, g.vault)
		case won && n > 0:
			return violation("neg-risk event %q has a winner and %d unresolved markets", g.id, n)
		case n == 0 && g.vault != 0:
			return violation("neg-risk event %q is settled with %d in its vault", g.id, g.vault)
		}
	}
	for mi := range e.markets {
		if g := e.markets[mi].group; g >= 0 {
			member--
		} else if g != -1 {
			return violation("market %s: event index %d", e.markets[mi].id, g)
		}
	}
	if member != 0 {
		return violation("neg-risk events list %d markets more than name them", member)
	}
	return nil
}

// checkBook verifies both sides of m's book, accumulates per account and position
// what its resting orders reserve, and returns the number of GTD orders on it.
func (e *Engine) checkBook(m *mkt, mi int32, acctRes []market.Micros, acctOpen []int32, posRes []market.Micros) (int, error) {
	n := levelsFor(m.unit)
	gtd, found := 0, int32(0)
	for si := range m.book {
		s := &m.book[si]
		if len(s.levels) != n || len(s.bits) != (n+63)/64 {
			return 0, violation("market %s: side %d has %d levels", m.id, si, len(s.levels))
		}
		if n%64 != 0 && s.bits[len(s.bits)-1]>>uint(n%64) != 0 || s.bits[0]&1 != 0 {
			return 0, violation("market %s: bitmap marks a level outside (0, 1)", m.id)
		}
		// Walk the non-empty levels through the bitmap (the books of fine ticks have
		// 10 000 levels per side). A non-empty level missing from the bitmap leaves its
		// orders uncounted, which the open-order count below catches.
		best := int32(-1)
		for w, word := range s.bits {
			for ; word != 0; word &= word - 1 {
				li := int32(w<<6 + bits.TrailingZeros64(word))
				lv := &s.levels[li]
				if lv.head < 0 {
					return 0, violation("market %s: bitmap marks empty level %d", m.id, li)
				}
				if best < 0 || s.better(li, best) {
					best = li
				}
				var sum market.Micros
				prev := int32(-1)
				for oi := lv.head; oi >= 0; oi = e.orders[oi].next {
					if found > int32(len(e.orders)) {
						return 0, violation("market %s: level %d is a cycle", m.id, li)
					}
					o := &e.orders[oi]
					if o.prev != prev || o.li != li || o.bs != uint8(si) || o.mkt != mi {
						return 0, violation("market %s: broken level %d", m.id, li)
					}
					if own(market.Micros(li)*m.unit, o.outcome) != o.price {
						return 0, violation("order %q at price %d sits on level %d", o.id, o.price, li)
					}
					r := o.remaining()
					if r <= 0 || o.filled < 0 {
						return 0, violation("order %q has %d remaining", o.id, r)
					}
					if o.side == market.Buy {
						if o.reserved != notional(o.price, r) {
							return 0, violation("order %q reserves %d collateral, needs %d", o.id, o.reserved, notional(o.price, r))
						}
						acctRes[o.acct] += o.reserved
					} else {
						if o.reserved != r {
							return 0, violation("order %q reserves %d tokens, needs %d", o.id, o.reserved, r)
						}
						posRes[o.pos] += o.reserved
					}
					if ps := &e.pos[o.pos]; ps.acct != o.acct || ps.tok != mi*2+int32(o.outcome) {
						return 0, violation("order %q has the wrong position", o.id)
					}
					if (o.typ == market.GTD) != (o.heap >= 0) || !o.typ.Rests() {
						return 0, violation("order %q of type %s has heap index %d", o.id, o.typ, o.heap)
					}
					if o.typ == market.GTD {
						gtd++
					}
					acctOpen[o.acct]++
					found++
					sum += r
					prev = oi
				}
				if lv.tail != prev || lv.size != sum {
					return 0, violation("market %s: level %d has size %d, orders sum %d", m.id, li, lv.size, sum)
				}
			}
		}
		if s.best != best {
			return 0, violation("market %s: side %d best is %d, should be %d", m.id, si, s.best, best)
		}
	}
	if found != m.open {
		return 0, violation("market %s: %d orders on the book, %d open", m.id, found, m.open)
	}
	if b, a := m.book[sideBid].best, m.book[sideAsk].best; b >= 0 && a >= 0 && b >= a {
		return 0, violation("market %s: book crossed (bid level %d, ask level %d)", m.id, b, a)
	}
	return gtd, nil
}

// deferredIDs maps the ids an admitted engine recorded without indexing them to
// their references, and verifies that they are unique: among themselves and against
// the indexed ids. It indexes nothing.
func (e *Engine) deferredIDs() (map[market.OrderID]int32, error) {
	x := &e.index
	if x.indexed >= x.n {
		return nil, nil
	}
	if !e.admitted {
		return nil, violation("%d ids not indexed by an engine that is not admitted", x.n-x.indexed)
	}
	m := make(map[market.OrderID]int32, x.n-x.indexed)
	for ref := int32(x.indexed); int(ref) < x.n; ref++ {
		id := x.id(ref)
		if _, dup := m[id]; dup || x.findIndexed(id, x.fingerprint(id)) >= 0 {
			return nil, violation("id %q was accepted twice", id)
		}
		m[id] = ref
	}
	return m, nil
}

// findRecorded is the index's find without indexing anything: deferred holds the
// references not indexed yet (deferredIDs).
func (e *Engine) findRecorded(id market.OrderID, deferred map[market.OrderID]int32) int32 {
	if r := e.index.findIndexed(id, e.index.fingerprint(id)); r >= 0 {
		return r
	}
	if r, ok := deferred[id]; ok {
		return r
	}
	return -1
}

// checkIndex verifies that every indexed id can be found at its own reference (in
// the pending batch or the table, and through the filter), that the table and the
// batch hold exactly the indexed ids, that the ids an admitted engine recorded
// without indexing them are unique, and that as many are live as orders are open.
// It indexes nothing.
func (e *Engine) checkIndex(open int) error {
	x := &e.index
	if e.cfg.ForgetFinal {
		if x.n != 0 {
			return violation("%d ids recorded by an engine that forgets them", x.n)
		}
		return nil
	}
	if x.count+len(x.pending) != x.indexed || x.indexed > x.n || len(x.pending) != len(x.pendingFP) || len(x.pending) >= pendingBatch {
		return violation("id table holds %d slots and %d pending for %d indexed ids", x.count, len(x.pending), x.indexed)
	}

	pending := make([]bool, x.n)
	for i, ref := range x.pending {
		if ref < 0 || int(ref) >= x.n || pending[ref] || x.pendingFP[i] != x.fingerprint(x.id(ref)) {
			return violation("pending id %d is wrong", ref)
		}
		pending[ref] = true
	}
	live := 0
	for ref := int32(0); int(ref) < x.n; ref++ {
		id := x.id(ref)
		switch st := x.state(ref); {
		case st == market.StatusLive:
			live++
		case st != market.StatusMatched && st != market.StatusCanceled && st != market.StatusExpired:
			return violation("id %q has state %d", id, st)
		}
		fp := x.fingerprint(id)
		if int(ref) >= x.indexed {
			continue // deferredIDs checked it
		}
		if !x.mayContain(fp) {
			return violation("id %q is missing from the filter", id)
		}
		if pending[ref] {
			continue
		}
		r := x.probe(x.tab, 0, fp, id)
		if r < 0 && x.old != nil {
			r = x.probe(x.old, x.moved, fp, id)
		}
		if r != ref {
			return violation("id %q is not found at its reference %d", id, ref)
		}
	}
	if live != open {
		return violation("%d live ids, %d open orders", live, open)
	}
	return nil
}

package exchange

import (
	"math/bits"

	"github.com/pitbossdev/pitboss/market"
)

// notional returns p×s/One, the collateral of s micro-shares at price p. For prices on
// a tick and sizes in lots it is exact.
func notional(p, s market.Micros) market.Micros {
	hi, lo := bits.Mul64(uint64(p), uint64(s))
	if hi == 0 {
		return market.Micros(lo / uint64(market.One))
	}
	n, _ := market.MulDiv(p, s, market.One)
	return n
}

// feeDivisor turns bps × price × size (micro-units twice) into collateral micro-units.
const feeDivisor = 10_000 * market.One

// feeOf is the taker fee of a fill of s micro-shares at price p (in the taker's token):
// floor(bps × min(p, 1−p) × s), in collateral micro-units.
func feeOf(bps uint32, p, s market.Micros) market.Micros {
	q := p
	if market.One-p < q {
		q = market.One - p
	}
	return scaleFee(uint64(bps)*uint64(q), s)
}

// maxFeeOf bounds the total fee of a BUY taker with limit p and size s over any fills
// at prices ≤ p: every fill price p' has min(p', 1−p') ≤ min(p, ½), and a sum of
// floors is at most the floor of the sum.
func maxFeeOf(bps uint32, p, s market.Micros) market.Micros {
	q := p
	if q > market.One/2 {
		q = market.One / 2
	}
	return scaleFee(uint64(bps)*uint64(q), s)
}

func scaleFee(rate uint64, s market.Micros) market.Micros {
	hi, lo := bits.Mul64(rate, uint64(s))
	if hi == 0 {
		return market.Micros(lo / uint64(feeDivisor))
	}
	f, _ := market.MulDiv(market.Micros(rate), s, feeDivisor)
	return f
}

func onTick(p, tick market.Micros) bool { _, r := divTick(p, tick); return r == 0 }

func levelOf(px, unit market.Micros) int32 { q, _ := divTick(px, unit); return int32(q) }

// own converts a YES-book price to the price in the token of outcome o.
func own(px market.Micros, o market.Outcome) market.Micros {
	if o == market.No {
		return market.One - px
	}
	return px
}

// crossing reports whether level price px of the opposite side os meets limit (a YES
// book price): asks at or below a bid's limit, bids at or above an ask's limit.
func crossing(os uint8, px, limit market.Micros) bool {
	if os == sideAsk {
		return px <= limit
	}
	return px >= limit
}

func (e *Engine) place(c *Command) *market.Error {
	fp := e.index.fingerprint(c.Order)
	// The Bloom filter is read here, long before its answer is needed, so that its
	// cache miss (a new id's word is anywhere in a filter of megabytes) overlaps the
	// lookups and checks below. An admitted engine skips it: its caller checked the
	// id against every accepted id before the command came (docs/design/0169).
	seen := !e.cfg.ForgetFinal && !e.admitted && e.index.mayContain(fp)
	a, hasAcct, tok, err := e.placeCheck(c)
	if err != nil {
		return err
	}
	mi := tok >> 1
	m := &e.markets[mi]
	if dup := (e.cfg.ForgetFinal || e.admitted) && e.live.find(e.orders, c.Order, fp) >= 0 || seen && e.index.findFP(c.Order, fp) >= 0; dup {
		return market.Errorf(market.CodeDuplicated, string(c.Order))
	}
	ref := int32(-1)

	outcome := market.Outcome(tok & 1)
	bs := uint8(sideBid)
	if (c.Side == market.Buy) != (outcome == market.Yes) {
		bs = sideAsk
	}
	os := bs ^ 1
	bookPx := own(c.Price, outcome)
	opp := &m.book[os]
	crosses := opp.best >= 0 && crossing(os, market.Micros(opp.best)*m.unit, bookPx)

	var need market.Micros
	p := int32(-1)
	if c.Side == market.Buy {
		need = notional(c.Price, c.Size)
		if crosses && m.feeBps > 0 {
			need += maxFeeOf(m.feeBps, c.Price, c.Size)
		}
		if !hasAcct || e.accts[a].avail < need {
			return market.Errorf(market.CodeInsufficientBalance)
		}
	} else {
		if hasAcct {
			p = e.lookupPosition(a, tok)
		}
		if p < 0 || e.pos[p].avail < c.Size {
			return market.Errorf(market.CodeInsufficientBalance)
		}
		need = c.Size
	}
	if c.PostOnly && crosses {
		return market.Errorf(market.CodePostOnlyCrosses)
	}
	switch c.Type {
	case market.FOK:
		if !crosses || e.liquidity(m, os, a, bookPx, c.Size) < c.Size {
			return market.Errorf(market.CodeFOKNotFilled)
		}
	case market.FAK:
		if !crosses || e.liquidity(m, os, a, bookPx, 1) == 0 {
			return market.Errorf(market.CodeFAKNoMatch)
		}
	}

	// Accepted: from here on nothing can fail.
	if p < 0 {
		p = e.position(a, tok)
	}
	if c.Side == market.Buy {
		ac := &e.accts[a]
		ac.avail -= need
		ac.res += need
		e.touchCollateral(a)
	} else {
		ps := &e.pos[p]
		ps.avail -= need
		ps.res += need
		e.touchPosition(p)
	}
	switch {
	case e.admitted:
		ref = e.index.record(c.Order, market.StatusLive)
	case !e.cfg.ForgetFinal:
		ref = e.index.addFP(c.Order, fp, market.StatusLive)
	}
	oi := e.alloc()
	o := &e.orders[oi]
	// A slot from alloc is zero but for next and heap (retire), so the order's fields
	// are written one by one: a composite literal would be built on the stack and
	// copied with a write barrier.
	o.id, o.ref, o.fp, o.price, o.size, o.reserved, o.expiration = c.Order, ref, fp, c.Price, c.Size, need, c.Expiration
	o.created, o.nonce, o.next, o.prev, o.anext, o.aprev = e.now, c.Nonce, -1, -1, -1, -1
	o.heap, o.li, o.acct, o.pos, o.mkt, o.feeBps = -1, levelOf(bookPx, m.unit), a, p, mi, c.FeeRateBps
	o.outcome, o.side, o.typ, o.bs, o.postOnly = outcome, c.Side, c.Type, bs, c.PostOnly
	e.live.add(fp, oi)
	ev := e.emit(OrderAccepted)
	o.seq = ev.Seq
	e.describeOrder(ev, o, m)
	ev.Status, ev.Expiration, ev.Nonce, ev.FeeBps, ev.PostOnly, ev.Amount = market.StatusLive, o.expiration, o.nonce, o.feeBps, o.postOnly, need

	if !crosses {
		// Nothing to match (a FOK or FAK that does not cross was refused above): the
		// order rests whole, and its reservation is exactly what resting needs — the
		// worst-case fee is reserved only by a crossing BUY — so finishTaker would
		// release nothing and report no trade.
		e.rest(oi, m)
		return nil
	}
	var tr tradeSum
	e.match(oi, m, mi, bookPx, &tr)
	e.finishTaker(oi, m, &tr)
	return nil
}

// liquidity sums the remaining size of orders on side os of m that cross limit and
// do not belong to account a, stopping once it reaches want.
func (e *Engine) liquidity(m *mkt, os uint8, a int32, limit, want market.Micros) market.Micros {
	s := &m.book[os]
	var sum market.Micros
	for li := s.best; li >= 0; li = s.after(li) {
		if !crossing(os, market.Micros(li)*m.unit, limit) {
			break
		}
		for oi := s.levels[li].head; oi >= 0; oi = e.orders[oi].next {
			if o := &e.orders[oi]; o.acct != a {
				sum += o.remaining()
				if sum >= want {
					return sum
				}
			}
		}
	}
	return sum
}

// tradeSum accumulates the taker's side of one Place.
type tradeSum struct {
	trade   uint64
	firstPx market.Micros // in the taker's token
	size    market.Micros
	amount  market.Micros
	fee     market.Micros
}

// match executes taker ti against the opposite side of m in price-time priority until
// it is filled or the best opposite level no longer crosses limit (a YES-book price).
// Resting orders of the taker's own account are cancelled (self-trade prevention).
func (e *Engine) match(ti int32, m *mkt, mi int32, limit market.Micros, tr *tradeSum) {
	t := &e.orders[ti]
	os := t.bs ^ 1
	s := &m.book[os]
	for t.filled < t.size && s.best >= 0 {
		li := s.best
		px := market.Micros(li) * m.unit
		if !crossing(os, px, limit) {
			break
		}
		lv := &s.levels[li]
		for oi := lv.head; oi >= 0 && t.filled < t.size; {
			mo := &e.orders[oi]
			next := mo.next
			if mo.acct == t.acct {
				e.removeOrder(oi, ReasonSelfTrade)
				oi = next
				continue
			}
			if tr.trade == 0 {
				e.trades++
				tr.trade = e.trades
				tr.firstPx = own(px, t.outcome)
			}
			q := t.size - t.filled
			if r := mo.remaining(); r < q {
				q = r
			}
			pt, pm := own(px, t.outcome), own(px, mo.outcome)
			nt, nm := notional(pt, q), notional(pm, q)
			var f market.Micros
			if m.feeBps > 0 {
				f = feeOf(m.feeBps, pt, q)
			}
			// taker
			ta := &e.accts[t.acct]
			tp := &e.pos[t.pos]
			if t.side == market.Buy {
				t.reserved -= nt + f
				ta.res -= nt + f
				tp.avail += q
			} else {
				t.reserved -= q
				tp.res -= q
				ta.avail += nt - f
			}
			e.touchCollateral(t.acct)
			e.touchPosition(t.pos)
			// maker
			ma := &e.accts[mo.acct]
			mp := &e.pos[mo.pos]
			if mo.side == market.Buy {
				mo.reserved -= nm
				ma.res -= nm
				mp.avail += q
			} else {
				mo.reserved -= q
				mp.res -= q
				ma.avail += nm
			}
			e.touchCollateral(mo.acct)
			e.touchPosition(mo.pos)
			if f > 0 {
				e.accts[feeAccount].avail += f
				e.touchCollateral(feeAccount)
			}
			switch {
			case t.side == market.Buy && mo.side == market.Buy:
				m.locked += q // mint: both paid, a complete set was created
			case t.side == market.Sell && mo.side == market.Sell:
				m.locked -= q // merge: a complete set was burned, collateral released
			}
			t.filled += q
			mo.filled += q
			lv.size -= q
			e.touchLevel(mi, os, li)
			tr.size += q
			tr.amount += nt
			tr.fee += f
			m.lastPx = px
			m.lastSide = market.Buy
			if t.bs == sideAsk {
				m.lastSide = market.Sell
			}

			ev := e.emit(OrderFilled)
			e.describeOrder(ev, mo, m)
			ev.Trade, ev.Price, ev.Size, ev.Amount = tr.trade, pm, q, nm
			ev.Matched, ev.Remaining, ev.Status = mo.filled, mo.remaining(), market.StatusLive
			if mo.filled == mo.size {
				ev.Status = market.StatusMatched
				e.unlink(oi)
				e.retire(oi, market.StatusMatched)
			}
			oi = next
		}
	}
}

// finishTaker settles the taker after matching: it releases the part of a BUY's
// reservation that the fills did not use (price improvement and unused worst-case fee)
// beyond what the resting rest needs, reports the trade, and rests, cancels (FAK rest)
// or retires the order.
func (e *Engine) finishTaker(ti int32, m *mkt, tr *tradeSum) {
	t := &e.orders[ti]
	rem := t.remaining()
	rests := rem > 0 && t.typ.Rests()
	if t.side == market.Buy {
		var keep market.Micros
		if rests {
			keep = notional(t.price, rem)
		}
		if d := t.reserved - keep; d != 0 {
			ac := &e.accts[t.acct]
			ac.res -= d
			ac.avail += d
			t.reserved = keep
			e.touchCollateral(t.acct)
		}
	} else if !rests && t.reserved != 0 {
		ps := &e.pos[t.pos]
		ps.res -= t.reserved
		ps.avail += t.reserved
		t.reserved = 0
		e.touchPosition(t.pos)
	}
	status := market.StatusMatched
	switch {
	case rests:
		status = market.StatusLive
	case rem > 0:
		status = market.StatusCanceled
	}
	if tr.trade != 0 {
		ev := e.emit(TradeExecuted)
		e.describeOrder(ev, t, m)
		ev.Trade, ev.Price, ev.Size, ev.Amount, ev.Fee = tr.trade, tr.firstPx, tr.size, tr.amount, tr.fee
		ev.Matched, ev.Remaining, ev.Status = t.filled, rem, status
	}
	switch status {
	case market.StatusMatched:
		e.retire(ti, market.StatusMatched)
	case market.StatusLive:
		e.rest(ti, m)
	default:
		ev := e.emit(OrderCancelled)
		e.describeOrder(ev, t, m)
		ev.Matched, ev.Remaining, ev.Reason, ev.Status = t.filled, rem, ReasonUnfilled, market.StatusCanceled
		e.retire(ti, market.StatusCanceled)
	}
}

// placeCheck makes the checks of a Place that come before its duplicate check, in
// their order: the payload's required fields, the owner's account mode, the token, the market's state, the order's
// price, size, expiration, fee rate and nonce. It returns the owner's account (if it
// has one) and the token's index. It changes nothing.
func (e *Engine) placeCheck(c *Command) (a int32, hasAcct bool, tok int32, _ *market.Error) {
	if c.Owner.IsZero() || c.Order == "" || !c.Side.Valid() || !c.Type.Valid() {
		return 0, false, 0, market.Errorf(market.CodeInvalidOrderPayload)
	}
	a, hasAcct = e.lookupAccount(c.Owner)
	if hasAcct {
		switch e.accts[a].mode {
		case market.ModeBanned:
			return 0, false, 0, market.Errorf(market.CodeAddressBanned, c.Owner.String())
		case market.ModeCloseOnly:
			if c.Side == market.Buy {
				return 0, false, 0, market.Errorf(market.CodeAddressCloseOnly, c.Owner.String())
			}
		}
	}
	tok, ok := e.lookupToken(c.Token)
	if !ok {
		return 0, false, 0, market.Errorf(market.CodeNoOrderbook)
	}
	m := &e.markets[tok>>1]
	switch {
	case c.Market != "" && c.Market != m.id:
		return 0, false, 0, market.Errorf(market.CodeInvalidOrderPayload)
	case m.resolved:
		return 0, false, 0, market.Errorf(market.CodeMarketResolved)
	case !m.tradable():
		return 0, false, 0, market.Errorf(market.CodeMarketNotAccepting)
	case c.PostOnly && !c.Type.Rests():
		return 0, false, 0, market.Errorf(market.CodeInvalidOrderPayload)
	case c.Price <= 0 || c.Price >= market.One || !onTick(c.Price, m.tick):
		return 0, false, 0, market.Errorf(market.CodeTickSize, string(c.Order), c.Price.String(), m.tick.String())
	case c.Size <= 0 || c.Size > market.MaxMicros:
		return 0, false, 0, market.Errorf(market.CodeInvalidAmount)
	case c.Size%market.Lot != 0:
		return 0, false, 0, market.Errorf(market.CodeAmountNotExact, c.Size.String())
	case c.Type.Rests() && c.Size < m.minSize:
		return 0, false, 0, market.Errorf(market.CodeMinSize, string(c.Order), c.Size.String(), m.minSize.String())
	case c.Type == market.GTD && (c.Expiration <= 0 || c.Expiration > maxExpiration || c.Expiration*1000 < e.now),
		c.Type != market.GTD && c.Expiration != 0:
		return 0, false, 0, market.Errorf(market.CodeInvalidExpiration)
	case c.FeeRateBps < m.feeBps:
		return 0, false, 0, market.Errorf(market.CodeInvalidFeeRate, string(c.Order), c.FeeRateBps, m.feeBps)
	}
	var nonce uint64
	if hasAcct {
		nonce = e.accts[a].nonce
	}
	if c.Nonce != nonce {
		return 0, false, 0, market.Errorf(market.CodeInvalidNonce)
	}
	return a, hasAcct, tok, nil
}

// describeOrder fills the fields every order event shares.
// rest puts order oi on its book and reports it (OrderRested): what is left of a
// taker, or a whole order that does not cross.
func (e *Engine) rest(oi int32, m *mkt) {
	e.link(oi)
	o := &e.orders[oi]
	ev := e.emit(OrderRested)
	e.describeOrder(ev, o, m)
	ev.Matched, ev.Remaining, ev.Expiration, ev.Status = o.filled, o.remaining(), o.expiration, market.StatusLive
}

func (e *Engine) describeOrder(ev *Event, o *order, m *mkt) {
	ev.Order, ev.Owner, ev.Market, ev.Token = o.id, e.accts[o.acct].addr, m.id, m.tokens[o.outcome]
	ev.Outcome, ev.Side, ev.Type, ev.Price, ev.Size = o.outcome, o.side, o.typ, o.price, o.size
}

// liveOrder returns the slot of open order id, or -1.
func (e *Engine) liveOrder(id market.OrderID) int32 {
	return e.live.find(e.orders, id, e.index.fingerprint(id))
}

// finalStatus returns the status of a final order id (false for open or unknown ids).
func (e *Engine) finalStatus(id market.OrderID) (market.OrderStatus, bool) {
	if e.cfg.ForgetFinal {
		return 0, false
	}
	ref := e.index.find(id)
	if ref < 0 || e.index.state(ref) == market.StatusLive {
		return 0, false
	}
	return e.index.state(ref), true
}

// alloc returns a free order slot: zero but for next and heap (retire), which place
// writes.
func (e *Engine) alloc() int32 {
	if i := e.free; i >= 0 {
		e.free = e.orders[i].next
		return i
	}
	e.orders = append(e.orders, order{})
	return int32(len(e.orders) - 1)
}

// retire records the final status of order oi's id and frees its slot. The order must
// not be linked anywhere.
func (e *Engine) retire(oi int32, status market.OrderStatus) {
	o := &e.orders[oi]
	e.live.remove(o.fp, oi)
	if o.ref >= 0 {
		e.index.setState(o.ref, status)
	}
	*o = order{next: e.free, heap: -1}
	e.free = oi
}

// link puts order oi on its book level (at the tail), on its owner's and market's lists
// and, for GTD, in the expiry heap.
func (e *Engine) link(oi int32) {
	o := &e.orders[oi]
	m := &e.markets[o.mkt]
	s := &m.book[o.bs]
	lv := &s.levels[o.li]
	o.prev, o.next = lv.tail, -1
	if lv.tail >= 0 {
		e.orders[lv.tail].next = oi
	} else {
		lv.head = oi
		s.setBit(o.li)
	}
	lv.tail = oi
	lv.size += o.remaining()
	e.touchLevel(o.mkt, o.bs, o.li)

	ac := &e.accts[o.acct]
	o.aprev, o.anext = ac.tail, -1
	if ac.tail >= 0 {
		e.orders[ac.tail].anext = oi
	} else {
		ac.head = oi
	}
	ac.tail = oi
	ac.open++

	m.open++

	if o.typ == market.GTD {
		e.heapPush(oi)
	}
}

// unlink removes open order oi from its level, lists and the expiry heap.
func (e *Engine) unlink(oi int32) {
	o := &e.orders[oi]
	m := &e.markets[o.mkt]
	s := &m.book[o.bs]
	lv := &s.levels[o.li]
	if o.prev >= 0 {
		e.orders[o.prev].next = o.next
	} else {
		lv.head = o.next
	}
	if o.next >= 0 {
		e.orders[o.next].prev = o.prev
	} else {
		lv.tail = o.prev
	}
	lv.size -= o.remaining()
	if lv.head < 0 {
		s.clearBit(o.li)
	}
	e.touchLevel(o.mkt, o.bs, o.li)

	ac := &e.accts[o.acct]
	if o.aprev >= 0 {
		e.orders[o.aprev].anext = o.anext
	} else {
		ac.head = o.anext
	}
	if o.anext >= 0 {
		e.orders[o.anext].aprev = o.aprev
	} else {
		ac.tail = o.aprev
	}
	ac.open--

	m.open--

	if o.heap >= 0 {
		e.heapRemove(oi)
	}
}

package exchange

import (
	"cmp"
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

// removeOrder takes open order oi off the book, releases its reservation, reports it
// (OrderExpired for ReasonExpired, OrderCancelled otherwise) and retires it.
func (e *Engine) removeOrder(oi int32, r Reason) {
	o := &e.orders[oi]
	m := &e.markets[o.mkt]
	if o.reserved != 0 {
		if o.side == market.Buy {
			ac := &e.accts[o.acct]
			ac.res -= o.reserved
			ac.avail += o.reserved
			e.touchCollateral(o.acct)
		} else {
			ps := &e.pos[o.pos]
			ps.res -= o.reserved
			ps.avail += o.reserved
			e.touchPosition(o.pos)
		}
		o.reserved = 0
	}
	kind, status := OrderCancelled, market.StatusCanceled
	if r == ReasonExpired {
		kind, status = OrderExpired, market.StatusExpired
	}
	ev := e.emit(kind)
	e.describeOrder(ev, o, m)
	ev.Matched, ev.Remaining, ev.Reason, ev.Status = o.filled, o.remaining(), r, status
	ev.Expiration = o.expiration
	e.unlink(oi)
	e.retire(oi, status)
}

func (e *Engine) cancelOne(c *Command) *market.Error {
	if c.Order == "" {
		return market.Errorf(market.CodeInvalidOrderID)
	}
	v := e.liveOrder(c.Order)
	if v < 0 {
		switch st, final := e.finalStatus(c.Order); {
		case !final:
			return market.Errorf(market.CodeUnknownOrder)
		case st == market.StatusMatched:
			return market.Errorf(market.CodeAlreadyMatchedOrCxl)
		default:
			return market.Errorf(market.CodeAlreadyCanceled)
		}
	}
	r := ReasonVenue
	if !c.Owner.IsZero() {
		if e.accts[e.orders[v].acct].addr != c.Owner {
			return market.Errorf(market.CodeUnknownOrder)
		}
		r = ReasonOwner
	}
	e.removeOrder(v, r)
	return nil
}

// cancelAll cancels the open orders matching the command's owner, market and token
// (zero values: any). Unknown owners, markets or tokens match nothing; it never fails.
func (e *Engine) cancelAll(c *Command) *market.Error {
	mi, tok, ok := e.scope(c.Market, c.Token)
	if !ok {
		return nil
	}
	if !c.Owner.IsZero() {
		if a, ok := e.lookupAccount(c.Owner); ok {
			e.cancelOwner(a, mi, tok, ReasonOwner, false)
		}
		return nil
	}
	if mi >= 0 {
		e.cancelMarketToken(mi, tok, ReasonVenue)
		return nil
	}
	for i := range e.markets {
		e.cancelMarketToken(int32(i), -1, ReasonVenue)
	}
	return nil
}

// scope resolves a market and token filter (zero values: any) to the market index mi
// and token index tok, -1 where the filter is open; a token implies its market. It
// reports !ok when the filter matches nothing: an unknown market or token, or a
// token of another market.
func (e *Engine) scope(m market.ConditionID, t market.TokenID) (mi, tok int32, ok bool) {
	mi, tok = -1, -1
	if t != "" {
		if tok, ok = e.lookupToken(t); !ok {
			return -1, -1, false
		}
		mi = tok >> 1
	}
	if m != "" {
		i, found := e.marketIdx[m]
		if !found || mi >= 0 && i != mi {
			return -1, -1, false
		}
		mi = i
	}
	return mi, tok, true
}

// cancelOwner cancels account a's open orders, in acceptance order, restricted to
// market mi and token tok when they are ≥ 0, and to BUY orders when buysOnly.
func (e *Engine) cancelOwner(a, mi, tok int32, r Reason, buysOnly bool) {
	for oi := e.accts[a].head; oi >= 0; {
		o := &e.orders[oi]
		next := o.anext
		if (mi < 0 || o.mkt == mi) && (tok < 0 || o.mkt*2+int32(o.outcome) == tok) && (!buysOnly || o.side == market.Buy) {
			e.removeOrder(oi, r)
		}
		oi = next
	}
}

// cancelMarket cancels every open order of market mi, in acceptance order.
func (e *Engine) cancelMarket(mi int32, r Reason) { e.cancelMarketToken(mi, -1, r) }

func (e *Engine) cancelMarketToken(mi, tok int32, r Reason) {
	list := e.marketOrders(mi, e.scratch[:0])
	for _, oi := range list {
		if o := &e.orders[oi]; tok < 0 || o.mkt*2+int32(o.outcome) == tok {
			e.removeOrder(oi, r)
		}
	}
	e.scratch = list[:0]
}

// marketOrders appends the open orders of market mi to dst in acceptance order and
// returns it. A market keeps no list of its orders (linking one would write to the
// order before it, anywhere in the slab, on every rest and removal): they are the
// orders of its book, and acceptance order is the order of their OrderAccepted
// sequence numbers. Cancelling a market's orders, snapshots and views need it; the
// hot path does not.
func (e *Engine) marketOrders(mi int32, dst []int32) []int32 {
	m := &e.markets[mi]
	start := len(dst)
	for si := range m.book {
		s := &m.book[si]
		for li := s.best; li >= 0; li = s.after(li) {
			for oi := s.levels[li].head; oi >= 0; oi = e.orders[oi].next {
				dst = append(dst, oi)
			}
		}
	}
	slices.SortFunc(dst[start:], func(a, b int32) int { return cmp.Compare(e.orders[a].seq, e.orders[b].seq) })
	return dst
}

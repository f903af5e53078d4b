package strategy

import (
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

// What fill read (docs/design/0106, "Strategy evaluation: filling only what
// changed"). Every field of a market's environment but the event's, the time and
// market.ends_in is a deterministic function of a few raw values of the state: for
// each token the book it is filled from (its own, the mirror of the other token's,
// or none) with the levels fillBook reads (the best of each side, or all of them
// when an expression reads depth), the last trade when it is read, and the
// position's amounts; the market's Info fields; the balance, reserved collateral
// and account mode; the open order sums. fill keeps those raw values and recomputes
// a part of the environment only when its raw values differ from those it was last
// computed from: the part's fields still hold exactly what the computation would
// give again. The comparison is of exact integers and pointers, cheaper than the
// float arithmetic it saves, and tells the reuse check (reuse.go) whether anything
// an expression reads changed.

// Where a token's book fields come from.
const (
	bookNone   uint8 = iota // both books empty: clearBook
	bookOwn                 // the token's own book
	bookMirror              // the other token's book, mirrored
)

// inputs are the raw values a market's environment was last filled from.
type inputs struct {
	ok   bool // filled at least once (before that, every part is computed)
	tok  [2]tokenIn
	mkt  marketIn
	acct accountIn
}

// tokenIn is what a token's fields were computed from.
type tokenIn struct {
	src uint8
	// Without depth: the best level of each side as stored in the source book (not
	// mirrored), and whether there is one. With depth: every level.
	top        [2]market.Level
	has        [2]bool
	bids, asks []market.Level
	lastOK     bool
	last       market.LastTrade // zero unless lastOK
	pos        posIn
}

// posIn is what fillPosition reads of a position (AvgPrice is Cost/Size).
type posIn struct {
	ok                         bool
	size, cost, realized, fees market.Micros
	payout                     market.Micros // a share's payout once the market resolved, -1 before
}

// marketIn is what the MarketInfo fields but EndsIn are computed from (with the
// binding's name, fixed for the market).
type marketIn struct {
	info                                *market.Info
	cond                                market.ConditionID
	tick, minSize                       market.Micros
	feeBps                              uint32
	end                                 int64
	negRisk, tradable, resolved, yesWon bool
}

// accountIn is what the Account fields read from the state directly.
type accountIn struct {
	balance, reserved market.Micros
	mode              market.AccountMode
}

// setBook records the book a token is filled from and reports whether it differs
// from the one recorded before (or force is set). b is nil for bookNone. Without
// depth, fillBook reads only the best level of each side (and whether there is
// one), so only those are compared.
func (k *tokenIn) setBook(src uint8, b *market.Book, depth, force bool) bool {
	if depth {
		var bids, asks []market.Level
		if b != nil {
			bids, asks = b.Bids, b.Asks
		}
		if !force && k.src == src && slices.Equal(k.bids, bids) && slices.Equal(k.asks, asks) {
			return false
		}
		k.src = src
		k.bids = append(k.bids[:0], bids...)
		k.asks = append(k.asks[:0], asks...)
		return true
	}
	var top [2]market.Level
	var has [2]bool
	if b != nil {
		if has[0] = len(b.Bids) > 0; has[0] {
			top[0] = b.Bids[0]
		}
		if has[1] = len(b.Asks) > 0; has[1] {
			top[1] = b.Asks[0]
		}
	}
	if !force && k.src == src && k.has == has && k.top[0].Price == top[0].Price && k.top[0].Size == top[0].Size &&
		k.top[1].Price == top[1].Price && k.top[1].Size == top[1].Size {
		return false
	}
	k.src, k.top, k.has = src, top, has
	return true
}

// setLast records the last trade a token is filled from (ok false: none, or not
// read) and reports whether it changed.
func (k *tokenIn) setLast(lt market.LastTrade, ok, force bool) bool {
	if !force && k.lastOK == ok && k.last == lt {
		return false
	}
	k.lastOK, k.last = ok, lt
	return true
}

// setPos records the position a token is filled from (nil: flat) and its payout
// (-1 while the market is open) and reports whether it changed.
func (k *tokenIn) setPos(p *market.Position, payout market.Micros, force bool) bool {
	var v posIn
	if p != nil {
		v = posIn{ok: true, size: p.Size, cost: p.Cost, realized: p.Realized, fees: p.Fees, payout: payout}
	}
	if !force && k.pos.ok == v.ok && k.pos.size == v.size && k.pos.cost == v.cost && k.pos.realized == v.realized &&
		k.pos.fees == v.fees && k.pos.payout == v.payout {
		return false
	}
	k.pos = v
	return true
}

// setMarket records what the market's fields are computed from and reports whether
// it changed.
func (k *marketIn) setMarket(info *market.Info, force bool) bool {
	tradable, yesWon := info.Tradable(), info.Resolved && info.Winner == market.Yes
	if !force && k.info == info && k.tick == info.TickSize && k.minSize == info.MinSize && k.feeBps == info.FeeBps &&
		k.end == info.EndDate && k.negRisk == info.NegRisk && k.tradable == tradable && k.resolved == info.Resolved &&
		k.yesWon == yesWon && k.cond == info.Condition {
		return false
	}
	*k = marketIn{info: info, cond: info.Condition, tick: info.TickSize, minSize: info.MinSize,
		feeBps: info.FeeBps, end: info.EndDate, negRisk: info.NegRisk, tradable: tradable,
		resolved: info.Resolved, yesWon: yesWon}
	return true
}

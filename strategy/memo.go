package strategy

import (
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// Keeping a var's value while what it reads is unchanged (docs/design/0173). The
// whole-market reuse (reuse.go) keeps everything only when nothing changed; most
// evaluations change something (the quoter's EMA moves on every book event, its
// 60-second deviation whenever a sample enters or leaves the window), yet some
// vars read none of it (the quoter's to_merge, free_yes and shift read only the
// positions). Each var has a dependency mask: a bit per part of the environment
// fill recomputes (a token's book, last trade, position amounts, marked PnL; the
// market; the account's own fields; the open order sums) and a bit per indicator
// and var. fill and the evaluation mark the bits of what changed since the vars
// last ran (m.pv): a var whose mask meets none of them still holds in its slot
// exactly the value it would compute again (its expression is a function of the
// fields it names, on the fast path, and those fields are bit for bit as they
// were), so it is not evaluated. A var whose value changes, bit for bit, marks its
// own bit.
//
// It applies where the whole-market reuse does (every expression on the fast path
// or constant; no reads of time, orders, the event or market.ends_in; no GTD
// quote), to strategies that read nothing beyond the market (no other slots, event
// aggregates, feeds or signals), and only while the indicators and vars fit the
// mask. A name it does not know makes its var depend on everything.
//
// Quotes are not kept this way: each of the quoter's reads a price var that moves
// with the EMA, and keeping their intents measured dearer than building them.

// Dependency bits. A token's four bits are shifted by depNo for the NO token.
const (
	depBook uint64 = 1 << iota // book fields (bid, ask, ..., depth, imbalance)
	depLast                    // last-trade fields
	depPos                     // position amounts: position, avg_price, cost, rpnl, fees
	depUPnL                    // upnl: the position marked at the book or the last trade
	_
	_
	_
	_
	depMarket  // the market's fields but ends_in
	depAccount // balance, reserved, mode
	depOpen    // open_buy, open_sell
	depSlot0   // first indicator; then the other indicators, then the vars
)

const (
	depNo     = 4
	depAll    = ^uint64(0)
	slotShift = 11 // bits.TrailingZeros64(depSlot0)
	// maxMemoSlots is how many indicators and vars the mask has bits for.
	maxMemoSlots = 64 - slotShift
)

// tokenFieldDeps maps each Token field (by its expression name) to its bit.
var tokenFieldDeps = map[string]uint64{
	"bid": depBook, "ask": depBook, "mid": depBook, "microprice": depBook, "spread": depBook,
	"bid_size": depBook, "ask_size": depBook, "has_bid": depBook, "has_ask": depBook, "two_sided": depBook,
	"bid_depth": depBook, "ask_depth": depBook, "imbalance": depBook,
	"last": depLast, "last_size": depLast, "last_side": depLast, "last_time": depLast,
	"position": depPos, "avg_price": depPos, "cost": depPos, "rpnl": depPos, "fees": depPos,
	"upnl":     depUPnL,
	"open_buy": depOpen, "open_sell": depOpen,
}

// accountDeps maps the top-level names the memo knows to their bits (time and
// orders rule the memo out, as they rule out the reuse).
var accountDeps = map[string]uint64{
	"inventory": depPos | depPos<<depNo,
	"rpnl":      depPos | depPos<<depNo,
	"upnl":      depUPnL | depUPnL<<depNo,
	"balance":   depAccount, "reserved": depAccount, "mode": depAccount,
}

// memoPlan is a strategy's dependency masks.
type memoPlan struct {
	vars []uint64 // the mask of each var's expression
}

// planMemo computes the strategy's masks (after scanNeeds), or leaves s.memo nil
// when vars are not kept.
func (s *Strategy) planMemo() {
	s.memo = nil
	if !s.reuse || s.cross || s.hasInputs() || len(s.indicators)+len(s.vars) > maxMemoSlots {
		return
	}
	slotBit := map[string]uint64{}
	for i := range s.indicators {
		slotBit[s.indicators[i].name] = depSlot0 << i
	}
	for i := range s.vars {
		slotBit[s.vars[i].name] = depSlot0 << (len(s.indicators) + i)
	}
	known := map[string]bool{"yes": true, "no": true, "market": true}
	for _, ps := range s.spec.params {
		known[ps.name] = true // a constant
	}
	for _, n := range exprenv.Builtins {
		known[n] = true
	}
	for _, n := range exprenv.Helpers() {
		known[n] = true
	}
	deps := func(p *exprenv.Program) uint64 {
		if p == nil {
			return 0
		}
		if _, c := p.Constant(); c {
			return 0
		}
		var m uint64
		for _, n := range p.Names() {
			m |= nameDeps(n, slotBit, known)
		}
		return m
	}
	plan := &memoPlan{}
	for i := range s.vars {
		plan.vars = append(plan.vars, deps(s.vars[i].prog))
	}
	s.memo = plan
}

// nameDeps returns the bits of one name an expression reads (depAll: unknown).
func nameDeps(n string, slotBit map[string]uint64, known map[string]bool) uint64 {
	if root, field, ok := strings.Cut(n, "."); ok {
		switch root {
		case "yes", "no":
			d, ok := tokenFieldDeps[field]
			if !ok {
				return depAll
			}
			if root == "no" && d != depOpen {
				d <<= depNo
			}
			return d
		case "market":
			if field == "ends_in" || !slices.Contains(marketFieldNames, field) {
				return depAll
			}
			return depMarket
		}
		return depAll
	}
	if d, ok := accountDeps[n]; ok {
		return d
	}
	if d, ok := slotBit[n]; ok {
		return d
	}
	if known[n] {
		return 0
	}
	return depAll
}

// marketFieldNames are MarketInfo's expression names.
var marketFieldNames = []string{"name", "id", "tick", "min_size", "fee_bps", "fee", "end", "ends_in", "neg_risk", "tradable", "resolved", "yes_won"}

// tokenDeps returns a token's bits for what fill recomputed.
func tokenDeps(o int, book, last, pos bool) uint64 {
	var d uint64
	if book {
		d |= depBook | depUPnL
	}
	if last {
		d |= depLast | depUPnL
	}
	if pos {
		d |= depPos | depUPnL
	}
	return d << (uint(o) * depNo)
}

// pend marks bits pending for the vars of m.
func (m *mstate) pend(d uint64) { m.pv |= d }

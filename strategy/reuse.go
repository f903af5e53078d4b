package strategy

import (
	"math"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// Reusing a market's quotes (docs/design/0106). A market's quote intents are a
// function of what its expressions read — the environment filled from the state
// (tokens, market, account), the indicator values, the params and, through the
// vars, nothing else — plus, for a GTD quote, the event time. When an evaluation
// finds every one of those inputs bit for bit as the last complete evaluation of the
// market left them, the vars would compute the same values (their slots still hold
// them) and the quotes the same intents: they are appended again without
// evaluating. Rules are always evaluated (they depend on the event's kind and on
// cooldowns); an evaluation in which a rule suppresses the quotes, or that fails,
// leaves nothing to reuse.
//
// A strategy reuses only when that list is complete: every expression is a constant
// or runs on exprenv's fast path (whose only reads are the field paths listed by
// Program.Names — no closures, no let), none reads time, orders (their ages), the
// event or market.ends_in (all change with every event), and no quote is GTD (its
// expiration follows the event time). A token's last trade is an input only when an
// expression reads one of its fields. What a market reads beyond itself — other
// slots, the event's aggregates, feeds, signals, feed methods — is compared too
// (inputs_cross.go: the cross stamp).

// reusable reports whether a strategy with these expressions and quotes may reuse,
// and whether its expressions read a token's last trade.
func reusable(progs []*exprenv.Program, quotes []compiledQuote) (ok, readsLast bool) {
	ok = true
	for _, q := range quotes {
		if q.typ == market.GTD {
			ok = false
		}
	}
	for _, p := range progs {
		if p == nil {
			continue
		}
		if _, c := p.Constant(); c {
			continue
		}
		if !p.Fast() {
			ok = false
		}
		for _, n := range p.Names() {
			switch {
			case n == "time", n == "orders", eventFieldRead(n), marketFieldRead(n, "ends_in"):
				ok = false
			case lastField(n):
				readsLast = true
			}
		}
	}
	return ok, readsLast
}

// lastField reports whether name is a token's last-trade field (yes.last,
// markets.hedge.no.last_time, ...).
func lastField(name string) bool {
	for _, f := range []string{"last", "last_size", "last_side", "last_time"} {
		if tokenFieldRead(name, f) {
			return true
		}
	}
	return false
}

// snapshot is what the last complete evaluation of a market left: its indicator
// values and quote intents. Whether the environment changed since is m.dirty, set by
// fill whenever it recomputed a part of the environment from changed inputs
// (inputs.go) and cleared by keep.
type snapshot struct {
	valid  bool
	ind    []float64
	quotes []market.Intent // the quote intents it produced
	reused uint64          // evaluations that reused them (for tests)
}

// same reports whether m's environment and indicator values are those of its
// snapshot, and records the indicator values as the new snapshot's (not yet valid:
// see keep).
func (m *mstate) same(s *Strategy) bool {
	sn := &m.snap
	eq := sn.valid && !m.dirty
	if len(sn.ind) != len(s.indicators) {
		sn.ind = make([]float64, len(s.indicators))
		eq = false
	}
	for i := range s.indicators {
		v := *m.f[s.indicators[i].slot]
		if !sameFloat(sn.ind[i], v) {
			eq = false
			sn.ind[i] = v
		}
	}
	sn.valid = false
	return eq
}

// keep makes the snapshot valid with the quote intents its evaluation produced.
func (m *mstate) keep(quotes []market.Intent) {
	m.snap.quotes = append(m.snap.quotes[:0], quotes...)
	m.snap.valid = true
	m.dirty = false
}

// sameFloat is bitwise equality: the same bits are the same value for every
// expression (−0 and +0 differ, as 1/x tells them apart; a NaN matches only the same
// NaN, which at worst misses a reuse).
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func sameFloats(a, b []float64) bool {
	for i := range a {
		if !sameFloat(a[i], b[i]) {
			return false
		}
	}
	return true
}

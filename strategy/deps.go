package strategy

import (
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// What a market's expressions read beyond the market itself, and so which markets
// an event evaluates (docs/design/0133-strategy-inputs.md). A market is evaluated
// on an event of its own (as before), on a timer (every market), on an event of a
// market slot it reads (markets.NAME), on an event of a market of its neg-risk
// event when it reads the event's aggregates, and on an update of a feed or a
// signal it reads (directly, through a feed method or through an indicator over
// it). The markets an event evaluates are evaluated in binding order, so that the
// intents of one event come out in a fixed order.

// reads is a set of inputs: bit i of slots is market slot i, and so on.
type reads struct {
	slots   uint32
	feeds   uint32
	signals uint32
	agg     bool
}

func (r reads) or(o reads) reads {
	return reads{slots: r.slots | o.slots, feeds: r.feeds | o.feeds, signals: r.signals | o.signals, agg: r.agg || o.agg}
}

// readsOf returns what program p reads (nil: nothing).
func (s *Strategy) readsOf(p *exprenv.Program) reads {
	var r reads
	if p == nil {
		return r
	}
	sp := s.spec
	for _, n := range p.Names() {
		ns, rest, ok := strings.Cut(n, ".")
		if !ok {
			// an indicator over a feed or a signal, by its name
			for i := range s.indicators {
				ci := &s.indicators[i]
				if ci.name != n {
					continue
				}
				switch ci.series {
				case serFeed:
					r.feeds |= 1 << ci.input
				case serSignal:
					r.signals |= 1 << ci.input
				}
			}
			continue
		}
		name, _, _ := strings.Cut(rest, ".")
		switch ns {
		case "markets":
			if i := slices.Index(sp.slots, name); i >= 0 && i < MaxCrossSlots {
				r.slots |= 1 << i
			}
		case "feeds":
			if i := slices.Index(sp.feeds, name); i >= 0 {
				r.feeds |= 1 << i
			}
		case "signals":
			if i := slices.Index(sp.signals, name); i >= 0 {
				r.signals |= 1 << i
			}
		case "event":
			if slices.Contains(aggNames, name) {
				r.agg = true
			}
		}
	}
	return r
}

// marketReads returns what the expressions that run on the market bound as slot
// (a slot name, or the label of a strategy without slots) read.
func (s *Strategy) marketReads(slot string) reads {
	r := s.varReads
	for _, q := range s.quotes {
		if q.slot == "" || q.slot == slot {
			r = r.or(s.readsOf(q.price.p)).or(s.readsOf(q.size.p)).or(s.readsOf(q.when.p))
		}
	}
	for _, ru := range s.rules {
		if ru.slot == "" || ru.slot == slot {
			r = r.or(s.readsOf(ru.when.p))
			for _, t := range ru.takes {
				r = r.or(s.readsOf(t.price.p)).or(s.readsOf(t.size.p))
			}
		}
	}
	return r
}

// scanReads sets varReads and cross.
func (s *Strategy) scanReads() {
	s.varReads = reads{}
	for _, v := range s.vars {
		s.varReads = s.varReads.or(s.readsOf(v.prog))
	}
	all := s.varReads
	for _, p := range s.programs() {
		all = all.or(s.readsOf(p))
	}
	s.cross = all.slots != 0 || all.agg
}

// tokenFieldRead reports whether a name an expression reads is field of a token —
// of the current market (yes.bid_depth) or of another slot (markets.h.yes.bid_depth).
func tokenFieldRead(name, field string) bool {
	for _, tok := range []string{"yes.", "no."} {
		if name == tok+field || strings.HasPrefix(name, "markets.") && strings.HasSuffix(name, "."+tok+field) {
			return true
		}
	}
	return false
}

// marketFieldRead is tokenFieldRead for a field of market (market.ends_in,
// markets.h.market.ends_in).
func marketFieldRead(name, field string) bool {
	return name == "market."+field || strings.HasPrefix(name, "markets.") && strings.HasSuffix(name, ".market."+field)
}

// eventFieldRead reports whether name is a field of the event being handled
// (event.kind, ...), not one of the event's aggregates.
func eventFieldRead(name string) bool {
	f, ok := strings.CutPrefix(name, "event.")
	return ok && !slices.Contains(aggNames, f)
}

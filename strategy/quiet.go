package strategy

import "github.com/pitbossdev/pitboss/market"

// A trade print that changes nothing an evaluation reads (docs/design/0172). On a
// busy market about half the events are prints, and a strategy that reads no trade
// input — no last-trade field, no indicator over prints or volume, no rule that runs
// on trades, no event fields — gains nothing from them: its evaluation would find
// every input as the last one left it and append the same quotes again (reuse.go).
// DecideAt tells such a print from the others without filling the environment.

// quietState is what DecideAt knows of the last evaluation.
type quietState struct {
	can int8    // the strategy may skip prints: 0 not yet known, 1 yes, -1 no
	m   *mstate // the market the last call evaluated, completely; nil: none or unknown
	ver uint64  // the caller's state version at that call
}

// DecideAt is Decide for a caller that declares ver, the version of st: a number it
// changes whenever st changes in any way other than Apply of market data (books,
// prints, time) — orders, fills, positions, balance, markets, account mode, direct
// writes — as the guards' versions (policies.Chain.SetStateVersion); zero means
// unknown. The caller applies every market event it passes to st and passes every
// one of them, in order, to DecideAt (or Decide, which makes the next DecideAt
// evaluate).
//
// When ev is a trade print of the market the last call evaluated, at the same
// version, and the instance can tell without evaluating that the print changes
// nothing that evaluation read, DecideAt appends exactly the intents Decide would —
// which are those the last call appended — and leaves the instance as Decide would,
// and reports quiet. That holds when the
// strategy reuses quotes (reuse.go), is bound to one market, reads no other market,
// feed or signal, no last trade, no event field, has no indicator over prints and no
// rule that runs on trades (or on every event); the market's last evaluation was
// complete and reused or kept (no rule suppressed its quotes or added intents), no position is marked
// by its last trade (a token with a position and an empty book), and no time window
// of its indicators drops a sample or becomes ready at the print's time (an
// indicator's value is then the one the last evaluation read, bit for bit).
// Otherwise it is Decide.
func (in *Instance) DecideAt(ev *market.Event, st *market.State, ver uint64, out []market.Intent) ([]market.Intent, bool, error) {
	if m := in.quietFor(ev, st, ver); m != nil {
		in.epoch++
		m.snap.reused++
		return append(out, m.snap.quotes...), true, nil
	}
	n0 := len(out)
	out, err := in.Decide(ev, st, out)
	q := &in.q
	q.m, q.ver = nil, ver
	if err != nil || ver == 0 || len(in.ms) != 1 {
		return out, false, err
	}
	switch m := in.ms[0]; ev.Kind {
	case market.EventTimer:
		q.m = m
	case market.EventFeed, market.EventSignal:
	default:
		if in.find(ev, st) == m {
			q.m = m
		}
	}
	if q.m != nil && (q.m.h.info == nil || !q.m.snap.valid || len(out)-n0 != len(q.m.snap.quotes)) {
		q.m = nil // not evaluated (no metadata yet), not completely, or a rule added intents
	}
	return out, false, err
}

// quietFor returns the market ev leaves as its last evaluation found it (see
// DecideAt), or nil.
func (in *Instance) quietFor(ev *market.Event, st *market.State, ver uint64) *mstate {
	q := &in.q
	m := q.m
	if ev.Kind != market.EventLastTrade || m == nil || ver == 0 || q.ver != ver || !in.quietPrints() {
		return nil
	}
	if !m.snap.valid || m.dirty || !m.started || m.rd != (reads{}) || in.find(ev, st) != m {
		return nil
	}
	h := m.handlesFor(st)
	if h.info == nil {
		return nil
	}
	for o := market.Yes; o <= market.No; o++ {
		if t := m.token(o); h.pos[o] != nil && !t.HasBid && !t.HasAsk {
			return nil // its last trade marks the position
		}
	}
	now := ev.Time
	if now == 0 {
		now = st.Time
	}
	for i := range in.s.indicators {
		x := m.ind[i]
		if x.fn == fnEMA {
			continue // moves only with a sample
		}
		if x.span > 0 && x.win.n > 0 && x.win.front().t <= now-x.span {
			return nil // a sample leaves the window
		}
		ready := !(x.events > 0 && x.win.n < x.events || x.span > 0 && now-m.start < x.span)
		if c := &x.cached; !c.ok || c.ver != x.ver || c.ready != ready {
			return nil // value would compute anew
		}
	}
	return m
}

// quietPrints reports whether the strategy reads nothing a trade print changes (see
// DecideAt), computed once.
func (in *Instance) quietPrints() bool {
	q := &in.q
	if q.can == 0 {
		q.can = -1
		if in.quietStrategy() {
			q.can = 1
		}
	}
	return q.can > 0
}

func (in *Instance) quietStrategy() bool {
	s := in.s
	if !s.reuse || s.full || s.cross || s.needLast || s.needEvent || s.hasInputs() || len(in.ms) != 1 {
		return false
	}
	for i := range s.indicators {
		ci := &s.indicators[i]
		if ci.series.fromTrades() || ci.series == serFeed || ci.series == serSignal {
			return false
		}
	}
	for i := range s.rules {
		if on := s.rules[i].on; on == 0 || on&onTrade != 0 {
			return false
		}
	}
	return true
}

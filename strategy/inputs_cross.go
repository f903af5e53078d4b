package strategy

import (
	"fmt"
	"math"
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

// FeedBinding binds a feed name of the strategy (feeds: [btc]) to a real-time
// price: the symbol market.EventFeed carries ("crypto:btcusdt"). Stale, if
// positive, is the age (ms of event time) at which feeds.NAME.price becomes NaN.
type FeedBinding struct {
	Name   string
	Symbol string
	Stale  int64
}

// SignalBinding binds a signal name of the strategy (signals: [model]) to the
// signal of the same name (market.EventSignal's Name). Stale, if positive, is the
// age (ms of event time) at which signals.NAME becomes NaN: a value of time t is
// seen while now − t < Stale, NaN from t + Stale on.
type SignalBinding struct {
	Name  string
	Stale int64
}

// Sources binds a strategy's feeds and signals. Every name the strategy declares
// must be bound; bindings of names it does not declare are ignored (a guard may
// watch a signal the strategy does not read).
type Sources struct {
	Feeds   []FeedBinding
	Signals []SignalBinding
}

// Feeds returns the feed names the file declares (feeds:), which an agent binds.
func (s *Strategy) Feeds() []string { return append([]string(nil), s.spec.feeds...) }

// Signals returns the signal names the file declares (signals:).
func (s *Strategy) Signals() []string { return append([]string(nil), s.spec.signals...) }

// xstate is an instance's state of the inputs every market shares (Env.Inputs).
type xstate struct {
	x      Inputs
	others []Other // one per market slot (< MaxCrossSlots), pointing into its mstate
	slotMs []*mstate

	feeds   [MaxFeeds]Feed
	feedIn  []FeedBinding // by the strategy's feed index
	sigIn   []SignalBinding
	sigLast []market.Input // the last value of each signal
	sigOK   []bool
	feedRaw []market.Input
	feedOK  []bool
	sigv    []*float64

	calls []*indicator // per Strategy.calls
	callv []*float64
	ind   []*indicator // per Strategy.indicators: the feed and signal series' (nil for a token's)

	start   int64 // time of the first evaluation: feed indicators' readiness
	started bool
	loaded  bool // the state's values read once (an instance made mid-stream)
}

// bindSources checks and records the feed and signal bindings.
func (in *Instance) bindSources(src Sources) error {
	s, x := in.s, &in.x
	x.feedIn = make([]FeedBinding, len(s.spec.feeds))
	for i, name := range s.spec.feeds {
		j := slices.IndexFunc(src.Feeds, func(b FeedBinding) bool { return b.Name == name })
		if j < 0 {
			return fmt.Errorf("strategy %s: feed %s is not bound (the agent file's feeds: %s: SYMBOL)", s.Name(), name, name)
		}
		if src.Feeds[j].Symbol == "" {
			return fmt.Errorf("strategy %s: feed %s is bound to no symbol", s.Name(), name)
		}
		x.feedIn[i] = src.Feeds[j]
	}
	x.sigIn = make([]SignalBinding, len(s.spec.signals))
	for i, name := range s.spec.signals {
		j := slices.IndexFunc(src.Signals, func(b SignalBinding) bool { return b.Name == name })
		if j < 0 {
			return fmt.Errorf("strategy %s: signal %s is not bound (the agent file's signals: %s)", s.Name(), name, name)
		}
		x.sigIn[i] = src.Signals[j]
	}
	x.sigLast, x.sigOK = make([]market.Input, len(x.sigIn)), make([]bool, len(x.sigIn))
	x.feedRaw, x.feedOK = make([]market.Input, len(x.feedIn)), make([]bool, len(x.feedIn))
	x.sigv = x.x.signalSlots()[:len(x.sigIn)]
	for i := range x.sigv {
		*x.sigv[i] = nan
	}
	var feeds []*Feed
	for i := range x.feedIn {
		x.feeds[i] = Feed{Price: nan}
		feeds = append(feeds, &x.feeds[i])
	}
	x.callv = x.x.callSlots()[:len(s.calls)]
	for _, c := range s.calls {
		x.calls = append(x.calls, newIndicator(c.fn, 0, c.span))
	}
	x.ind = make([]*indicator, len(s.indicators))
	for i, ci := range s.indicators {
		if ci.series == serFeed || ci.series == serSignal {
			x.ind[i] = newIndicator(ci.fn, ci.events, ci.span)
		}
	}
	for i := range x.callv {
		*x.callv[i] = nan
	}
	// The other markets, as markets.NAME sees them: the slots' own environments.
	for i, slot := range s.spec.slots {
		if i == MaxCrossSlots {
			break
		}
		m := in.bySlot(slot)
		x.slotMs = append(x.slotMs, m)
		x.others = append(x.others, Other{Yes: &m.yes, No: &m.no, Market: &m.mkt})
	}
	others := make([]*Other, len(x.others))
	for i := range x.others {
		others[i] = &x.others[i]
	}
	x.x.setPointers(others, feeds)
	return nil
}

func (in *Instance) bySlot(name string) *mstate {
	for _, m := range in.ms {
		if m.b.Name == name {
			return m
		}
	}
	return nil
}

// updateInputs brings the shared inputs to the event: a feed's or signal's new
// value (sampling the indicators over it), the staleness of every value at now,
// the feed methods' values.
func (in *Instance) updateInputs(ev *market.Event, st *market.State, now int64) {
	x := &in.x
	if !x.started {
		x.start, x.started = now, true
	}
	if !x.loaded {
		x.loaded = true
		for i, b := range x.feedIn {
			x.feedRaw[i], x.feedOK[i] = st.Feeds[b.Symbol]
		}
		for i, b := range x.sigIn {
			x.sigLast[i], x.sigOK[i] = st.Signals[b.Name]
		}
	}
	switch ev.Kind {
	case market.EventFeed:
		for i, b := range x.feedIn {
			if b.Symbol == ev.Name {
				x.feedRaw[i], x.feedOK[i] = market.Input{Value: ev.Value, Time: st.Time}, true
				in.sampleInput(serFeed, i, st.Time, ev.Value)
			}
		}
	case market.EventSignal:
		for i, b := range x.sigIn {
			if b.Name == ev.Name {
				x.sigLast[i], x.sigOK[i] = market.Input{Value: ev.Value, Time: st.Time}, true
				in.sampleInput(serSignal, i, st.Time, ev.Value)
			}
		}
	}
	for i, b := range x.feedIn {
		f := &x.feeds[i]
		f.Price, f.Time = nan, 0
		if x.feedOK[i] {
			f.Time = x.feedRaw[i].Time
			if !stale(x.feedRaw[i].Time, b.Stale, now) {
				f.Price = x.feedRaw[i].Value
			}
		}
	}
	for i, b := range x.sigIn {
		v := nan
		if x.sigOK[i] && !stale(x.sigLast[i].Time, b.Stale, now) {
			v = x.sigLast[i].Value
		}
		*x.sigv[i] = v
	}
	for i, c := range x.calls {
		*x.callv[i] = c.value(now, x.start)
	}
}

// stale reports whether a value of time t is stale at now for a limit (0: never):
// from t + limit on.
func stale(t, limit, now int64) bool { return limit > 0 && now-t >= limit }

// sampleInput adds a feed's or signal's new value to the indicators over it.
func (in *Instance) sampleInput(ser series, idx int, t int64, v float64) {
	s, x := in.s, &in.x
	if ser == serFeed {
		for i, c := range s.calls {
			if c.feed == idx {
				x.calls[i].add(t, v)
			}
		}
	}
	for i := range s.indicators {
		if ci := &s.indicators[i]; ci.series == ser && ci.input == idx {
			x.ind[i].add(t, v)
		}
	}
}

// refreshReads fills what market m reads of other markets — their environments,
// the aggregates of its event — and marks m dirty when anything it reads beyond
// itself differs from what its last complete evaluation saw.
func (in *Instance) refreshReads(m *mstate, ev *market.Event, st *market.State, now int64) {
	x := &in.x
	r := m.rd
	if r.slots != 0 {
		for i, o := range x.slotMs {
			if r.slots&(1<<i) != 0 && o != m {
				in.fillOther(o, ev, st, now)
			}
		}
	}
	if r.agg {
		in.fillAgg(m, ev, st, now)
	}
	// The cross stamp: what m reads beyond itself, as bits and generations.
	k := m.stamp[:0]
	for i, o := range x.slotMs {
		if r.slots&(1<<i) != 0 {
			k = append(k, o.gen)
		}
	}
	if r.agg {
		a := &m.agg
		k = append(k, uint64(a.Markets), math.Float64bits(a.YesSum), math.Float64bits(a.YesBidSum),
			math.Float64bits(a.YesAskSum), math.Float64bits(a.YesBidSize), math.Float64bits(a.YesAskSize))
	}
	for i := range x.feedIn {
		if r.feeds&(1<<i) != 0 {
			k = append(k, math.Float64bits(x.feeds[i].Price), uint64(x.feeds[i].Time))
		}
	}
	for i, v := range x.sigv {
		if r.signals&(1<<i) != 0 {
			k = append(k, math.Float64bits(*v))
		}
	}
	if r.feeds != 0 {
		for i, c := range in.s.calls {
			if r.feeds&(1<<c.feed) != 0 {
				k = append(k, math.Float64bits(*x.callv[i]))
			}
		}
	}
	if !slices.Equal(k, m.seen) {
		m.dirty = true
		m.seen = append(m.seen[:0], k...)
	}
	m.stamp = k
}

// fillOther fills another market's environment for a market that reads it, as its
// own evaluation would (inputs.go: only what changed is recomputed).
// A market is filled at most once per Decide call (the state does not change
// during one).
func (in *Instance) fillOther(o *mstate, ev *market.Event, st *market.State, now int64) {
	if o.filled == in.epoch {
		return
	}
	o.filled = in.epoch
	h := o.handlesFor(st)
	if h.info == nil {
		o.yes.clearBook()
		o.no.clearBook()
		return
	}
	in.fill(o, h, ev, st, now)
}

// fillAgg computes the aggregates of m's neg-risk event over the bound markets in it.
func (in *Instance) fillAgg(m *mstate, ev *market.Event, st *market.State, now int64) {
	a := &m.agg
	*a = EventAgg{YesSum: nan, YesBidSum: nan, YesAskSum: nan, YesBidSize: nan, YesAskSize: nan}
	id := in.eventOf(m, st)
	if id == "" {
		return
	}
	a.YesSum, a.YesBidSum, a.YesAskSum = 0, 0, 0
	a.YesBidSize, a.YesAskSize = math.Inf(1), math.Inf(1)
	for _, o := range in.ms {
		if in.eventOf(o, st) != id {
			continue
		}
		in.fillOther(o, ev, st, now)
		a.Markets++
		a.YesSum += o.yes.Mid
		a.YesBidSum += o.yes.Bid
		a.YesAskSum += o.yes.Ask
		a.YesBidSize = min(a.YesBidSize, o.yes.BidSize)
		a.YesAskSize = min(a.YesAskSize, o.yes.AskSize)
	}
}

// eventOf returns the neg-risk event of a bound market ("" for none, or no
// metadata yet).
func (in *Instance) eventOf(m *mstate, st *market.State) string {
	info := m.handlesFor(st).info
	if info == nil || !info.NegRisk {
		return ""
	}
	return info.NegRiskID
}

// evaluates reports whether an event of market e evaluates market m (besides e).
func (in *Instance) evaluates(m, e *mstate, st *market.State) bool {
	if m == e {
		return true
	}
	r := m.rd
	if r.slots != 0 {
		for i, o := range in.x.slotMs {
			if o == e && r.slots&(1<<i) != 0 {
				return true
			}
		}
	}
	if r.agg {
		if id := in.eventOf(m, st); id != "" && id == in.eventOf(e, st) {
			return true
		}
	}
	return false
}

// inputMask returns the bits of the feeds bound to a symbol, or of the signal of a
// name.
func (in *Instance) inputMask(ev *market.Event) reads {
	var r reads
	switch ev.Kind {
	case market.EventFeed:
		for i, b := range in.x.feedIn {
			if b.Symbol == ev.Name {
				r.feeds |= 1 << i
			}
		}
	case market.EventSignal:
		for i, b := range in.x.sigIn {
			if b.Name == ev.Name {
				r.signals |= 1 << i
			}
		}
	}
	return r
}

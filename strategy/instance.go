package strategy

import (
	"fmt"
	"math"
	"slices"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// Binding names one market an instance trades. The agent file makes them: for a
// strategy with named slots (markets: [main, hedge]) one binding per slot, with the
// slot's name; for a strategy without, one or more bindings with any unique names
// (a slug, say).
type Binding struct {
	Name   string             // slot name or label; part of every quote's key ("main/bid")
	Market market.ConditionID // the market; its tokens and metadata come from market.State
}

// Instance is one running copy of a strategy: its markets, indicator state and rule
// cooldowns, and a reusable evaluator. It is not safe for concurrent use: the agent
// loop that owns the market.State owns the Instance.
type Instance struct {
	s      *Strategy
	ms     []*mstate
	byCond map[market.ConditionID]*mstate
	last   *mstate // the market find returned last
	eval   exprenv.Evaluator
	x      xstate // the inputs every market shares (inputs_cross.go)
	epoch  uint64 // Decide calls, for filling each market at most once per call

	q quietState // DecideAt's record of the last evaluation (quiet.go)
}

// mstate is an instance's state for one bound market.
type mstate struct {
	b     Binding
	yes   Token
	no    Token
	mkt   MarketInfo
	evi   EventInfo
	acct  Account
	slots Slots
	env   Env
	boxed any // env boxed once: expressions read through its pointers
	f     []*float64
	bl    []*bool

	ind     []*indicator
	start   int64
	started bool

	quotes   []int // indexes into s.quotes that run on this market
	qkeys    []string
	qreasons []string
	rules    []int
	rkeys    []string
	rreasons []string
	lastFire []int64
	fired    []bool

	in    inputs   // what the environment was last filled from (inputs.go)
	dirty bool     // an input changed since the last complete evaluation (reuse.go)
	snap  snapshot // the last complete evaluation (reuse.go)
	h     handles  // its entries of the state's maps (handles.go)

	// pv holds the dependency bits (memo.go) that changed since the vars were
	// last evaluated; memo says whether s.memo applies to the market (it reads
	// nothing beyond itself); kept counts the var evaluations it saved (for tests).
	pv   uint64
	memo bool
	kept uint64
	ron  uint16 // the on: bits of its rules
	rall bool   // one of its rules has no on: (it runs on every event)

	agg    EventAgg // event.markets, event.yes_sum, ...
	rd     reads    // what its expressions read beyond the market (deps.go)
	gen    uint64   // changes whenever fill recomputes a part of its environment
	filled uint64   // the Decide call (Instance.epoch) it was last filled as another market's input
	seen   []uint64 // the cross stamp of its last evaluation (refreshReads)
	stamp  []uint64
}

// NewInstance binds s to markets. Names must be unique and non-empty; for a strategy
// with named slots, every slot must be bound exactly once and nothing else. A
// strategy that declares feeds or signals needs NewInstanceWith.
func (s *Strategy) NewInstance(bindings []Binding) (*Instance, error) {
	return s.NewInstanceWith(bindings, Sources{})
}

// NewInstanceWith is NewInstance that also binds the strategy's feeds and signals.
func (s *Strategy) NewInstanceWith(bindings []Binding, src Sources) (*Instance, error) {
	if len(bindings) == 0 {
		return nil, fmt.Errorf("strategy %s: no market bound", s.Name())
	}
	names := map[string]bool{}
	conds := map[market.ConditionID]bool{}
	for _, b := range bindings {
		switch {
		case b.Name == "":
			return nil, fmt.Errorf("strategy %s: a market binding has no name", s.Name())
		case b.Market == "":
			return nil, fmt.Errorf("strategy %s: market %s is bound to no condition id", s.Name(), b.Name)
		case names[b.Name]:
			return nil, fmt.Errorf("strategy %s: market %s is bound twice", s.Name(), b.Name)
		case conds[b.Market]:
			return nil, fmt.Errorf("strategy %s: condition %s is bound twice", s.Name(), b.Market)
		}
		if len(s.spec.slots) > 0 && !slices.Contains(s.spec.slots, b.Name) {
			return nil, fmt.Errorf("strategy %s: %s is not one of its market slots %v", s.Name(), b.Name, s.spec.slots)
		}
		names[b.Name], conds[b.Market] = true, true
	}
	for _, slot := range s.spec.slots {
		if !names[slot] {
			return nil, fmt.Errorf("strategy %s: market slot %s is not bound", s.Name(), slot)
		}
	}
	in := &Instance{s: s, byCond: make(map[market.ConditionID]*mstate, len(bindings))}
	for _, b := range bindings {
		m := &mstate{b: b}
		m.env = Env{Yes: &m.yes, No: &m.no, Market: &m.mkt, Event: &m.evi, Account: &m.acct, Slots: &m.slots,
			Inputs: &in.x.x, Agg: &m.agg}
		m.rd = s.marketReads(b.Name)
		m.memo = s.memo != nil && m.rd == (reads{})
		m.boxed = m.env
		m.f, m.bl = m.slots.floats(), m.slots.bools()
		for _, ci := range s.indicators {
			var x *indicator // feed and signal series: one for the instance (xstate.ind)
			if ci.series != serFeed && ci.series != serSignal {
				x = newIndicator(ci.fn, ci.events, ci.span)
			}
			m.ind = append(m.ind, x)
		}
		for i, q := range s.quotes {
			if q.slot == "" || q.slot == b.Name {
				m.quotes = append(m.quotes, i)
				m.qkeys = append(m.qkeys, b.Name+"/"+q.id)
				m.qreasons = append(m.qreasons, "quote "+q.id)
			}
		}
		for i, r := range s.rules {
			if r.slot == "" || r.slot == b.Name {
				m.rules = append(m.rules, i)
				m.rkeys = append(m.rkeys, b.Name+"/"+r.id)
				m.rreasons = append(m.rreasons, "rule "+r.id)
				m.ron |= r.on
				m.rall = m.rall || r.on == 0
			}
		}
		m.pv = depAll
		m.lastFire = make([]int64, len(m.rules))
		m.fired = make([]bool, len(m.rules))
		m.acct.Orders = make([]OrderInfo, 0, 8)
		in.ms = append(in.ms, m)
		in.byCond[b.Market] = m
	}
	if err := in.bindSources(src); err != nil {
		return nil, err
	}
	return in, nil
}

// Strategy returns the strategy the instance runs.
func (in *Instance) Strategy() *Strategy { return in.s }

// Decide evaluates the strategy for one event and appends the resulting intents to
// out, returning the extended slice (pass a reused out[:0] and the hot path does not
// allocate intents). st must already include ev (call st.Apply(ev) first); Decide
// only reads st. Between calls with the same st it keeps each bound market's Info,
// books and positions, looking them up again when st's maps change their number of
// entries (handles.go): change st through Apply, or replace an entry of those maps
// in place only before the first call.
//
// The event's market is evaluated (every bound market for a timer event; none for an
// event of an unbound market): indicators are sampled, vars computed, then rules
// (in file order; a rule fires when its on: matches the event, its cooldown has
// passed and its when is true), then quotes. Each evaluated market yields one intent
// per quote that runs on it: IntentQuote when the quote is wanted (its when holds,
// the market is tradable, and price and size are valid after rounding), IntentCancel
// with the quote's key otherwise, so the reconciler always gets the complete desired
// set. A fired flatten, cancel_all or pause suppresses that market's quotes for the
// evaluation.
//
// When nothing a market's expressions read has changed since its last complete
// evaluation, its vars and quotes are not evaluated again and the same quote intents
// are appended (rules are always evaluated; see reuse.go and docs/design/0106).
//
// A failing expression (a runtime error or a recovered panic) stops the evaluation:
// Decide returns out with nothing appended and a positioned *exprenv.Error; the agent
// should stop opening positions and report. The same events with the same state give
// byte-identical intents.
func (in *Instance) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	n0 := len(out)
	var err error
	in.epoch++
	if in.s.hasInputs() {
		now := ev.Time
		if now == 0 {
			now = st.Time
		}
		in.updateInputs(ev, st, now)
	}
	switch ev.Kind {
	case market.EventTimer:
		for _, m := range in.ms {
			if out, err = in.evalMarket(m, ev, st, out); err != nil {
				return out[:n0], err
			}
		}
		return out, nil
	case market.EventFeed, market.EventSignal:
		mask := in.inputMask(ev)
		for _, m := range in.ms {
			if m.rd.feeds&mask.feeds != 0 || m.rd.signals&mask.signals != 0 {
				if out, err = in.evalMarket(m, ev, st, out); err != nil {
					return out[:n0], err
				}
			}
		}
		return out, nil
	}
	e := in.find(ev, st)
	if e == nil {
		return out, nil
	}
	if !in.s.cross {
		if out, err = in.evalMarket(e, ev, st, out); err != nil {
			return out[:n0], err
		}
		return out, nil
	}
	for _, m := range in.ms {
		if in.evaluates(m, e, st) {
			if out, err = in.evalMarket(m, ev, st, out); err != nil {
				return out[:n0], err
			}
		}
	}
	return out, nil
}

// eventToken returns the token an event is about, if any.
func eventToken(ev *market.Event) market.TokenID {
	switch ev.Kind {
	case market.EventFill:
		return ev.Fill.Token
	case market.EventOrder:
		return ev.Order.Token
	case market.EventPriceChange:
		if ev.Token == "" && len(ev.Changes) > 0 {
			return ev.Changes[0].Token
		}
	case market.EventResolved:
		if ev.Token == "" {
			return ev.Winner
		}
	}
	return ev.Token
}

// find returns the bound market an event belongs to.
func (in *Instance) find(ev *market.Event, st *market.State) *mstate {
	cond := ev.Market
	switch {
	case ev.Kind == market.EventFill && ev.Fill.Market != "":
		cond = ev.Fill.Market
	case ev.Kind == market.EventOrder && ev.Order.Market != "":
		cond = ev.Order.Market
	}
	if cond != "" {
		if in.last != nil && in.last.b.Market == cond {
			return in.last
		}
		m := in.byCond[cond]
		if m != nil {
			in.last = m
		}
		return m
	}
	tok := eventToken(ev)
	if tok == "" {
		return nil
	}
	for _, m := range in.ms {
		if info := st.Markets[m.b.Market]; info != nil {
			if _, ok := info.OutcomeOf(tok); ok {
				return m
			}
		}
	}
	return nil
}

func (in *Instance) evalMarket(m *mstate, ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	h := m.handlesFor(st)
	info := h.info
	if info == nil {
		return out, nil // no metadata yet: nothing can be priced
	}
	s := in.s
	now := ev.Time
	if now == 0 {
		now = st.Time
	}
	if !m.started {
		m.start, m.started = now, true
	}
	bit, touched, mirrored := in.fill(m, h, ev, st, now)
	if m.rd != (reads{}) {
		in.refreshReads(m, ev, st, now)
	}

	// indicators
	for i := range s.indicators {
		ci := &s.indicators[i]
		x := m.ind[i]
		if ci.series == serFeed || ci.series == serSignal {
			// sampled once for every market, on the input's updates (sampleInput)
			*m.f[ci.slot] = in.x.ind[i].value(now, in.x.start)
			continue
		}
		if ci.series.fromTrades() {
			if ev.Kind == market.EventLastTrade && ev.Token == info.Tokens[ci.token] {
				v := f(ev.Price)
				if ci.series == serVolume {
					v = f(ev.Size)
				}
				x.add(now, v)
			}
		} else if bit == onBook && (touched[ci.token] || mirrored[ci.token] && touched[ci.token.Other()]) {
			x.add(now, seriesValue(m.token(ci.token), ci.series))
		}
		v, p := x.value(now, m.start), m.f[ci.slot]
		if !sameFloat(*p, v) {
			m.pend(depSlot0 << i)
		}
		*p = v
	}
	// Unchanged inputs: the vars' slots still hold their values, the quotes' last
	// intents are appended again (reuse.go).
	// Vars whose inputs did not change keep their values (memo.go).
	memo := m.memo && s.reuse
	var reuse bool
	if memo {
		// The dependency bits say it: none is pending after a complete
		// evaluation (or a reuse) left the snapshot valid.
		reuse = m.snap.valid && m.pv == 0
		m.snap.valid = false
	} else {
		reuse = s.reuse && m.same(s)
	}
	// vars
	for i := range s.vars {
		if reuse {
			break
		}
		v := &s.vars[i]
		if memo && s.memo.vars[i]&m.pv == 0 {
			m.kept++
			continue
		}
		vbit := depSlot0 << (len(s.indicators) + i)
		if v.isBool {
			var b bool
			if v.run.boolean != nil {
				b = v.run.boolean(m.boxed)
			} else {
				var err error
				if b, err = in.eval.Bool(v.prog, m.boxed); err != nil {
					return out, err
				}
			}
			if p := m.bl[v.slot]; *p != b {
				*p = b
				m.pend(vbit)
			}
			continue
		}
		var x float64
		if v.run.num != nil {
			x = v.run.num(m.boxed)
		} else {
			var err error
			if x, err = in.eval.Float(v.prog, m.boxed); err != nil {
				return out, err
			}
		}
		if p := m.f[v.slot]; !sameFloat(*p, x) {
			*p = x
			m.pend(vbit)
		}
	}
	if !reuse {
		m.pv = 0
	}
	// rules
	tradable := info.Tradable() && info.TickSize > 0
	suppress := false
	for j, ri := range m.rules {
		if m.ron&bit == 0 && !m.rall {
			break // no rule runs on this event
		}
		r := &s.rules[ri]
		if r.on != 0 && r.on&bit == 0 {
			continue
		}
		if r.cooldown > 0 && m.fired[j] && now-m.lastFire[j] < r.cooldown {
			continue
		}
		ok, err := in.boolean(m, r.when)
		if err != nil {
			return out, err
		}
		if !ok {
			continue
		}
		m.fired[j], m.lastFire[j] = true, now
		switch r.action {
		case actTake:
			if !tradable {
				continue
			}
			for k := range r.takes {
				t := &r.takes[k]
				px, err := in.num(m, t.price)
				if err != nil {
					return out, err
				}
				sz, err := in.num(m, t.size)
				if err != nil {
					return out, err
				}
				price, ok1 := toPrice(px, info.TickSize, t.side)
				size, ok2 := toSize(sz, info.MinSize)
				if !ok1 || !ok2 {
					continue
				}
				out = append(out, market.Intent{Kind: market.IntentTake, Key: m.rkeys[j], Market: info.Condition,
					Token: info.Tokens[t.token], Outcome: t.token, Side: t.side, Price: price, Size: size, Type: t.typ,
					Reason: m.rreasons[j]})
			}
		case actMerge:
			// A merge leaves the quotes alone: it turns every complete set held
			// (the smaller of the two positions) back into collateral.
			if sets := heldSets(h); sets > 0 && !info.Resolved {
				out = append(out, market.Intent{Kind: market.IntentMerge, Key: m.rkeys[j], Market: info.Condition,
					Size: sets, Reason: m.rreasons[j]})
			}
		case actRedeem:
			// A redeem collects a resolved market's tokens held: the winning
			// shares pay one each (Size), the losing ones nothing.
			if pay, held, ok := st.Redeemable(info.Condition); ok && held > 0 {
				out = append(out, market.Intent{Kind: market.IntentRedeem, Key: m.rkeys[j], Market: info.Condition,
					Size: pay, Reason: m.rreasons[j]})
			}
		default:
			kind := market.IntentCancelAll
			switch r.action {
			case actFlatten:
				kind = market.IntentFlatten
			case actPause:
				kind = market.IntentPause
			}
			out = append(out, market.Intent{Kind: kind, Key: m.rkeys[j], Market: info.Condition, Reason: m.rreasons[j]})
			suppress = true
		}
	}
	if suppress {
		return out, nil
	}
	if reuse {
		m.snap.valid = true
		m.snap.reused++
		return append(out, m.snap.quotes...), nil
	}
	// quotes
	n0 := len(out)
	for j, qi := range m.quotes {
		q := &s.quotes[qi]
		want := tradable
		var err error
		if want && q.when.p != nil {
			if want, err = in.boolean(m, q.when); err != nil {
				return out, err
			}
		}
		var price, size market.Micros
		if want {
			px, err := in.num(m, q.price)
			if err != nil {
				return out, err
			}
			sz, err := in.num(m, q.size)
			if err != nil {
				return out, err
			}
			var ok1, ok2 bool
			price, ok1 = toPrice(px, info.TickSize, q.side)
			size, ok2 = toSize(sz, info.MinSize)
			want = ok1 && ok2
		}
		if !want {
			out = append(out, market.Intent{Kind: market.IntentCancel, Key: m.qkeys[j], Market: info.Condition,
				Token: info.Tokens[q.token], Outcome: q.token, Side: q.side, Reason: m.qreasons[j]})
			continue
		}
		it := market.Intent{Kind: market.IntentQuote, Key: m.qkeys[j], Market: info.Condition,
			Token: info.Tokens[q.token], Outcome: q.token, Side: q.side, Price: price, Size: size, Type: q.typ,
			PostOnly: q.postOnly, Reason: m.qreasons[j]}
		if q.typ == market.GTD {
			it.Expiration = (now + q.ttl + 999) / 1000
		}
		out = append(out, it)
	}
	if s.reuse {
		m.keep(out[n0:])
	}
	return out, nil
}

// heldSets returns the complete sets (one YES and one NO) held in h's market.
func heldSets(h *handles) market.Micros {
	if h.pos[market.Yes] == nil || h.pos[market.No] == nil {
		return 0
	}
	return min(h.pos[market.Yes].Size, h.pos[market.No].Size)
}

// num evaluates a number expression; one that is just an indicator or var name is
// read from its slot.
func (in *Instance) num(m *mstate, p prog) (float64, error) {
	if p.slot >= 0 {
		return *m.f[p.slot], nil
	}
	if p.run.num != nil {
		return p.run.num(m.boxed), nil
	}
	return in.eval.Float(p.p, m.boxed)
}

// boolean evaluates a bool expression, reading a bare bool var from its slot.
func (in *Instance) boolean(m *mstate, p prog) (bool, error) {
	if p.slot >= 0 {
		return *m.bl[p.slot], nil
	}
	if p.run.boolean != nil {
		return p.run.boolean(m.boxed), nil
	}
	return in.eval.Bool(p.p, m.boxed)
}

func (m *mstate) token(o market.Outcome) *Token {
	if o == market.No {
		return &m.no
	}
	return &m.yes
}

func seriesValue(t *Token, s series) float64 {
	switch s {
	case serMid:
		return t.Mid
	case serMicroprice:
		return t.Microprice
	case serBid:
		return t.Bid
	case serAsk:
		return t.Ask
	case serSpread:
		return t.Spread
	case serImbalance:
		return t.Imbalance[1]
	}
	return nan
}

// fill rewrites the environment of m from the state and the event, recomputing
// each part only when what it is computed from changed (inputs.go); a change marks
// m dirty for the reuse check. It returns the event's on: bit, which tokens a book
// event touched and which tokens' book fields were mirrored from the other token's
// book.
func (in *Instance) fill(m *mstate, h *handles, ev *market.Event, st *market.State, now int64) (bit uint16, touched, mirrored [2]bool) {
	s := in.s
	info, books := h.info, h.book
	k := &m.in
	force := !k.ok || s.full
	k.ok = true
	changed := force
	for o := market.Yes; o <= market.No; o++ {
		t, ti := m.token(o), &k.tok[o]
		own, other := books[o], books[o.Other()]
		src, b := bookNone, (*market.Book)(nil)
		switch {
		case own != nil && len(own.Bids)+len(own.Asks) > 0:
			src, b = bookOwn, own
		case other != nil && len(other.Bids)+len(other.Asks) > 0:
			src, b = bookMirror, other
			mirrored[o] = true
		}
		bookCh := ti.setBook(src, b, s.needDepth, force)
		var lastCh, posCh bool
		if bookCh {
			if b == nil {
				t.clearBook()
			} else {
				t.fillBook(b, src == bookMirror, s.needDepth)
			}
		}
		p := h.pos[o]
		var lt market.LastTrade
		ok := false
		if s.needLast || p != nil && !t.HasBid && !t.HasAsk {
			// the last trade is read by an expression, or marks a position
			lt, ok = st.Last[info.Tokens[o]]
		}
		lastCh = ti.setLast(lt, ok, force)
		if lastCh {
			t.fillLast(lt, ok)
		}
		payout := market.Micros(-1) // a resolved market's shares are worth their payout
		if info.Resolved {
			payout = 0
			if o == info.Winner {
				payout = market.One
			}
		}
		if posCh = ti.setPos(p, payout, force); bookCh || lastCh || posCh {
			t.fillPosition(p, payout)
			changed = true
			m.pend(tokenDeps(int(o), bookCh, lastCh, posCh))
		}
	}

	mk := &m.mkt
	if k.mkt.setMarket(info, force) {
		mk.Name, mk.ID = m.b.Name, string(info.Condition)
		mk.Tick, mk.MinSize = f(info.TickSize), f(info.MinSize)
		mk.FeeBps, mk.Fee = float64(info.FeeBps), float64(info.FeeBps)/1e4
		mk.End, mk.NegRisk = info.EndDate, info.NegRisk
		mk.Tradable, mk.Resolved = k.mkt.tradable, info.Resolved
		mk.YesWon = k.mkt.yesWon
		changed = true
		m.pend(depMarket)
	}
	if s.needEndsIn {
		mk.EndsIn = math.Inf(1)
		if info.EndDate != 0 {
			mk.EndsIn = float64(info.EndDate) - float64(now)/1000
		}
	}

	a := &m.acct
	a.Time = now
	a.Inventory = m.yes.Position - m.no.Position
	a.UPnL = m.yes.UPnL + m.no.UPnL
	a.RPnL = m.yes.RPnL + m.no.RPnL
	if ai := (accountIn{balance: st.Balance, reserved: st.Reserved, mode: st.Mode}); force || ai != k.acct {
		k.acct = ai
		a.Balance, a.Reserved = f(st.Balance), f(st.Reserved)
		a.Mode = st.Mode.String()
		changed = true
		m.pend(depAccount)
	}
	if s.needOrders || s.needOpen {
		was := [4]float64{m.yes.OpenBuy, m.yes.OpenSell, m.no.OpenBuy, m.no.OpenSell}
		m.yes.OpenBuy, m.yes.OpenSell, m.no.OpenBuy, m.no.OpenSell = 0, 0, 0, 0
		in.fillOrders(m, info, st, now)
		now := [4]float64{m.yes.OpenBuy, m.yes.OpenSell, m.no.OpenBuy, m.no.OpenSell}
		if !sameFloats(was[:], now[:]) {
			changed = true
			m.pend(depOpen)
		}
	}
	if changed {
		m.dirty = true
		m.gen++
	}
	if force {
		m.pend(depAll)
	}

	bit, name := kindBit(ev.Kind)
	if s.needEvent {
		e := &m.evi
		e.Kind, e.Time, e.Token, e.Side, e.Price, e.Size, e.Fee = name, now, "", "", nan, 0, 0
		if o, ok := info.OutcomeOf(eventToken(ev)); ok {
			e.Token = outcomeName(o)
		}
		switch ev.Kind {
		case market.EventLastTrade:
			e.Side, e.Price, e.Size = sideName(ev.Side), f(ev.Price), f(ev.Size)
		case market.EventFill:
			e.Side, e.Price, e.Size, e.Fee = sideName(ev.Fill.Side), f(ev.Fill.Price), f(ev.Fill.Size), f(ev.Fill.Fee)
		case market.EventOrder:
			e.Side, e.Price, e.Size = sideName(ev.Order.Side), f(ev.Order.Price), f(ev.Order.Size)
		}
	}
	switch ev.Kind {
	case market.EventBook:
		if o, ok := info.OutcomeOf(ev.Token); ok {
			touched[o] = true
		}
	case market.EventPriceChange:
		for i := range ev.Changes {
			tok := ev.Changes[i].Token
			if tok == "" {
				tok = ev.Token
			}
			if o, ok := info.OutcomeOf(tok); ok {
				touched[o] = true
			}
		}
	}
	return bit, touched, mirrored
}

// fillOrders lists the wallet's open orders in this market (oldest first, then by id,
// so the order is deterministic whatever the map's) and sums the open sizes.
func (in *Instance) fillOrders(m *mstate, info *market.Info, st *market.State, now int64) {
	a := &m.acct
	a.Orders = a.Orders[:0]
	for _, o := range st.Orders {
		out, ok := info.OutcomeOf(o.Token)
		if !ok {
			continue
		}
		rem := o.Remaining()
		t := m.token(out)
		if o.Side == market.Buy {
			t.OpenBuy += f(rem)
		} else {
			t.OpenSell += f(rem)
		}
		if in.s.needOrders {
			a.Orders = append(a.Orders, OrderInfo{Token: outcomeName(out), Side: sideName(o.Side), Price: f(o.Price),
				Size: f(o.Size), Remaining: f(rem), Type: o.Type.String(), PostOnly: o.PostOnly, Age: float64(now - o.CreatedAt),
				id: o.ID, created: o.CreatedAt})
		}
	}
	slices.SortFunc(a.Orders, func(x, y OrderInfo) int {
		if x.created != y.created {
			if x.created < y.created {
				return -1
			}
			return 1
		}
		if x.id < y.id {
			return -1
		}
		if x.id > y.id {
			return 1
		}
		return 0
	})
}

// toPrice converts an expression's price to micro-units on the tick: snapped to the
// nearest micro-unit (removing float noise), then rounded down for a BUY and up for a
// SELL, so the order never crosses the price the formula asked for. It fails for NaN,
// ±Inf and prices outside (0, 1) after rounding.
func toPrice(x float64, tick market.Micros, side market.Side) (market.Micros, bool) {
	m, ok := exprenv.SnapMicros(x)
	if !ok || tick <= 0 || m <= 0 {
		return 0, false
	}
	p := market.Micros(m) / tick * tick
	if side == market.Sell && p < market.Micros(m) {
		p += tick
	}
	if p <= 0 || p >= market.One {
		return 0, false
	}
	return p, true
}

// toSize converts an expression's size to micro-units, rounded down to the lot. It
// fails for NaN, ±Inf, sizes below the market's minimum (or one lot) and above
// market.MaxMicros.
func toSize(x float64, minSize market.Micros) (market.Micros, bool) {
	m, ok := exprenv.SnapMicros(x)
	if !ok {
		return 0, false
	}
	s := market.Micros(m) / market.Lot * market.Lot
	if s < max(minSize, market.Lot) || s > market.MaxMicros {
		return 0, false
	}
	return s, true
}

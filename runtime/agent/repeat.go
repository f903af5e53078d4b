package agent

import "github.com/pitbossdev/pitboss/market"

// A pass that repeats the last one (docs/design/0138). Most events change nothing
// that decides a quoting strategy's orders: the strategy states the same quotes,
// the reconciler keeps the same live orders, and the guards reuse every decision
// (the quote denied last time is denied again, with the same record). For such a
// pass the agent does not walk its intents through the reconciler and the guards
// one by one: it checks once that the pass is the last one again and replays that
// pass's effects — the counts, the denials' audit records and log lines — which
// are exactly those the full pass would have.
//
// A pass is recorded (passTrace) when every one of its intents is a quote that
// ended in one of two ways — its live order kept and allowed (PlanKeep), or no
// order and its placement denied by the guards (PlanPlace, a denial other than
// the rate limit) — or a quote's withdrawal (a cancel by key) with nothing to
// withdraw (PlanNone, or no such quote yet). Any other outcome — an order placed, replaced or cancelled, a
// request in flight, a placement held back (paused, backoff, in-flight limit) — and
// any GTD quote (its plan reads the time) make the pass not repeatable.
//
// The next pass repeats it when its intents equal the recorded ones (every field)
// and nothing the reconciler reads changed since: the state's version (orders,
// fills, positions, balance, markets: stVer), the agent's own bookkeeping (acts:
// every venue call but heartbeats, every answer, control request, kill-switch
// action, failure, flattening, held slot), no other guard batch in between, no
// flattening, no held slot. Then each slot's plan is the same (PlanQuote is a
// function of the intent, the slot's order and its tick; the time only for GTD),
// and the guards confirm their part (BatchRepeater): every decision would be
// reused unchanged. What the full pass would have done is then what the trace
// holds: an allowed keep is a reused allowance (no audit, the slot's denial
// memory cleared — it is already), a denied placement is the same denial, counted,
// audited and logged as decided sets them.
type passTrace struct {
	ok      bool
	on      bool // recording: within decide's walk of the intents
	stVer   uint64
	acts    uint64
	batch   uint64 // the guard batch the pass ran in
	intents []market.Intent
	steps   []passStep
	checks  int // the steps that asked the guards
}

// passStep is what one intent of a recorded pass did.
type passStep struct {
	slot   *slot // nil: a withdrawal of a quote that has no slot
	kind   stepKind
	origin bool    // the slot had no open order: the pass stamped its origin
	v      Verdict // the denial
}

// stepKind is the outcome of one intent of a repeatable pass.
type stepKind uint8

const (
	stepKeep   stepKind = iota + 1 // the live order kept, allowed
	stepDenied                     // no order: its placement denied
	stepNone                       // a withdrawal with nothing to withdraw: no check
)

// BatchRepeater is implemented by Guards that can confirm, for a whole batch, that
// it repeats the last one (runtime/wire's Guards over policies.Batch.Repeat).
type BatchRepeater interface {
	// RepeatBatch is called right after Begin, before any check of the batch, by a
	// caller about to check the same n intents as in the last batch, in the same
	// order and each the same way (CheckKeep with the same order, or Check of a
	// new order), with no batch in between. It reports whether every one of those
	// decisions would be reused unchanged (Verdict.Reused, the denials with the
	// same record); if so the guards have made them (denials audited by their own
	// sink) and the caller checks none of them.
	RepeatBatch(n int) bool
}

// act records that the agent's bookkeeping changed (see passTrace).
func (a *Agent) act() { a.acts++ }

// traceStep records the outcome of the current pass's quote on slot s, when
// recording.
func (a *Agent) traceStep(s *slot, kind stepKind, v *Verdict) {
	if !a.tr.on {
		return
	}
	st := passStep{slot: s, kind: kind}
	if kind == stepDenied {
		st.v = *v
	}
	a.tr.steps = append(a.tr.steps, st)
	if kind != stepNone {
		a.tr.checks++
	}
}

// repeats reports whether the pass of intents out repeats the recorded one (the
// guards' batch has begun; they are asked last).
func (a *Agent) repeats(out []market.Intent) bool {
	t := &a.tr
	if !t.ok || a.repeater == nil || t.stVer != a.stVer || t.acts != a.acts || t.batch+1 != a.batches ||
		len(out) != len(t.intents) || len(a.flatten) > 0 || len(a.held) > 0 || a.pending.Any() || len(a.dirty) > 0 {
		return false
	}
	// The intents of a quiet pass are those of the last pass, the one the trace
	// holds or repeats (no batch in between): compared already.
	for i := 0; i < len(out) && !a.quiet; i++ {
		if !out[i].Same(&t.intents[i]) {
			return false
		}
	}
	return t.checks == 0 || a.repeater.RepeatBatch(t.checks)
}

// repeat replays the recorded pass (see passTrace): what intent and reconcile did
// for each of its quotes.
func (a *Agent) repeat(out []market.Intent) {
	for i := range out {
		it, st := &out[i], &a.tr.steps[i]
		a.counts.Intents++
		a.metrics.Intent(it.Kind)
		s := st.slot
		if st.origin {
			s.origin = a.arrived
		}
		if st.kind == stepDenied {
			v := st.v
			v.Reused = true
			a.decided(&s.want, v)
			a.denied(s, &s.want, &v)
		}
	}
	a.tr.batch = a.batches
	a.repeated++
}

// beginTrace starts recording the pass of out, when it may be repeated.
func (a *Agent) beginTrace(out []market.Intent) {
	t := &a.tr
	t.ok = a.repeater != nil && !a.cfg.FullPasses && len(out) > 0 && len(a.flatten) == 0 && len(a.held) == 0
	for i := range out {
		if k := out[i].Kind; k != market.IntentQuote && (k != market.IntentCancel || out[i].OrderID != "") || out[i].Type == market.GTD {
			t.ok = false
		}
	}
	t.steps, t.checks = t.steps[:0], 0
	t.on = t.ok
}

// traceQuote notes that quote slot s, which had no open order when origin, was
// reconciled; steps is the number of steps recorded before (reconcile records
// one for the outcomes a pass may repeat, none for the others).
func (a *Agent) traceQuote(s *slot, origin bool, steps int) {
	t := &a.tr
	if !t.on {
		return
	}
	if len(t.steps) != steps+1 || t.steps[steps].slot != s {
		t.ok, t.on = false, false
		return
	}
	t.steps[steps].origin = origin
}

// endTrace ends the recording of the pass of out.
func (a *Agent) endTrace(out []market.Intent) {
	t := &a.tr
	t.on = false
	if t.ok && len(t.steps) != len(out) {
		t.ok = false
	}
	if t.ok {
		t.intents = append(t.intents[:0], out...)
		t.stVer, t.acts, t.batch = a.stVer, a.acts, a.batches
	}
}

package agent

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// phase is where one of the agent's orders is in its life.
type phase uint8

const (
	phPlacing    phase = iota + 1 // Prepare/Submit sent, not answered
	phLive                        // accepted and resting
	phCancelling                  // cancel sent, not answered
	phLookup                      // outcome unknown: looking it up by id
	phDone                        // final (filled, cancelled, expired, rejected)
)

// orderRec is the agent's bookkeeping for one order it placed (or adopted).
type orderRec struct {
	client      uint64
	id          market.OrderID
	key         string
	slot        *slot
	req         OrderRequest
	prep        PreparedOrder
	prepared    bool
	phase       phase
	cancelAfter bool // cancel it as soon as its placement is answered
	final       bool // the venue reported it final while a request was in flight
	attempts    int
	matched     market.Micros
	filled      market.Micros // the sum of its fills seen so far
	take        bool          // FOK/FAK: never rests
	orphan      bool          // found on the venue, not placed by this agent's bookkeeping
	origin      time.Time
	doneAt      int64
}

func (r *orderRec) open() bool { return r.phase != phDone }

func (r *orderRec) inFlight() bool {
	return r.phase == phPlacing || r.phase == phCancelling || r.phase == phLookup
}

// order returns the order as the venue has it (status Live).
func (r *orderRec) order(status market.OrderStatus) market.Order {
	q := &r.req
	return market.Order{ID: r.id, Owner: market.Address{}, Market: q.Market, Token: q.Token, Outcome: q.Outcome,
		Side: q.Side, Price: q.Price, Size: q.Size, Matched: r.matched, Type: q.Type, PostOnly: q.PostOnly,
		Expiration: q.Expiration, CreatedAt: q.Time, Status: status}
}

// slot is one quote (or take rule, or flattening) key: what the strategy wants and
// the order that carries it.
type slot struct {
	key      string
	market   market.ConditionID
	want     market.Intent
	hasWant  bool
	cur      *orderRec
	origin   time.Time // the event that asked for the pending placement
	denied   string    // guard of the last denial logged at info ("" after an order)
	backoff  int64     // event time before which no placement (after a rejection)
	failures int
	// waitData holds back the next order of a take or flatten slot whose last order
	// ended unfilled (rejected, or a FAK's rest cancelled): it priced against a book
	// that the venue no longer has, so it waits for new market data of its market
	// or for its backoff to pass (see hold).
	waitData bool
	queued   bool
	replace  bool          // the pending placement replaces an order
	was      market.Micros // the replaced order's price
	info     *market.Info  // the market's, once looked up (slotTick)
}

func (a *Agent) slotFor(key string, m market.ConditionID) *slot {
	s := a.slots[key]
	if s == nil {
		s = &slot{key: key, market: m}
		a.slots[key] = s
	}
	if s.market == "" {
		s.market = m
	}
	return s
}

func (a *Agent) markDirty(s *slot) {
	if s != nil && !s.queued {
		s.queued = true
		a.dirty = append(a.dirty, s)
	}
}

// reconcileDirty reconciles the slots whose orders changed since their last pass.
func (a *Agent) reconcileDirty() {
	if len(a.dirty) == 0 {
		return
	}
	a.beginBatch()
	for i := 0; i < len(a.dirty); i++ { // reconcile may queue more
		if s := a.dirty[i]; s.queued {
			a.reconcile(s)
		}
	}
	clear(a.dirty)
	a.dirty = a.dirty[:0]
}

// quoteSlot returns the slot of quote intent it, the i-th of the strategy's pass.
// Strategies name their quotes in the same order on every pass, so the slot the
// i-th intent named last time is tried first — a string comparison, which the
// strategy's reused key strings make a pointer comparison — before the lookup by
// key. Slots are never removed, so a remembered one stays valid.
func (a *Agent) quoteSlot(i int, it *market.Intent) *slot {
	if i < len(a.passSlots) {
		if s := a.passSlots[i]; s != nil && s.key == it.Key && s.market != "" {
			return s
		}
	}
	s := a.slotFor(it.Key, it.Market)
	if i < maxPassSlots {
		for len(a.passSlots) <= i {
			a.passSlots = append(a.passSlots, nil)
		}
		a.passSlots[i] = s
	}
	return s
}

// maxPassSlots bounds the positions quoteSlot remembers.
const maxPassSlots = 256

// intent handles one intent of the strategy within the current batch, the i-th
// of its pass.
func (a *Agent) intent(i int, it *market.Intent) {
	a.counts.Intents++
	a.metrics.Intent(it.Kind)
	switch it.Kind {
	case market.IntentQuote:
		s := a.quoteSlot(i, it)
		s.want, s.hasWant = *it, true
		origin := s.cur == nil || !s.cur.open()
		if origin {
			s.origin = a.arrived
		}
		steps := len(a.tr.steps)
		a.reconcile(s)
		a.traceQuote(s, origin, steps)
	case market.IntentCancel:
		if it.OrderID != "" {
			if r := a.byID[it.OrderID]; r != nil && r.open() && a.check(it, r.id).Allowed {
				a.cancel(r, "strategy")
			}
			return
		}
		s := a.slots[it.Key]
		if s == nil {
			a.traceStep(nil, stepNone, nil)
			return // nothing to withdraw: nothing to decide
		}
		s.hasWant = false
		if s.cur != nil && s.cur.phase == phLive {
			if !a.check(it, s.cur.id).Allowed {
				return
			}
		}
		steps := len(a.tr.steps)
		a.reconcile(s)
		a.traceQuote(s, false, steps)
	case market.IntentTake:
		a.take(it)
	case market.IntentCancelAll:
		if a.check(it, "").Allowed {
			a.cancelAll(it.Market, reasonOf(it, "cancel_all"))
		}
	case market.IntentFlatten:
		if a.check(it, "").Allowed {
			a.startFlatten(it.Market, reasonOf(it, "flatten"))
		}
	case market.IntentPause:
		if a.check(it, "").Allowed {
			a.pause(reasonOf(it, "pause"))
		}
	case market.IntentMerge:
		if a.check(it, "").Allowed {
			a.merge(it.Market, it.Size, reasonOf(it, "merge"))
		}
	case market.IntentRedeem:
		if a.check(it, "").Allowed {
			a.redeem(it.Market, reasonOf(it, "redeem"))
		}
	default:
		a.check(it, "") // denied by the allowlist, and audited
	}
}

func reasonOf(it *market.Intent, def string) string {
	if it.Reason != "" {
		return it.Reason
	}
	if it.Key != "" {
		return it.Key
	}
	return def
}

// check runs one intent through the guards, audits the decision and counts it.
func (a *Agent) check(it *market.Intent, replaces market.OrderID) Verdict {
	return a.decided(it, a.guards.Check(it, replaces))
}

// checkKeep re-checks the live order keeps, which stays for it (see Keeper). An
// allowed decision reused unchanged is neither audited nor counted again: the
// order's standing decision holds.
func (a *Agent) checkKeep(it *market.Intent, keeps market.OrderID) Verdict {
	if a.keeper == nil {
		return a.check(it, keeps)
	}
	v := a.keeper.CheckKeep(it, keeps)
	if v.Reused && v.Allowed {
		return v
	}
	return a.decided(it, v)
}

// decided audits and counts the guards' verdict v on it.
func (a *Agent) decided(it *market.Intent, v Verdict) Verdict {
	if v.Action.Any() {
		a.pending = mergeAction(a.pending, v.Action)
	}
	if !v.Allowed {
		a.counts.Denials++
		a.metrics.Denial(v.Guard)
	}
	if a.sink != nil {
		// A record of its own, of which only these fields are ever set (sinks do
		// not modify records): no clearing of the order, fill and position fields
		// for every decision.
		r := &a.decRec
		r.Kind, r.Agent, r.Time, r.Intent, r.Allowed = AuditDecision, a.cfg.ID, a.st.Time, *it, v.Allowed
		r.Guard, r.Code, r.Reason, r.Key = v.Guard, v.Code, v.Reason, it.Key
		a.sink.Audit(r)
	}
	return v
}

// reconcile brings slot s's order in line with what it wants.
func (a *Agent) reconcile(s *slot) {
	s.queued = false
	var want *market.Intent
	if s.hasWant && !a.flattening(s.market) {
		want = &s.want
	}
	var live *Live
	inFlight := false
	if r := s.cur; r != nil && r.open() {
		if r.inFlight() {
			inFlight = true
		} else {
			l := Live{Token: r.req.Token, Side: r.req.Side, Price: r.req.Price, Remaining: r.req.Size - r.matched,
				Type: r.req.Type, PostOnly: r.req.PostOnly, Expiration: r.req.Expiration}
			live = &l
		}
	}
	rc := &a.cfg.Reconcile
	plan := PlanQuote(want, live, inFlight, a.st.Time, a.slotTick(s), rc.ToleranceTicks, rc.SizeTolerance)
	switch plan {
	case PlanNone:
		a.traceStep(s, stepNone, nil)
	case PlanCancel:
		a.cancel(s.cur, "withdrawn")
	case PlanKeep:
		switch v := a.checkKeep(want, s.cur.id); {
		case v.Allowed:
			s.denied = ""
			if !v.Action.Any() {
				a.traceStep(s, stepKeep, nil)
			}
		case !v.RateLimited:
			a.denied(s, want, &v)
			a.cancel(s.cur, "denied by "+v.Guard)
		}
	case PlanPlace:
		if !a.canOpen() || s.backoff > a.st.Time || a.inflight >= a.cfg.MaxInFlight {
			return
		}
		v := a.check(want, "")
		if !v.Allowed {
			a.denied(s, want, &v)
			if !v.RateLimited && !v.Action.Any() {
				a.traceStep(s, stepDenied, &v)
			}
			return
		}
		op := "place"
		if s.replace {
			op = "replace"
		}
		s.replace = false
		a.place(s, want, op)
	case PlanReplace:
		if !a.canOpen() {
			return // paused or failed: resting orders stay, nothing new goes out
		}
		if !a.replaces.take(a.st.Time) {
			a.counts.Throttled++
			return // over the replace budget: keep the live order for now
		}
		v := a.check(want, s.cur.id)
		switch {
		case v.Allowed:
			s.replace, s.origin, s.denied, s.was = true, a.arrived, "", s.cur.req.Price
			a.cancel(s.cur, "replace")
		case v.RateLimited:
			// no new order may go out now: the live one stays
		default:
			a.denied(s, want, &v)
			a.cancel(s.cur, "denied by "+v.Guard)
		}
	}
}

// denied logs a denial at info when its guard differs from the last denial of the
// slot (the same guard denying again, with new figures, goes to debug), so that a
// quote denied on every event makes one line, not one per event.
func (a *Agent) denied(s *slot, it *market.Intent, v *Verdict) {
	key := v.Guard
	if key == s.denied {
		if ce := a.log.Check(zap.DebugLevel, "deny"); ce != nil {
			ce.Write(zap.Int64("t", a.st.Time), zap.String("key", s.key), zap.String("guard", v.Guard), zap.String("reason", v.Reason))
		}
		return
	}
	s.denied = key
	if ce := a.log.Check(zap.InfoLevel, "deny"); ce != nil {
		ce.Write(zap.Int64("t", a.st.Time), zap.String("key", s.key), zap.String("intent", it.Kind.String()),
			zap.Stringer("side", it.Side), zap.Stringer("outcome", it.Outcome), zap.Stringer("price", it.Price), zap.Stringer("size", it.Size),
			zap.String("guard", v.Guard), zap.String("reason", v.Reason))
	}
}

// slotTick returns the tick size of slot s's market (0 if unknown). The market's
// Info is looked up once per slot: the state's markets are written at start-up only
// (events change an Info in place), so the pointer stays the state's.
func (a *Agent) slotTick(s *slot) market.Micros {
	if s.info == nil || s.info.Condition != s.market {
		if s.info = a.st.Markets[s.market]; s.info == nil {
			return 0
		}
	}
	return s.info.TickSize
}

// place sends a new order for it on slot s.
func (a *Agent) place(s *slot, it *market.Intent, op string) *orderRec {
	a.clientSeq++
	var r *orderRec
	if n := len(a.free); n > 0 {
		r, a.free = a.free[n-1], a.free[:n-1]
	} else {
		r = new(orderRec)
	}
	*r = orderRec{client: a.runs<<32 | uint64(a.clientSeq), key: s.key, slot: s, phase: phPlacing, origin: s.origin}
	r.req = OrderRequest{ClientID: r.client, Market: it.Market, Token: it.Token, Outcome: it.Outcome, Side: it.Side,
		Price: it.Price, Size: it.Size, Type: it.Type, PostOnly: it.PostOnly, Expiration: it.Expiration, Time: a.st.Time}
	if r.req.Market == "" {
		r.req.Market = s.market
	}
	a.byClient[r.client] = r
	a.open = append(a.open, r)
	s.cur = r
	s.denied = ""
	s.waitData = false
	a.guards.RecordOrder(a.st.Time)
	a.counts.Orders++
	r.take = !it.Type.Rests()
	a.metrics.Order(op)
	if ce := a.log.Check(zap.InfoLevel, "order"); ce != nil {
		fields := []zap.Field{zap.Int64("t", a.st.Time), zap.String("op", op), zap.String("key", s.key),
			zap.Stringer("outcome", it.Outcome), zap.Stringer("side", it.Side), zap.Stringer("price", it.Price),
			zap.Stringer("size", it.Size), zap.Stringer("type", it.Type)}
		if op == "replace" {
			fields = append(fields, zap.Stringer("was", s.was))
		}
		ce.Write(fields...)
	}
	a.dirtyCP = true
	o := op0(opPlace, r)
	prepared := a.prepareHere(&o) // the venue's id, when it is known before sending
	a.auditOrder(op, r, nil)
	if prepared {
		a.dispatch(o)
	}
	return r
}

func op0(k opKind, r *orderRec) op {
	return op{kind: k, client: r.client, req: r.req, prep: r.prep, prepared: r.prepared, id: r.id, origin: r.origin}
}

// cancel withdraws r (at once if it rests, after its placement is answered if that
// is in flight).
func (a *Agent) cancel(r *orderRec, why string) {
	if r == nil {
		return
	}
	switch r.phase {
	case phLive:
		r.phase = phCancelling
		a.counts.Cancels++
		a.metrics.Order("cancel")
		level := zap.InfoLevel
		if why == "replace" {
			level = zap.DebugLevel // the replacement's line says it
		}
		if ce := a.log.Check(level, "order"); ce != nil {
			ce.Write(zap.Int64("t", a.st.Time), zap.String("op", "cancel"), zap.String("key", r.key),
				zap.Stringer("side", r.req.Side), zap.Stringer("outcome", r.req.Outcome), zap.Stringer("price", r.req.Price),
				zap.String("why", why))
		}
		a.auditOrder("cancel", r, nil)
		a.send(op0(opCancel, r))
	case phPlacing, phLookup:
		r.cancelAfter = true
	}
}

// cancelAll cancels every open order of the agent in market m (every market when
// empty) with one venue call, and drops the wants of their quotes (the strategy
// states them again on its next evaluation).
func (a *Agent) cancelAll(m market.ConditionID, why string) {
	a.act()
	n := 0
	for _, r := range a.open {
		if !r.open() || m != "" && r.req.Market != m {
			continue
		}
		if r.slot != nil {
			r.slot.hasWant = false
		}
		switch r.phase {
		case phLive:
			r.phase = phCancelling
			n++
		case phPlacing, phLookup:
			r.cancelAfter = true
		}
	}
	for _, s := range a.slots {
		if m == "" || s.market == m {
			s.hasWant = false
		}
	}
	if n == 0 {
		return
	}
	a.counts.Cancels += uint64(n)
	a.metrics.Order("cancel_all")
	if ce := a.log.Check(zap.InfoLevel, "order"); ce != nil {
		scope := string(m)
		if scope == "" {
			scope = "all markets"
		}
		ce.Write(zap.Int64("t", a.st.Time), zap.String("op", "cancel_all"), zap.String("key", scope),
			zap.Int("orders", n), zap.String("why", why))
	}
	a.auditSimpleOrder("cancel_all", m, why)
	a.send(op{kind: opCancelAll, market: m})
}

// take sends one immediate order (FOK/FAK) for a rule.
func (a *Agent) take(it *market.Intent) {
	s := a.slotFor(it.Key, it.Market)
	if s.cur != nil && s.cur.open() {
		return // the previous take of this rule is still in flight
	}
	if a.stopping || a.paused || a.failed != "" || a.flattening(it.Market) {
		return
	}
	if !a.released(s) {
		// Its last order ended unfilled on this very book: wait for new data.
		if ce := a.log.Check(zap.DebugLevel, "take held"); ce != nil {
			ce.Write(zap.Int64("t", a.st.Time), zap.String("key", s.key), zap.Int64("until", s.backoff))
		}
		return
	}
	v := a.check(it, "")
	if !v.Allowed {
		a.denied(s, it, &v)
		return
	}
	s.origin = a.arrived
	a.place(s, it, "take")
}

func (a *Agent) pause(why string) {
	a.act()
	if a.paused {
		return
	}
	a.paused = true
	a.log.Info("paused: no new orders until resumed", zap.Int64("t", a.st.Time), zap.String("why", why))
	a.setState(a.runState(), "")
	a.forceCP = true
}

// handleResult handles the answer to one venue call.
func (a *Agent) handleResult(r *result) {
	if r.op.kind != opHeartbeat {
		a.act()
	}
	switch r.op.kind {
	case opPlace:
		a.onPlaced(r)
	case opCancel:
		a.onCancelled(r)
	case opCancelAll:
		a.onCancelledAll(r)
	case opLookup:
		a.onLookup(r)
	case opHeartbeat:
		a.beatInFlight = false
		switch {
		case r.err != nil && !a.beatFailing:
			a.beatFailing = true
			a.log.Warn("heartbeat failed", zap.Error(r.err))
		case r.err == nil && a.beatFailing:
			a.beatFailing = false
			a.log.Info("heartbeat recovered")
		}
	}
}

func (a *Agent) onPlaced(r *result) {
	rec := a.byClient[r.op.client]
	if rec == nil || rec.phase == phDone {
		return
	}
	if r.stage != "prepare" {
		rec.prep, rec.prepared = r.prep, true
		if rec.id == "" {
			rec.id = r.prep.ID
			a.byID[rec.id] = rec
		}
	}
	switch {
	case r.err == nil:
		if !r.sentAt.IsZero() && !rec.origin.IsZero() && rec.attempts == 0 {
			a.metrics.TickToTrade(r.sentAt.Sub(rec.origin))
		}
		a.accepted(rec, &r.order)
	case r.stage == "prepare" || isRejection(r.err) && !errors.Is(r.err, market.ErrDuplicated):
		a.rejected(rec, r.err)
	default:
		// Duplicated: the venue has the order already; anything else: the outcome
		// is unknown. Either way, look it up by its id before doing anything else.
		if !errors.Is(r.err, market.ErrDuplicated) {
			a.metrics.Order("timeout")
			a.log.Warn("placement outcome unknown: looking the order up", zap.String("key", rec.key),
				zap.String("id", string(rec.id)), zap.Error(r.err))
		}
		rec.phase = phLookup
		a.send(op0(opLookup, rec))
	}
}

// isRejection reports whether err is the venue's refusal (a catalog error), as
// opposed to an unknown outcome.
func isRejection(err error) bool {
	var e *market.Error
	return errors.As(err, &e)
}

// accepted records the venue's answer that it took the order.
func (a *Agent) accepted(rec *orderRec, o *market.Order) {
	if o.Matched > rec.matched {
		rec.matched = o.Matched
	}
	if o.Status == market.StatusLive && !rec.final {
		rec.phase = phLive
		a.applyOwn(rec, market.OrderPlacement, market.StatusLive)
		a.auditOrder("placed", rec, nil)
		if rec.cancelAfter {
			a.cancel(rec, "cancel requested while placing")
		}
		return
	}
	a.auditOrder("placed", rec, nil)
	a.finish(rec)
}

// rejected records a refusal: nothing rests; the slot waits before trying again.
func (a *Agent) rejected(rec *orderRec, err error) {
	a.counts.Rejects++
	a.metrics.Order("reject")
	if ce := a.log.Check(zap.WarnLevel, "rejected"); ce != nil {
		ce.Write(zap.Int64("t", a.st.Time), zap.String("key", rec.key), zap.Stringer("side", rec.req.Side),
			zap.Stringer("outcome", rec.req.Outcome), zap.Stringer("price", rec.req.Price), zap.Stringer("size", rec.req.Size), zap.Error(err))
	}
	a.auditOrder("rejected", rec, err)
	if s := rec.slot; s != nil && !rec.take {
		s.failures++
		s.backoff = a.st.Time + backoffFor(s.failures)
	}
	a.finish(rec) // a take or flatten slot is held there
}

// finish marks rec final and frees its slot for the next order.
func (a *Agent) finish(rec *orderRec) {
	if rec.phase == phDone {
		return
	}
	rec.phase = phDone
	rec.doneAt = a.st.Time
	delete(a.byClient, rec.client)
	a.dirtyCP = true
	if s := rec.slot; s != nil && s.cur == rec {
		s.cur = nil
		if rec.matched > 0 || !rec.take {
			s.failures = 0
		}
		if rec.take && rec.matched < rec.req.Size {
			a.hold(s)
		}
		a.markDirty(s)
	}
}

// backoffFor is how long (ms of event time) a slot waits after its failures-th
// consecutive failure: 1 s, doubling, at most 30 s.
func backoffFor(failures int) int64 { return min(int64(500)<<min(failures, 6), 30_000) }

// hold keeps the next order of take or flatten slot s back: its last order ended
// unfilled, so the book it priced against is not the venue's any more (the paper
// venue, for one, removes what a take took until the feed reports the level again,
// while the agent's own book still shows it). The slot may send again once new
// market data of its market arrives (releaseHeld) or its backoff passes, whichever
// comes first; retrying within the same pass, against the same book, would be
// refused again, for ever.
func (a *Agent) hold(s *slot) {
	a.act()
	s.failures++
	s.backoff = a.st.Time + backoffFor(s.failures)
	if !s.waitData {
		s.waitData = true
		a.held = append(a.held, s)
	}
}

// released reports whether take or flatten slot s may send an order now (see hold).
func (a *Agent) released(s *slot) bool { return !s.waitData || a.st.Time >= s.backoff }

// releaseHeld releases the held slots of the market that market-data event ev
// concerns.
func (a *Agent) releaseHeld(ev *market.Event) {
	m := ev.Market
	if m == "" {
		tok := ev.Token
		if tok == "" && len(ev.Changes) > 0 {
			tok = ev.Changes[0].Token
		}
		if info, _, ok := a.st.MarketOf(tok); ok {
			m = info.Condition
		}
	}
	keep := a.held[:0]
	for _, s := range a.held {
		if !s.waitData {
			continue // released by its backoff and sent since
		}
		if m == "" || s.market == m {
			s.waitData = false
			continue
		}
		keep = append(keep, s)
	}
	clear(a.held[len(keep):])
	a.held = keep
}

func (a *Agent) onCancelled(r *result) {
	rec := a.byClient[r.op.client]
	if rec == nil || rec.phase == phDone {
		return
	}
	switch {
	case r.err == nil || isRejection(r.err):
		// Cancelled, or no longer open (unknown, already cancelled or matched): gone.
		if r.err != nil {
			a.log.Debug("cancel answered", zap.String("key", rec.key), zap.Error(r.err))
		}
		a.applyOwn(rec, market.OrderCancellation, market.StatusCanceled)
		a.finish(rec)
	default:
		rec.attempts++
		if rec.attempts < a.cfg.MaxAttempts {
			a.send(op0(opCancel, rec))
			return
		}
		a.log.Error("cancel failed; the order may still rest", zap.String("key", rec.key), zap.String("id", string(rec.id)), zap.Error(r.err))
		rec.phase = phLive
	}
}

func (a *Agent) onCancelledAll(r *result) {
	m := r.op.market
	if r.err != nil {
		a.log.Warn("cancel-all failed: cancelling one by one", zap.String("market", string(m)), zap.Error(r.err))
		for _, rec := range a.open {
			if rec.phase == phCancelling && (m == "" || rec.req.Market == m) {
				rec.phase = phLive
				a.cancel(rec, "cancel-all failed")
			}
		}
		return
	}
	for _, rec := range a.open {
		if rec.phase == phCancelling && (m == "" || rec.req.Market == m) {
			a.applyOwn(rec, market.OrderCancellation, market.StatusCanceled)
			a.finish(rec)
		}
	}
}

func (a *Agent) onLookup(r *result) {
	rec := a.byClient[r.op.client]
	if rec == nil || rec.phase == phDone {
		return
	}
	switch {
	case r.err == nil:
		a.log.Info("order found after an unknown outcome", zap.String("key", rec.key), zap.String("id", string(rec.id)),
			zap.Stringer("status", r.order.Status))
		a.accepted(rec, &r.order)
	case errors.Is(r.err, market.ErrUnknownOrder):
		// Never accepted: submit the same prepared order again (same id, so the
		// venue cannot take it twice).
		if rec.attempts < a.cfg.MaxAttempts && !rec.cancelAfter && a.canOpen() {
			rec.attempts++
			rec.phase = phPlacing
			a.send(op0(opPlace, rec))
			return
		}
		a.rejected(rec, r.err)
	default:
		rec.attempts++
		if rec.attempts < a.cfg.MaxAttempts {
			a.send(op0(opLookup, rec))
			return
		}
		a.log.Error("order state unknown; treating it as open", zap.String("key", rec.key), zap.String("id", string(rec.id)), zap.Error(r.err))
		rec.phase = phLive
		a.applyOwn(rec, market.OrderPlacement, market.StatusLive)
	}
}

// applyOwn applies to the state what the venue's answer says about rec (the events
// of the venue, when they come, say the same and are applied too).
func (a *Agent) applyOwn(rec *orderRec, u market.OrderUpdate, status market.OrderStatus) {
	if rec.id == "" {
		return
	}
	ev := market.Event{Kind: market.EventOrder, Market: rec.req.Market, Token: rec.req.Token,
		Order: rec.order(status), OrderUpdate: u}
	ev.Order.Owner = a.cfg.Wallet
	a.st.Apply(&ev)
	a.stVer++
}

// onOrderEvent keeps the bookkeeping in step with the venue's events.
func (a *Agent) onOrderEvent(ev *market.Event) {
	o := &ev.Order
	rec := a.byID[o.ID]
	gone := ev.OrderUpdate == market.OrderCancellation || o.Status.Final() || o.Remaining() <= 0
	if rec == nil {
		if gone || !o.Owner.IsZero() && !a.cfg.Wallet.IsZero() && o.Owner != a.cfg.Wallet {
			return
		}
		a.adopt(o, "", true)
		a.log.Warn("an order of the wallet the agent did not place: tracking it", zap.String("id", string(o.ID)))
		return
	}
	if o.Matched > rec.matched {
		rec.matched = o.Matched
	}
	if !gone {
		return
	}
	switch rec.phase {
	case phPlacing, phLookup:
		rec.final = true // the answer in flight will find it final
	case phDone:
	default:
		a.finish(rec)
	}
}

// adopt tracks an open order found on the venue.
func (a *Agent) adopt(o *market.Order, key string, orphan bool) *orderRec {
	r := &orderRec{client: 0, id: o.ID, key: key, phase: phLive, matched: o.Matched, orphan: orphan}
	r.req = OrderRequest{Market: o.Market, Token: o.Token, Outcome: o.Outcome, Side: o.Side, Price: o.Price,
		Size: o.Size, Type: o.Type, PostOnly: o.PostOnly, Expiration: o.Expiration, Time: o.CreatedAt}
	r.prepared = true
	r.prep = PreparedOrder{ID: o.ID, Request: r.req}
	// Adopted orders get a client id of this run so that answers find them.
	a.clientSeq++
	r.client = a.runs<<32 | uint64(a.clientSeq)
	a.byClient[r.client] = r
	a.byID[r.id] = r
	a.open = append(a.open, r)
	if key != "" {
		s := a.slotFor(key, o.Market)
		s.cur = r
		r.slot = s
	}
	return r
}

func (a *Agent) onFill(f *market.Fill) {
	a.counts.Fills++
	a.metrics.Fill(f)
	key := ""
	if rec := a.byID[f.Order]; rec != nil {
		key = rec.key
		// Fills may come before the order's own update: an order whose fills add
		// up to its size is done now, so that nothing cancels or re-prices it.
		rec.filled += f.Size
		if rec.filled > rec.matched {
			rec.matched = rec.filled
		}
		if rec.matched >= rec.req.Size && rec.phase != phDone {
			if rec.phase == phPlacing || rec.phase == phLookup {
				rec.final = true
			} else {
				a.finish(rec)
			}
		}
	}
	if ce := a.log.Check(zap.InfoLevel, "fill"); ce != nil {
		pos := a.st.Positions[f.Token]
		var size, realized market.Micros
		if pos != nil {
			size, realized = pos.Size, pos.Realized
		}
		if key == "" { // an order the agent does not know: name its market
			key = a.marketLabel(f.Market)
		}
		ce.Write(zap.Int64("t", a.st.Time), zap.String("key", key), zap.Stringer("outcome", f.Outcome),
			zap.Stringer("side", f.Side), zap.Stringer("price", f.Price), zap.Stringer("size", f.Size),
			zap.Stringer("fee", f.Fee), zap.Stringer("role", f.Role), zap.Stringer("position", size),
			zap.Stringer("realized", realized))
	}
	if a.sink != nil {
		r := &a.rec
		*r = AuditRecord{Kind: AuditFill, Agent: a.cfg.ID, Time: a.st.Time, Fill: *f, Key: key}
		a.sink.Audit(r)
	}
}

func (a *Agent) onResolved(ev *market.Event) {
	info := a.st.Markets[ev.Market]
	if info == nil {
		if m, _, ok := a.st.MarketOf(ev.Winner); ok {
			info = m
		}
	}
	if info == nil {
		return
	}
	for _, r := range a.open {
		if r.open() && r.req.Market == info.Condition {
			a.finish(r)
		}
	}
	delete(a.flatten, info.Condition)
	payout, held, _ := a.st.Redeemable(info.Condition)
	a.log.Info("market resolved", zap.Int64("t", a.st.Time), zap.String("market", string(info.Condition)),
		zap.Stringer("winner", info.Winner), zap.Stringer("held", held), zap.Stringer("redeemable", payout))
	a.forceCP = true
}

// heartbeat sends one heartbeat unless one is in flight.
func (a *Agent) heartbeat() {
	if a.cfg.Heartbeat < 0 || a.beatInFlight || a.stopping {
		return
	}
	a.beatInFlight = true
	a.send(op{kind: opHeartbeat})
}

func (a *Agent) auditOrder(op string, r *orderRec, err error) {
	if a.sink == nil {
		return
	}
	rec := &a.rec
	*rec = AuditRecord{Kind: AuditOrder, Agent: a.cfg.ID, Time: a.st.Time, Op: op, Order: r.order(market.StatusLive), Key: r.key}
	rec.Order.Owner = a.cfg.Wallet
	if err != nil {
		rec.Err = err.Error()
		rec.Order.Status = market.StatusRejected
	}
	a.sink.Audit(rec)
}

func (a *Agent) auditSimpleOrder(op string, m market.ConditionID, why string) {
	if a.sink == nil {
		return
	}
	rec := &a.rec
	*rec = AuditRecord{Kind: AuditOrder, Agent: a.cfg.ID, Time: a.st.Time, Op: op, Reason: why}
	rec.Order.Market = m
	a.sink.Audit(rec)
}

func (a *Agent) auditSimple(k AuditKind, reason string) {
	if a.sink == nil {
		return
	}
	rec := &a.rec
	*rec = AuditRecord{Kind: k, Agent: a.cfg.ID, Time: a.st.Time, Reason: reason}
	a.sink.Audit(rec)
}

// pruneFront forgets the oldest orders while they are final for more than a minute
// of event time: a few steps per pass, so no pass pays for a long walk.
func (a *Agent) pruneFront() {
	n := 0
	for n < len(a.open) && n < 8 {
		r := a.open[n]
		if r.phase != phDone || a.st.Time-r.doneAt <= 60_000 {
			break
		}
		a.recycle(r)
		a.open[n] = nil
		n++
	}
	if n > 0 {
		a.open = a.open[n:]
	}
}

// recycle forgets a final order and keeps its record for reuse.
func (a *Agent) recycle(r *orderRec) {
	if a.byID[r.id] == r {
		delete(a.byID, r.id)
	}
	if r.slot == nil || r.slot.cur != r {
		*r = orderRec{}
		a.free = append(a.free, r)
	}
}

// prune forgets orders final for more than a minute of event time.
func (a *Agent) prune() {
	keep := a.open[:0]
	for _, r := range a.open {
		if r.phase == phDone && a.st.Time-r.doneAt > 60_000 {
			a.recycle(r)
			continue
		}
		keep = append(keep, r)
	}
	clear(a.open[len(keep):])
	a.open = keep
}

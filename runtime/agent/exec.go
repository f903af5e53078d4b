package agent

import (
	"context"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// opKind is one kind of venue call.
type opKind uint8

const (
	opPlace opKind = iota + 1
	opCancel
	opCancelAll
	opLookup
	opHeartbeat
)

var opNames = [...]string{"invalid", "place", "cancel", "cancel_all", "lookup", "heartbeat"}

func (k opKind) String() string { return opNames[k] }

// op is one venue call, by value: executor goroutines never see loop-owned data.
type op struct {
	kind     opKind
	client   uint64
	req      OrderRequest
	prep     PreparedOrder
	prepared bool
	id       market.OrderID
	market   market.ConditionID
	origin   time.Time // when the event that caused it arrived (tick-to-trade)
}

// result is the answer to one op.
type result struct {
	op     op
	prep   PreparedOrder // opPlace: the prepared order (when preparing succeeded)
	order  market.Order  // opPlace, opLookup
	err    error
	stage  string    // "prepare" when preparing failed (nothing was sent)
	sentAt time.Time // opPlace: when Submit was called
}

// send runs o on the loop (synchronous venue; its answer is handled after the
// current pass) or hands it to the executor.
func (a *Agent) send(o op) {
	if o.kind == opPlace && !a.prepareHere(&o) {
		return
	}
	a.dispatch(o)
}

// prepareHere prepares placement o on the loop when the venue is synchronous or
// prepares locally, so that the order's id is known before the venue can emit
// events about it, before a checkpoint may have to record it and before its "place"
// audit record is written. It reports false when preparing failed (the failure is
// queued as the call's answer: nothing is to be sent).
func (a *Agent) prepareHere(o *op) bool {
	if !(a.sync || a.prepLocal) || o.prepared {
		return true
	}
	p, err := a.venue.Prepare(context.Background(), o.req)
	if err != nil {
		a.local = append(a.local, localItem{result: true, res: result{op: *o, err: err, stage: "prepare"}})
		return false
	}
	o.prep, o.prepared = p, true
	if rec := a.byClient[o.client]; rec != nil && rec.id == "" {
		rec.prep, rec.prepared, rec.id = p, true, p.ID
		a.byID[p.ID] = rec
	}
	return true
}

// dispatch makes the venue call o: on the loop for a synchronous venue, else on an
// executor.
func (a *Agent) dispatch(o op) {
	if o.kind != opHeartbeat {
		a.act()
	}
	if a.sync {
		r := &a.scratch
		*r = result{op: o}
		a.execute(context.Background(), r)
		a.local = append(a.local, localItem{result: true})
		a.local[len(a.local)-1].res = *r
		*r = result{}
		return
	}
	a.inflight++
	a.ops <- o // capacity MaxInFlight+QueueSize; placements stop at MaxInFlight
}

// execute performs the venue call of r.op and records the answer in r. It runs on
// an executor goroutine, or on the loop for a synchronous venue, and touches
// nothing but r and the venue.
func (a *Agent) execute(ctx context.Context, r *result) {
	o := r.op
	if !a.sync {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.cfg.RequestTimeout)
		defer cancel()
	}
	switch o.kind {
	case opPlace:
		if !o.prepared {
			p, err := a.venue.Prepare(ctx, o.req)
			if err != nil {
				r.err, r.stage = err, "prepare"
				return
			}
			r.op.prep, r.op.prepared = p, true
		}
		r.prep = r.op.prep
		r.sentAt = a.clock.Now()
		r.order, r.err = a.venue.Submit(ctx, &r.op.prep)
	case opCancel:
		r.err = a.venue.Cancel(ctx, o.id)
	case opCancelAll:
		r.err = a.venue.CancelAll(ctx, o.market)
	case opLookup:
		r.order, r.err = a.venue.Order(ctx, o.id)
	case opHeartbeat:
		r.err = a.venue.Heartbeat(ctx)
	}
}

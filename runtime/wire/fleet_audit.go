package wire

import (
	"strings"
	"sync/atomic"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// fleetAudit is the agent's AuditSink in a fleet: every record goes to the AUDIT
// stream through a bounded natsbus.AuditWriter (Enqueue never blocks the loop).
// Overflow policy: a record the writer's full queue refuses is counted in Dropped
// and signals backlog once, which pauses the agent; the record is lost. The records
// are also handed to next (the command line's own sink), if any.
type fleetAudit struct {
	w       *natsbus.AuditWriter
	wallet  market.Address
	dry     bool
	next    agent.AuditSink
	backlog chan struct{} // capacity 1
	dropped atomic.Uint64
}

var _ agent.AuditSink = (*fleetAudit)(nil)

// Audit implements agent.AuditSink (on the agent's loop; copies what it keeps).
func (f *fleetAudit) Audit(r *agent.AuditRecord) {
	if f.next != nil {
		f.next.Audit(r)
	}
	if duplicateControl(r) {
		return
	}
	rec := auditRecord(r, f.wallet, f.dry)
	if err := f.w.Enqueue(rec); err != nil {
		f.dropped.Add(1)
		select {
		case f.backlog <- struct{}{}:
		default:
		}
	}
}

// duplicateControl reports the agent's control record of a kill or a re-arm: the
// agent records an operator's kill as a trip followed by a control record, and a
// re-arm as a resume followed by one, with the same reason. In the fleet's trail
// the trip or resume already is that control record (op kill or
// resume_after_kill), so the second is left out: one command, one record.
func duplicateControl(r *agent.AuditRecord) bool {
	if r.Kind != agent.AuditControl {
		return false
	}
	op, _, _ := strings.Cut(r.Reason, ": ")
	return op == string(agent.OpKill) || op == string(agent.OpResumeAfterKill)
}

// Dropped returns how many records the full queue refused.
func (f *fleetAudit) Dropped() uint64 { return f.dropped.Load() }

// auditRecord converts one record of the agent to the fleet's form:
//
//	decision → "decision" (the guard's verdict, with the intent it judged: every
//	           intent the guards see is recorded here, so there is no separate
//	           "intent" record)
//	order    → "order" (the operation and the order as sent or as answered; a
//	           rejection's message in error; for cancel_all, flatten_start, merge
//	           and redeem, the reason in intent_key; a merge's sets and a
//	           redeem's collateral paid in size)
//	fill     → "fill"
//	adopt    → "order" with action adopt_position (the holding's size, its
//	           average cost as the price, where the cost came from in intent_key)
//	trip, resume, control → "control" (kill, resume_after_kill, or the operator's op)
func auditRecord(r *agent.AuditRecord, wallet market.Address, dry bool) natsbus.AuditRecord {
	rec := natsbus.AuditRecord{Agent: r.Agent, Wallet: wallet, Time: r.Time, DryRun: dry}
	switch r.Kind {
	case agent.AuditDecision:
		rec.Kind = natsbus.AuditDecision
		rec.Decision = &natsbus.DecisionRecord{Allow: r.Allowed, Guard: r.Guard, Reason: r.Reason, Intent: natsbus.NewIntentRecord(&r.Intent)}
	case agent.AuditOrder:
		rec.Kind = natsbus.AuditOrder
		if r.Order.Token == "" && r.Order.ID == "" { // cancel_all and the like: no single order
			rec.Order = &natsbus.OrderRecord{Action: r.Op, Market: r.Order.Market, Size: natsbus.Amount(r.Order.Size), IntentKey: r.Reason, Error: r.Err}
			break
		}
		o := natsbus.NewOrderRecord(r.Op, &r.Order)
		o.IntentKey = r.Key
		o.Error = r.Err
		if r.Err != "" {
			if e := market.FromStatus(400, r.Err); e.Code != market.CodeBadRequest {
				o.Code = e.Code
			}
		}
		rec.Order = o
	case agent.AuditFill:
		rec.Kind = natsbus.AuditFill
		rec.Fill = natsbus.NewFillRecord(&r.Fill)
	case agent.AuditTrip:
		rec.Kind = natsbus.AuditControl
		rec.Control = &natsbus.ControlRecord{Request: natsbus.ControlRequest{V: 1, Op: natsbus.OpKill, Target: r.Agent, Reason: r.Reason, From: "kill switch"}, OK: true}
	case agent.AuditAdopt: // a holding taken over at start: an order record of no order
		p := &r.Position
		rec.Kind = natsbus.AuditOrder
		rec.Order = &natsbus.OrderRecord{Action: "adopt_position", Market: p.Market, Token: p.Token, Outcome: p.Outcome.String(),
			Price: natsbus.Amount(p.AvgPrice()), Size: natsbus.Amount(p.Size), IntentKey: r.Reason}
	case agent.AuditResume:
		rec.Kind = natsbus.AuditControl
		rec.Control = &natsbus.ControlRecord{Request: natsbus.ControlRequest{V: 1, Op: natsbus.OpResumeAfterKill, Target: r.Agent, Reason: r.Reason}, OK: true}
	default: // agent.AuditControl: "op: reason"
		rec.Kind = natsbus.AuditControl
		op, reason, _ := strings.Cut(r.Reason, ": ")
		rec.Control = &natsbus.ControlRecord{Request: natsbus.ControlRequest{V: 1, Op: natsbus.ControlOp(op), Target: r.Agent, Reason: reason}, OK: true}
	}
	return rec
}

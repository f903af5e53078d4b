package agent

import (
	"context"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// ControlOp is an operator's command to a running agent. The values are those of the
// fleet's control operations (adapters/natsbus), so a supervisor forwards them as
// they are; lifecycle operations (stop, restart) are the supervisor's, not the
// agent's.
type ControlOp string

// Control operations.
const (
	OpStatus          ControlOp = "status"            // publish a fresh status; change nothing
	OpPause           ControlOp = "pause"             // no new orders; resting orders stay
	OpResume          ControlOp = "resume"            // undo pause, or clear a strategy failure
	OpCancelAll       ControlOp = "cancel_all"        // cancel every open order (of Market, if set)
	OpFlatten         ControlOp = "flatten"           // cancel, then sell every position (in Market, if set)
	OpKill            ControlOp = "kill"              // trip the kill switch: cancel all, halt
	OpResumeAfterKill ControlOp = "resume_after_kill" // clear a tripped kill switch (explicit)
)

// ControlRequest is one operator command.
type ControlRequest struct {
	Op     ControlOp
	Market market.ConditionID // cancel_all, flatten: only this market
	Reason string             // for the audit trail and the log
	From   string             // who asked
}

type controlMsg struct {
	req   ControlRequest
	reply chan controlReply
}

type controlReply struct {
	state RunState
	err   error
}

// Control hands req to the loop and waits for the result: the agent's state after
// it. It is safe to call from any goroutine while Run runs (the supervisor's control
// server calls it). A request to an agent that is not running fails with
// market.ErrAgentNotRunning; an unknown op with
// market.CodeUnknownControl; resume of a killed agent with
// market.CodeKillSwitchTripped.
func (a *Agent) Control(ctx context.Context, req ControlRequest) (RunState, error) {
	if !a.running.Load() {
		return "", market.Errorf(market.CodeAgentNotRunning, string(a.cfg.ID))
	}
	m := controlMsg{req: req, reply: make(chan controlReply, 1)}
	select {
	case a.control <- m:
	case <-a.done:
		return StateStopped, market.Errorf(market.CodeAgentNotRunning, string(a.cfg.ID))
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case r := <-m.reply:
		return r.state, r.err
	case <-a.done:
		return StateStopped, market.Errorf(market.CodeAgentNotRunning, string(a.cfg.ID))
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (a *Agent) handleControl(m controlMsg) {
	req := m.req
	if req.Op != OpStatus {
		a.act() // the pass after it is not the last one again (repeat.go)
	}
	reason := req.Reason
	if reason == "" {
		reason = "operator"
		if req.From != "" {
			reason = "operator " + req.From
		}
	}
	var err error
	switch req.Op {
	case OpStatus:
	case OpPause:
		a.pause(reason)
	case OpResume:
		switch {
		case a.guards.Halted():
			err = market.Errorf(market.CodeKillSwitchTripped, string(a.cfg.ID), a.killReason())
		case a.paused || a.failed != "":
			a.paused, a.failed, a.lastErr = false, "", ""
			a.log.Info("resumed", zap.Int64("t", a.st.Time), zap.String("why", reason))
			a.forceCP = true
		}
	case OpCancelAll:
		a.cancelAll(req.Market, reason)
	case OpFlatten:
		a.startFlatten(req.Market, reason)
	case OpKill:
		act := a.guards.Trip(a.st.Time, reason)
		a.onAction(act)
	case OpResumeAfterKill:
		if a.guards.Resume(&a.st, reason) {
			a.log.Info("kill switch cleared", zap.Int64("t", a.st.Time), zap.String("why", reason))
			a.auditSimple(AuditResume, reason)
			a.forceCP = true
		} else {
			err = market.Errorf(market.CodeKillSwitchNotTripped, string(a.cfg.ID))
		}
	default:
		err = market.Errorf(market.CodeUnknownControl, string(req.Op))
	}
	if err == nil && req.Op != OpStatus {
		a.auditSimple(AuditControl, string(req.Op)+": "+reason)
	}
	a.setState(a.runState(), "")
	a.publishStatus()
	m.reply <- controlReply{state: a.status.Load().State, err: err}
}

package supervisor

import (
	"context"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/alert"
)

// Alerts: the supervisor turns what it sees into runtime/alert events —
//
//	crash_loop, lock_lost        its own lifecycle records (lifecycleAlert)
//	agent_failed                 a process that cannot run (ProcFailed), or an
//	                             agent whose status says failed
//	kill_switch                  an agent whose status says killed, or a kill in
//	                             the audit trail (with its reason)
//	feed_stale, daily_loss       the agents' statuses (alert.Sender.Observe)
//	fill                         the audit trail's fills, when a webhook wants them
//
// Config.Alerts' Notify and Observe never block, so none of this slows a member.

// lifecycleAlert sends the alert of a lifecycle record, if it is one.
func (s *Supervisor) lifecycleAlert(agent, event string, code int, detail string) {
	switch event {
	case "crash_loop":
		s.cfg.Alerts.Notify(alert.Event{Kind: alert.CrashLoop, Agent: agent, Title: "crash loop: no more restarts until `pitboss ctl restart`", Detail: detail})
	case "lock_lost":
		s.cfg.Alerts.Notify(alert.Event{Kind: alert.LockLost, Agent: agent, Title: "lock lost: agent stopped", Detail: detail})
	}
}

// stateAlert sends the alert of a process state, if it is one.
func (s *Supervisor) stateAlert(agent string, st ProcState, msg string) {
	if st == ProcFailed {
		s.cfg.Alerts.Notify(alert.Event{Kind: alert.AgentFailed, Agent: agent, Title: "agent process failed", Detail: msg})
	}
}

// watchAlerts feeds the agents' statuses to Config.Alerts every heartbeat and,
// when a webhook wants fills or kills, follows the audit trail from now on.
func (s *Supervisor) watchAlerts(ctx context.Context) error {
	a := s.cfg.Alerts
	if a.Wants(alert.Fill) || a.Wants(alert.KillSwitch) {
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			s.followAudit(ctx, time.Now())
		}()
	}
	t := time.NewTicker(s.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, v := range s.View().Agents {
			if v.Status == nil || v.Liveness != natsbus.LivenessAlive.String() {
				continue
			}
			st := alert.Status{Agent: string(v.ID), State: string(v.Status.State), Reason: v.Status.Error, PnL: v.PnL(),
				Time: time.UnixMilli(v.Status.Time)}
			if v.Status.LastEvent > 0 {
				st.LastEvent = time.UnixMilli(v.Status.LastEvent)
			}
			a.Observe(st)
		}
	}
}

// followAudit sends the fills and kills recorded from since on, retrying after a
// failed read until ctx ends.
func (s *Supervisor) followAudit(ctx context.Context, since time.Time) {
	a := s.cfg.Alerts
	var last uint64
	for ctx.Err() == nil {
		f := natsbus.AuditFilter{Follow: true, Kinds: []natsbus.AuditKind{natsbus.AuditFill, natsbus.AuditControl}, Since: since}
		if last > 0 {
			f.StartSeq, f.Since = last+1, time.Time{}
		}
		err := s.bus.TailAudit(ctx, f, func(e natsbus.AuditEntry) error {
			last = e.Seq
			r := &e.Record
			switch {
			case r.Fill != nil && a.Wants(alert.Fill):
				a.Notify(alert.FillEvent(string(r.Agent), fillOf(r.Fill), ""))
			case r.Control != nil && r.Control.OK && r.Control.Request.Op == natsbus.OpKill:
				reason := r.Control.Request.Reason
				if by := r.Control.Request.From; by != "" {
					reason += " (by " + by + ")"
				}
				a.Notify(alert.KillSwitchEvent(string(r.Agent), reason, time.UnixMilli(r.Time)))
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			s.log.Warn("alerts: reading the audit trail failed; retrying")
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// fillOf is a fill record back in market terms (what an alert shows of it).
func fillOf(r *natsbus.FillRecord) *market.Fill {
	f := &market.Fill{Trade: r.Trade, Order: r.Order, Market: r.Market, Token: r.Token, Price: market.Micros(r.Price),
		Size: market.Micros(r.Size), Fee: market.Micros(r.Fee), Time: r.Time, Role: market.Taker}
	f.Side, _ = market.ParseSide(r.Side)
	if r.Outcome == market.No.String() {
		f.Outcome = market.No
	}
	if r.Role == market.Maker.String() {
		f.Role = market.Maker
	}
	return f
}

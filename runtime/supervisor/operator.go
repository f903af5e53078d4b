package supervisor

import (
	"context"
	"fmt"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// AgentOps are the operations an operator may apply to one agent from the
// dashboard, in the order its buttons show them (stop and start stay with
// `pitboss ctl`).
var AgentOps = []Op{"pause", "resume", "cancel_all", "flatten", "restart", "kill", "resume_after_kill"}

// Control carries out op for agent target (the fleet when empty) on behalf of by,
// exactly as `pitboss ctl` does (Client.Control: the desired state first, then the
// request), over this supervisor's connection.
func (s *Supervisor) Control(ctx context.Context, op Op, target market.AgentID, by, reason string) (ControlResult, error) {
	return NewClient(s.bus, by).Control(ctx, op, target, reason, "")
}

// auditWindow bounds how far back RecentAudit looks: the last auditWindow records
// of the whole stream (every agent), so a query costs the same on a fleet with a
// long history.
const auditWindow = 5000

// RecentAudit returns agent id's most recent audit records among the stream's last
// auditWindow: at most n of every kind but fills (oldest first) and at most n
// fills. Records never carry secrets (natsbus contract).
func (s *Supervisor) RecentAudit(ctx context.Context, id market.AgentID, n int) (records, fills []natsbus.AuditEntry, err error) {
	return RecentAudit(ctx, s.bus, id, n)
}

// RecentAudit is Supervisor.RecentAudit over any connection with the supervisor
// role.
func RecentAudit(ctx context.Context, bus *natsbus.Bus, id market.AgentID, n int) (records, fills []natsbus.AuditEntry, err error) {
	if n <= 0 {
		return nil, nil, nil
	}
	st, err := bus.JetStream().Stream(ctx, natsbus.AuditStream)
	if err != nil {
		return nil, nil, fmt.Errorf("supervisor: audit: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("supervisor: audit: %w", err)
	}
	if info.State.Msgs == 0 {
		return nil, nil, nil
	}
	start := info.State.FirstSeq
	if info.State.LastSeq > auditWindow && info.State.LastSeq-auditWindow > start {
		start = info.State.LastSeq - auditWindow
	}
	keep := func(ring []natsbus.AuditEntry, e natsbus.AuditEntry) []natsbus.AuditEntry {
		if len(ring) == n {
			ring = append(ring[:0], ring[1:]...)
		}
		return append(ring, e)
	}
	err = bus.TailAudit(ctx, natsbus.AuditFilter{Agent: id, StartSeq: start}, func(e natsbus.AuditEntry) error {
		if e.Record.Kind == natsbus.AuditFill {
			fills = keep(fills, e)
		} else {
			records = keep(records, e)
		}
		return nil
	})
	return records, fills, err
}

package dashboard

import (
	"context"
	"net/http"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// RecentN is how many audit records and fills the agent panel shows.
const RecentN = 20

// AgentDetail is what /api/agents/{id} returns: the agent's row (its status holds
// books, open orders and guards) and its recent audit records and fills.
type AgentDetail struct {
	Time   int64                 `json:"time"`
	Agent  AgentRow              `json:"agent"`
	Audit  []natsbus.AuditRecord `json:"audit"`
	Fills  []natsbus.AuditRecord `json:"fills"`
	Errors []string              `json:"errors,omitempty"`
}

func (d *Dashboard) agent(w http.ResponseWriter, r *http.Request) {
	id := market.AgentID(r.PathValue("id"))
	st, err := d.state(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "fleet state unavailable")
		return
	}
	// A standby supervisor lists the agent too (refused): the running one first.
	i := slices.IndexFunc(st.Agents, func(a AgentRow) bool { return a.ID == id && a.Process == supervisor.ProcRunning })
	if i < 0 {
		i = slices.IndexFunc(st.Agents, func(a AgentRow) bool { return a.ID == id })
	}
	if i < 0 {
		writeError(w, http.StatusNotFound, "no agent "+string(id)+" in the fleet")
		return
	}
	out := AgentDetail{Time: st.Time, Agent: st.Agents[i], Audit: []natsbus.AuditRecord{}, Fills: []natsbus.AuditRecord{}}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	recs, fills, err := d.cfg.Source.RecentAudit(ctx, id, RecentN)
	if err != nil {
		out.Errors = append(out.Errors, "audit trail unavailable")
		d.log.Debug("audit not read", zap.Error(err))
	}
	for _, e := range recs {
		out.Audit = append(out.Audit, e.Record)
	}
	for _, e := range fills {
		out.Fills = append(out.Fills, e.Record)
	}
	writeJSON(w, http.StatusOK, out)
}

// control carries out one per-agent op after the checks: the same as kill-all's
// (origin, page token, JSON) with the agent's id as the typed confirmation word, so
// that a button pressed on the wrong row does nothing.
func (d *Dashboard) control(w http.ResponseWriter, r *http.Request) {
	id := market.AgentID(r.PathValue("id"))
	op := supervisor.Op(r.PathValue("op"))
	if !slices.Contains(supervisor.AgentOps, op) {
		writeError(w, http.StatusNotFound, "unknown action "+string(op))
		return
	}
	body, ok := d.postBody(w, r, string(op))
	if !ok {
		return
	}
	if id == "" || body.Confirm != string(id) {
		writeError(w, http.StatusBadRequest, "type the agent's id ("+string(id)+") to confirm")
		return
	}
	reason := body.Reason
	if reason == "" {
		reason = string(op) + " from the dashboard"
	}
	by := "dashboard " + r.RemoteAddr
	d.log.Warn("agent action requested", zap.String("op", string(op)), zap.String("agent", string(id)), zap.String("by", by))
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	res, err := d.cfg.Source.Control(ctx, op, id, by, reason)
	if err != nil {
		writeError(w, http.StatusConflict, string(op)+" failed: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, res)
}

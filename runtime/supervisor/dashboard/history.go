package dashboard

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// history keeps the fleet's PnL and each agent's equity and PnL over time: one
// bounded ring for the fleet and one per agent (Config.HistoryPoints; when full,
// the oldest point goes). An agent's ring is dropped when no row of it reports a
// status any more (it left the fleet, or no process of it runs).
// Safe for concurrent use.
type history struct {
	mu     sync.Mutex
	n      int
	fleet  ring
	agents map[market.AgentID]*ring
}

// ring is a bounded series of points, oldest first.
type ring struct{ pts []Point }

func (r *ring) add(p Point, n int) {
	if len(r.pts) == n {
		copy(r.pts, r.pts[1:])
		r.pts = r.pts[:n-1]
	}
	r.pts = append(r.pts, p)
}

// Point is one sample: time (Unix ms, the dashboard's clock), equity and PnL as
// exact decimal strings (equity is "" where the agent reported none).
type Point struct {
	T      int64  `json:"t"`
	Equity string `json:"equity,omitempty"`
	PnL    string `json:"pnl"`
}

// History is what /api/history returns.
type History struct {
	Time   int64                      `json:"time"`
	Fleet  []Point                    `json:"fleet"`
	Agents map[market.AgentID][]Point `json:"agents"`
	// Order lists the agents in the order the page draws them (by id).
	Order []market.AgentID `json:"order"`
}

func newHistory(n int) *history {
	return &history{n: n, agents: map[market.AgentID]*ring{}}
}

// record adds st as one point of every series.
func (h *history) record(st State) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fleet.add(Point{T: st.Time, Equity: st.FleetEquity, PnL: st.FleetPnL}, h.n)
	seen := make(map[market.AgentID]bool, len(st.Agents))
	for _, a := range st.Agents {
		if a.Status == nil {
			continue // not running here (a standby's row, a crashed process): no figures
		}
		seen[a.ID] = true
		r := h.agents[a.ID]
		if r == nil {
			r = &ring{}
			h.agents[a.ID] = r
		}
		r.add(Point{T: st.Time, Equity: a.Equity, PnL: a.PnL}, h.n)
	}
	for id := range h.agents {
		if !seen[id] {
			delete(h.agents, id)
		}
	}
}

func (h *history) snapshot(now int64) History {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := History{Time: now, Fleet: append([]Point(nil), h.fleet.pts...), Agents: make(map[market.AgentID][]Point, len(h.agents))}
	for id, r := range h.agents {
		out.Agents[id] = append([]Point(nil), r.pts...)
		out.Order = append(out.Order, id)
	}
	sort.Slice(out.Order, func(i, j int) bool { return out.Order[i] < out.Order[j] })
	return out
}

// Sample takes one point of the history now (Run calls it every SampleEvery).
func (d *Dashboard) Sample(ctx context.Context) error {
	st, err := d.state(ctx)
	if err != nil {
		return err
	}
	d.hist.record(st)
	return nil
}

// Run samples the history every Config.SampleEvery until ctx ends, so that the
// charts hold the past even when no page was open. It returns nil.
func (d *Dashboard) Run(ctx context.Context) error {
	t := time.NewTicker(d.cfg.SampleEvery)
	defer t.Stop()
	for {
		if err := d.Sample(ctx); err != nil && ctx.Err() == nil {
			d.log.Debug("history sample skipped", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (d *Dashboard) history(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, d.hist.snapshot(d.cfg.Now().UnixMilli()))
}

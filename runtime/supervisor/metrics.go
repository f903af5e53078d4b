package supervisor

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
)

// metrics are the fleet's Prometheus metrics, as one supervisor sees them (its own
// agents; the AUDIT stream and the budget are fleet-wide):
//
//	pitboss_fleet_agents{state}                  agents of this supervisor by state (AgentView.State)
//	pitboss_fleet_agent_up{agent}                1 when heartbeats arrive on time
//	pitboss_fleet_heartbeat_age_seconds{agent}   time since the agent's last status
//	pitboss_fleet_restarts_total{agent}          process restarts
//	pitboss_fleet_crash_loops_total{agent}       times the agent entered the crashloop state
//	pitboss_fleet_crash_loop{agent}              1 while it is in it (alert on this)
//	pitboss_fleet_hangs_total{agent}             processes the watchdog stopped: alive, but heartbeats stopped
//	pitboss_fleet_agent_pnl{agent}               realized + unrealized PnL (collateral units)
//	pitboss_fleet_audit_records                  records in the AUDIT stream
//	pitboss_fleet_budget_grants                  requests granted in the current budget window
//	pitboss_fleet_fanout_events_total            market events this supervisor fanned out
//	pitboss_fleet_fanout_lag_seconds             venue event time → republished (includes clock skew)
//	pitboss_fleet_fanout_tokens                  tokens this supervisor publishes
//
// Values are read when scraped from the supervisor's views; stream figures are
// refreshed every 5 s by run. PnL is an observation (float), never used for money.
type metrics struct {
	s         *Supervisor
	fanEvents prometheus.Counter
	fanLag    prometheus.Histogram

	auditRecords atomic.Uint64
	budgetGrants atomic.Uint64

	agents, up, age, restarts, loops, inLoop, hangs, pnl, audit, grants, tokens *prometheus.Desc
}

func newMetrics(s *Supervisor, reg prometheus.Registerer) (*metrics, error) {
	cl := prometheus.Labels{"fleet": s.cfg.Fleet, "supervisor": s.cfg.Name}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("pitboss_fleet_"+name, help, labels, cl)
	}
	m := &metrics{s: s,
		fanEvents: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "pitboss", Subsystem: "fleet", Name: "fanout_events_total",
			Help: "Market events this supervisor fanned out to the fleet.", ConstLabels: cl}),
		fanLag: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "pitboss", Subsystem: "fleet", Name: "fanout_lag_seconds",
			Help:    "Venue event time to republication on NATS (includes the clock difference with the venue).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}, ConstLabels: cl}),
		agents:   d("agents", "Agents of this supervisor by state.", "state"),
		up:       d("agent_up", "1 when the agent's heartbeats arrive on time.", "agent"),
		age:      d("heartbeat_age_seconds", "Time since the agent's last status.", "agent"),
		restarts: d("restarts_total", "Process restarts of the agent.", "agent"),
		loops:    d("crash_loops_total", "Times the agent entered the crashloop state.", "agent"),
		inLoop:   d("crash_loop", "1 while the agent is in the crashloop state.", "agent"),
		hangs:    d("hangs_total", "Processes of the agent the watchdog stopped because their heartbeats had stopped.", "agent"),
		pnl:      d("agent_pnl", "Realized plus unrealized PnL of the agent, from its last status.", "agent"),
		audit:    d("audit_records", "Records in the AUDIT stream."),
		grants:   d("budget_grants", "Requests granted in the current window of the fleet's request budget."),
		tokens:   d("fanout_tokens", "Tokens this supervisor publishes to the fleet."),
	}
	for _, c := range []prometheus.Collector{m.fanEvents, m.fanLag, m} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.agents, m.up, m.age, m.restarts, m.loops, m.inLoop, m.hangs, m.pnl, m.audit, m.grants, m.tokens} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	select {
	case <-m.s.ready:
	default:
		return
	}
	v := m.s.View()
	byState := map[string]float64{}
	for _, a := range v.Agents {
		id := string(a.ID)
		byState[a.State()]++
		up, age := 0.0, -1.0
		if a.Liveness == natsbus.LivenessAlive.String() {
			up = 1
		}
		if a.HeartbeatAgeMS >= 0 {
			age = float64(a.HeartbeatAgeMS) / 1000
		}
		inLoop := 0.0
		if a.Process == ProcCrashLoop {
			inLoop = 1
		}
		ch <- prometheus.MustNewConstMetric(m.up, prometheus.GaugeValue, up, id)
		ch <- prometheus.MustNewConstMetric(m.age, prometheus.GaugeValue, age, id)
		ch <- prometheus.MustNewConstMetric(m.restarts, prometheus.CounterValue, float64(a.Restarts), id)
		ch <- prometheus.MustNewConstMetric(m.loops, prometheus.CounterValue, float64(a.CrashLoops), id)
		ch <- prometheus.MustNewConstMetric(m.inLoop, prometheus.GaugeValue, inLoop, id)
		ch <- prometheus.MustNewConstMetric(m.hangs, prometheus.CounterValue, float64(a.Hangs), id)
		ch <- prometheus.MustNewConstMetric(m.pnl, prometheus.GaugeValue, float64(a.PnL())/1e6, id)
	}
	for st, n := range byState {
		ch <- prometheus.MustNewConstMetric(m.agents, prometheus.GaugeValue, n, st)
	}
	ch <- prometheus.MustNewConstMetric(m.audit, prometheus.GaugeValue, float64(m.auditRecords.Load()))
	ch <- prometheus.MustNewConstMetric(m.grants, prometheus.GaugeValue, float64(m.budgetGrants.Load()))
	tokens := 0
	if m.s.pub != nil {
		tokens = len(m.s.pub.published())
	}
	ch <- prometheus.MustNewConstMetric(m.tokens, prometheus.GaugeValue, float64(tokens))
}

// run refreshes the stream figures every 5 s until ctx ends.
func (m *metrics) run(ctx context.Context) error {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		m.refresh(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (m *metrics) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	js := m.s.bus.JetStream()
	if st, err := js.Stream(ctx, natsbus.AuditStream); err == nil {
		if info, err := st.Info(ctx); err == nil {
			m.auditRecords.Store(info.State.Msgs)
		}
	}
	if m.s.budget != nil {
		if n, err := m.s.budget.Used(ctx); err == nil {
			m.budgetGrants.Store(uint64(n))
		}
	}
}

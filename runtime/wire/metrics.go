package wire

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// Metrics implements agent.Metrics with Prometheus collectors, all labelled with the
// agent's id (a constant label):
//
//	pitboss_agent_events_total{kind}            events applied
//	pitboss_agent_intents_total{kind}           intents of the strategy
//	pitboss_agent_denials_total{guard}          intents denied, by guard
//	pitboss_agent_orders_total{op}              place, replace, take, flatten, cancel, cancel_all, reject, timeout
//	pitboss_agent_fills_total{side,role}        fills of the wallet's orders
//	pitboss_agent_filled_shares_total{side}     shares filled
//	pitboss_agent_fees_total                    fees paid (collateral)
//	pitboss_agent_position_shares{token,outcome} position size
//	pitboss_agent_equity, _pnl, _realized_pnl, _unrealized_pnl, _balance, _open_orders
//	pitboss_agent_event_to_order_seconds        histogram: event received → order handed to the venue
//
// Amounts are exported in units (collateral or shares) as Prometheus floats: these
// are observations, never used for money. Safe for concurrent use.
type Metrics struct {
	events  [16]prometheus.Counter
	intents [16]prometheus.Counter
	eventsV *prometheus.CounterVec
	denials *prometheus.CounterVec
	orders  *prometheus.CounterVec
	fills   *prometheus.CounterVec
	shares  *prometheus.CounterVec
	fees    prometheus.Counter
	pos     *prometheus.GaugeVec
	equity  prometheus.Gauge
	pnl     prometheus.Gauge
	real    prometheus.Gauge
	unreal  prometheus.Gauge
	balance prometheus.Gauge
	open    prometheus.Gauge
	t2t     prometheus.Histogram
}

var _ agent.Metrics = (*Metrics)(nil)

// NewMetrics creates the collectors for agent id and registers them with reg.
func NewMetrics(reg prometheus.Registerer, id market.AgentID) (*Metrics, error) {
	cl := prometheus.Labels{"agent": string(id)}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "pitboss", Subsystem: "agent", Name: name, Help: help, ConstLabels: cl}, labels)
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "pitboss", Subsystem: "agent", Name: name, Help: help, ConstLabels: cl})
	}
	m := &Metrics{
		eventsV: counter("events_total", "Events applied, by kind.", "kind"),
		denials: counter("denials_total", "Intents denied by the guards, by guard.", "guard"),
		orders:  counter("orders_total", "Order operations, by op.", "op"),
		fills:   counter("fills_total", "Fills of the wallet's orders.", "side", "role"),
		shares:  counter("filled_shares_total", "Shares filled.", "side"),
		fees: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "pitboss", Subsystem: "agent", Name: "fees_total",
			Help: "Fees paid, in collateral.", ConstLabels: cl}),
		pos: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "pitboss", Subsystem: "agent", Name: "position_shares",
			Help: "Position size, in shares.", ConstLabels: cl}, []string{"token", "outcome"}),
		equity:  gauge("equity", "Collateral plus positions at their mark."),
		pnl:     gauge("pnl", "Equity minus the equity at the first start."),
		real:    gauge("realized_pnl", "Realized PnL, fees included."),
		unreal:  gauge("unrealized_pnl", "Unrealized PnL of open positions at their mark."),
		balance: gauge("balance", "Available collateral."),
		open:    gauge("open_orders", "Open orders."),
		t2t: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "pitboss", Subsystem: "agent", Name: "event_to_order_seconds",
			Help: "Time from receiving the event that caused an order to handing the order to the venue.", ConstLabels: cl,
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12)}),
	}
	intentsV := counter("intents_total", "Intents of the strategy, by kind.", "kind")
	for k := range m.events {
		m.events[k] = m.eventsV.WithLabelValues(market.EventKind(k).String())
		m.intents[k] = intentsV.WithLabelValues(market.IntentKind(k).String())
	}
	for _, c := range []prometheus.Collector{m.eventsV, intentsV, m.denials, m.orders, m.fills, m.shares, m.fees, m.pos,
		m.equity, m.pnl, m.real, m.unreal, m.balance, m.open, m.t2t} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func units(m market.Micros) float64 { return float64(m) / float64(market.One) }

// Event implements agent.Metrics.
func (m *Metrics) Event(k market.EventKind) {
	if int(k) < len(m.events) {
		m.events[k].Inc()
	}
}

// Intent implements agent.Metrics.
func (m *Metrics) Intent(k market.IntentKind) {
	if int(k) < len(m.intents) {
		m.intents[k].Inc()
	}
}

// Denial implements agent.Metrics.
func (m *Metrics) Denial(guard string) { m.denials.WithLabelValues(guard).Inc() }

// Order implements agent.Metrics.
func (m *Metrics) Order(op string) { m.orders.WithLabelValues(op).Inc() }

// Fill implements agent.Metrics.
func (m *Metrics) Fill(f *market.Fill) {
	m.fills.WithLabelValues(f.Side.String(), f.Role.String()).Inc()
	m.shares.WithLabelValues(f.Side.String()).Add(units(f.Size))
	if f.Fee > 0 {
		m.fees.Add(units(f.Fee))
	}
}

// TickToTrade implements agent.Metrics.
func (m *Metrics) TickToTrade(d time.Duration) { m.t2t.Observe(d.Seconds()) }

// Status implements agent.Metrics.
func (m *Metrics) Status(s *agent.Status) {
	m.equity.Set(units(s.Equity))
	m.pnl.Set(units(s.PnL))
	m.real.Set(units(s.Realized))
	m.unreal.Set(units(s.Unrealized))
	m.balance.Set(units(s.Balance))
	m.open.Set(float64(s.OpenOrders))
	for _, p := range s.Positions {
		m.pos.WithLabelValues(string(p.Token), p.Outcome.String()).Set(units(p.Size))
	}
}

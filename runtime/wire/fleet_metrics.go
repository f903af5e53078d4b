package wire

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// fleetRegistry is a supervised agent's Prometheus registry, published to its
// supervisor (supervisor.PublishAgentMetrics), which exports it: the agent's
// metrics (NewMetrics) and its process's, every name prefixed pitboss_agent_ and
// labelled with the agent's id:
//
//	pitboss_agent_process_resident_memory_bytes, _cpu_seconds_total, …   the process
//	pitboss_agent_go_goroutines, pitboss_agent_go_memstats_…             the Go runtime
func fleetRegistry(id market.AgentID) (*prometheus.Registry, *Metrics, error) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, id)
	if err != nil {
		return nil, nil, err
	}
	wrapped := prometheus.WrapRegistererWithPrefix(supervisor.AgentMetricsPrefix,
		prometheus.WrapRegistererWith(prometheus.Labels{"agent": string(id)}, reg))
	for _, c := range []prometheus.Collector{collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector()} {
		if err := wrapped.Register(c); err != nil {
			return nil, nil, err
		}
	}
	return reg, m, nil
}

// RegisterFleetFeedMetrics registers the fan-out subscriber's counters on reg,
// labelled with the agent's id:
//
//	pitboss_agent_fanout_frames_total    market-data frames received from the fleet's fan-out
//	pitboss_agent_fanout_events_total    events handed to the agent
//	pitboss_agent_fanout_gaps_total      lost frames detected (each resynchronizes the token)
//	pitboss_agent_fanout_resyncs_total   snapshot requests completed
//	pitboss_agent_fanout_bad_total       undecodable or misrouted frames
//
// The values are read from the feed when gathered.
func RegisterFleetFeedMetrics(reg prometheus.Registerer, id market.AgentID, f *FleetFeed) error {
	return registerStatCounters(reg, id, f.Stats, []statCounter[natsbus.FeedStats]{
		{"fanout_frames_total", "Market-data frames received from the fleet's fan-out.", func(s natsbus.FeedStats) uint64 { return s.Frames }},
		{"fanout_events_total", "Fan-out events handed to the agent.", func(s natsbus.FeedStats) uint64 { return s.Emitted }},
		{"fanout_gaps_total", "Lost fan-out frames detected (each resynchronizes its token).", func(s natsbus.FeedStats) uint64 { return s.Gaps }},
		{"fanout_resyncs_total", "Fan-out snapshot requests completed.", func(s natsbus.FeedStats) uint64 { return s.Resyncs }},
		{"fanout_bad_total", "Undecodable or misrouted fan-out frames.", func(s natsbus.FeedStats) uint64 { return s.Bad }},
	})
}

// teeMetrics hands every measurement to two agent.Metrics.
type teeMetrics struct{ a, b agent.Metrics }

var _ agent.Metrics = teeMetrics{}

func (t teeMetrics) Event(k market.EventKind)    { t.a.Event(k); t.b.Event(k) }
func (t teeMetrics) Intent(k market.IntentKind)  { t.a.Intent(k); t.b.Intent(k) }
func (t teeMetrics) Denial(guard string)         { t.a.Denial(guard); t.b.Denial(guard) }
func (t teeMetrics) Order(op string)             { t.a.Order(op); t.b.Order(op) }
func (t teeMetrics) Fill(f *market.Fill)         { t.a.Fill(f); t.b.Fill(f) }
func (t teeMetrics) TickToTrade(d time.Duration) { t.a.TickToTrade(d); t.b.TickToTrade(d) }
func (t teeMetrics) Status(s *agent.Status)      { t.a.Status(s); t.b.Status(s) }

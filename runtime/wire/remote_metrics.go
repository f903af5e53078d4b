package wire

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/market"
)

// RegisterRemoteMetrics registers the remote feed's counters on reg, labelled with
// the agent's id:
//
//	pitboss_agent_ws_reconnects_total       WebSocket connections that ended and were retried
//	pitboss_agent_ws_book_resyncs_total     books resynchronized after a gap or a hash mismatch
//	pitboss_agent_ws_gaps_total             sequence gaps detected on the market channel
//	pitboss_agent_user_resyncs_total        user-channel replays through REST completed
//	pitboss_agent_user_replayed_total       fills and order changes the replays delivered
//	pitboss_agent_user_duplicates_total     fills dropped as already delivered or counted
//
// The values are read from the feed when scraped.
func RegisterRemoteMetrics(reg prometheus.Registerer, id market.AgentID, f *remote.Feed) error {
	return registerStatCounters(reg, id, f.Stats, []statCounter[remote.FeedStats]{
		{"ws_reconnects_total", "WebSocket connections that ended and were retried.", func(s remote.FeedStats) uint64 { return s.WS.Reconnects }},
		{"ws_book_resyncs_total", "Books resynchronized after a gap or a hash mismatch.", func(s remote.FeedStats) uint64 { return s.WS.Resyncs }},
		{"ws_gaps_total", "Sequence gaps detected on the market channel.", func(s remote.FeedStats) uint64 { return s.WS.Gaps }},
		{"user_resyncs_total", "User-channel replays through REST completed.", func(s remote.FeedStats) uint64 { return s.Resyncs }},
		{"user_replayed_total", "Fills and order changes delivered by user-channel replays.", func(s remote.FeedStats) uint64 { return s.Replayed }},
		{"user_duplicates_total", "Fills dropped as already delivered or already counted.", func(s remote.FeedStats) uint64 { return s.Dropped }},
	})
}

// statCounter is one pitboss_agent_<name> counter whose value v reads from a
// snapshot of some part's statistics.
type statCounter[S any] struct {
	name, help string
	v          func(S) uint64
}

// registerStatCounters registers the counters cs of agent id on reg; each takes a
// snapshot with stats when scraped.
func registerStatCounters[S any](reg prometheus.Registerer, id market.AgentID, stats func() S, cs []statCounter[S]) error {
	labels := prometheus.Labels{"agent": string(id)}
	for _, c := range cs {
		if err := reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "pitboss", Subsystem: "agent", Name: c.name,
			Help: c.help, ConstLabels: labels}, func() float64 { return float64(c.v(stats())) })); err != nil {
			return err
		}
	}
	return nil
}

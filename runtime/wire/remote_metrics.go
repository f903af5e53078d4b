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
	labels := prometheus.Labels{"agent": string(id)}
	counter := func(name, help string, v func(remote.FeedStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "pitboss", Subsystem: "agent", Name: name,
			Help: help, ConstLabels: labels}, func() float64 { return float64(v(f.Stats())) })
	}
	for _, c := range []prometheus.Collector{
		counter("ws_reconnects_total", "WebSocket connections that ended and were retried.", func(s remote.FeedStats) uint64 { return s.WS.Reconnects }),
		counter("ws_book_resyncs_total", "Books resynchronized after a gap or a hash mismatch.", func(s remote.FeedStats) uint64 { return s.WS.Resyncs }),
		counter("ws_gaps_total", "Sequence gaps detected on the market channel.", func(s remote.FeedStats) uint64 { return s.WS.Gaps }),
		counter("user_resyncs_total", "User-channel replays through REST completed.", func(s remote.FeedStats) uint64 { return s.Resyncs }),
		counter("user_replayed_total", "Fills and order changes delivered by user-channel replays.", func(s remote.FeedStats) uint64 { return s.Replayed }),
		counter("user_duplicates_total", "Fills dropped as already delivered or already counted.", func(s remote.FeedStats) uint64 { return s.Dropped }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

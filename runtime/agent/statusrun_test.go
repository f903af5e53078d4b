package agent_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// limitsCounter is the real guard chain counting the complete snapshots the agent
// builds (each asks for the limits once).
type limitsCounter struct {
	*wire.Guards
	calls int
}

func (g *limitsCounter) Limits(st *market.State) []agent.LimitUse {
	g.calls++
	return g.Guards.Limits(st)
}

// statusMetrics counts the snapshots handed to the metrics, and the complete ones.
type statusMetrics struct {
	agent.NopMetrics
	calls, complete int
}

func (m *statusMetrics) Status(s *agent.Status) {
	m.calls++
	if len(s.Limits) > 0 && len(s.Books) > 0 {
		m.complete++
	}
}

// With Config.StatusAfterRun the agent builds no complete snapshot for nobody: the
// periodic status duty builds none without metrics (with a logger, only the status
// line's part), yet the log, the audit trail and the Status after Run are those of
// an agent that publishes every StatusInterval; with metrics, they still get a
// complete snapshot every StatusInterval.
func TestStatusAfterRunBuildsNoSnapshotForNobody(t *testing.T) {
	flow := randomFlow(3, 3000) // about ten minutes of event time: a status duty every 10 s
	type outcome struct {
		log     string
		audit   []agent.AuditRecord
		status  agent.Status
		limits  int
		metrics statusMetrics
	}
	runWith := func(after, logs bool, m *statusMetrics) outcome {
		var audit auditLog
		var log bytes.Buffer
		var g *limitsCounter
		feed := &inlineScript{scriptFeed: scriptFeed{events: flow}}
		a := repeatAgent(t, false, flow[len(flow)-1].Time, feed, stickyQuoter(3), &audit, &log, func(c *agent.Config, d *agent.Deps) {
			c.StatusAfterRun = after
			g = &limitsCounter{Guards: d.Guards.(*wire.Guards)}
			d.Guards = g
			if !logs {
				d.Logger = zap.NewNop()
			}
			if m != nil {
				d.Metrics = m
			}
		})
		if err := a.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		o := outcome{log: log.String(), audit: audit.recs, status: a.Status(), limits: g.calls}
		if m != nil {
			o.metrics = *m
		}
		return o
	}
	every := runWith(false, true, nil)
	if every.limits < 50 || strings.Count(every.log, " status ") < 2 || len(every.status.Limits) == 0 || len(every.status.Books) == 0 {
		t.Fatalf("the flow does not exercise the status duty: %d snapshots, %d status lines, final %+v",
			every.limits, strings.Count(every.log, " status "), every.status)
	}
	for _, tc := range []struct {
		name    string
		logs    bool
		metrics bool
	}{{"logging", true, false}, {"no logger", false, false}, {"metrics", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var m *statusMetrics
			if tc.metrics {
				m = new(statusMetrics)
			}
			after := runWith(true, tc.logs, m)
			switch {
			case tc.metrics && (after.limits != every.limits || after.metrics.complete != after.metrics.calls || after.metrics.calls != every.limits):
				t.Fatalf("with metrics: %d snapshots (%d without StatusAfterRun), %d handed to the metrics, %d complete",
					after.limits, every.limits, after.metrics.calls, after.metrics.complete)
			case !tc.metrics && after.limits != 2:
				t.Fatalf("%d complete snapshots built, want 2 (the start's and the stop's)", after.limits)
			}
			if tc.logs && after.log != every.log {
				t.Fatalf("the logs differ:\n%s\n---\n%s", after.log, every.log)
			}
			if !reflect.DeepEqual(after.audit, every.audit) {
				t.Fatal("the audit trails differ")
			}
			if !reflect.DeepEqual(after.status, every.status) {
				t.Fatalf("the final status differs:\n%+v\n%+v", after.status, every.status)
			}
		})
	}
}

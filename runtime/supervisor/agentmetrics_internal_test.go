package supervisor

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

func family(name string, typ dto.MetricType, help, agent string) *dto.MetricFamily {
	m := &dto.Metric{Label: []*dto.LabelPair{{Name: ptrTo("agent"), Value: ptrTo(agent)}}}
	v := ptrTo(1.0)
	switch typ {
	case dto.MetricType_COUNTER:
		m.Counter = &dto.Counter{Value: v}
	case dto.MetricType_GAUGE:
		m.Gauge = &dto.Gauge{Value: v}
	case dto.MetricType_HISTOGRAM:
		m.Histogram = &dto.Histogram{SampleCount: ptrTo(uint64(1)), SampleSum: v}
	case dto.MetricType_SUMMARY:
		m.Summary = &dto.Summary{SampleCount: ptrTo(uint64(1)), SampleSum: v}
	}
	return &dto.MetricFamily{Name: ptrTo(name), Help: ptrTo(help), Type: typ.Enum(), Metric: []*dto.Metric{m}}
}

func ptrTo[T any](v T) *T { return &v }

// TestAgentMetricsNeverFailTheScrape: agents of different pitboss versions may
// publish one name with another type or help, or a histogram beside a counter
// named like its _count; the first agent (by id) keeps the name, the other's
// conflicting family is left out, and the scrape of the supervisor's registry
// never fails. Stale samples and stopped agents are not exported.
func TestAgentMetricsNeverFailTheScrape(t *testing.T) {
	s := &Supervisor{log: zap.NewNop(), byID: map[market.AgentID]*member{}}
	for _, id := range []market.AgentID{"a", "b", "c", "gone"} {
		s.byID[id] = &member{state: ProcRunning}
	}
	s.byID["gone"].state = ProcStopped
	am := newAgentMetrics(s)
	reg := prometheus.NewRegistry()
	reg.MustRegister(am)
	publish := func(id string, mfs ...*dto.MetricFamily) {
		t.Helper()
		data, err := EncodeAgentMetrics(mfs)
		if err != nil {
			t.Fatal(err)
		}
		am.store("pitboss.agent."+id+".metrics", data)
	}
	C, G, H := dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_HISTOGRAM
	publish("a", family("pitboss_agent_x_total", C, "x", "a"), family("pitboss_agent_lat", H, "l", "a"), family("pitboss_agent_y", G, "y", "a"))
	publish("b", family("pitboss_agent_x_total", G, "x", "b"), family("pitboss_agent_lat_count", C, "n", "b"), family("pitboss_agent_y", G, "other help", "b"),
		family("pitboss_agent_z", G, "z", "b"))
	publish("c", family("pitboss_agent_x_total", C, "x", "c"))
	publish("gone", family("pitboss_agent_x_total", C, "x", "gone"))
	publish("stranger", family("pitboss_agent_x_total", C, "x", "stranger"))

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("the scrape failed: %v", err)
	}
	got := map[string][]string{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "agent" {
					got[mf.GetName()] = append(got[mf.GetName()], l.GetValue())
				}
			}
		}
	}
	want := map[string][]string{
		"pitboss_agent_x_total": {"a", "c"}, // b's gauge of the same name is left out; gone's process is stopped
		"pitboss_agent_lat":     {"a"},      // b's counter named like its _count is left out
		"pitboss_agent_y":       {"a"},      // b's other help is left out
		"pitboss_agent_z":       {"b"},      // b's other families are kept
	}
	if len(got) != len(want) {
		t.Fatalf("exported %v, want %v", got, want)
	}
	for name, ids := range want {
		if g := got[name]; len(g) != len(ids) || (len(ids) > 0 && g[0] != ids[0]) || (len(ids) > 1 && g[1] != ids[1]) {
			t.Fatalf("%s: %v, want %v (all: %v)", name, g, ids, got)
		}
	}

	t.Run("a stale sample is not exported", func(t *testing.T) {
		am.mu.Lock()
		for id, smp := range am.latest {
			smp.at = smp.at.Add(-time.Duration(agentMetricsStaleAfter+1) * am.interval)
			am.latest[id] = smp
		}
		am.mu.Unlock()
		mfs, err := reg.Gather()
		if err != nil || len(mfs) != 0 {
			t.Fatalf("%d families exported, %v", len(mfs), err)
		}
	})
}

// TestSuffixCollisionFollowsTheRegistry: a family is left out exactly when
// Prometheus's registry would refuse it beside the families already taken — a
// histogram x beside x_count, x_sum or x_bucket, a summary x beside x_count or
// x_sum, in either order; other types and suffixes coexist.
func TestSuffixCollisionFollowsTheRegistry(t *testing.T) {
	C, G, H, S := dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY
	cases := []struct {
		name   string
		taken  string
		typ    dto.MetricType
		family string
		ftyp   dto.MetricType
		want   bool
	}{
		{"x_count after histogram x", "x", H, "x_count", C, true},
		{"x_sum after histogram x", "x", H, "x_sum", G, true},
		{"x_bucket after histogram x", "x", H, "x_bucket", C, true},
		{"x_count after summary x", "x", S, "x_count", C, true},
		{"x_bucket after summary x", "x", S, "x_bucket", C, false},
		{"x_count after counter x", "x", C, "x_count", C, false},
		{"histogram x after x_count", "x_count", C, "x", H, true},
		{"histogram x after x_bucket", "x_bucket", G, "x", H, true},
		{"summary x after x_sum", "x_sum", G, "x", S, true},
		{"summary x after x_bucket", "x_bucket", G, "x", S, false},
		{"gauge x after x_count", "x_count", C, "x", G, false},
		{"an unrelated name", "y", H, "x_count", C, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			accepted := map[string]*exportedFamily{c.taken: {typ: c.typ}}
			if got := suffixCollision(c.family, c.ftyp, accepted); got != c.want {
				t.Fatalf("suffixCollision(%s %s beside %s %s) = %v, want %v", c.ftyp, c.family, c.typ, c.taken, got, c.want)
			}
			// The registry agrees.
			reg := prometheus.NewRegistry()
			err := reg.Register(familiesCollector{family(c.taken, c.typ, "h", "a"), family(c.family, c.ftyp, "h", "a")})
			if err == nil {
				_, err = reg.Gather()
			}
			if refused := err != nil; refused != c.want {
				t.Fatalf("the registry refused: %v (%v), suffixCollision: %v", refused, err, c.want)
			}
		})
	}
}

package supervisor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// counterFamily is one counter family with one series per label set.
func counterFamily(name string, labels ...map[string]string) *dto.MetricFamily {
	mf := &dto.MetricFamily{Name: ptr(name), Help: ptr("h"), Type: ptr(dto.MetricType_COUNTER)}
	for _, ls := range labels {
		m := &dto.Metric{Counter: &dto.Counter{Value: ptr(1.0)}}
		for k, v := range ls {
			m.Label = append(m.Label, &dto.LabelPair{Name: ptr(k), Value: ptr(v)})
		}
		mf.Metric = append(mf.Metric, m)
	}
	return mf
}

func ptr[T any](v T) *T { return &v }

func encode(t testing.TB, mfs ...*dto.MetricFamily) []byte {
	t.Helper()
	b, err := EncodeAgentMetrics(mfs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgentMetricsSpeakOnlyForTheirAgent: the supervisor takes from an agent's
// message only the agent's own pitboss_agent_* series, whole or not at all.
func TestAgentMetricsSpeakOnlyForTheirAgent(t *testing.T) {
	own := map[string]string{"agent": "a"}
	cases := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"its own series", encode(t, counterFamily("pitboss_agent_x_total", own, map[string]string{"agent": "a", "kind": "book"})), true},
		{"nothing", nil, true},
		{"another agent's series", encode(t, counterFamily("pitboss_agent_x_total", own, map[string]string{"agent": "b"})), false},
		{"a series without the agent label", encode(t, counterFamily("pitboss_agent_x_total", map[string]string{"kind": "book"})), false},
		{"the supervisor's own names", encode(t, counterFamily("pitboss_fleet_agents", own)), false},
		{"a process metric", encode(t, counterFamily("process_cpu_seconds_total", own)), false},
		{"one series twice", encode(t, counterFamily("pitboss_agent_x_total", own, own)), false},
		{"a family twice", encode(t, counterFamily("pitboss_agent_x_total", own), counterFamily("pitboss_agent_x_total", own)), false},
		{"a counter without a value", encode(t, &dto.MetricFamily{Name: ptr("pitboss_agent_x_total"), Type: ptr(dto.MetricType_COUNTER),
			Metric: []*dto.Metric{{Label: []*dto.LabelPair{{Name: ptr("agent"), Value: ptr("a")}}}}}), false},
		{"not protobuf", []byte("pitboss_agent_x_total{agent=\"a\"} 1\n"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeAgentMetrics("a", c.data)
			if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrAgentMetrics)) {
				t.Fatalf("DecodeAgentMetrics: %v, want ok=%v", err, c.ok)
			}
		})
	}
	t.Run("too many series", func(t *testing.T) {
		ls := make([]map[string]string, MaxAgentMetricSeries+1)
		for i := range ls {
			ls[i] = map[string]string{"agent": "a", "n": strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String()}
		}
		if _, err := DecodeAgentMetrics("a", encode(t, counterFamily("pitboss_agent_x_total", ls...))); !errors.Is(err, ErrAgentMetrics) {
			t.Fatalf("%d series accepted: %v", len(ls), err)
		}
	})
}

// FuzzDecodeAgentMetrics feeds arbitrary messages: no panic, and what is accepted
// is only the agent's pitboss_agent_* series and exports without error.
func FuzzDecodeAgentMetrics(f *testing.F) {
	f.Add(encode(f, counterFamily("pitboss_agent_x_total", map[string]string{"agent": "a"})))
	f.Add(encode(f, counterFamily("pitboss_agent_x_total", map[string]string{"agent": "b"})))
	f.Add([]byte{0x05, 0x0a, 0x03, 'a', 'b', 'c'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		mfs, err := DecodeAgentMetrics("a", data)
		if err != nil {
			return
		}
		for _, mf := range mfs {
			if !strings.HasPrefix(mf.GetName(), AgentMetricsPrefix) {
				t.Fatalf("accepted family %q", mf.GetName())
			}
			for _, m := range mf.Metric {
				n := 0
				for _, l := range m.Label {
					if l.GetName() == "agent" {
						if l.GetValue() != "a" {
							t.Fatalf("accepted a series of %q", l.GetValue())
						}
						n++
					}
				}
				if n != 1 {
					t.Fatalf("accepted a series with %d agent labels", n)
				}
			}
		}
	})
}

// TestAgentsMetricsAreExportedByTheirSupervisor: the fake agents publish a counter
// over NATS (as `pitboss run --supervised` publishes its registry); the
// supervisor's registry exports each running agent's series, and drops those of an
// agent it stopped.
func TestAgentsMetricsAreExportedByTheirSupervisor(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run")},
		func(c *Config) { c.Registry = reg })
	beats := func(agent string) float64 { // -1: not exported
		if v, ok := lookupMetric(t, reg, supervisortest.FakeBeatsMetric, agent); ok {
			return v
		}
		return -1
	}
	waitTrue(t, "both agents' metrics", 20*time.Second, func() bool { return beats("a") > 0 && beats("b") > 0 })
	if _, err := f.Client.Control(supervisortest.Ctx(t, 5*time.Second), "stop", "a", "test", ""); err != nil {
		t.Fatal(err)
	}
	waitTrue(t, "the stopped agent's series gone", 20*time.Second, func() bool { return beats("a") < 0 && beats("b") > 0 })

	// Another supervisor's agent, or a stranger, is not exported.
	data := encode(t, counterFamily("pitboss_agent_x_total", map[string]string{"agent": "zz"}))
	subj, err := AgentMetricsSubject("zz")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sup.Bus().Conn().Publish(subj, data); err != nil {
		t.Fatal(err)
	}
	_ = f.Sup.Bus().Flush(supervisortest.Ctx(t, 5*time.Second))
	time.Sleep(200 * time.Millisecond) // nothing to wait for: the message is dropped
	if n := seriesCount(t, reg, "pitboss_agent_x_total"); n != 0 {
		t.Fatalf("a stranger's metrics exported: %d series", n)
	}
}

// TestAgentMetricsSubject names an agent's subject and refuses an id that is not one.
func TestAgentMetricsSubject(t *testing.T) {
	if s, err := AgentMetricsSubject("mm-1"); err != nil || s != natsbus.Prefix+".agent.mm-1.metrics" {
		t.Fatalf("%q %v", s, err)
	}
	if _, err := AgentMetricsSubject(market.AgentID("a.>")); !errors.Is(err, market.ErrBadAgentID) {
		t.Fatalf("a.>: %v", err)
	}
}

func waitTrue(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// An agent's Prometheus metrics in a fleet. A supervised agent does not listen for
// scrapes (`pitboss run --supervised` ignores --metrics-addr): it gathers its own
// registry every DefaultAgentMetricsInterval and publishes it on
// AgentMetricsSubject; its supervisor re-exports the latest of each of its agents
// on its metrics_addr, next to the fleet's own metrics. One scrape target per
// supervisor, no port per agent, and the same series as `pitboss run
// --metrics-addr` (docs/design/0125).
const (
	// DefaultAgentMetricsInterval is how often a supervised agent publishes its
	// metrics.
	DefaultAgentMetricsInterval = 5 * time.Second
	// AgentMetricsPrefix starts the name of every metric family an agent may
	// publish; others are dropped (an agent cannot shadow the supervisor's
	// pitboss_fleet_*, go_* or process_* series).
	AgentMetricsPrefix = "pitboss_agent_"
	// MaxAgentMetricFamilies and MaxAgentMetricSeries bound what one agent's
	// message may carry; a message over either is dropped whole.
	MaxAgentMetricFamilies = 512
	MaxAgentMetricSeries   = 20_000
	// agentMetricsStaleAfter is how many intervals an agent's last metrics stay
	// exported without a newer message.
	agentMetricsStaleAfter = 3
)

// AgentMetricsSubject returns "pitboss.agent.<id>.metrics"
// (natsbus.MetricsSubject), where agent id publishes its metrics (delimited
// protobuf, expfmt's format) for its supervisor.
func AgentMetricsSubject(id market.AgentID) (string, error) { return natsbus.MetricsSubject(id) }

// EncodeAgentMetrics encodes families as an agent publishes them.
func EncodeAgentMetrics(families []*dto.MetricFamily) ([]byte, error) {
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			return nil, fmt.Errorf("supervisor: encode metrics: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// ErrAgentMetrics is wrapped by DecodeAgentMetrics for a message that is not an
// agent's metrics.
var ErrAgentMetrics = errors.New("not an agent's metrics")

// DecodeAgentMetrics reads the metrics agent id published (outside input: another
// process wrote it). It refuses the whole message when it is undecodable, exceeds
// MaxAgentMetricFamilies or MaxAgentMetricSeries, names a family without
// AgentMetricsPrefix, or has a series whose "agent" label is missing or another
// agent's — an agent speaks only for itself.
func DecodeAgentMetrics(id market.AgentID, data []byte) ([]*dto.MetricFamily, error) {
	dec := expfmt.NewDecoder(bytes.NewReader(data), expfmt.NewFormat(expfmt.TypeProtoDelim))
	var out []*dto.MetricFamily
	series := 0
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("supervisor: %w: %w", ErrAgentMetrics, err)
		}
		if len(out) == MaxAgentMetricFamilies {
			return nil, fmt.Errorf("supervisor: %w: more than %d families", ErrAgentMetrics, MaxAgentMetricFamilies)
		}
		if !strings.HasPrefix(mf.GetName(), AgentMetricsPrefix) {
			return nil, fmt.Errorf("supervisor: %w: family %q is not %s*", ErrAgentMetrics, mf.GetName(), AgentMetricsPrefix)
		}
		if series += len(mf.Metric); series > MaxAgentMetricSeries {
			return nil, fmt.Errorf("supervisor: %w: more than %d series", ErrAgentMetrics, MaxAgentMetricSeries)
		}
		for _, m := range mf.Metric {
			if err := checkAgentSeries(id, mf.GetType(), m); err != nil {
				return nil, fmt.Errorf("supervisor: %w: %s: %w", ErrAgentMetrics, mf.GetName(), err)
			}
		}
		out = append(out, mf)
	}
	// What the registry would refuse when it exports them — duplicate series or
	// families, a histogram and its _count — is refused here, once, so that one
	// agent's message can never fail the supervisor's scrape.
	reg := prometheus.NewRegistry()
	if err := reg.Register(familiesCollector(out)); err != nil {
		return nil, fmt.Errorf("supervisor: %w: %w", ErrAgentMetrics, err)
	}
	if _, err := reg.Gather(); err != nil {
		return nil, fmt.Errorf("supervisor: %w: %w", ErrAgentMetrics, err)
	}
	return out, nil
}

// familiesCollector exports metric families as they are (unchecked).
type familiesCollector []*dto.MetricFamily

func (familiesCollector) Describe(chan<- *prometheus.Desc) {}

func (c familiesCollector) Collect(ch chan<- prometheus.Metric) {
	for _, mf := range c {
		desc := prometheus.NewDesc(mf.GetName(), mf.GetHelp(), nil, nil)
		for _, m := range mf.Metric {
			ch <- forwarded{desc: desc, typ: mf.GetType(), m: m}
		}
	}
}

// checkAgentSeries checks one series of an agent's family of type typ.
func checkAgentSeries(id market.AgentID, typ dto.MetricType, m *dto.Metric) error {
	if m == nil {
		return errors.New("an empty series")
	}
	agent := 0
	for _, l := range m.Label {
		if l.GetName() == "agent" {
			if l.GetValue() != string(id) {
				return fmt.Errorf("a series of agent %q", l.GetValue())
			}
			agent++
		}
	}
	if agent != 1 {
		return errors.New("a series without its agent label")
	}
	ok := false
	switch typ {
	case dto.MetricType_COUNTER:
		ok = m.Counter != nil
	case dto.MetricType_GAUGE:
		ok = m.Gauge != nil
	case dto.MetricType_HISTOGRAM:
		ok = m.Histogram != nil
	case dto.MetricType_SUMMARY:
		ok = m.Summary != nil
	case dto.MetricType_UNTYPED:
		ok = m.Untyped != nil
	default:
		return fmt.Errorf("a series of type %s", typ)
	}
	if !ok {
		return fmt.Errorf("a series without a %s value", typ)
	}
	return nil
}

// PublishAgentMetrics is the agent's side: it publishes what g gathers on
// AgentMetricsSubject(id) every interval (DefaultAgentMetricsInterval if zero),
// once at once and once more when ctx ends (the final counts), then returns nil.
// Only families named AgentMetricsPrefix* are sent. A failed gather or publish is
// logged and the next interval tries again.
func PublishAgentMetrics(ctx context.Context, bus *natsbus.Bus, id market.AgentID, g prometheus.Gatherer, interval time.Duration, log *zap.Logger) error {
	subj, err := AgentMetricsSubject(id)
	if err != nil {
		return err
	}
	if interval <= 0 {
		interval = DefaultAgentMetricsInterval
	}
	if log == nil {
		log = zap.NewNop()
	}
	publish := func() {
		mfs, err := g.Gather()
		if err != nil {
			log.Warn("metrics not gathered", zap.Error(err))
		}
		keep := mfs[:0]
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), AgentMetricsPrefix) {
				keep = append(keep, mf)
			}
		}
		data, err := EncodeAgentMetrics(keep)
		if err == nil {
			err = bus.Conn().Publish(subj, data)
		}
		if err != nil {
			log.Warn("metrics not published", zap.Error(err))
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		publish()
		select {
		case <-ctx.Done():
			publish()
			return nil
		case <-t.C:
		}
	}
}

// agentMetricsQueue bounds the agents' metrics messages waiting for the collector
// goroutine. Overflow policy: nats.go drops the newest; the agent's next message
// replaces what was lost.
const agentMetricsQueue = 256

// agentMetrics keeps the latest metrics of each agent this supervisor runs and
// exports them as a prometheus.Collector (unchecked: the series are the agents').
type agentMetrics struct {
	s        *Supervisor
	interval time.Duration

	mu     sync.Mutex
	latest map[market.AgentID]agentSample
	bad    map[market.AgentID]time.Time // last refusal logged, per agent
}

type agentSample struct {
	families []*dto.MetricFamily // never modified after it is stored
	at       time.Time
}

func newAgentMetrics(s *Supervisor) *agentMetrics {
	return &agentMetrics{s: s, interval: DefaultAgentMetricsInterval, latest: map[market.AgentID]agentSample{},
		bad: map[market.AgentID]time.Time{}}
}

// Describe implements prometheus.Collector: nothing (unchecked).
func (a *agentMetrics) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: the latest series of every agent whose
// process runs and whose metrics are fresh. Agents are taken in id order; a family
// that another agent already exported with another type or help (another pitboss
// version), or whose name collides with a histogram's or summary's series, is left
// out for that agent, so the scrape never fails.
func (a *agentMetrics) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	a.mu.Lock()
	ids := make([]market.AgentID, 0, len(a.latest))
	for id, smp := range a.latest {
		m := a.s.member(id)
		if now.Sub(smp.at) > agentMetricsStaleAfter*a.interval || m == nil || m.procState() != ProcRunning {
			delete(a.latest, id)
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fresh := make([]agentSample, len(ids))
	for i, id := range ids {
		fresh[i] = a.latest[id]
	}
	a.mu.Unlock()
	accepted := map[string]*exportedFamily{}
	for _, smp := range fresh {
		for _, mf := range smp.families {
			f := accepted[mf.GetName()]
			switch {
			case f == nil && suffixCollision(mf.GetName(), mf.GetType(), accepted):
				continue
			case f == nil:
				f = &exportedFamily{typ: mf.GetType(), help: mf.GetHelp(), desc: prometheus.NewDesc(mf.GetName(), mf.GetHelp(), nil, nil)}
				accepted[mf.GetName()] = f
			case f.typ != mf.GetType() || f.help != mf.GetHelp():
				continue
			}
			for _, m := range mf.Metric {
				ch <- forwarded{desc: f.desc, typ: f.typ, m: m}
			}
		}
	}
}

// exportedFamily is a family name a scrape has taken: from the first agent (by
// id) that published it.
type exportedFamily struct {
	typ  dto.MetricType
	help string
	desc *prometheus.Desc
}

// suffixCollision reports whether a family named name of type typ cannot be
// exported beside the families accepted: Prometheus's registry refuses a histogram
// x beside x_count, x_sum or x_bucket, and a summary x beside x_count or x_sum, in
// either order.
func suffixCollision(name string, typ dto.MetricType, accepted map[string]*exportedFamily) bool {
	for _, suf := range []string{"_count", "_sum", "_bucket"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			if f := accepted[base]; f != nil && (f.typ == dto.MetricType_HISTOGRAM || f.typ == dto.MetricType_SUMMARY && suf != "_bucket") {
				return true
			}
		}
	}
	if typ == dto.MetricType_HISTOGRAM || typ == dto.MetricType_SUMMARY {
		for _, suf := range []string{"_count", "_sum"} {
			if accepted[name+suf] != nil {
				return true
			}
		}
	}
	return typ == dto.MetricType_HISTOGRAM && accepted[name+"_bucket"] != nil
}

// serve subscribes to the agents' metrics and returns the loop that stores them
// until its context ends.
func (a *agentMetrics) serve() (func(context.Context) error, error) {
	return a.s.serveSubject(natsbus.SubjectAllMetrics, agentMetricsQueue, func(m *nats.Msg) { a.store(m.Subject, m.Data) })
}

// store keeps one message of subject "pitboss.agent.<id>.metrics" if <id> is an
// agent of this supervisor and the message is its metrics.
func (a *agentMetrics) store(subject string, data []byte) {
	id, ok := strings.CutPrefix(subject, natsbus.Prefix+".agent.")
	if !ok {
		return
	}
	id, ok = strings.CutSuffix(id, ".metrics")
	aid := market.AgentID(id)
	if !ok || a.s.member(aid) == nil { // another supervisor's agent
		return
	}
	mfs, err := DecodeAgentMetrics(aid, data)
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		if now.Sub(a.bad[aid]) > time.Minute {
			a.bad[aid] = now
			a.s.log.Warn("agent metrics refused", zap.String("agent", id), zap.Error(err))
		}
		return
	}
	a.latest[aid] = agentSample{families: mfs, at: now}
}

// forwarded is one series of an agent, re-exported as it was gathered: its labels,
// its timestamp and the one value of its family's type (nothing else it may carry).
// The *dto.Metric is shared with the stored sample and never modified.
type forwarded struct {
	desc *prometheus.Desc
	typ  dto.MetricType
	m    *dto.Metric
}

func (f forwarded) Desc() *prometheus.Desc { return f.desc }

func (f forwarded) Write(out *dto.Metric) error {
	out.Label, out.TimestampMs = f.m.Label, f.m.TimestampMs
	switch f.typ {
	case dto.MetricType_COUNTER:
		out.Counter = f.m.Counter
	case dto.MetricType_GAUGE:
		out.Gauge = f.m.Gauge
	case dto.MetricType_HISTOGRAM:
		out.Histogram = f.m.Histogram
	case dto.MetricType_SUMMARY:
		out.Summary = f.m.Summary
	default:
		out.Untyped = f.m.Untyped
	}
	return nil
}

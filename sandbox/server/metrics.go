package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pitbossdev/pitboss/sandbox/host"
)

// metrics are the server's Prometheus metrics, in a registry of its own (served on
// the internal listener's /metrics): requests by route and status, request latency
// by route, orders by outcome, and the host's and journal's counters.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	orders   *prometheus.CounterVec

	mu       sync.RWMutex
	counters map[routeStatus]prometheus.Counter
	hists    map[string]prometheus.Observer
	ordersBy map[string]prometheus.Counter
}

type routeStatus struct {
	route  string
	status int
}

func newMetrics(h *host.Host) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "pitboss", Subsystem: "clob", Name: "http_requests_total",
			Help: "HTTP requests of the CLOB service by route pattern and status.",
		}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "pitboss", Subsystem: "clob", Name: "http_request_duration_seconds",
			Help:    "Latency of HTTP requests of the CLOB service by route pattern.",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1},
		}, []string{"route"}),
		orders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "pitboss", Subsystem: "clob", Name: "orders_total",
			Help: "Orders by outcome: accepted, rejected (by the engine), invalid (before the engine), error (host failure).",
		}, []string{"result"}),
		counters: map[routeStatus]prometheus.Counter{},
		hists:    map[string]prometheus.Observer{},
		ordersBy: map[string]prometheus.Counter{},
	}
	m.reg.MustRegister(m.requests, m.latency, m.orders, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	stat := func(name, help string, counter bool, f func(s host.Stats) float64) {
		opts := prometheus.Opts{Namespace: "pitboss", Subsystem: "host", Name: name, Help: help}
		if counter {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts(opts), func() float64 { return f(h.Stats()) }))
		} else {
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts), func() float64 { return f(h.Stats()) }))
		}
	}
	stat("commands_total", "Engine commands applied since start (recovery included).", true, func(s host.Stats) float64 { return float64(s.Commands) })
	stat("records_total", "Server records applied since start (recovery included).", true, func(s host.Stats) float64 { return float64(s.Records) })
	stat("applied_seq", "Sequence number of the last event applied.", false, func(s host.Stats) float64 { return float64(s.AppliedSeq) })
	stat("published_seq", "Sequence number of the last event delivered to listeners.", false, func(s host.Stats) float64 { return float64(s.PublishedSeq) })
	stat("queue_length", "Requests waiting for the engine goroutine.", false, func(s host.Stats) float64 { return float64(s.Queue) })
	stat("publish_queue_length", "Event batches waiting for durability and listeners.", false, func(s host.Stats) float64 { return float64(s.PublishQueue) })
	stat("journal_durable_lsn", "Highest durable journal record.", false, func(s host.Stats) float64 { return float64(s.Journal.DurableLSN) })
	stat("journal_batches_total", "Journal write groups (one write and one fdatasync each).", true, func(s host.Stats) float64 { return float64(s.Journal.Batches) })
	stat("journal_bytes_total", "Bytes written to journal segments.", true, func(s host.Stats) float64 { return float64(s.Journal.Bytes) })
	stat("journal_sync_seconds_total", "Time spent writing and syncing journal batches.", true, func(s host.Stats) float64 { return s.Journal.SyncTime.Seconds() })
	stat("journal_max_batch_records", "Largest journal batch, in records.", false, func(s host.Stats) float64 { return float64(s.Journal.MaxBatchRecords) })
	stat("journal_segments", "Journal segment files.", false, func(s host.Stats) float64 { return float64(s.Journal.Segments) })
	stat("snapshots", "Snapshots kept.", false, func(s host.Stats) float64 { return float64(s.Journal.Snapshots) })
	return m
}

// observe counts one request. Children of the vectors are cached so that the hot
// path does not hash label values.
func (m *metrics) observe(route string, status int, d time.Duration) {
	if route == "" {
		route = "(unrouted)"
	}
	if status == 0 {
		status = http.StatusOK
	}
	k := routeStatus{route, status}
	m.mu.RLock()
	c, ok1 := m.counters[k]
	h, ok2 := m.hists[route]
	m.mu.RUnlock()
	if !ok1 || !ok2 {
		m.mu.Lock()
		if c, ok1 = m.counters[k]; !ok1 {
			c = m.requests.WithLabelValues(route, strconv.Itoa(status))
			m.counters[k] = c
		}
		if h, ok2 = m.hists[route]; !ok2 {
			h = m.latency.WithLabelValues(route)
			m.hists[route] = h
		}
		m.mu.Unlock()
	}
	c.Inc()
	h.Observe(d.Seconds())
}

// order counts one order by result.
func (m *metrics) order(result string) {
	m.mu.RLock()
	c, ok := m.ordersBy[result]
	m.mu.RUnlock()
	if !ok {
		m.mu.Lock()
		if c, ok = m.ordersBy[result]; !ok {
			c = m.orders.WithLabelValues(result)
			m.ordersBy[result] = c
		}
		m.mu.Unlock()
	}
	c.Inc()
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

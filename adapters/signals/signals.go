// Package signals brings an agent's outside signals — named numbers pushed over
// HTTP or NATS, or read from a file or a command on an interval — into its event
// stream as market.EventSignal events (docs/agents.md, "Feeds and signals").
//
// A Hub knows the declared names. Feed wraps the agent's market feed: its Run runs
// the market feed and the Hub's sources, and delivers every value as an event
// between the market's events, stamped with the stream's time. The strategy
// measures a signal's staleness from that stamp (never from the wall clock while it
// evaluates), and a recording of the stream keeps it, so a backtest replays it.
package signals

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// Errors of Push and of the value parsers.
var (
	ErrUnknown   = errors.New("signals: no such signal")
	ErrMalformed = errors.New(`signals: the body must be {"value": NUMBER} with a finite number`)
	ErrNumber    = errors.New("signals: not a finite number")
)

// MaxBody is the largest signal body (HTTP request, NATS message, file, command
// output) read.
const MaxBody = 4 << 10

// ParseBody parses a pushed value: the JSON object {"value": NUMBER} and nothing
// else (no other member, one value, no trailing data). NaN and ±Inf cannot be
// written in JSON; a number too large for a float64 is refused.
func ParseBody(b []byte) (float64, error) {
	if len(b) > MaxBody {
		return 0, ErrMalformed
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var body struct {
		Value json.RawMessage `json:"value"`
	}
	if err := dec.Decode(&body); err != nil || len(body.Value) == 0 || !(body.Value[0] == '-' || body.Value[0] >= '0' && body.Value[0] <= '9') {
		return 0, ErrMalformed // absent, null, a string, an object...
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, ErrMalformed
	}
	v, err := strconv.ParseFloat(string(body.Value), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, ErrMalformed
	}
	return v, nil
}

// ParseNumber parses a polled value: one decimal number, with spaces and line
// breaks around it (a file's content, a command's output).
func ParseNumber(b []byte) (float64, error) {
	if len(b) > MaxBody {
		return 0, ErrNumber
	}
	s := string(bytes.TrimSpace(b))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || s == "" || !numeric(s) {
		return 0, ErrNumber
	}
	return v, nil
}

// numeric refuses the spellings ParseFloat takes that are not plain numbers
// (hexadecimal floats, underscores, "Inf").
func numeric(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}

// Config configures a Hub.
type Config struct {
	// Names are the signals the agent declares. Values of other names are refused.
	Names []string
	// Now is the agent's clock in Unix ms, read when a value arrives, never by the
	// strategy. A value is stamped with the later of Now and the last event time
	// the stream delivered, so the stream's time never goes backwards. If nil,
	// the last event time alone (event-clock runs).
	Now func() int64
	// Logger reports dropped values. If nil, none.
	Logger *zap.Logger
}

// Hub holds an agent's signal names and delivers their values into the stream of
// the Feed it wraps. Its methods are safe for concurrent use.
type Hub struct {
	cfg   Config
	names map[string]bool
	log   *zap.Logger

	mu      sync.Mutex
	emit    func(*market.Event) bool // while the feed runs
	last    int64                    // the last event time delivered
	pending map[string]float64       // pushed before the feed ran
	order   []string
	ev      market.Event
	sources []func(ctx context.Context)
}

// NewHub returns the hub of cfg.Names.
func NewHub(cfg Config) *Hub {
	h := &Hub{cfg: cfg, names: map[string]bool{}, pending: map[string]float64{}, log: cfg.Logger}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	for _, n := range cfg.Names {
		h.names[n] = true
	}
	return h
}

// Has reports whether name is a declared signal.
func (h *Hub) Has(name string) bool { return h.names[name] }

// Push delivers a value of signal name into the stream. Before the feed runs, the
// latest value of each name waits for it. It returns ErrUnknown for an undeclared
// name and ErrNumber for NaN or ±Inf; false from the stream (the agent stopped) is
// not an error.
func (h *Hub) Push(name string, v float64) error {
	if !h.names[name] {
		return ErrUnknown
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ErrNumber
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.emit == nil {
		if _, ok := h.pending[name]; !ok {
			h.order = append(h.order, name)
		}
		h.pending[name] = v
		return nil
	}
	h.deliverLocked(name, v)
	return nil
}

// deliverLocked emits one signal event, stamped (h.mu held).
func (h *Hub) deliverLocked(name string, v float64) {
	t := h.last
	if h.cfg.Now != nil {
		t = max(t, h.cfg.Now())
	}
	h.last = t
	h.ev = market.Event{Kind: market.EventSignal, Time: t, Name: name, Value: v}
	h.emit(&h.ev)
}

// AddSource adds a goroutine the Feed runs beside the market feed until it stops
// (a poller, an endpoint's server, a subscription).
func (h *Hub) AddSource(run func(ctx context.Context)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sources = append(h.sources, run)
}

// Feed returns base with the hub's signals in its stream.
func (h *Hub) Feed(base agent.Feed) agent.Feed { return &feed{h: h, base: base} }

type feed struct {
	h    *Hub
	base agent.Feed
}

// Run implements agent.Feed: it runs the market feed on the calling goroutine
// and the hub's sources on their own, all emitting through one lock (so the
// agent sees one stream), and stops the sources before it returns.
func (f *feed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	h := f.h
	h.mu.Lock()
	if h.emit != nil {
		h.mu.Unlock()
		return fmt.Errorf("signals: the feed is already running")
	}
	h.emit = emit
	for _, name := range h.order {
		h.deliverLocked(name, h.pending[name])
	}
	h.order, h.pending = nil, map[string]float64{}
	sources := append([]func(context.Context){}, h.sources...)
	h.mu.Unlock()

	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, run := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(sctx)
		}()
	}
	err := f.base.Run(ctx, func(ev *market.Event) bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		if ev.Time > h.last {
			h.last = ev.Time
		}
		return emit(ev)
	})
	stop()
	wg.Wait()
	h.mu.Lock()
	h.emit = nil
	h.mu.Unlock()
	return err
}

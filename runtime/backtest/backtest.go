package backtest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/strategy"
)

// Config configures one backtest. Spec and Source are required; every other zero
// field means the documented default.
type Config struct {
	// Spec is the agent file (agents.Load). Its strategy, parameter overrides,
	// markets, guards and heartbeat are used as a dry run uses them.
	Spec *agents.Spec
	// Strategy, if set, replaces the agent file's strategy (a sweep point: the
	// file's strategy with other parameter values). If nil, Spec.LoadStrategy().
	Strategy *strategy.Strategy
	// Source is the market data.
	Source Source
	// From and To bound the replayed event time (Unix ms, inclusive). Zero: the
	// data's start, the data's end.
	From, To int64
	// Latency is how long (event time) an order takes to reach the paper book
	// after the event that caused it. If zero, orders arrive at once.
	Latency time.Duration
	// Balance is the paper account's starting collateral. If zero, 1000.
	Balance market.Micros
	// FeeBps, if set, replaces every market's taker fee rate (basis points);
	// if nil, each market's own rate applies.
	FeeBps *uint32
	// Report tunes the metrics (sampling grid, return period, chart points).
	// Its From and To are set from the run.
	Report report.Config
	// Title names the report. If empty, "<agent> on <data>".
	Title string
	// Progress, if set, counts the events replayed, for a progress display on
	// another goroutine.
	Progress *Progress
	// Logger receives the agent's log. If nil, nothing is logged.
	Logger *zap.Logger

	// viaQueue hands the events to the agent through its queue, from the feed's
	// own goroutine, instead of inline (agent.InlineFeed): the way of the dry
	// run's live feeds, for the tests that check both give the same results.
	viaQueue bool
	// fullPasses makes the agent walk every pass in full (agent.Config.FullPasses),
	// for the same tests.
	fullPasses bool
}

// Progress counts a run's events as it goes. Its methods are safe from any
// goroutine.
type Progress struct {
	done  atomic.Int64
	total atomic.Int64
}

// Done returns the events replayed so far.
func (p *Progress) Done() int64 { return p.done.Load() }

// Total returns the events the data holds (0 when unknown in advance).
func (p *Progress) Total() int64 { return p.total.Load() }

// Result is the outcome of a backtest.
type Result struct {
	// Report is the run's report (metrics, curves, fills).
	Report *report.Report
	// Status is the agent's final status (counters, positions, state).
	Status agent.Status
}

// Forecaster is implemented by deciders that declare a probability of YES for the
// markets they trade (strategy.Instance: the strategy's value named "fair"). A
// backtest reads it at every sample of the report (each second of event time) and
// just before a market's resolution is applied, and scores it with Brier scores
// (report.Config.Forecaster).
type Forecaster = report.Forecaster

// ErrNoEvents is returned when the data holds no event in [From, To].
var ErrNoEvents = errors.New("backtest: no market event in the chosen period")

// Run replays cfg.Source through the agent of cfg.Spec and returns the report. The
// agent is the dry run's: the same strategy instance, guard chain, loop with its
// reconciler, and paper venue (the fill model), composed as a dry run composes
// them, with the recording as its feed and event time as its only clock. The same
// Config gives the same report, byte for byte.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Spec == nil || cfg.Source == nil {
		return nil, errors.New("backtest: an agent file and market data are required")
	}
	from, to := spanOf(cfg.Source, cfg.From, cfg.To)
	if cfg.From != 0 && cfg.To != 0 && cfg.To < cfg.From {
		return nil, fmt.Errorf("backtest: --to (%d) is before --from (%d)", cfg.To, cfg.From)
	}
	parts, err := compose(&cfg)
	if err != nil {
		return nil, err
	}
	rc := cfg.Report
	rc.From, rc.To = from, to
	fc, _ := parts.decider.(Forecaster)
	if fc != nil {
		rc.Forecaster = fc
	}
	col, err := report.NewCollector(rc)
	if err != nil {
		return nil, err
	}
	obs := &observer{inner: parts.decider, fc: fc, col: col, markets: parts.infos}
	obs.at, _ = parts.decider.(agent.VersionedDecider)
	parts.audit = &auditSink{col: col}
	progress := cfg.Progress
	if progress == nil {
		progress = new(Progress)
	}
	_, _, total := cfg.Source.Span()
	progress.total.Store(total)
	feed := &feed{src: &window{src: cfg.Source, from: cfg.From, to: cfg.To}, progress: progress, filter: parts.filter(),
		queued: cfg.viaQueue}
	a, err := parts.agent(feed, obs)
	if err != nil {
		return nil, err
	}
	if err := a.Run(ctx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if feed.err != nil {
		return nil, feed.err
	}
	if obs.st == nil || !feed.src.reached {
		return nil, ErrNoEvents
	}
	// Run has returned: the loop is done and its state is ours to read.
	status := a.Status()
	run := report.Run{Agent: cfg.Spec.Name, Strategy: parts.strategy.Name(), Params: params(parts.strategy), Settings: settings(&cfg),
		Data: cfg.Source.Name(), From: from, To: to, Events: feed.sent, LatencyMs: cfg.Latency.Milliseconds(),
		Activity: activity(status.Counts)}
	if tn, ok := cfg.Source.(interface{ Notes() []string }); ok {
		for _, n := range tn.Notes() {
			col.Note("%s", n)
		}
	}
	if status.State == agent.StateFailed || status.State == agent.StateKilled {
		col.Note("the agent ended %s: %s", status.State, status.Reason)
	}
	for _, m := range parts.infos {
		obs.forecast(m.Condition) // the last declaration of the markets still open
	}
	rep := col.Finish(obs.st, run)
	rep.Title = cfg.Title
	if rep.Title == "" {
		rep.Title = cfg.Spec.Name + " on " + cfg.Source.Name()
	}
	return &Result{Report: rep, Status: status}, nil
}

// feed is the agent's Feed over a Source. Like a dry run's feed, which subscribes
// to the agent's markets only, it delivers only the events of the bound markets.
type feed struct {
	src      *window
	progress *Progress
	filter   *marketFilter
	queued   bool  // not inline (Config.viaQueue)
	n        int64 // events read
	sent     int64 // events delivered to the agent
	err      error
}

// Inline implements agent.InlineFeed: the data is at hand, so the agent's loop
// reads it on its own goroutine (a run keeps to one core, and each event reaches
// the agent without a copy or a hand-over between goroutines).
func (f *feed) Inline() bool { return !f.queued }

// Run implements agent.Feed.
func (f *feed) Run(ctx context.Context, emit func(ev *market.Event) bool) error {
	deliver := func(ev *market.Event) bool {
		f.n++
		if f.n&1023 == 0 {
			f.progress.done.Store(f.n)
		}
		if !f.filter.keep(ev) {
			return true
		}
		f.sent++
		return emit(ev)
	}
	var err error
	if w := f.src; w.unbounded() {
		// The whole source: read it directly, without the window's wrapper (a call
		// per event); every event read is in the window.
		err = w.src.Events(ctx, deliver)
		w.reached = f.n > 0
	} else {
		err = w.Events(ctx, deliver)
	}
	f.progress.done.Store(f.n)
	if err != nil && ctx.Err() == nil {
		f.err = err
	}
	return err
}

// observer is the strategy as the agent sees it, with the report's collector
// watching: after the strategy decided on an event (the agent has applied it to its
// state), the collector samples the state, and fills of the wallet reach its ledger.
// It adds nothing to what the strategy decides.
type observer struct {
	inner   agent.Decider
	at      agent.VersionedDecider // inner, when it has DecideAt
	fc      Forecaster
	col     *report.Collector
	markets []market.Info
	st      *market.State
}

// Decide implements agent.Decider: the strategy decides, then the collector looks.
func (o *observer) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	out, _, err := o.DecideAt(ev, st, 0, out)
	return out, err
}

// DecideAt implements agent.VersionedDecider: the strategy's DecideAt when it has
// one (version zero: its Decide), with the collector's reads around it as Decide.
func (o *observer) DecideAt(ev *market.Event, st *market.State, ver uint64, out []market.Intent) ([]market.Intent, bool, error) {
	if o.st == nil {
		o.st = st
		o.col.Begin(ev.Time, st, o.markets)
	}
	if ev.Kind == market.EventResolved {
		o.forecast(ev.Market) // the last declaration before the outcome is known
	}
	var quiet bool
	var err error
	if o.at != nil {
		out, quiet, err = o.at.DecideAt(ev, st, ver, out)
	} else {
		out, err = o.inner.Decide(ev, st, out)
	}
	o.col.Event(ev, st) // the event's fill, if any, reached the collector through the audit (auditSink)
	return out, quiet, err
}

// forecast records the strategy's declared probability of YES for m, if any.
func (o *observer) forecast(m market.ConditionID) {
	if o.fc == nil || m == "" {
		return
	}
	if p, ok := o.fc.Forecast(m); ok {
		o.col.Forecast(m, p)
	}
}

func params(s *strategy.Strategy) []report.Param {
	var out []report.Param
	for _, p := range s.Params() {
		out = append(out, report.Param{Name: p.Name, Value: p.Value})
	}
	return out
}

func activity(c agent.Counts) []report.Count {
	return []report.Count{
		{Name: "events handled", Value: int64(c.Events)},
		{Name: "intents", Value: int64(c.Intents)},
		{Name: "denials", Value: int64(c.Denials)},
		{Name: "orders sent", Value: int64(c.Orders)},
		{Name: "cancels", Value: int64(c.Cancels)},
		{Name: "rejects", Value: int64(c.Rejects)},
		{Name: "fills", Value: int64(c.Fills)},
		{Name: "re-prices throttled", Value: int64(c.Throttled)},
	}
}

// auditSink hands the agent's audit records that a report shows to the collector:
// fills with the key of their order, the guards' refusals, kill-switch trips,
// flattens, merges, redeems, pauses and resumes. It runs on the agent's loop, before the strategy
// sees the event (so a fill is in the ledger when the collector samples), and
// keeps nothing of the record.
type auditSink struct{ col *report.Collector }

// Audit implements agent.AuditSink.
func (s *auditSink) Audit(r *agent.AuditRecord) {
	switch r.Kind {
	case agent.AuditFill:
		s.col.Fill(&r.Fill, r.Key)
	case agent.AuditDecision:
		switch {
		case !r.Allowed:
			s.col.Deny(r.Time, r.Guard, r.Reason, r.Intent.Market)
		case r.Intent.Kind == market.IntentPause:
			s.col.Mark(report.Mark{Time: r.Time, Kind: report.MarkPause, Market: r.Intent.Market, Reason: pauseWhy(&r.Intent)})
		}
	case agent.AuditTrip:
		s.col.Mark(report.Mark{Time: r.Time, Kind: report.MarkKillSwitch, Reason: r.Reason,
			Actions: report.TripActions(r.Action.CancelAll, r.Action.Flatten, r.Action.Halt)})
	case agent.AuditResume:
		s.col.Mark(report.Mark{Time: r.Time, Kind: report.MarkResume, Reason: r.Reason})
	case agent.AuditControl:
		s.col.Mark(report.Mark{Time: r.Time, Kind: report.MarkControl, Reason: r.Reason})
	case agent.AuditOrder:
		switch {
		case r.Op == "flatten_start":
			s.col.Mark(report.Mark{Time: r.Time, Kind: report.MarkFlatten, Market: r.Order.Market, Reason: r.Reason})
		case r.Op == "merge" && r.Err == "":
			s.col.Merge(r.Time, r.Order.Market, r.Order.Size, r.Reason)
		case r.Op == "redeem" && r.Err == "":
			s.col.Redeem(r.Time, r.Order.Market, r.Order.Size, r.Reason)
		}
	}
}

// pauseWhy is the reason a strategy gave for pausing.
func pauseWhy(it *market.Intent) string {
	if it.Reason != "" {
		return it.Reason
	}
	return it.Key
}

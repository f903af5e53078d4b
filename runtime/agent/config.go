package agent

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// Defaults of Config, used for every field left at zero.
const (
	DefaultHeartbeat          = 5 * time.Second
	DefaultTimerInterval      = time.Second
	DefaultStatusInterval     = 10 * time.Second
	DefaultStatusQuiet        = 5 * time.Minute
	DefaultCheckpointInterval = time.Second
	DefaultRequestTimeout     = 10 * time.Second
	DefaultShutdownTimeout    = 10 * time.Second
	DefaultQueueSize          = 1024
	DefaultWorkers            = 4
	DefaultMaxInFlight        = 64
	DefaultFlattenSlippage    = 50_000 // 0.05 below the best bid
	DefaultToleranceTicks     = 1
	DefaultSizeTolerance      = 250_000 // 25 % of the desired size
	DefaultReplacesPerSecond  = 10
	DefaultReplaceBurst       = 20
	DefaultMaxAttempts        = 3
)

// Config configures an agent. The zero value of every field but ID is valid and
// means the documented default.
type Config struct {
	// ID names the agent in logs, audit records and its status. Required.
	ID market.AgentID
	// Identity is who the agent's saved state belongs to: the agent file's
	// absolute path, or the file's explicit id (runtime/wire sets it; ID is only
	// the agent's name, which two files may share). It is written into the
	// checkpoint, and a checkpoint of another identity is refused, so that two
	// agents never share state. If empty, the checkpoint's ID is checked instead.
	Identity string
	// Wallet is the wallet's address (for the dry-run paper account: an address
	// derived from the wallet reference). Informational: status and logs.
	Wallet market.Address
	// DryRun is informational (status and logs); what makes a run dry is the venue
	// the composition root passes.
	DryRun bool
	// Markets are the markets the agent trades; their metadata comes from the
	// venue at startup. Required.
	Markets []market.ConditionID

	// Heartbeat is how often the agent sends the venue a heartbeat. If zero,
	// DefaultHeartbeat (5s); negative disables heartbeats.
	Heartbeat time.Duration
	// TimerInterval is how often a timer event (market.EventTimer) reaches the
	// strategy when nothing else happens. If zero, DefaultTimerInterval (1s);
	// negative disables timer events.
	TimerInterval time.Duration
	// StatusInterval is how often the agent publishes its status and considers
	// logging its position and PnL line. If zero, DefaultStatusInterval (10s).
	StatusInterval time.Duration
	// StatusAfterRun declares that nothing reads Status while the agent runs:
	// its caller reads it once Run has returned (a backtest or a sweep point).
	// The status duty of every StatusInterval then builds no complete snapshot
	// for nobody: it publishes the status line's part of one (state, counts,
	// money, positions; no Books, Orders or Limits) only when the logger writes
	// info lines, and nothing otherwise. A Metrics other than NopMetrics still
	// gets a complete snapshot every StatusInterval, and the start, control
	// requests and the stop publish complete ones, so Status after Run is as
	// complete as ever. What is logged, audited and counted does not change.
	StatusAfterRun bool
	// StatusQuiet is how long the status line stays silent while neither the
	// state nor the positions change (orders have their own lines; marks move all
	// the time): a quiet agent logs one line per StatusQuiet instead of one per
	// StatusInterval. If zero, DefaultStatusQuiet (5m); negative logs every
	// StatusInterval.
	StatusQuiet time.Duration
	// CheckpointInterval is the most often the checkpoint is written while the
	// agent's state changes (a kill-switch trip, a stop and a start write it at
	// once). If zero, DefaultCheckpointInterval (1s).
	CheckpointInterval time.Duration
	// RequestTimeout bounds one venue call. If zero, DefaultRequestTimeout (10s).
	RequestTimeout time.Duration
	// ShutdownTimeout bounds the wait for cancels and in-flight calls on stop.
	// If zero, DefaultShutdownTimeout (10s).
	ShutdownTimeout time.Duration

	// LeaveOrders keeps the agent's open orders on the venue when it stops. If
	// false (the default), a clean stop cancels them.
	LeaveOrders bool
	// AdoptUnknown keeps open orders of the wallet found at startup that the
	// agent's checkpoint does not know (they are tracked and cancelled on stop,
	// but never re-priced). If false (the default), they are cancelled at startup.
	AdoptUnknown bool
	// ResumeAfterKill, if not empty, is an operator's explicit re-arm of a kill
	// switch the checkpoint restored as tripped: at startup, before any market
	// event, the switch is cleared (the drawdown baseline restarts from the
	// current equity) and an audit record with this text as the reason is
	// written — what a fleet's `ctl resume-after-kill` does, for an agent without
	// a supervisor (`pitboss run --resume-after-kill REASON`). If the switch is
	// not tripped, nothing changes and a warning is logged.
	ResumeAfterKill string
	// ClearFailure is an operator's explicit clearing of a strategy failure the
	// checkpoint restored: at startup, before any market event, the agent is
	// no longer failed and an audit record (AuditControl, "clear_failure") is
	// written — what a fleet's `ctl resume` does, for an agent without a
	// supervisor (`pitboss run --clear-failure`). If the agent had not failed,
	// nothing changes and a warning is logged.
	ClearFailure bool

	// FullPasses makes every pass walk its intents through the reconciler and the
	// guards, never repeating the last pass (repeat.go): for tests that compare
	// both ways.
	FullPasses bool

	// QueueSize bounds the events waiting between the feed and the loop (the
	// feed waits when it is full). If zero, DefaultQueueSize (1024).
	QueueSize int
	// Workers is the number of goroutines that carry venue calls for a venue
	// that is not Synchronous. If zero, DefaultWorkers (4).
	Workers int
	// MaxInFlight bounds the venue calls sent and not yet answered; placements
	// beyond it wait for the next pass (cancels always go). If zero,
	// DefaultMaxInFlight (64).
	MaxInFlight int
	// MaxAttempts bounds how often one placement is looked up and resubmitted, or
	// one cancel retried, after an unknown outcome. If zero, DefaultMaxAttempts (3).
	MaxAttempts int

	// Reconcile tunes the quote reconciler.
	Reconcile ReconcileConfig
	// FlattenSlippage is how far below the best bid a flattening sell may fill
	// (the FAK's limit). If zero, DefaultFlattenSlippage (0.05).
	FlattenSlippage market.Micros

	// MaxEvents stops the agent cleanly (as if cancelled) after this many feed
	// events. If zero, no limit.
	MaxEvents uint64
}

// ReconcileConfig tunes how desired quotes become orders.
type ReconcileConfig struct {
	// ToleranceTicks keeps a live order whose price is within this many ticks of
	// the desired price. If zero, DefaultToleranceTicks (1); negative means 0
	// (replace on any price change).
	ToleranceTicks int
	// SizeTolerance keeps a live order whose remaining size is within this
	// fraction (micro-units: 250000 is 25 %) of the desired size. If zero,
	// DefaultSizeTolerance; negative means 0.
	SizeTolerance market.Micros
	// ReplacesPerSecond and ReplaceBurst are a token bucket (in event time) for
	// replacements: a re-price beyond the tolerance waits when the bucket is
	// empty, keeping the live order. Placements of new quotes and cancels are not
	// limited by it. If zero, DefaultReplacesPerSecond (10) and DefaultReplaceBurst
	// (20).
	ReplacesPerSecond int
	ReplaceBurst      int
}

func (c *Config) resolve() error {
	if !c.ID.Valid() {
		return fmt.Errorf("agent: %w", market.ErrBadAgentID)
	}
	if len(c.Markets) == 0 {
		return errors.New("agent: no market to trade")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Heartbeat, DefaultHeartbeat)
	def(&c.TimerInterval, DefaultTimerInterval)
	def(&c.StatusInterval, DefaultStatusInterval)
	def(&c.StatusQuiet, DefaultStatusQuiet)
	def(&c.CheckpointInterval, DefaultCheckpointInterval)
	def(&c.RequestTimeout, DefaultRequestTimeout)
	def(&c.ShutdownTimeout, DefaultShutdownTimeout)
	if c.StatusInterval < 0 || c.CheckpointInterval < 0 || c.RequestTimeout < 0 || c.ShutdownTimeout < 0 {
		return errors.New("agent: negative interval or timeout")
	}
	if c.QueueSize <= 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.FlattenSlippage <= 0 {
		c.FlattenSlippage = DefaultFlattenSlippage
	}
	r := &c.Reconcile
	switch {
	case r.ToleranceTicks == 0:
		r.ToleranceTicks = DefaultToleranceTicks
	case r.ToleranceTicks < 0:
		r.ToleranceTicks = 0
	}
	switch {
	case r.SizeTolerance == 0:
		r.SizeTolerance = DefaultSizeTolerance
	case r.SizeTolerance < 0:
		r.SizeTolerance = 0
	}
	if r.ReplacesPerSecond <= 0 {
		r.ReplacesPerSecond = DefaultReplacesPerSecond
	}
	if r.ReplaceBurst <= 0 {
		r.ReplaceBurst = DefaultReplaceBurst
	}
	return nil
}

// Deps are the parts an agent runs with. Venue, Feed, Decider and Guards are
// required; the others have defaults.
type Deps struct {
	Venue   Venue
	Feed    Feed
	Decider Decider
	Guards  Guards
	// Store keeps the checkpoint. If nil, there is none: nothing survives the
	// run, and the loop builds no checkpoints (a backtest's case).
	Store Store
	// Audit receives audit records. If nil, they are dropped.
	Audit AuditSink
	// Metrics receives measurements. If nil, NopMetrics.
	Metrics Metrics
	// Logger receives the human-readable trail (one line per decision that acts,
	// per order outcome, per fill, and a periodic status line). If nil, nothing
	// is logged.
	Logger *zap.Logger
	// Clock is the wall clock (WallClock) or EventClock. If nil, WallClock.
	Clock Clock
}

package agent

import (
	"context"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Feed produces the agent's input: market data for its markets and, where the venue
// has a user channel, the wallet's order and fill events.
type Feed interface {
	// Run delivers events in order by calling emit until ctx ends (then it returns
	// nil or ctx's error) or the feed fails. emit copies the event (ev and its
	// slices are the feed's again when emit returns); it blocks while the agent's
	// queue is full — backpressure: a feed that cannot wait must conflate on its own
	// side — and returns false once the agent has stopped, after which Run should
	// return promptly.
	Run(ctx context.Context, emit func(ev *market.Event) bool) error
}

// InlineFeed is implemented by a Feed whose events are at hand — a recording, a
// synthetic flow — and never waits for the outside world. When Inline reports
// true the loop runs the feed itself, on its own goroutine, and emit handles each
// event in place (with the answers and own events it caused) before it returns:
// no goroutine hands events over, nothing is queued or copied, and the agent keeps
// to one core (a sweep runs one backtest per core). The events, their order and
// how each is handled are those of the queue, whose depth only decides when a
// feed's goroutine waits; between events the loop gives its other inputs (ctx,
// control, answers, its ticker) their turn, as it does between batches taken from
// the queue. A feed that may wait for a network must not be inline: the loop
// would wait with it.
type InlineFeed interface {
	Feed
	Inline() bool
}

// Decider is the strategy: given an event already applied to st, it appends the
// intents it wants to out and returns the extended slice. strategy.Instance has this
// method (runtime/wire passes it as is). An error stops the agent from opening
// positions (it cancels its orders and reports) until an operator resumes it.
type Decider interface {
	Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error)
}

// VersionedDecider is a Decider that also takes the version of the state
// (strategy.Instance's DecideAt, docs/design/0172): ver changes whenever st changes
// other than by market data applied (books, prints, time) — the agent's stVer, as its
// guards get it — and zero means unknown. Every market event applied to st is passed,
// in order. For an event it can tell changes nothing it reads, it appends the same
// intents as Decide would without evaluating — which are those its last call
// appended — and reports quiet; otherwise it is Decide. The agent calls it instead of Decide when the decider has it, with version
// zero under Config.FullPasses.
type VersionedDecider interface {
	DecideAt(ev *market.Event, st *market.State, ver uint64, out []market.Intent) ([]market.Intent, bool, error)
}

// Guards is the policy chain as the loop consumes it (runtime/wire adapts
// policies.Chain). All methods are called from the loop only.
type Guards interface {
	// Observe re-checks the loss limits against st after an event; a trip returns
	// the Action to take.
	Observe(st *market.State) Action
	// Begin starts the batch of one evaluation over st (the intents of one event,
	// or one reconciliation pass); it may trip the kill switch too.
	Begin(st *market.State) Action
	// Check decides it within the current batch. replaces is the open order the
	// intent would replace (or keep), empty for a new order.
	Check(it *market.Intent, replaces market.OrderID) Verdict
	// RecordOrder counts one order sent at event time t (orders-per-minute limit).
	RecordOrder(t int64)
	// Trip trips the kill switch on request; Resume clears it (reporting whether it
	// was tripped); Halted reports whether it is tripped and KillReason why.
	Trip(t int64, reason string) Action
	Resume(st *market.State, reason string) bool
	Halted() bool
	KillReason() string
	// KillState serializes the kill switch and loss-limit baselines for the state
	// directory; RestoreKill restores them at startup (nil or empty: nothing saved).
	KillState() ([]byte, error)
	RestoreKill(data []byte) error
}

// Keeper is implemented by Guards that re-check a kept order cheaply (runtime/wire's
// Guards over policies.Chain). The agent uses it when its Guards have it; all
// methods are called from the loop only.
type Keeper interface {
	// StateVersion declares that st is at version v: the agent changes v whenever
	// anything in st changes other than what Apply does for market data (books,
	// prints, time), so that decisions whose inputs did not change may be reused.
	StateVersion(st *market.State, v uint64)
	// CheckKeep re-checks, within the current batch, the open order keeps, which
	// stays for it: as Check, except that the orders-per-minute limit does not
	// apply (nothing is sent). A decision may be reused (Verdict.Reused) when
	// nothing it depended on changed; an allowed reuse needs no audit record.
	CheckKeep(it *market.Intent, keeps market.OrderID) Verdict
}

// Action is what a tripped kill switch asks for. The zero value asks for nothing.
type Action struct {
	CancelAll bool
	Flatten   bool
	Halt      bool
	Reason    string
}

// Any reports whether the action asks for anything.
func (a Action) Any() bool { return a.CancelAll || a.Flatten || a.Halt }

// Verdict is the guards' decision on one intent. When denied, Guard names the guard,
// Reason says why, Code is the catalog code when the denial mirrors a venue
// rejection, and Err is the typed denial (errors.Is sees the catalog error or
// sentinel behind it).
type Verdict struct {
	Allowed bool
	Guard   string
	Reason  string
	Code    market.Code
	Err     error
	// RateLimited marks a denial that is only about how many orders were sent
	// recently (orders per minute): it stops new orders but is no reason to pull
	// an order that rests already.
	RateLimited bool
	// Action is set when this check tripped the kill switch.
	Action Action
	// Reused marks a decision remembered from an earlier check whose inputs did
	// not change (see Keeper); the guards did not run again.
	Reused bool
}

// AuditSink receives the agent's audit records: every guard decision, every order
// sent and its outcome, every fill, kill-switch trips and resumes, operator
// commands. Audit is called on the loop, in order; it must not block (queue and
// return, and document what is dropped when full) and must copy what it keeps
// (the record's fields are values; keeping *r past the call is not allowed)
// and must not modify the record (the agent reuses it).
type AuditSink interface {
	Audit(r *AuditRecord)
}

// AuditKind says what an AuditRecord reports.
type AuditKind uint8

// Audit record kinds.
const (
	AuditDecision AuditKind = iota + 1 // an intent was allowed or denied by the guards
	AuditOrder                         // an order operation was sent or answered (Op, Order, Err)
	AuditFill                          // one of the wallet's orders traded
	AuditTrip                          // the kill switch tripped
	AuditResume                        // the kill switch was cleared
	AuditControl                       // an operator command was carried out
	AuditAdopt                         // a holding was taken over at start with the venue's cost basis (Position, Reason)
)

var auditKindNames = [...]string{"invalid", "decision", "order", "fill", "trip", "resume", "control", "adopt"}

// String returns a short lower-case name.
func (k AuditKind) String() string {
	if int(k) < len(auditKindNames) {
		return auditKindNames[k]
	}
	return "unknown"
}

// AuditRecord is one audit record. Time is event time (Unix ms). Only the fields of
// its Kind are set.
type AuditRecord struct {
	Kind  AuditKind
	Agent market.AgentID
	Time  int64

	// AuditDecision.
	Intent  market.Intent
	Allowed bool
	Guard   string
	Code    market.Code

	// AuditOrder: Op is place, replace, take, flatten (a flattening order),
	// cancel, cancel_all, flatten_start or lookup. cancel_all and flatten_start
	// name no single order: Order.Market is their market (empty for all) and
	// Reason says why; flatten_start is recorded once per market when closing its
	// positions begins, whoever asked for it. Otherwise Order is the request
	// (place: with the venue's order id whenever it is known before sending — a
	// synchronous venue, or one that prepares on the loop, as the embedded, paper
	// and remote venues do) or the venue's answer; Err the failure, if any.
	Op    string
	Order market.Order
	Key   string // the quote or rule key the order belongs to
	Err   string

	// AuditFill.
	Fill market.Fill

	// AuditDecision (denials), AuditTrip, AuditResume, AuditControl, AuditAdopt.
	Reason string

	// AuditTrip: what the kill switch asked for (cancel all, flatten, halt).
	Action Action

	// AuditAdopt: the holding as adopted (size and cost basis; Cost 0 with a Reason
	// saying the cost is unknown when the venue knew none). Reason says where the
	// cost basis came from and why the holding was adopted.
	Position market.Position
}

// Clock is the agent's source of wall time: latency measurement, and — unless it is
// the EventClock — the tickers that drive timers, heartbeats, status lines and
// checkpoints. Decisions never read it: their time is event time.
type Clock interface {
	Now() time.Time
	// NewTicker returns a channel that delivers every d and a function that stops it.
	NewTicker(d time.Duration) (<-chan time.Time, func())
}

// WallClock is the system clock.
var WallClock Clock = wallClock{}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// EventClock makes every periodic duty of the agent (timer events, heartbeats,
// status lines, checkpoints) follow event time instead of the wall clock, so that
// the same input gives the same output, line for line: for simulations run as fast
// as possible and for tests. Now still returns wall time (for latency metrics only).
var EventClock Clock = eventClock{}

type eventClock struct{}

func (eventClock) Now() time.Time { return time.Now() }

func (eventClock) NewTicker(time.Duration) (<-chan time.Time, func()) { return nil, func() {} }

// Metrics receives the agent's measurements (runtime/wire implements it with
// Prometheus). Calls come from the loop; implementations must be cheap and must not
// block.
type Metrics interface {
	Event(k market.EventKind)
	Intent(k market.IntentKind)
	Denial(guard string)
	Order(op string)     // place, replace, cancel, take, flatten, reject, timeout
	Fill(f *market.Fill) // one fill of the wallet
	TickToTrade(d time.Duration)
	Status(s *Status) // periodic: position, PnL, open orders
}

// NopMetrics discards every measurement.
type NopMetrics struct{}

// Event implements Metrics.
func (NopMetrics) Event(market.EventKind) {}

// Intent implements Metrics.
func (NopMetrics) Intent(market.IntentKind) {}

// Denial implements Metrics.
func (NopMetrics) Denial(string) {}

// Order implements Metrics.
func (NopMetrics) Order(string) {}

// Fill implements Metrics.
func (NopMetrics) Fill(*market.Fill) {}

// TickToTrade implements Metrics.
func (NopMetrics) TickToTrade(time.Duration) {}

// Status implements Metrics.
func (NopMetrics) Status(*Status) {}

// Store keeps the agent's checkpoint (see Checkpoint). Save must be atomic: after a
// crash Load returns either the previous or the new checkpoint, never a mix.
// FileStore is the implementation over the state directory.
type Store interface {
	// Load returns the last saved checkpoint, or (nil, nil) when there is none.
	Load() (*Checkpoint, error)
	Save(c *Checkpoint) error
}

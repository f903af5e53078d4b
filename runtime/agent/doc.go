// Package agent is the agent's loop: one goroutine that owns all of an agent's state
// and turns market events into orders.
//
// # The loop
//
//	feed ─▶ State.Apply ─▶ Decider ─▶ Guards ─▶ reconciler ─▶ Venue
//	                                                 ▲            │
//	                                                 └── answers, own orders and fills
//
// For every event the loop applies it to its market.State (the one deterministic
// state transition), lets a Simulator venue see it, re-checks the loss limits
// (Guards.Observe), asks the strategy (Decider) for intents, runs them through the
// guards as one batch, and reconciles: desired quotes become place, cancel and
// replace operations with hysteresis (PlanQuote), takes become FOK/FAK orders,
// cancel-all, flatten and pause are carried out. Every guard decision, order and
// fill is audited (AuditSink); decisions that act are logged, one line each.
//
// Venue calls do not block the loop: they run on executor goroutines and their
// answers come back into the loop, except for Synchronous (in-process) venues,
// which the loop calls directly so that a run is deterministic; a LocalPreparer
// venue (the remote one) has its Prepare — signing, no I/O — called on the loop, so
// an order's id is saved before the order can reach the venue. Orders are tracked
// by client id through prepared (id known), submitted, live, cancelling and done;
// a request for a quote is never sent while another for it is in flight, and a
// placement whose outcome is unknown is looked up by its id and resubmitted only as
// the same prepared order, so nothing is placed twice.
//
// # Lifecycle
//
// Run first reconciles with the venue and the checkpoint (see Checkpoint), then runs
// until its context ends; on the way out it cancels the agent's orders (unless
// Config.LeaveOrders), writes a final checkpoint and stops every goroutine it
// started. Status and Control are safe from any goroutine: they are the seams a
// supervisor plugs into (with an AuditSink).
//
// # Boundaries
//
// The package declares the interfaces it consumes — Venue, Feed, Decider, Guards,
// AuditSink, Metrics, Store, Clock — and imports no adapter, sandbox, strategy,
// expression engine, go-ethereum or NATS (an import-rule test keeps it so);
// runtime/wire composes the real parts. The Venue has no method that can move funds
// out: a test reflects over it.
//
// # Time
//
// Decisions use event time (market.Event.Time) only. The Clock gives wall time for
// latency measurement and drives the periodic duties (timer events, heartbeats,
// status lines, checkpoints); with EventClock those follow event time too, and two
// runs over the same events give the same decisions and the same log lines.
package agent

// Package policies is the guard chain every intent of an agent passes before it can
// become an order: an ordered, default-deny sequence of guards, each of which allows
// the intent or denies it with a typed reason, and an audit record for every
// decision.
//
// # The chain
//
// [New] builds a [Chain] from a [Config] (the `guards:` section of an agent file; the
// zero value is safe and conservative). [Chain.Evaluate] decides one
// [market.Intent] against the agent's [market.State]:
//
//	allowlist              only quote, take, cancel, cancel_all, flatten, pause; well-formed
//	kill_switch            tripped: nothing opens (cancels, flatten, pause pass)
//	geoblock               blocked: no order; unknown: only flatten; close-only: only reducing orders
//	account_mode           banned: no order; close-only: only reducing orders
//	market_state           unknown, closed, not accepting orders, resolved
//	preflight              tick, lot, minimum size, expiration, post-only crossing, balance
//	max_order_size … max_orders_per_minute   the risk limits (see Config)
//	custom:<name>          deny_if expressions over [Env]
//
// The intents of one strategy evaluation go through one [Batch] ([Chain.Batch]): each
// intent allowed counts against the limits of the next ones, as if its order were
// open. Evaluate is a batch of one.
//
// Denials are *[Denied]{Guard, Reason, Err}. Err is the catalog error the venue would
// return for the same order where there is one (market.ErrTickSize,
// market.ErrCloseOnly, market.ErrGeoblocked, ...), so a pre-flight denial reads like
// the venue's rejection; otherwise one of [ErrNotAllowed], [ErrHalted],
// [ErrGeoUnknown], [ErrLimit], [ErrCustom].
//
// # No withdrawal
//
// The intents the chain lets through are a closed allowlist; none moves funds out of
// the venue, and no type of this package can express a withdrawal or a transfer.
// Withdrawal exists only as an operator command of `pitboss wallet` (an import-rule
// test keeps its package out of reach of this one).
//
// # Close-only
//
// An order reduces a position when it SELLs a token the agent holds, for at most the
// held size net of the sizes open sells already offer ([View.Closable]). Buying the
// complementary token (BUY NO while long YES) is economically a reduction but the
// service treats it as opening; so do we (docs/design/0035-policy-guards.md).
//
// # Kill switch
//
// [Chain.Observe] (called by the agent after every event, and by Evaluate) tracks
// equity (collateral plus positions at their mark) against the start of the UTC day
// and its high-water mark; reaching max_daily_loss or max_drawdown trips the switch,
// and [Chain.Trip] trips it on request. Tripping returns an [Action] (cancel all,
// flatten if configured, halt) and denies every opening intent until
// [Chain.Resume]. [KillState] is serializable so the agent can persist it.
//
// # Time and concurrency
//
// The chain reads no clock: "now" is market.State.Time (event time). A Chain belongs
// to one goroutine, the agent's loop; it keeps no reference to the states and intents
// it evaluates. An evaluation that allows does not allocate.
package policies

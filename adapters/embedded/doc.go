// Package embedded is the in-process venue: an Exchange runs a sandbox/exchange
// Engine with a Flow of other participants (sandbox/sim's market maker, noise and
// informed traders on its synthetic markets, through sim.Flow — see NewSimFlow; or
// a ScriptFlow in tests) and serves one agent through a Feed and a Venue.
//
//   - The Feed (agent.Feed) sends a book snapshot of each token of the agent's
//     markets, then the engine's events as market events — the public ones as
//     sandbox/sim's Converter reports them (price changes of both tokens, one trade
//     print per maker fill for both tokens, tick-size changes, resolutions: what a
//     backtest on a sim tape sees too) — and the wallet's own order and fill events
//     (a taker's fills one per maker level, with the service's fee). Its Run
//     also drives the flow: paced by the wall clock (Config.Paced: what a person
//     watching a dry run wants) or as fast as the agent consumes events
//     (deterministic: event time comes from the flow only).
//   - The Venue (agent.Venue, Synchronous) places the wallet's orders in the same
//     engine: the live embedded venue (paper trading against the flow, no key
//     needed). In a dry run the agent trades on runtime/paper instead, fed by this
//     Feed, and the Exchange is only read (Markets).
//
// Heartbeats work as on the service: once a wallet has sent one, the venue cancels
// its open orders when none arrives for Config.HeartbeatTimeout of event time.
//
// An Exchange is safe for concurrent use: a mutex serializes the engine; events are
// converted under it and delivered by the Feed's goroutine without it, so a venue
// call from the agent's loop never waits for the agent's queue.
package embedded

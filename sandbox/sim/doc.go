// Package sim makes a local market alive: seeded synthetic participants trade in the
// exchange through the same command path as everyone else.
//
// # Model
//
// Each market has a latent fair probability whose logit follows a random walk (a
// normal step every FairStep) with news jumps at Poisson times. Around it trade:
//
//   - one or more market makers quoting ladders of levels on both sides around
//     their belief of the fair value, skewed against their inventory, with a spread
//     that widens with the volatility they have seen; they learn news only after a
//     reaction delay;
//   - noise traders arriving at Poisson times with random sides and sizes, who take
//     through the touch (FAK) or rest GTD orders near it;
//   - informed traders who buy (sell) whatever is priced at least an edge below
//     (above) the fair value, in the background and in bursts right after news, so
//     news produces sweeps of the maker's stale quotes;
//   - optionally, a resolution at a given time or the market's end date, YES with
//     probability equal to the fair value, after which everyone redeems.
//
// The equations and parameters are in docs/sim.md; the design decisions in
// docs/design/0075-sim-model.md and 0076-sim-drivers.md.
//
// # Determinism
//
// A Sim is a pure function of its Config, its seed, the times it is stepped at and
// the exchange state it reads: the same inputs give the same commands, byte for
// byte, on every platform. Randomness comes only from PCG and ChaCha8 streams seeded
// from the seed (one set per market, keyed by the market's id, so adding a market
// does not change another's flow); time comes only from the caller; all run-time
// arithmetic is integer (fixed point), because floating-point results may differ
// between CPUs and builds. Participants are ordinary accounts with addresses derived
// from the seed, funded by Deposit and Split commands; their order ids are derived
// from the seed and the start time.
//
// # Use
//
// The core is event-driven: Next says when the next action is due; Step performs it
// against a View and returns its commands. Three ways to run it:
//
//   - in process (the embedded venue, backtests): AdvanceTo(now, engine, fn) applies
//     every due action's commands to an *exchange.Engine at once (Flow wraps the
//     sim for a venue that steps it one call at a time);
//   - against the local server: a Driver runs the sim on the wall clock against a
//     Venue (sandbox/sim/simhost adapts the engine host), several actions per
//     durable transaction, in its own Run(ctx) goroutine;
//   - as a synthetic tape: RunTape and Tape run the sim on a private engine as fast
//     as possible and return the public market events (market.Event) an agent
//     consumes, converted by a Converter.
//
// A Sim is not safe for concurrent use. Summary reports what happened (participants'
// activity, trades, volume, spreads, the fair value's path).
package sim

// Package backtest replays market data — a recording (runtime/tape) or synthetic
// flow (sandbox/sim) — through an agent and reports how it did (runtime/report).
//
// # One code path
//
// A backtest runs the dry run's agent, composed as runtime/wire composes a dry run:
// the agent file's strategy (with its overrides, or a sweep point's values) bound by
// the same market selection (wire.BindMarkets), the guard chain (wire.NewGuards),
// the agent loop with its reconciler (runtime/agent) and the paper venue as the fill
// model (runtime/paper), with agent.EventClock. The recording is the agent's feed,
// restricted to its markets as a live subscription would be; the paper account is
// not checkpointed (a backtest never restarts); and the strategy is wrapped in an
// observer that lets the report's collector read the agent's state after each event
// without changing what the strategy decides (docs/design/0101).
//
//	src, err := backtest.OpenTape("rec.tape")           // or NewSimSource(sim.TapeConfig{…})
//	res, err := backtest.Run(ctx, backtest.Config{Spec: spec, Source: src, Latency: 250 * time.Millisecond})
//	err = res.Report.WriteHTML(w)
//
// The same Config gives the same report, byte for byte: event time is the only
// clock and nothing is random.
//
// # Sweeps
//
// Sweep runs a grid of parameter values (ParseSweeps: --sweep NAME=FROM:TO:STEP) on
// GOMAXPROCS goroutines and returns the rows sorted by a Metric; with Folds it is a
// walk-forward (fit on one period, test the best point on the next). The table does
// not depend on scheduling.
//
// # Sources
//
// A Source is immutable and safe for concurrent use: each pass (each sweep point)
// reads the data afresh. TapeSource reads a tape file or a tape in memory; TapeSet
// (OpenTapes) reads several files — a rotated recording (runtime/tape's sets) or any
// files in time order — as one stream, DataFiles expanding directories and globs;
// SimSource
// regenerates sandbox/sim's flow on every pass; WriteTape records any Source as a
// tape (the bundled sample is WriteSample's output).
package backtest

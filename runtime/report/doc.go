// Package report turns a backtest into numbers and pages: PnL and return, Sharpe and
// Sortino, maximum drawdown, win rate and profit factor, turnover, fills and fees,
// exposure, a per-market and a per-day breakdown, round trips with their exit
// reasons, the guards' denials by guard, kill-switch trips, halts and flattens,
// buy-and-hold and do-nothing baselines, Brier scores where the strategy declares
// its probability of YES (at a horizon before each resolution, the last one, and
// averaged over time), and warnings where the figures mean little. It writes the
// report as JSON (Report is the schema), as a self-contained HTML page (inline SVG
// and CSS, no script and no network: equity, drawdown, returns against the
// baselines, each market's price with its bid–ask band, the strategy's fair value,
// the agent's quotes and every fill, positions, with the events marked on every
// time chart), as a CSV of fills, and as a text summary.
//
// # Collecting
//
// A Collector is fed by the run's loop, on the loop's goroutine:
//
//	c, _ := report.NewCollector(report.Config{From: from, To: to})
//	c.Begin(t0, &state, markets)   // after the agent's startup
//	c.Fill(&fill, key)             // each fill of the run, with its order's key
//	c.Deny(t, guard, reason, cond) // each refusal of the guards
//	c.Mark(report.Mark{…})         // a kill-switch trip, a flatten, a pause, a resume
//	c.Event(&ev, &state)           // after each event was applied and handled
//	c.Forecast(cond, p)            // the strategy's P(YES) before a resolution
//	rep := c.Finish(&state, run)
//
// It keeps its own ledger of positions from the fills (market.Position, the same
// accounting the agent's state uses), samples equity on a grid of event time and
// after every fill, and keeps bounded series: the equity curve is halved whenever it
// reaches twice Config.Points points.
//
// # Determinism
//
// A report is a function of its inputs only: it contains no time of the run itself
// (no "generated at"), money is exact (Money marshals as a decimal string), and the
// float figures are computed in a fixed order and printed with fixed precision, so
// the same inputs give byte-identical JSON, HTML and CSV.
package report

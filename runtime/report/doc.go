// Package report turns a backtest into numbers and pages: PnL and return, Sharpe and
// Sortino, maximum drawdown, win rate and profit factor, turnover, fills and fees,
// exposure, a per-market breakdown with the PnL of markets that resolved during the
// run, and a Brier score where the strategy declares its probability of YES. It
// writes the report as JSON (Report is the schema), as a self-contained HTML page
// with an equity curve, a drawdown chart and a position chart (inline SVG and CSS,
// no script and no network), as a CSV of fills, and as a short text summary.
//
// # Collecting
//
// A Collector is fed by the run's loop, on the loop's goroutine:
//
//	c, _ := report.NewCollector(report.Config{From: from, To: to})
//	c.Begin(t0, &state, markets)   // after the agent's startup
//	c.Fill(&fill)                  // each fill of the run
//	c.Event(&ev, &state)           // after each event was applied and handled
//	c.Forecast(cond, p)            // when the strategy declares P(YES)
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

package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes a human summary of the report: the headline metrics and one
// line per market that traded.
func (r *Report) WriteText(w io.Writer) error {
	s := &r.Summary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Title != "" {
		fmt.Fprintf(tw, "%s\n", r.Title)
	}
	fmt.Fprintf(tw, "period\t%s → %s UTC (%d events, latency %d ms)\n", fmtTime(r.Run.From), fmtTime(r.Run.To), r.Run.Events, r.Run.LatencyMs)
	fmt.Fprintf(tw, "equity\t%s → %s\n", s.StartEquity, s.EndEquity)
	fmt.Fprintf(tw, "pnl\t%s (return %s; realized %s, unrealized %s, settlement %s)\n", s.PnL, s.Return.Percent(), s.Realized, s.Unrealized, s.Settlement)
	fmt.Fprintf(tw, "sharpe / sortino\t%s / %s (%d periods of %d ms)\n", s.Sharpe.Fixed(), s.Sortino.Fixed(), s.Periods, s.ReturnPeriodMs)
	fmt.Fprintf(tw, "max drawdown\t%s (%s)\n", s.MaxDrawdown, s.MaxDrawdownPct.Percent())
	fmt.Fprintf(tw, "trades\t%d, win rate %s, profit factor %s\n", s.Trades, s.WinRate.Percent(), s.ProfitFactor.Fixed())
	fmt.Fprintf(tw, "fills\t%d (%d maker, %d taker), fees %s\n", s.Fills, s.MakerFills, s.TakerFills, s.Fees)
	fmt.Fprintf(tw, "volume\t%s (turnover %s×; bought %s, sold %s shares)\n", s.Volume, s.Turnover.Fixed(), s.Bought, s.Sold)
	fmt.Fprintf(tw, "exposure\tavg %s, max %s, in market %s of the time\n", s.AvgExposure, s.MaxExposure, s.TimeInMarket.Percent())
	if s.Forecasts > 0 {
		fmt.Fprintf(tw, "brier\t%s over %d resolved markets\n", s.Brier.Fixed(), s.Forecasts)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "note\t%s\n", n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	traded := false
	for _, m := range r.Markets {
		if m.Fills > 0 || m.Resolved {
			traded = true
		}
	}
	if !traded {
		return nil
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\nmarket\tfills\tvolume\tfees\trealized\tunrealized\tsettlement\tpnl\tyes\tno\t")
	for _, m := range r.Markets {
		if m.Fills == 0 && !m.Resolved {
			continue
		}
		name := m.Name
		if name == "" {
			name = string(m.Condition)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", shorten(strings.TrimSpace(name), 28), m.Fills, m.Volume, m.Fees,
			m.Realized, m.Unrealized, m.Settlement, m.PnL, m.Yes, m.No)
	}
	return tw.Flush()
}

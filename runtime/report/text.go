package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// TextRoundTrips bounds the round trips listed in the text report (the JSON has
// them all).
const TextRoundTrips = 50

// WriteText writes a human summary of the report: the headline metrics, the
// warnings, the baselines, what happened to the agent (kill-switch trips, halts,
// flattens), the guards' refusals, one line per day and per market, and the round
// trips. Money is to the cent; the JSON report has every amount exact.
func (r *Report) WriteText(w io.Writer) error {
	s := &r.Summary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Title != "" {
		fmt.Fprintf(tw, "%s\n", r.Title)
	}
	fmt.Fprintf(tw, "period\t%s → %s UTC (%s; %d events, latency %d ms)\n", fmtTime(r.Run.From), fmtTime(r.Run.To),
		FormatDuration(r.Run.To-r.Run.From), r.Run.Events, r.Run.LatencyMs)
	fmt.Fprintf(tw, "equity\t%s → %s\n", FormatMoney(s.StartEquity), FormatMoney(s.EndEquity))
	fmt.Fprintf(tw, "pnl\t%s (return %s; realized %s, unrealized %s, settlement %s)\n", FormatSigned(s.PnL), s.Return.Percent(),
		FormatSigned(s.Realized), FormatSigned(s.Unrealized), FormatSigned(s.Settlement))
	if len(r.Baselines) > 0 {
		var parts []string
		for _, b := range r.Baselines {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", b.Name, FormatSigned(b.PnL), b.Return.Percent()))
		}
		fmt.Fprintf(tw, "baselines\t%s\n", strings.Join(parts, "; "))
	}
	fmt.Fprintf(tw, "sharpe / sortino\t%s / %s (%d periods of %s, annualized)\n", s.Sharpe.Fixed(), s.Sortino.Fixed(), s.Periods,
		FormatDuration(s.ReturnPeriodMs))
	fmt.Fprintf(tw, "max drawdown\t%s (%s)\n", FormatMoney(s.MaxDrawdown), s.MaxDrawdownPct.Percent())
	fmt.Fprintf(tw, "trades\t%d, win rate %s, profit factor %s; %d round trips, held %s on average\n", s.Trades, s.WinRate.Percent(),
		s.ProfitFactor.Fixed(), s.RoundTrips, FormatDuration(s.AvgHoldMs))
	fmt.Fprintf(tw, "fills\t%d (%d maker, %d taker), fees %s\n", s.Fills, s.MakerFills, s.TakerFills, FormatMoney(s.Fees))
	fmt.Fprintf(tw, "volume\t%s (turnover %s×; bought %s, sold %s shares)\n", FormatMoney(s.Volume), s.Turnover.Fixed(), s.Bought, s.Sold)
	fmt.Fprintf(tw, "exposure\tavg %s, max %s, in market %s of the time\n", FormatMoney(s.AvgExposure), FormatMoney(s.MaxExposure),
		s.TimeInMarket.Percent())
	fmt.Fprintf(tw, "brier\t%s\n", brierLine(s))
	fmt.Fprintf(tw, "guards\t%d denials, %d kill-switch trips\n", s.Denials, s.KillSwitchTrips)
	if s.Merges > 0 || s.Redeems > 0 {
		fmt.Fprintf(tw, "merges\t%d: %s\n", s.Merges, mergeLine(s))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "note\t%s\n", n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings")
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "  ! %s\n", x)
		}
	}
	if len(r.Events) > 0 {
		fmt.Fprintln(w, "\nevents (kill switch, halts, flattens, resolutions)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  time (UTC)\tevent\tmarket\treason")
		for i := range r.Events {
			e := &r.Events[i]
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", fmtTime(e.Time), EventLabel(e), dash(e.Slug), dash(e.Reason))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Denials) > 0 {
		fmt.Fprintln(w, "\ndenials by guard")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  guard\tcount\tfirst (UTC)\tlast (UTC)\tfirst reason")
		for _, d := range r.Denials {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", d.Guard, d.Count, fmtTime(d.First), fmtTime(d.Last), d.Reason)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Days) > 0 {
		fmt.Fprintln(w, "\nper day (UTC)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "date\tstart\tend\tpnl\treturn\trealized\tfills\tvolume\tfees\ttrades\twin rate\tmax dd\t")
		for _, d := range r.Days {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\t\n", d.Date, FormatMoney(d.StartEquity), FormatMoney(d.EndEquity),
				FormatSigned(d.PnL), d.Return.Percent(), FormatSigned(d.Realized), d.Fills, FormatMoney(d.Volume), FormatMoney(d.Fees),
				d.Trades, d.WinRate.Percent(), FormatMoney(d.MaxDrawdown))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	traded := false
	for _, m := range r.Markets {
		if m.Fills > 0 || m.Resolved {
			traded = true
		}
	}
	if traded {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\nmarket\tfills\tvolume\tfees\trealized\tunrealized\tsettlement\tpnl\tyes\tno\tresolved\t")
		for _, m := range r.Markets {
			if m.Fills == 0 && !m.Resolved {
				continue
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", shorten(strings.TrimSpace(m.label()), 36), m.Fills,
				FormatMoney(m.Volume), FormatMoney(m.Fees), FormatSigned(m.Realized), FormatSigned(m.Unrealized), FormatSigned(m.Settlement),
				FormatSigned(m.PnL), m.Yes, m.No, dash(m.Winner))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.RoundTrips) > 0 {
		n := min(len(r.RoundTrips), TextRoundTrips)
		fmt.Fprintf(w, "\nround trips (%d", len(r.RoundTrips))
		if n < len(r.RoundTrips) {
			fmt.Fprintf(w, "; the first %d, all in the JSON", n)
		}
		fmt.Fprintln(w, ")")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  market\tside\tentry (UTC)\texit (UTC)\tduration\tbought\tentry\texit\tpnl\treturn\texit reason")
		for _, t := range r.RoundTrips[:n] {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", shorten(t.label(), 28), t.Outcome, fmtTime(t.Entry), fmtTime(t.Exit),
				FormatDuration(t.DurationMs), t.Bought, FormatPrice(t.EntryPrice), FormatPrice(t.ExitPrice), FormatSigned(t.PnL),
				t.Return.Percent(), t.ExitReason)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// mergeLine describes the merges and redeems after their count: "20 sets → 20.00
// collateral, realized +0.00; 0 redeems, 0.00 collateral".
func mergeLine(s *Summary) string {
	return fmt.Sprintf("%s sets → %s collateral, realized %s; %d redeems, %s collateral", s.MergedSets,
		FormatMoney(s.MergedSets), FormatSigned(s.MergeRealized), s.Redeems, FormatMoney(s.Redeemed))
}

// brierLine describes the Brier scores.
func brierLine(s *Summary) string {
	if s.ForecastsLast == 0 && s.ForecastsAvg == 0 && s.Forecasts == 0 {
		return "— (no resolved market with a forecast)"
	}
	return fmt.Sprintf("%s at %s before resolution (%s); last forecast %s (%s), time-averaged %s (%s)",
		s.Brier.Fixed(), FormatDuration(s.BrierHorizonMs), markets(s.Forecasts), s.BrierLast.Fixed(), markets(s.ForecastsLast),
		s.BrierTimeAvg.Fixed(), markets(s.ForecastsAvg))
}

// markets is "1 market", "2 markets".
func markets(n int) string {
	if n == 1 {
		return "1 market"
	}
	return fmt.Sprintf("%d markets", n)
}

// EventLabel names an event for people ("kill switch: cancel all, flatten, halt").
func EventLabel(e *Mark) string {
	switch e.Kind {
	case MarkKillSwitch:
		if len(e.Actions) == 0 {
			return "kill switch"
		}
		return "kill switch: " + strings.ReplaceAll(strings.Join(e.Actions, ", "), "cancel_all", "cancel all")
	case MarkResolved:
		return "resolved"
	}
	return e.Kind
}

// label names the market of a round trip.
func (t *RoundTrip) label() string {
	if t.Slug != "" {
		return t.Slug
	}
	return string(t.Market)
}

// label names a market of the report.
func (m *MarketReport) label() string {
	if m.Name != "" {
		return m.Name
	}
	return string(m.Condition)
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

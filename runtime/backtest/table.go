package backtest

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteText writes the sweep as a table, best first: the swept values, then PnL,
// return, Sharpe, Sortino, drawdown, win rate, profit factor, fills and fees. top
// bounds the rows per table (0: all). A walk-forward prints one table per fold, its
// out-of-sample run first, marked "test".
func (r *SweepResult) WriteText(w io.Writer, top int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := func() {
		fmt.Fprint(tw, "#\t")
		if r.Folds > 0 {
			fmt.Fprint(tw, "run\t")
		}
		for _, a := range r.Axes {
			fmt.Fprintf(tw, "%s\t", a.Name)
		}
		fmt.Fprintln(tw, "pnl\treturn\tsharpe\tsortino\tmax dd\twin rate\tprofit f.\tfills\tfees\t")
	}
	row := func(rank int, x *Row) {
		fmt.Fprintf(tw, "%d\t", rank)
		if r.Folds > 0 {
			if x.Test {
				fmt.Fprint(tw, "test\t")
			} else {
				fmt.Fprint(tw, "fit\t")
			}
		}
		for _, p := range x.Point {
			fmt.Fprintf(tw, "%s\t", p.Value)
		}
		if x.Err != "" {
			// Not tab-terminated: the message is no column's cell, so a long
			// one does not widen the pnl column of every row.
			fmt.Fprintf(tw, "  failed: %s\n", x.Err)
			return
		}
		s := &x.Summary
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", s.PnL, s.Return.Percent(), s.Sharpe.Fixed(), s.Sortino.Fixed(),
			s.MaxDrawdown, s.WinRate.Percent(), s.ProfitFactor.Fixed(), s.Fills, s.Fees)
	}
	if r.Folds == 0 {
		fmt.Fprintf(tw, "sorted by %s, best first\n", r.Metric)
		header()
		for i := range r.Rows {
			if top > 0 && i >= top {
				break
			}
			row(i+1, &r.Rows[i])
		}
		return tw.Flush()
	}
	fmt.Fprintf(tw, "walk-forward over %d folds, fitted by %s; out-of-sample PnL %s\n", r.Folds, r.Metric, r.OutOfSample)
	for i := 0; i < len(r.Rows); {
		fold := r.Rows[i].Fold
		fmt.Fprintf(tw, "\nfold %d: fit %s, test %s\n", fold, period(r.Rows[i+min(1, len(r.Rows)-i-1)]), period(r.Rows[i]))
		header()
		rank := 0
		for ; i < len(r.Rows) && r.Rows[i].Fold == fold; i++ {
			if !r.Rows[i].Test {
				rank++
				if top > 0 && rank > top {
					continue
				}
			}
			row(rank, &r.Rows[i])
		}
	}
	return tw.Flush()
}

// Failed returns the first row's failure when every row failed (nothing was
// measured), and "" otherwise.
func (r *SweepResult) Failed() string {
	for i := range r.Rows {
		if r.Rows[i].Err == "" {
			return ""
		}
	}
	if len(r.Rows) == 0 {
		return ""
	}
	return r.Rows[0].Err
}

// MarshalIndent returns the sweep as indented JSON with a trailing newline.
func (r *SweepResult) MarshalIndent() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func period(r Row) string {
	f := "2006-01-02 15:04"
	return time.UnixMilli(r.From).UTC().Format(f) + " → " + time.UnixMilli(r.To).UTC().Format(f)
}

package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// MinTrades is the number of trades below which the report warns that win rate
// and profit factor mean little.
const MinTrades = 30

// warnings lists what the figures of r cannot be trusted for (see
// Report.Warnings), in a fixed order.
func warnings(r *Report) []string {
	s := &r.Summary
	var w []string
	add := func(format string, args ...any) { w = append(w, fmt.Sprintf(format, args...)) }

	if s.Fills == 0 {
		add("no fill: the strategy never traded, so the figures describe the starting equity only")
	} else if s.Trades < MinTrades {
		add("only %d trades (sells and settlements) in %d round trips: win rate and profit factor need about %d to mean much",
			s.Trades, s.RoundTrips, MinTrades)
	}
	day := int64(24 * time.Hour / time.Millisecond)
	if s.Sharpe.Defined() && s.ReturnPeriodMs < day {
		k := float64(365*day) / float64(s.ReturnPeriodMs)
		add("Sharpe and Sortino are annualized from %d returns of %s (× √%s = %s): the noise of short periods dominates them; "+
			"compare them only between runs of the same length and period", s.Periods, FormatDuration(s.ReturnPeriodMs),
			strconv.FormatFloat(k, 'f', 0, 64), strconv.FormatFloat(math.Sqrt(k), 'f', 0, 64))
	}
	if s.Periods < 30 {
		add("only %d return periods of %s: Sharpe and Sortino are not reliable below 30", s.Periods, FormatDuration(s.ReturnPeriodMs))
	}
	resolved := 0
	for i := range r.Markets {
		if r.Markets[i].Resolved {
			resolved++
		}
	}
	h := FormatDuration(s.BrierHorizonMs)
	switch {
	case resolved == 0:
		add("no market resolved during the run: no Brier score")
	case s.ForecastsLast == 0 && s.ForecastsAvg == 0:
		add("%d market(s) resolved, but the strategy declares no probability (a value named fair): no Brier score", resolved)
	case s.Forecasts == 0:
		add("no forecast %s before a resolution (the run starts later, or the strategy declared none yet): the Brier score at the horizon is undefined; "+
			"the last-forecast and time-averaged scores are given", h)
	case s.Forecasts < resolved:
		add("the Brier score covers %d of the %d markets that resolved: the others had no forecast %s before", s.Forecasts, resolved, h)
	}
	if halt, ok := haltedAtEnd(r.Events); ok && r.Run.To > halt.Time {
		frac := float64(r.Run.To-halt.Time) / float64(max(r.Run.To-r.Run.From, 1))
		add("the agent was halted from %s UTC to the end (%s of the run: %s)", fmtTime(halt.Time),
			Ratio(frac).Percent(), haltWhy(halt))
	}
	if u := s.Unrealized; u >= cent || u <= -cent {
		add("positions are still open at the end: %s of the PnL is unrealized, valued at the mark", FormatMoney(u))
	}
	return w
}

// cent is one cent of collateral.
const cent = Money(market.One / 100)

// haltedAtEnd returns the mark that halted the agent for good: a halting trip or
// pause with no resume after it.
func haltedAtEnd(ev []Mark) (Mark, bool) {
	var last Mark
	halted := false
	for i := range ev {
		switch {
		case ev[i].Halts():
			if !halted {
				last = ev[i]
			}
			halted = true
		case ev[i].Kind == MarkResume:
			halted = false
		}
	}
	return last, halted
}

func haltWhy(m Mark) string {
	what := "kill switch"
	if m.Kind == MarkPause {
		what = "paused"
	}
	if m.Reason != "" {
		return what + ", " + m.Reason
	}
	return what
}

// FormatDuration writes a duration in ms compactly: "250ms", "45s", "15m",
// "4h 05m", "2d 03h".
func FormatDuration(ms int64) string {
	neg := ms < 0
	if neg {
		ms = -ms
	}
	var s string
	switch {
	case ms < 1000:
		s = strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		s = strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"
	case ms < 3_600_000:
		m, sec := ms/60_000, ms%60_000/1000
		s = strconv.FormatInt(m, 10) + "m"
		if sec != 0 {
			s += fmt.Sprintf(" %02ds", sec)
		}
	case ms < 86_400_000:
		h, m := ms/3_600_000, ms%3_600_000/60_000
		s = strconv.FormatInt(h, 10) + "h"
		if m != 0 {
			s += fmt.Sprintf(" %02dm", m)
		}
	default:
		d, h := ms/86_400_000, ms%86_400_000/3_600_000
		s = strconv.FormatInt(d, 10) + "d"
		if h != 0 {
			s += fmt.Sprintf(" %02dh", h)
		}
	}
	if neg {
		return "-" + s
	}
	return s
}

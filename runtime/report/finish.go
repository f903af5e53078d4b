package report

import (
	"fmt"
	"math"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Finish takes a last sample of st and builds the report. run describes the run; its
// From, To and Events are kept as given (From and To default to the first and last
// event time seen). The Collector must not be used afterwards.
func (c *Collector) Finish(st *market.State, run Run) *Report {
	end := max(st.Time, c.lastTime)
	c.sample(end, st)
	if run.From == 0 {
		run.From = c.startTime
	}
	if run.To == 0 {
		run.To = end
	}
	c.closeOpenTrips(end, st)
	c.closeDay(c.lastEq)
	rep := &Report{Version: Version, Run: run, Notes: c.notes, Fills: c.fills}
	if rep.Fills == nil {
		rep.Fills = []FillRow{}
	}
	if len(c.points) == 0 || c.points[len(c.points)-1].Time != c.lastTime {
		c.addPoint(c.lastTime, c.lastEq, c.lastExp, st)
	}
	rep.Equity = c.points
	for i := range rep.Equity {
		for len(rep.Equity[i].Net) < len(c.mkts) {
			rep.Equity[i].Net = append(rep.Equity[i].Net, 0)
		}
	}

	s := &rep.Summary
	s.StartEquity = Money(c.startEquity)
	s.EndEquity = Money(c.lastEq)
	s.PnL = s.EndEquity - s.StartEquity
	s.MaxDrawdown = Money(c.maxDD)
	s.MaxDrawdownPct = Ratio(c.maxDDPct)
	s.MaxExposure = Money(c.maxExposure)
	if span := c.lastTime - c.startTime; span > 0 {
		// an average, not an amount anyone holds: rounded to the cent
		s.AvgExposure = Money(math.Round(c.expArea/float64(span)/1e4) * 1e4)
		s.TimeInMarket = Ratio(float64(c.heldTime) / float64(span))
	}
	if c.startEquity != 0 {
		s.Return = Ratio(float64(s.PnL) / float64(c.startEquity))
	} else {
		s.Return = Ratio(math.NaN())
	}

	// Per market, from the ledger.
	var brierH, brierLast, brierAvg float64
	for _, m := range c.mkts {
		mr := MarketReport{Condition: m.info.Condition, Name: m.label(), Fills: m.fills, Volume: Money(m.volume),
			Fees: Money(m.fees), Settlement: Money(m.settlement), Resolved: m.resolved,
			Forecast: Ratio(m.forecast), ForecastHorizon: Ratio(m.fcHorizon), Brier: Ratio(m.brierH),
			BrierLast: Ratio(m.brierLast), BrierTimeAvg: Ratio(m.brierAvg), Prices: m.prices}
		if m.resolved {
			mr.Winner = m.winner.String()
			mr.ResolvedAt = m.resolvedAt
		}
		for o, tok := range m.info.Tokens {
			p := c.pos[tok]
			if tok == "" || p == nil {
				continue
			}
			mr.Realized += Money(p.Realized)
			if p.Size > 0 {
				mr.Unrealized += Money(p.Unrealized(st.Mark(tok)))
			}
			if market.Outcome(o) == market.Yes {
				mr.Yes = Money(p.Size)
			} else {
				mr.No = Money(p.Size)
			}
		}
		mr.PnL = mr.Realized + mr.Unrealized
		rep.Markets = append(rep.Markets, mr)

		s.Realized += mr.Realized
		s.Unrealized += mr.Unrealized
		s.Settlement += mr.Settlement
		s.Fees += mr.Fees
		s.Fills += m.fills
		s.Volume += mr.Volume
		if m.resolved {
			if !math.IsNaN(m.brierH) {
				brierH += m.brierH
				s.Forecasts++
			}
			if !math.IsNaN(m.brierLast) {
				brierLast += m.brierLast
				s.ForecastsLast++
			}
			if !math.IsNaN(m.brierAvg) {
				brierAvg += m.brierAvg
				s.ForecastsAvg++
			}
		}
	}
	if rep.Markets == nil {
		rep.Markets = []MarketReport{}
	}
	s.BrierHorizonMs = c.horizon
	s.Brier, s.BrierLast, s.BrierTimeAvg = meanOf(brierH, s.Forecasts), meanOf(brierLast, s.ForecastsLast), meanOf(brierAvg, s.ForecastsAvg)
	for i := range c.fills {
		f := &c.fills[i]
		switch f.Role {
		case market.Maker.String():
			s.MakerFills++
		case market.Taker.String():
			s.TakerFills++
		}
		switch f.Side {
		case market.Buy.String():
			s.Bought += f.Size
		case market.Sell.String():
			s.Sold += f.Size
		}
	}
	s.Turnover = Ratio(math.NaN())
	if c.startEquity > 0 {
		s.Turnover = Ratio(float64(s.Volume) / float64(c.startEquity))
	}
	if diff := s.Realized + s.Unrealized - s.PnL; diff != 0 {
		c.notes = append(c.notes, "the fills' PnL and the account's equity differ by "+diff.String()+
			" (funds moved outside the run, or fills the run did not see)")
		rep.Notes = c.notes
	}

	// Trades.
	var wins int
	var gain, loss float64
	for _, r := range c.realized {
		switch {
		case r > 0:
			wins++
			gain += float64(r)
		case r < 0:
			loss -= float64(r)
		}
	}
	s.Trades = len(c.realized)
	s.WinRate, s.ProfitFactor = Ratio(math.NaN()), Ratio(math.NaN())
	if s.Trades > 0 {
		s.WinRate = Ratio(float64(wins) / float64(s.Trades))
	}
	if loss > 0 {
		s.ProfitFactor = Ratio(gain / loss)
	}

	// Returns over fixed periods of event time; the last, partial period counts.
	eqs := append([]market.Micros{c.startEquity}, c.periodEquity...)
	if c.lastTime > c.periodEnd-c.period {
		eqs = append(eqs, c.lastEq)
	}
	s.ReturnPeriodMs = c.period
	s.Sharpe, s.Sortino, s.Periods = ratios(eqs, c.period)

	// What happened on the way, and compared with what.
	rep.Events = c.marks
	if c.dropped > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d more events than the %d listed", c.dropped, MaxEvents))
	}
	rep.Denials = c.denialRows()
	s.Denials, s.KillSwitchTrips = c.denied, c.trips
	rep.Merges = c.merges
	s.Merges, s.Redeems, s.Redeemed = len(c.merges), c.redeems, Money(c.redeemed)
	for i := range c.merges {
		s.MergedSets += c.merges[i].Sets
		s.MergeRealized += c.merges[i].Realized
	}
	rep.RoundTrips = c.closed
	if c.tripsOut > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d more round trips than the %d listed (not in the averages)", c.tripsOut, MaxRoundTrips))
	}
	s.RoundTrips = len(c.closed)
	if n := len(c.closed); n > 0 {
		var sum int64
		for i := range c.closed {
			sum += c.closed[i].DurationMs
		}
		s.AvgHoldMs = sum / int64(n)
	}
	rep.Days = c.days
	rep.Baselines = c.baselines(st)
	rep.Notes = c.notes
	rep.Warnings = warnings(rep)
	return rep
}

// meanOf is sum / n, NaN when n is 0.
func meanOf(sum float64, n int) Ratio {
	if n == 0 {
		return Ratio(math.NaN())
	}
	return Ratio(sum / float64(n))
}

// ratios computes the annualized Sharpe and Sortino ratios of the returns between
// consecutive equities (sums in order, so the result is deterministic).
func ratios(eqs []market.Micros, period int64) (sharpe, sortino Ratio, n int) {
	nan := Ratio(math.NaN())
	var rs []float64
	for i := 1; i < len(eqs); i++ {
		if eqs[i-1] <= 0 {
			continue
		}
		rs = append(rs, float64(eqs[i]-eqs[i-1])/float64(eqs[i-1]))
	}
	n = len(rs)
	if n < 2 {
		return nan, nan, n
	}
	var sum float64
	for _, r := range rs {
		sum += r
	}
	mean := sum / float64(n)
	var sq, down float64
	for _, r := range rs {
		sq += (r - mean) * (r - mean)
		if r < 0 {
			down += r * r
		}
	}
	annual := math.Sqrt(float64(365*24*time.Hour/time.Millisecond) / float64(period))
	sharpe, sortino = nan, nan
	if sd := math.Sqrt(sq / float64(n-1)); sd > 0 {
		sharpe = Ratio(mean / sd * annual)
	}
	if dd := math.Sqrt(down / float64(n)); dd > 0 {
		sortino = Ratio(mean / dd * annual)
	}
	return sharpe, sortino, n
}

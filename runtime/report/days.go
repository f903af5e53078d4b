package report

import (
	"math"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

const dayMs = int64(24 * time.Hour / time.Millisecond)

// dayAcc accumulates the UTC day in progress.
type dayAcc struct {
	start         int64 // Unix ms of 00:00 UTC
	startEq, peak market.Micros
	maxDD         market.Micros
	realized      market.Micros
	fills         int
	volume, fees  market.Micros
	trades, wins  int
}

// realize counts one realization (a sell or a settlement).
func (d *dayAcc) realize(r market.Micros) {
	d.realized += r
	d.trades++
	if r > 0 {
		d.wins++
	}
}

// observe follows the day's peak and drawdown with an equity sample.
func (d *dayAcc) observe(eq market.Micros) {
	d.peak = max(d.peak, eq)
	d.maxDD = max(d.maxDD, d.peak-eq)
}

// rollDay closes the days that ended before t (at the last sampled equity) and
// starts the day of t. Days without an event are listed too, flat.
func (c *Collector) rollDay(t int64) {
	if !c.started {
		return
	}
	for t >= c.day.start+dayMs {
		c.closeDay(c.lastEq)
		c.day = dayAcc{start: c.day.start + dayMs, startEq: c.lastEq, peak: c.lastEq}
	}
}

// closeDay appends the day in progress with its end equity.
func (c *Collector) closeDay(end market.Micros) {
	d := &c.day
	row := Day{Date: time.UnixMilli(d.start).UTC().Format(time.DateOnly), StartEquity: Money(d.startEq), EndEquity: Money(end),
		PnL: Money(end - d.startEq), Realized: Money(d.realized), Fills: d.fills, Volume: Money(d.volume), Fees: Money(d.fees),
		Trades: d.trades, MaxDrawdown: Money(d.maxDD), Return: Ratio(math.NaN()), WinRate: Ratio(math.NaN())}
	if d.startEq > 0 {
		row.Return = Ratio(float64(end-d.startEq) / float64(d.startEq))
	}
	if d.trades > 0 {
		row.WinRate = Ratio(float64(d.wins) / float64(d.trades))
	}
	c.days = append(c.days, row)
}

// mod is the non-negative remainder of a by b.
func mod(a, b int64) int64 {
	r := a % b
	if r < 0 {
		r += b
	}
	return r
}

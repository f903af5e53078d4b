package report

import (
	"math"

	"github.com/pitbossdev/pitboss/market"
)

// forecastAcc follows a market's declared probability of YES over time, sampled
// on the collector's grid: enough to score it at the horizon and averaged over
// time, in bounded memory.
//
// The time average needs no history: with p(t) piecewise constant between
// samples, ∫(p − y)² dt = ∫p² dt − 2y∫p dt + y²T, so ∫p dt, ∫p² dt and T are
// kept and y plugged in at the resolution. The horizon forecast needs the value
// at R − H for a resolution time R not known in advance: the samples of the last
// H (at least every H/horizonSamples apart) are kept, plus the newest one before
// them.
type forecastAcc struct {
	has        bool
	t          int64   // time of the last sample
	p          float64 // its value
	sumP, sumQ float64 // ∫p dt, ∫p² dt (ms)
	span       float64 // T (ms)
	hist       []fcSample
}

type fcSample struct {
	t int64
	p float64
}

// add records the forecast p at time t; every is the spacing of the kept
// history, horizon H.
func (f *forecastAcc) add(t int64, p float64, every, horizon int64) {
	f.advance(t)
	f.has, f.t, f.p = true, t, p
	if n := len(f.hist); n == 0 || t-f.hist[n-1].t >= every {
		f.hist = append(f.hist, fcSample{t, p})
	} else {
		f.hist[n-1].p = p // the newest value of the interval stands for it
	}
	// Keep the newest sample at or before t − H, and everything after it.
	drop := 0
	for drop+1 < len(f.hist) && f.hist[drop+1].t <= t-horizon {
		drop++
	}
	if drop > 0 {
		f.hist = append(f.hist[:0], f.hist[drop:]...)
	}
}

// advance extends the integrals to time t at the last value.
func (f *forecastAcc) advance(t int64) {
	if !f.has || t <= f.t {
		return
	}
	dt := float64(t - f.t)
	f.sumP += f.p * dt
	f.sumQ += f.p * f.p * dt
	f.span += dt
	f.t = t
}

// at returns the forecast in force at time t (the newest sample at or before
// it), if any.
func (f *forecastAcc) at(t int64) (float64, bool) {
	for i := len(f.hist) - 1; i >= 0; i-- {
		if f.hist[i].t <= t {
			return f.hist[i].p, true
		}
	}
	return 0, false
}

// sampleForecasts asks the Forecaster for every open market's probability.
func (c *Collector) sampleForecasts(t int64) {
	every := max(c.res, c.horizon/horizonSamples)
	for _, m := range c.mkts {
		if m.resolved {
			continue
		}
		if p, ok := c.cfg.Forecaster.Forecast(m.info.Condition); ok && p >= 0 && p <= 1 {
			m.fc.add(t, p, every, c.horizon)
		}
	}
}

// scoreForecasts scores a market's forecasts at its resolution at time r.
func (c *Collector) scoreForecasts(m *mkt, o market.Outcome, r int64) {
	y := 0.0
	if o == market.Yes {
		y = 1
	}
	sq := func(p float64) float64 { return (p - y) * (p - y) }
	if !math.IsNaN(m.forecast) {
		m.brierLast = sq(m.forecast)
	}
	f := &m.fc
	if !f.has {
		return
	}
	f.advance(r)
	if f.span > 0 {
		m.brierAvg = (f.sumQ - 2*y*f.sumP + y*y*f.span) / f.span
	}
	if p, ok := f.at(r - c.horizon); ok {
		m.fcHorizon = p
		m.brierH = sq(p)
	}
	f.hist = nil
}

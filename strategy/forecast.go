package strategy

import (
	"math"

	"github.com/pitbossdev/pitboss/market"
)

// ForecastName is the name under which a strategy declares its probability of YES:
// an indicator or a number var called "fair" (the quoter's smoothed microprice, say).
// Backtests score it with a Brier score when a market resolves.
const ForecastName = "fair"

// Forecast returns the strategy's declared probability of YES for market m: the
// value of its indicator or number var named ForecastName as of m's last
// evaluation. ok is false when the strategy declares none, m is not bound or not
// evaluated yet, or the value is NaN or outside [0, 1]. Like Decide it is for the
// goroutine that owns the Instance; it reads, never evaluates.
func (in *Instance) Forecast(m market.ConditionID) (p float64, ok bool) {
	ms := in.byCond[m]
	if ms == nil || !ms.started {
		return 0, false
	}
	slot := -1
	for i := range in.s.indicators {
		if in.s.indicators[i].name == ForecastName {
			slot = in.s.indicators[i].slot
		}
	}
	for i := range in.s.vars {
		if v := &in.s.vars[i]; v.name == ForecastName && !v.isBool {
			slot = v.slot
		}
	}
	if slot < 0 {
		return 0, false
	}
	p = *ms.f[slot]
	if math.IsNaN(p) || p < 0 || p > 1 {
		return 0, false
	}
	return p, true
}

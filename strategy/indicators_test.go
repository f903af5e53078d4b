package strategy

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// naive computes an indicator over the samples in its window by brute force.
func naive(fn indFn, samples []sample, events int, span, now, start int64) float64 {
	var win []float64
	if events > 0 {
		if len(samples) < events {
			return math.NaN()
		}
		for _, s := range samples[len(samples)-events:] {
			win = append(win, s.v)
		}
	} else {
		if now-start < span {
			return math.NaN()
		}
		for _, s := range samples {
			if s.t > now-span {
				win = append(win, s.v)
			}
		}
	}
	n := float64(len(win))
	if len(win) == 0 {
		if fn == fnSum {
			return 0
		}
		return math.NaN()
	}
	sum := 0.0
	for _, v := range win {
		sum += v
	}
	mean := sum / n
	last, first := win[len(win)-1], win[0]
	switch fn {
	case fnSMA:
		return mean
	case fnSum:
		return sum
	case fnMin, fnMax:
		s := append([]float64(nil), win...)
		sort.Float64s(s)
		if fn == fnMin {
			return s[0]
		}
		return s[len(s)-1]
	case fnChange:
		return last - first
	case fnReturns:
		return last/first - 1
	}
	if len(win) < 2 {
		return math.NaN()
	}
	ss := 0.0
	flat := true
	for _, v := range win {
		ss += (v - mean) * (v - mean)
		flat = flat && v == win[0]
	}
	if flat {
		ss = 0
	}
	sd := math.Sqrt(ss / (n - 1))
	if fn == fnStdev {
		return sd
	}
	if sd == 0 {
		return math.NaN()
	}
	return (last - mean) / sd
}

func close(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestIndicatorsMatchBruteForce feeds random price-like series (with flat stretches,
// so that zero deviations occur) and compares every indicator, windowed by events
// and by event time, with a brute-force computation over its window.
func TestIndicatorsMatchBruteForce(t *testing.T) {
	fns := map[string]indFn{"sma": fnSMA, "stdev": fnStdev, "zscore": fnZscore, "min": fnMin, "max": fnMax, "sum": fnSum, "change": fnChange, "returns": fnReturns}
	windows := []struct {
		name   string
		events int
		span   int64
	}{{"1 event", 1, 0}, {"7 events", 7, 0}, {"200 events", 200, 0}, {"5s", 0, 5000}, {"60s", 0, 60_000}}
	for name, fn := range fns {
		for _, w := range windows {
			t.Run(name+"/"+w.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(3, uint64(fn)))
				x := newIndicator(fn, w.events, w.span)
				var samples []sample
				now, start, v := int64(1_000_000), int64(1_000_000), 0.5
				for i := 0; i < 3000; i++ {
					now += int64(r.IntN(2000))
					if r.IntN(4) > 0 {
						v = math.Round((v+r.NormFloat64()*0.01)*100) / 100
						v = math.Min(0.99, math.Max(0.01, v))
					}
					if r.IntN(10) > 0 { // some steps only let time pass
						x.add(now, v)
						samples = append(samples, sample{t: now, v: v})
					}
					got, want := x.value(now, start), naive(fn, samples, w.events, w.span, now, start)
					if !close(got, want) {
						t.Fatalf("step %d: %s = %v, brute force %v", i, name, got, want)
					}
				}
			})
		}
	}
}

func TestEMA(t *testing.T) {
	x := newIndicator(fnEMA, 3, 0) // alpha = 0.5
	if !math.IsNaN(x.value(0, 0)) {
		t.Fatal("EMA ready before its first sample")
	}
	for i, tc := range []struct{ v, want float64 }{{1, 1}, {2, 1.5}, {4, 2.75}} {
		x.add(int64(i), tc.v)
		if got := x.value(int64(i), 0); got != tc.want {
			t.Fatalf("sample %d: EMA %v, want %v", i, got, tc.want)
		}
	}
	// event time: after one time constant a step moves 1 − 1/e of the way
	y := newIndicator(fnEMA, 0, 1000)
	y.add(0, 0)
	y.add(1000, 1)
	if got, want := y.value(1000, 0), 1-math.Exp(-1); math.Abs(got-want) > 1e-12 {
		t.Fatalf("time EMA %v, want %v", got, want)
	}
	y.add(1000, math.NaN()) // not a sample
	if got := y.value(1000, 0); math.IsNaN(got) {
		t.Fatal("NaN sample poisoned the EMA")
	}
}

func TestTimeWindowKeepsAtMostItsSampleLimit(t *testing.T) {
	x := newIndicator(fnSum, 0, 1<<40)
	for i := 0; i < maxTimeSamples+100; i++ {
		x.add(int64(i), 1)
	}
	if x.win.n != maxTimeSamples {
		t.Fatalf("window holds %d samples, want the limit %d", x.win.n, maxTimeSamples)
	}
}

// TestKeptValuesEqualComputedOnes feeds two copies of each kind of indicator the
// same random samples and reads, with repeated reads at the same and later times:
// one keeps its last value (value's cache), the other computes every read. Every
// read must agree bit for bit, including flat and near-flat windows far from zero
// that make the running sums recompute.
func TestKeptValuesEqualComputedOnes(t *testing.T) {
	keptPoison := math.Float64frombits(0x7ff8_dead_beef_0001) // a NaN no computation gives
	for fn := fnEMA; fn <= fnReturns; fn++ {
		for _, w := range []struct {
			events int
			span   int64
		}{{5, 0}, {30, 0}, {0, 2_000}, {0, 20_000}} {
			for seed := uint64(1); seed <= 3; seed++ {
				r := rand.New(rand.NewPCG(seed, uint64(fn)))
				kept, computed := newIndicator(fn, w.events, w.span), newIndicator(fn, w.events, w.span)
				now, start := int64(1_000_000), int64(1_000_000)
				base := []float64{0.5, 1e6, -3}[seed-1]
				cached := 0
				for i := 0; i < 5000; i++ {
					now += int64(r.IntN(300))
					if r.IntN(3) == 0 {
						v := base
						switch r.IntN(4) {
						case 0:
							v += float64(r.IntN(100)) / 100
						case 1:
							v += float64(r.IntN(3)) * 1e-9
						}
						kept.add(now, v)
						computed.add(now, v)
					}
					for range 1 + r.IntN(3) {
						computed.cached.ok = false
						// A read answered from the kept value returns what the cache
						// holds: poisoned, it tells a kept answer from a computed one
						// (a computation at an unchanged version would leave the
						// cache as it was, so comparing the cache before and after
						// cannot tell them apart).
						before := kept.cached
						kept.cached.v = keptPoison
						a, b := kept.value(now, start), computed.value(now, start)
						if sameFloat(kept.cached.v, keptPoison) {
							kept.cached.v = before.v
						}
						if sameFloat(a, keptPoison) {
							cached++
							a = before.v
						}
						if !sameFloat(a, b) {
							t.Fatalf("fn %d window %+v seed %d read %d: kept %v, computed %v", fn, w, seed, i, a, b)
						}
					}
				}
				if cached == 0 && fn != fnEMA {
					t.Errorf("fn %d window %+v seed %d: no read was answered from the kept value", fn, w, seed)
				}
			}
		}
	}
}

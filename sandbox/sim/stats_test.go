package sim

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Statistical sanity of the model: fixed seeds, bounded runs, tolerances wide
// enough to hold for any seed with overwhelming probability (they are stated in
// multiples of the standard error where one applies).

const t0 = int64(DefaultTapeStart)

// newEngine returns an engine with n synthetic markets created at t0.
func newEngine(tb testing.TB, n int) *exchange.Engine {
	tb.Helper()
	e := exchange.New(exchange.Config{ForgetFinal: true})
	for _, c := range SyntheticMarkets(n, t0/1000) {
		c.Time = t0
		if _, err := e.Apply(&c); err != nil {
			tb.Fatal(err)
		}
	}
	return e
}

type bookStats struct {
	samples, twoSided, inside, near int
	dev                             float64 // Σ |mid − fair| in ticks
	levels                          int     // Σ levels on both sides
	spreads                         []int   // in ticks
}

func TestMakerKeepsTheSpreadAroundTheFairValue(t *testing.T) {
	const hours = 3
	e := newEngine(t, 4)
	s := New(Config{Start: t0, Defaults: Params{Fair: 500_000}}, 101)
	stats := make([]bookStats, 4)
	var lv []market.Level
	for now := int64(t0); now < t0+hours*3_600_000; now += 1000 {
		s.AdvanceTo(now, e, nil)
		for i, m := range s.markets {
			st := &stats[i]
			tick := m.info.TickSize
			st.samples++
			bb, okb := e.BestBid(m.yes)
			ba, oka := e.BestAsk(m.yes)
			if !okb || !oka {
				continue
			}
			st.twoSided++
			if bb.Price <= m.fair && m.fair <= ba.Price {
				st.inside++
			}
			if bb.Price-tick <= m.fair && m.fair <= ba.Price+tick {
				st.near++
			}
			st.dev += math.Abs(float64(bb.Price+ba.Price)/2-float64(m.fair)) / float64(tick)
			st.spreads = append(st.spreads, int((ba.Price-bb.Price)/tick))
			lv = e.Levels(m.yes, market.Buy, lv[:0], 0)
			st.levels += len(lv)
			lv = e.Levels(m.yes, market.Sell, lv[:0], 0)
			st.levels += len(lv)
		}
	}
	for i, st := range stats {
		m := s.markets[i]
		two := float64(st.twoSided)
		slices.Sort(st.spreads)
		median, p90 := st.spreads[len(st.spreads)/2], st.spreads[len(st.spreads)*9/10]
		t.Logf("market %d (tick %s): two-sided %.3f, fair within the spread %.3f (±1 tick %.3f), mean |mid−fair| %.2f ticks, "+
			"spread median %d p90 %d ticks, %.1f levels per side, fair %s–%s",
			i, m.info.TickSize, two/float64(st.samples), float64(st.inside)/two, float64(st.near)/two, st.dev/two,
			median, p90, float64(st.levels)/two/2, m.sum.FairMin, m.sum.FairMax)
		switch {
		case two/float64(st.samples) < 0.97:
			t.Errorf("market %d: two-sided only %.3f of the time", i, two/float64(st.samples))
		case float64(st.inside)/two < 0.75:
			t.Errorf("market %d: fair within the spread only %.3f of the time", i, float64(st.inside)/two)
		case float64(st.near)/two < 0.95:
			t.Errorf("market %d: fair within a tick of the spread only %.3f of the time", i, float64(st.near)/two)
		case st.dev/two > 1:
			t.Errorf("market %d: mean |mid − fair| %.2f ticks", i, st.dev/two)
		case median < 1 || median > 3 || p90 > 4:
			t.Errorf("market %d: spread median %d, p90 %d ticks", i, median, p90)
		case float64(st.levels)/two/2 < 3:
			t.Errorf("market %d: %.1f levels per side", i, float64(st.levels)/two/2)
		}
	}
}

func TestTradesHappenAtTheExpectedRates(t *testing.T) {
	const minutes = 120
	e := newEngine(t, 4)
	s := New(Config{Start: t0}, 202)
	s.AdvanceTo(t0+minutes*60_000, e, nil)
	p := DefaultParams()
	lambda := float64(minutes*time.Minute) / float64(p.NoiseEvery) // expected noise arrivals
	for _, m := range s.Summary().Markets {
		got := float64(m.NoiseArrivals)
		if math.Abs(got-lambda) > 5*math.Sqrt(lambda) {
			t.Errorf("%s: %d noise arrivals, want %.0f ± %.0f", m.Market, m.NoiseArrivals, lambda, 5*math.Sqrt(lambda))
		}
		every := float64(minutes*60) / float64(m.Trades)
		t.Logf("%s: %d noise, %d informed arrivals, %d trades (one every %.1f s), %s shares, %d news",
			m.Market[:10], m.NoiseArrivals, m.InformedArrivals, m.Trades, every, m.Volume, m.News)
		if every < 2 || every > 8 {
			t.Errorf("%s: a trade every %.1f s, want every few seconds", m.Market, every)
		}
		if m.Rejected*1000 > m.Commands {
			t.Errorf("%s: %d of %d commands rejected: %v", m.Market, m.Rejected, m.Commands, m.Rejections)
		}
	}
}

// latent returns a started single-market sim whose latent value can be stepped
// directly (no participant acts).
func latent(t *testing.T, p Params, seed uint64) (*Sim, *mstate) {
	s, m, _ := latentOn(t, p, seed)
	return s, m
}

// latentOn is latent with the engine it runs on.
func latentOn(t *testing.T, p Params, seed uint64) (*Sim, *mstate, *exchange.Engine) {
	t.Helper()
	p.MakerRefresh, p.NoiseEvery, p.InformedEvery, p.InformedFollowers = -1, -1, -1, -1
	e := newEngine(t, 1)
	s := New(Config{Start: t0, Defaults: p, Rescan: -1}, seed)
	if cmds, _ := s.Step(t0, e, nil); len(cmds) != 0 {
		t.Fatalf("a sim without participants produced %d commands", len(cmds))
	}
	return s, s.markets[0], e
}

func TestFairValueWalkHasTheConfiguredVolatility(t *testing.T) {
	const steps = 200_000
	s, m := latent(t, Params{Vol: 0.5, Fair: 500_000, NewsEvery: -1, Reversion: -1}, 303)
	var qv float64
	prev := m.x
	for i := 1; i <= steps; i++ {
		m.advanceFair(s, t0+int64(i)*1000)
		d := float64(m.x-prev) / float64(fixOne)
		qv += d * d
		prev = m.x
		if m.fair <= 0 || m.fair >= market.One {
			t.Fatalf("fair %d left (0, 1)", m.fair)
		}
	}
	// Quadratic variation of the logit: σ² per hour times the hours elapsed. Its
	// relative standard error is about √(2/steps) ≈ 0.3% (a little less for the
	// Irwin–Hall steps); allow 2%.
	want := 0.5 * 0.5 * steps / 3600
	if math.Abs(qv-want)/want > 0.02 {
		t.Fatalf("quadratic variation %.4f, want %.4f", qv, want)
	}
}

func TestFairValueStaysInsideTheUnitInterval(t *testing.T) {
	s, m := latent(t, Params{Vol: 10, Fair: 500_000, NewsEvery: time.Minute, NewsJump: 5, Reversion: -1}, 404)
	lo, hi := market.One, market.Micros(0)
	for now := int64(t0); now < t0+48*3_600_000; now += 997 {
		for due, _ := s.Next(); due <= now; due, _ = s.Next() {
			s.Step(now, nil, nil) // news only: reads nothing
		}
		m.advanceFair(s, now)
		lo, hi = min(lo, m.fair), max(hi, m.fair)
		if m.fair <= 0 || m.fair >= market.One {
			t.Fatalf("fair %d left (0, 1)", m.fair)
		}
	}
	if lo != sigmoid(-maxLogit) || hi != sigmoid(maxLogit) {
		t.Fatalf("range %s–%s: the bounds were never reached, the test is too weak", lo, hi)
	}
	for _, p := range s.Summary().Markets[0].Path {
		if p.Fair <= 0 || p.Fair >= market.One {
			t.Fatalf("path point %+v outside (0, 1)", p)
		}
	}
}

func TestNewsJumpsArriveAtTheirRateWithTheirSize(t *testing.T) {
	const hours = 200
	s, m := latent(t, Params{Vol: -1, Fair: 500_000, NewsEvery: 10 * time.Minute, NewsJump: 0.2, Reversion: -1}, 505)
	var n int
	var sum float64
	for {
		due, _ := s.Next()
		if due > t0+hours*3_600_000 {
			break
		}
		before := m.x
		s.Step(due, nil, nil)
		n++
		sum += math.Abs(float64(m.x-before)) / float64(fixOne)
	}
	want := float64(hours * 6)
	if math.Abs(float64(n)-want) > 5*math.Sqrt(want) {
		t.Errorf("%d news in %d hours, want %.0f", n, hours, want)
	}
	if mean := sum / float64(n); math.Abs(mean-0.2) > 5*0.2/math.Sqrt(float64(n)) {
		t.Errorf("mean |jump| %.4f, want 0.2", mean)
	}
	if got := s.Summary().Markets[0].News; got != n {
		t.Errorf("summary counts %d news, want %d", got, n)
	}
}

func TestReversionHalvesTheDistanceEachHalfLife(t *testing.T) {
	s, m := latent(t, Params{Vol: -1, Fair: 500_000, NewsEvery: -1, Reversion: time.Hour}, 606)
	m.x = m.anchor + 2*fixOne
	m.advanceFair(s, t0+3*3_600_000)
	got := float64(m.x-m.anchor) / float64(fixOne)
	if math.Abs(got-0.25)/0.25 > 0.01 {
		t.Fatalf("after three half-lives the logit is %.5f from its anchor, want 0.25", got)
	}
}

// After news the informed traders sweep the maker's stale levels: trades through
// three or more of the maker's levels happen, mostly right after news.
func TestNewsProducesSweeps(t *testing.T) {
	e := newEngine(t, 2)
	s := New(Config{Start: t0, Defaults: Params{Fair: 500_000, NewsEvery: 5 * time.Minute, NewsJump: 0.4}}, 707)
	type sweep struct{ t int64 }
	var sweeps []sweep
	s.AdvanceTo(t0+2*3_600_000, e, func(c *exchange.Command, evs []exchange.Event) {
		prices := map[market.Micros]bool{}
		for _, ev := range evs {
			if ev.Kind == exchange.OrderFilled && ev.Owner == s.markets[s.byID[ev.Market]].makers[0].acct.addr {
				prices[ev.Price] = true
			}
		}
		if len(prices) >= 3 {
			sweeps = append(sweeps, sweep{c.Time})
		}
	})
	var news []int64
	for _, m := range s.Summary().Markets {
		for _, p := range m.Path {
			if p.News {
				news = append(news, p.Time)
			}
		}
	}
	after := 0
	for _, sw := range sweeps {
		for _, n := range news {
			if sw.t >= n && sw.t-n <= 10_000 {
				after++
				break
			}
		}
	}
	t.Logf("%d news, %d sweeps, %d within 10 s after news", len(news), len(sweeps), after)
	if len(sweeps) < 5 || after*2 < len(sweeps) {
		t.Fatalf("%d sweeps, %d of them after news", len(sweeps), after)
	}
}

// With several makers the later ones quote wider and larger behind the first: the
// book is deeper and the best bids remain, nearly always, the first maker's.
func TestSeveralMakersStackTheirLadders(t *testing.T) {
	e := newEngine(t, 2)
	s := New(Config{Start: t0, Defaults: Params{Makers: 3, Fair: 500_000}}, 909)
	var levels, samples, behind, pairs int
	var lv []market.Level
	var orders []market.Order
	for now := int64(t0); now < t0+3_600_000; now += 10_000 {
		s.AdvanceTo(now, e, nil)
		for _, m := range s.markets {
			lv = e.Levels(m.yes, market.Buy, lv[:0], 0)
			levels += len(lv)
			lv = e.Levels(m.yes, market.Sell, lv[:0], 0)
			levels += len(lv)
			samples++
			var inner market.Micros
			for k := range m.makers {
				orders = e.OpenOrders(orders[:0], exchange.Filter{Owner: m.makers[k].acct.addr, Market: m.id})
				if len(orders) == 0 {
					t.Fatalf("maker %d has no orders at %d", k, now)
				}
				var best market.Micros
				for i := range orders {
					if bs, px := yesBook(&orders[i]); bs == 0 {
						best = max(best, px)
					}
				}
				if k > 0 && best <= inner {
					behind++
				}
				if k > 0 {
					pairs++
				}
				if k == 0 {
					inner = best
				}
			}
		}
	}
	// A later maker may bid above the first for a moment (it learned a fall of
	// the fair value later); it stands behind it nearly always.
	if float64(behind) < 0.9*float64(pairs) {
		t.Fatalf("the later makers bid at or below the first in %d of %d samples", behind, pairs)
	}
	if avg := float64(levels) / float64(samples) / 2; avg < 6 {
		t.Fatalf("%.1f levels per side with three makers", avg)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Summary().Markets {
		if m.Rejected > 0 {
			t.Errorf("%s: rejections %v", m.Market, m.Rejections)
		}
	}
}

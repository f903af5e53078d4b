package sim

import (
	"math"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestPricesAreSeededAndStepped: one price per symbol every PriceStep from the
// first multiple of it at or after the start; the same seed gives the same path,
// another seed another; adding a symbol changes no other's path; one step's log
// change has the documented standard deviation (200 ppm, within 5 % over 20 000
// steps).
func TestPricesAreSeededAndStepped(t *testing.T) {
	btc := market.FeedSymbol{Source: market.FeedCrypto, Symbol: "btcusdt"}
	eth := market.FeedSymbol{Source: market.FeedCrypto, Symbol: "ethusdt"}
	path := func(seed uint64, syms ...market.FeedSymbol) []float64 {
		p := NewPrices(seed, 1_500, syms)
		var out []float64
		var evs []market.Event
		for i := 0; i < 20_000; i++ {
			if want := int64(2000 + 1000*i); p.Next() != want {
				t.Fatalf("step %d at %d, want %d", i, p.Next(), want)
			}
			evs = p.Step(evs[:0])
			if len(evs) != len(syms) || evs[0].Kind != market.EventFeed || evs[0].Name != "crypto:btcusdt" || evs[0].Time != int64(2000+1000*i) {
				t.Fatalf("events %+v", evs)
			}
			out = append(out, evs[0].Value)
		}
		return out
	}
	a, b, c, d := path(7, btc), path(7, btc), path(8, btc), path(7, btc, eth)
	if a[0] != 100_000 {
		t.Fatalf("start %v", a[0])
	}
	var sum, sumsq float64
	for i := range a {
		if a[i] != b[i] || a[i] != d[i] {
			t.Fatalf("step %d: %v %v %v", i, a[i], b[i], d[i])
		}
		if i > 0 {
			r := math.Log(a[i] / a[i-1])
			sum += r
			sumsq += r * r
		}
	}
	if a[len(a)-1] == c[len(c)-1] {
		t.Fatal("two seeds gave the same path")
	}
	n := float64(len(a) - 1)
	sd := math.Sqrt(sumsq/n - (sum/n)*(sum/n))
	if want := float64(PriceVolPPM) / 1e6; math.Abs(sd/want-1) > 0.05 {
		t.Fatalf("step standard deviation %.3g, want %.3g", sd, want)
	}
}

// TestPriceServiceFollowsTheEmbeddedPath: asked piecemeal, in any order of
// symbols, the service gives each symbol the path NewPrices gives it from the
// same origin and seed; latest gives the newest price only.
func TestPriceServiceFollowsTheEmbeddedPath(t *testing.T) {
	const origin = 1_700_000_000_500
	syms := []market.FeedSymbol{{Source: market.FeedCrypto, Symbol: "btcusdt"}, {Source: market.FeedChainlink, Symbol: "eth/usd"}}
	ref := NewPrices(9, origin, syms)
	want := map[string][]market.Event{}
	for range 120 {
		for _, ev := range ref.Step(nil) {
			want[ev.Name] = append(want[ev.Name], ev)
		}
	}
	s := NewPriceService(9, origin)
	got := map[string][]market.Event{}
	after := map[market.FeedSymbol]int64{}
	for upTo := int64(origin); upTo < origin+120_000; upTo += 777 {
		for _, sym := range []market.FeedSymbol{syms[1], syms[0]} {
			evs := s.Prices(sym, after[sym], upTo, false, nil)
			for _, ev := range evs {
				after[sym] = ev.Time
			}
			got[sym.String()] = append(got[sym.String()], evs...)
		}
	}
	for name, w := range want {
		g := got[name]
		if len(g) < 110 {
			t.Fatalf("%s: %d prices", name, len(g))
		}
		for i := range g {
			if g[i].Time != w[i].Time || g[i].Value != w[i].Value || g[i].Name != w[i].Name || g[i].Kind != w[i].Kind {
				t.Fatalf("%s price %d: %+v, want %+v", name, i, g[i], w[i])
			}
		}
	}
	last := s.Prices(syms[0], 0, origin+200_000, true, nil)
	if len(last) != 1 || last[0].Time != 1_700_000_200_000 {
		t.Fatalf("latest %+v", last)
	}
	if none := s.Prices(syms[0], last[0].Time, origin+200_000, true, nil); len(none) != 0 {
		t.Fatalf("latest again %+v", none)
	}
	if before := NewPriceService(9, origin).Prices(syms[0], 0, origin-1, true, nil); len(before) != 0 {
		t.Fatalf("before the origin %+v", before)
	}
}

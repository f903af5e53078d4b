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

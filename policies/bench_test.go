package policies

import (
	"fmt"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// benchState is the state of BenchmarkGuards: two markets, three positions, ten
// open orders.
func benchState() *market.State {
	s := fixture()
	hold(s, yes, "20", "0.40")
	hold(s, no, "5", "0.50")
	hold(s, yes2, "10", "0.30")
	for i := 0; i < 10; i++ {
		tok := []market.TokenID{yes, no, yes2, no2}[i%4]
		side := []market.Side{market.Buy, market.Sell}[i%2]
		if side == market.Sell && tok != yes {
			side = market.Buy
		}
		openOrder(s, fmt.Sprintf("0x%02d", i), tok, side, "0.30", "1")
	}
	return s
}

// benchChain is the default chain (geoblock allowed, records discarded) over
// benchState.
func benchChain(b *testing.B) (*Chain, *market.State) {
	b.Helper()
	c, err := New(Config{}, WithGeoblock(Geoblock{Status: GeoAllowed}), WithSink(Discard))
	if err != nil {
		b.Fatal(err)
	}
	return c, benchState()
}

// BenchmarkGuardsBatch runs a quoter's batch (bid, ask, cancel) through the default
// chain, as the agent does once per event; ns/intent is the cost per intent.
func BenchmarkGuardsBatch(b *testing.B) {
	c, s := benchChain(b)
	its := []*market.Intent{quote(yes, market.Buy, "0.44", "10"), quote(yes, market.Sell, "0.46", "10"),
		{Kind: market.IntentCancel, Key: "main/ask_no", Market: cond}}
	b.ReportAllocs()
	for b.Loop() {
		bt := c.Batch(s)
		for _, it := range its {
			if d := bt.Evaluate(it); !d.Allowed {
				b.Fatal(d.Err())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(its)), "ns/intent")
}

// BenchmarkGuards runs the full default chain (every built-in guard, no custom one)
// on one allowed quote, against a state with two markets, three positions and ten
// open orders: the per-intent cost an agent pays. Target: ≤ 500 ns, 0 allocs.
func BenchmarkGuards(b *testing.B) {
	c, s := benchChain(b)
	it := quote(yes, market.Buy, "0.45", "10")
	b.ReportAllocs()
	for b.Loop() {
		if d := c.EvaluateReplacing(s, it, "0x00"); !d.Allowed {
			b.Fatal(d.Err())
		}
	}
}

// BenchmarkGuardsCustom is BenchmarkGuards plus one custom deny_if guard.
func BenchmarkGuardsCustom(b *testing.B) {
	c, err := New(Config{Custom: []CustomGuard{{Name: "late", DenyIf: "hours_to_end < 2 || (buy && held > 400)"}}},
		WithGeoblock(Geoblock{Status: GeoAllowed}), WithSink(Discard))
	if err != nil {
		b.Fatal(err)
	}
	s := fixture()
	hold(s, yes, "20", "0.40")
	it := quote(yes, market.Buy, "0.45", "10")
	b.ReportAllocs()
	for b.Loop() {
		if d := c.Evaluate(s, it); !d.Allowed {
			b.Fatal(d.Err())
		}
	}
}

// BenchmarkGuardsKeep re-checks a kept quote in a new batch on every iteration, as
// the agent does on every event, with the state's version declared and nothing the
// decision depends on changed: the reused path (docs/design/0105).
func BenchmarkGuardsKeep(b *testing.B) {
	c, s := benchChain(b)
	it := quote(yes, market.Buy, "0.40", "5")
	c.SetStateVersion(s, 1)
	if d := c.Batch(s).EvaluateKeeping(it, "0x00"); !d.Allowed {
		b.Fatal(d.Err())
	}
	b.ReportAllocs()
	for b.Loop() {
		if d := c.Batch(s).EvaluateKeeping(it, "0x00"); !d.Allowed || !d.Reused {
			b.Fatalf("allowed=%v reused=%v", d.Allowed, d.Reused)
		}
	}
}

// BenchmarkGuardsKeepMoved is BenchmarkGuardsKeep with the top of the kept quote's
// book moving on every iteration (the bid alternating between 0.44 and 0.43): the
// decision is kept over the move, the guards that read the books re-checked alone
// (docs/design/0105, "A move of the top of the book").
func BenchmarkGuardsKeepMoved(b *testing.B) {
	c, s := benchChain(b)
	it := quote(yes, market.Buy, "0.40", "5")
	it.PostOnly = true
	c.SetStateVersion(s, 1)
	if d := c.Batch(s).EvaluateKeeping(it, "0x00"); !d.Allowed {
		b.Fatal(d.Err())
	}
	bids, tops := s.Books[yes].Bids, [2]market.Micros{m("0.43"), m("0.44")}
	before := c.revalidated
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		bids[0].Price = tops[i&1] // a price change of the best bid
		i++
		if d := c.Batch(s).EvaluateKeeping(it, "0x00"); !d.Allowed || d.Reused {
			b.Fatalf("allowed=%v reused=%v", d.Allowed, d.Reused)
		}
	}
	if c.revalidated-before != uint64(i) {
		b.Fatalf("%d of %d decisions kept over the move", c.revalidated-before, i)
	}
}

package strategy

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

const (
	benchCond market.ConditionID = "0x00000000000000000000000000000000000000000000000000000000000000c1"
	benchYes  market.TokenID     = "1001"
	benchNo   market.TokenID     = "1002"
)

// newTestState returns a state with one tradable market (tick 0.01, min size 5).
func newTestState() *market.State {
	var st market.State
	st.Init()
	st.Markets[benchCond] = &market.Info{Condition: benchCond, Tokens: [2]market.TokenID{benchYes, benchNo},
		TickSize: 10_000, MinSize: 5 * market.One, Active: true, AcceptingOrders: true, EndDate: 1_800_000_000}
	st.Balance = 1000 * market.One
	return &st
}

// BenchmarkEvaluate is the speed contract of strategy evaluation: the quoter example
// (agents/examples/quoter) deciding on one book event (a level change at the top of
// the YES book), from event to intents, with market.State already updated.
func BenchmarkEvaluate(b *testing.B) {
	s, err := Load("../agents/examples/quoter/strategy.yaml")
	if err != nil {
		b.Fatal(err)
	}
	in, err := s.NewInstance([]Binding{{Name: "main", Market: benchCond}})
	if err != nil {
		b.Fatal(err)
	}
	benchBookEvents(b, in, newTestState(), 3)
}

// benchBookEvents applies a snapshot of the YES book of benchCond, then measures
// level changes at its top, each applied to st and decided by in, which must
// give want intents.
func benchBookEvents(b *testing.B, in *Instance, st *market.State, want int) {
	snap := market.Event{Kind: market.EventBook, Time: 1_700_000_000_000, Market: benchCond, Token: benchYes,
		Bids: []market.Level{{Price: 450_000, Size: 100 * market.One}, {Price: 440_000, Size: 200 * market.One}},
		Asks: []market.Level{{Price: 480_000, Size: 100 * market.One}, {Price: 490_000, Size: 200 * market.One}}}
	st.Apply(&snap)
	out := make([]market.Intent, 0, 16)
	var err error
	if out, err = in.Decide(&snap, st, out[:0]); err != nil {
		b.Fatal(err)
	}
	ev := market.Event{Kind: market.EventPriceChange, Market: benchCond,
		Changes: []market.LevelChange{{Token: benchYes, Side: market.Buy, Price: 450_000}}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		ev.Time = snap.Time + int64(i)*100
		ev.Changes[0].Size = market.Micros(50+i%100) * market.One
		st.Apply(&ev)
		if out, err = in.Decide(&ev, st, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
	if len(out) != want {
		b.Fatalf("%d intents, want %d: %+v", len(out), want, out)
	}
}

// BenchmarkEvaluateCrossMarket is BenchmarkEvaluate for a strategy that reads
// another market: a hedge slot quoting around the main slot's mid (markets.main),
// with main's own quotes. A level change at the top of main's YES book evaluates
// both markets (main's own, and hedge, which reads it): two fills of the
// environment, the cross read and six intents per event.
func BenchmarkEvaluateCrossMarket(b *testing.B) {
	s, err := Parse("cross.yaml", []byte(`
markets: [main, hedge]
params:
  half_spread: 0.02
  size: 10
vars:
  fair: nz(markets.main.yes.mid, 0.5)
  skew: (markets.main.yes.position - markets.hedge.yes.position) / 1000
quotes:
  bid:
    side: BUY
    price: fair - half_spread - skew
    size: size
  ask:
    side: SELL
    price: fair + half_spread - skew
    size: size
  hedge_bid:
    market: hedge
    side: BUY
    price: 1 - fair - half_spread
    size: size
    when: markets.main.yes.two_sided
`))
	if err != nil {
		b.Fatal(err)
	}
	const hedgeCond market.ConditionID = "0x00000000000000000000000000000000000000000000000000000000000000c2"
	in, err := s.NewInstance([]Binding{{Name: "main", Market: benchCond}, {Name: "hedge", Market: hedgeCond}})
	if err != nil {
		b.Fatal(err)
	}
	st := newTestState()
	h := *st.Markets[benchCond]
	h.Condition, h.Tokens = hedgeCond, [2]market.TokenID{"1003", "1004"}
	st.Markets[hedgeCond] = &h
	benchBookEvents(b, in, st, 5)
}

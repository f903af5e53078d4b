package report

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// randomState is an agent state with a few markets (some resolved), books on some
// tokens (one or both sides, or none), and positions that are open, closed (Size 0)
// or missing.
func randomState(r *rand.Rand) *market.State {
	st := &market.State{}
	st.Init()
	st.Balance = market.Micros(r.Int64N(int64(10_000 * market.One)))
	st.Reserved = market.Micros(r.Int64N(int64(100 * market.One)))
	for m := range r.IntN(4) {
		info := &market.Info{Condition: market.ConditionID(fmt.Sprintf("0x%064x", m+1)),
			Tokens: [2]market.TokenID{market.TokenID(fmt.Sprint(100 + 2*m)), market.TokenID(fmt.Sprint(101 + 2*m))}}
		if r.IntN(4) == 0 {
			info.Resolved, info.Winner = true, market.Outcome(r.IntN(2))
		}
		st.Markets[info.Condition] = info
		for o, tok := range info.Tokens {
			if r.IntN(3) > 0 {
				b := &market.Book{Token: tok}
				var bids, asks []market.Level
				if r.IntN(4) > 0 {
					bids = []market.Level{{Price: market.Micros(1+r.IntN(98)) * 10_000, Size: market.One}}
				}
				if r.IntN(4) > 0 {
					asks = []market.Level{{Price: market.Micros(1+r.IntN(99)) * 10_000, Size: market.One}}
				}
				b.Reset(bids, asks)
				st.Books[tok] = b
			}
			if r.IntN(3) > 0 {
				size := market.Micros(r.IntN(3)) * market.Micros(r.Int64N(int64(500*market.One)))
				st.Positions[tok] = &market.Position{Market: info.Condition, Token: tok, Outcome: market.Outcome(o),
					Size: size, Cost: market.Micros(r.Int64N(int64(size) + 1))}
			}
		}
	}
	return st
}

// TestSampleMatchesEquity: the collector samples equity as Balance + Reserved +
// the exposure and the claims of one pass over the positions; that must be
// market.State.Equity exactly, "held" must be whether any position of an open market
// has shares, and the claims the resolved markets' positions at their payout, on
// random states.
func TestSampleMatchesEquity(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for i := range 20_000 {
		st := randomState(r)
		exp, claims, held := marks(st)
		if got, want := st.Balance+st.Reserved+exp+claims, st.Equity(); got != want {
			t.Fatalf("state %d: sampled equity %s, Equity() %s", i, got, want)
		}
		anyHeld := false
		var sum, won market.Micros
		for tok, p := range st.Positions {
			switch m := st.Markets[p.Market]; {
			case p.Size <= 0:
			case m.Resolved && m.Tokens[m.Winner] == tok:
				won += p.Size
			case !m.Resolved:
				anyHeld = true
				sum += p.Value(st.Mark(tok))
			}
		}
		if held != anyHeld || exp != sum || exposure(st) != sum || claims != won {
			t.Fatalf("state %d: marks gives (%s, %s, %v), want (%s, %s, %v)", i, exp, claims, held, sum, won, anyHeld)
		}
	}
}

package strategy

import (
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestHandlesGiveTheIntentsOfFreshLookups runs every example over a stream in which
// the books and positions appear one by one (a print and a fill before any book, so a
// position is marked at the last trade; the NO book later; a book emptied), once
// keeping the market's handles and once dropping them before every event, and checks
// that every evaluation's intents are equal.
func TestHandlesGiveTheIntentsOfFreshLookups(t *testing.T) {
	const t0 = int64(1_700_000_000_000)
	head := []market.Event{
		{Kind: market.EventTimer, Time: t0},
		{Kind: market.EventLastTrade, Time: t0 + 1, Market: benchCond, Token: benchYes, Price: 420_000, Size: 3 * market.One, Side: market.Buy},
		{Kind: market.EventFill, Time: t0 + 2, Fill: market.Fill{Market: benchCond, Token: benchYes, Side: market.Buy, Price: 420_000, Size: 5 * market.One}},
		{Kind: market.EventTimer, Time: t0 + 3},
		{Kind: market.EventBook, Time: t0 + 4, Market: benchCond, Token: benchNo,
			Bids: []market.Level{{Price: 500_000, Size: 10 * market.One}}, Asks: []market.Level{{Price: 560_000, Size: 10 * market.One}}},
		{Kind: market.EventFill, Time: t0 + 5, Fill: market.Fill{Market: benchCond, Token: benchNo, Side: market.Buy, Price: 500_000, Size: 5 * market.One}},
		{Kind: market.EventBook, Time: t0 + 6, Market: benchCond, Token: benchNo},
		{Kind: market.EventTimer, Time: t0 + 7},
	}
	evs := append(head, randomStream(7, 300)...)
	for _, ex := range []string{"quoter", "arb", "momentum", "meanrev"} {
		t.Run(ex, func(t *testing.T) {
			s, err := Load("../agents/examples/" + ex + "/strategy.yaml")
			if err != nil {
				t.Fatal(err)
			}
			kept, _ := s.NewInstance([]Binding{{Name: "main", Market: benchCond}})
			fresh, _ := s.NewInstance([]Binding{{Name: "main", Market: benchCond}})
			st := newTestState()
			var a, b []market.Intent
			for i := range evs {
				st.Apply(&evs[i])
				for _, m := range fresh.ms {
					m.h = handles{}
				}
				if a, err = kept.Decide(&evs[i], st, a[:0]); err != nil {
					t.Fatal(err)
				}
				if b, err = fresh.Decide(&evs[i], st, b[:0]); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("event %d (%v): kept handles give %+v, fresh lookups %+v", i, evs[i].Kind, a, b)
				}
			}
			if h := kept.ms[0].h; h.book[market.Yes] == nil || h.book[market.No] == nil || h.pos[market.Yes] == nil || h.pos[market.No] == nil {
				t.Fatalf("the handles did not follow the new books and positions: %+v", h)
			}
		})
	}
}

// TestALastTradeMarksAPositionOnAnEmptyBook checks that a strategy that reads no
// last trade still marks a position at one when its token has no book.
func TestALastTradeMarksAPositionOnAnEmptyBook(t *testing.T) {
	s, err := Load("../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.needLast {
		t.Fatal("the quoter reads a last trade: pick a strategy that does not")
	}
	in, _ := s.NewInstance([]Binding{{Name: "main", Market: benchCond}})
	st := newTestState()
	evs := []market.Event{
		{Kind: market.EventLastTrade, Time: 1, Market: benchCond, Token: benchYes, Price: 420_000, Size: market.One, Side: market.Buy},
		{Kind: market.EventFill, Time: 2, Fill: market.Fill{Market: benchCond, Token: benchYes, Side: market.Buy, Price: 400_000, Size: 5 * market.One}},
	}
	for i := range evs {
		st.Apply(&evs[i])
		if _, err := in.Decide(&evs[i], st, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := in.ms[0].yes.UPnL, 5*0.42-5*0.40; got < want-1e-9 || got > want+1e-9 {
		t.Fatalf("yes.upnl = %v, want %v (marked at the last trade)", got, want)
	}
}

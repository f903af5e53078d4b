package market

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

const (
	cond   ConditionID = "0xc0"
	yesTok TokenID     = "101"
	noTok  TokenID     = "102"
)

func testState() *State {
	var s State
	s.Init()
	s.Markets[cond] = &Info{Condition: cond, Tokens: [2]TokenID{yesTok, noTok}, TickSize: 10_000, MinSize: 5 * One, Active: true, AcceptingOrders: true}
	s.Balance = 100 * One
	return &s
}

func TestApply(t *testing.T) {
	buy := Order{ID: "o1", Market: cond, Token: yesTok, Side: Buy, Price: 400_000, Size: 10 * One, Status: StatusLive}
	tests := []struct {
		name   string
		events []Event
		check  func(t *testing.T, s *State)
	}{
		{"a best-first snapshot is copied as it is", []Event{
			{Kind: EventBook, Time: 5, Token: yesTok, Bids: []Level{{450_000, One}, {440_000, 2 * One}}, Asks: []Level{{460_000, 3 * One}}, Hash: "h"},
		}, func(t *testing.T, s *State) {
			b := s.Books[yesTok]
			if !reflect.DeepEqual(b.Bids, []Level{{450_000, One}, {440_000, 2 * One}}) || len(b.Asks) != 1 || b.Time != 5 || b.Hash != "h" || s.Time != 5 {
				t.Fatalf("book %+v, time %d", b, s.Time)
			}
		}},
		{"an unsorted snapshot is sorted and merged", []Event{
			{Kind: EventBook, Token: yesTok, Bids: []Level{{440_000, One}, {450_000, One}, {440_000, One}}, Asks: []Level{{470_000, One}, {460_000, 0}}},
		}, func(t *testing.T, s *State) {
			b := s.Books[yesTok]
			if !reflect.DeepEqual(b.Bids, []Level{{450_000, One}, {440_000, 2 * One}}) || !reflect.DeepEqual(b.Asks, []Level{{470_000, One}}) {
				t.Fatalf("book %+v", b)
			}
		}},
		{"price changes set and remove levels", []Event{
			{Kind: EventBook, Token: yesTok, Bids: []Level{{450_000, One}}, Asks: []Level{{460_000, One}}},
			{Kind: EventPriceChange, Time: 9, Market: cond, Changes: []LevelChange{
				{Token: yesTok, Side: Buy, Price: 455_000, Size: 2 * One},
				{Token: yesTok, Side: Sell, Price: 460_000, Size: 0},
				{Token: noTok, Side: Sell, Price: 550_000, Size: One},
			}},
		}, func(t *testing.T, s *State) {
			y := s.Books[yesTok]
			if bb, _ := y.BestBid(); bb.Price != 455_000 || len(y.Asks) != 0 || y.Time != 9 {
				t.Fatalf("yes book %+v", y)
			}
			if ba, _ := s.Books[noTok].BestAsk(); ba.Price != 550_000 {
				t.Fatalf("no book %+v", s.Books[noTok])
			}
		}},
		{"a print is recorded", []Event{
			{Kind: EventLastTrade, Time: 7, Token: yesTok, Price: 456_000, Size: 3 * One, Side: Sell},
		}, func(t *testing.T, s *State) {
			if got := s.Last[yesTok]; got != (LastTrade{456_000, 3 * One, Sell, 7}) {
				t.Fatalf("last %+v", got)
			}
		}},
		{"a tick size change is found by token", []Event{
			{Kind: EventTickSize, Token: noTok, OldTick: 10_000, NewTick: 1_000},
		}, func(t *testing.T, s *State) {
			if s.Markets[cond].TickSize != 1_000 {
				t.Fatalf("tick %d", s.Markets[cond].TickSize)
			}
		}},
		{"a buy order reserves price times remaining", []Event{
			{Kind: EventOrder, Order: buy, OrderUpdate: OrderPlacement},
		}, func(t *testing.T, s *State) {
			if s.Reserved != 4*One || s.Balance != 96*One || s.Orders["o1"] == nil {
				t.Fatalf("reserved %d balance %d", s.Reserved, s.Balance)
			}
		}},
		{"a cancel releases the reservation", []Event{
			{Kind: EventOrder, Order: buy, OrderUpdate: OrderPlacement},
			{Kind: EventOrder, Order: func() Order { o := buy; o.Status = StatusCanceled; return o }(), OrderUpdate: OrderCancellation},
		}, func(t *testing.T, s *State) {
			if s.Reserved != 0 || s.Balance != 100*One || len(s.Orders) != 0 {
				t.Fatalf("reserved %d balance %d orders %d", s.Reserved, s.Balance, len(s.Orders))
			}
		}},
		{"a sell order reserves no collateral", []Event{
			{Kind: EventOrder, Order: func() Order { o := buy; o.Side = Sell; return o }(), OrderUpdate: OrderPlacement},
		}, func(t *testing.T, s *State) {
			if s.Reserved != 0 || s.Balance != 100*One || len(s.Orders) != 1 {
				t.Fatalf("reserved %d balance %d", s.Reserved, s.Balance)
			}
		}},
		{"a buy filled below its limit costs exactly the fill (fill first)", []Event{
			{Kind: EventOrder, Order: buy, OrderUpdate: OrderPlacement},
			{Kind: EventFill, Fill: Fill{Order: "o1", Market: cond, Token: yesTok, Side: Buy, Price: 380_000, Size: 5 * One, Fee: 10_000}},
			{Kind: EventOrder, Order: func() Order { o := buy; o.Matched = 5 * One; return o }(), OrderUpdate: OrderUpdated},
		}, func(t *testing.T, s *State) {
			// 5 at 0.38 + 0.01 fee = 1.91 paid; 5 left reserved at 0.40 = 2
			if s.Balance != 100*One-1_910_000-2*One || s.Reserved != 2*One {
				t.Fatalf("balance %d reserved %d", s.Balance, s.Reserved)
			}
			if p := s.Positions[yesTok]; p.Size != 5*One || p.Cost != 1_910_000 {
				t.Fatalf("position %+v", p)
			}
		}},
		{"a buy filled below its limit costs exactly the fill (order update first)", []Event{
			{Kind: EventOrder, Order: buy, OrderUpdate: OrderPlacement},
			{Kind: EventOrder, Order: func() Order { o := buy; o.Matched = 10 * One; o.Status = StatusMatched; return o }(), OrderUpdate: OrderUpdated},
			{Kind: EventFill, Fill: Fill{Order: "o1", Market: cond, Token: yesTok, Side: Buy, Price: 380_000, Size: 10 * One}},
		}, func(t *testing.T, s *State) {
			if s.Balance != 100*One-3_800_000 || s.Reserved != 0 || len(s.Orders) != 0 {
				t.Fatalf("balance %d reserved %d orders %d", s.Balance, s.Reserved, len(s.Orders))
			}
		}},
		{"a sell fill pays proceeds minus fee and realizes PnL", []Event{
			{Kind: EventFill, Fill: Fill{Market: cond, Token: yesTok, Side: Buy, Price: 400_000, Size: 10 * One}},
			{Kind: EventFill, Fill: Fill{Market: cond, Token: yesTok, Side: Sell, Price: 500_000, Size: 4 * One, Fee: 20_000}},
		}, func(t *testing.T, s *State) {
			p := s.Positions[yesTok]
			if p.Size != 6*One || p.Realized != 2*One-1_600_000-20_000 || s.Balance != 100*One-4*One+2*One-20_000 {
				t.Fatalf("position %+v balance %d", p, s.Balance)
			}
		}},
		{"a sell of more than is held changes nothing", []Event{
			{Kind: EventFill, Fill: Fill{Market: cond, Token: yesTok, Side: Sell, Price: 500_000, Size: One}},
		}, func(t *testing.T, s *State) {
			if s.Balance != 100*One || s.Positions[yesTok].Size != 0 {
				t.Fatalf("balance %d", s.Balance)
			}
		}},
		{"resolution drops orders; the positions wait for a redeem, marked at their payout", []Event{
			{Kind: EventFill, Fill: Fill{Market: cond, Token: yesTok, Side: Buy, Price: 400_000, Size: 10 * One}},
			{Kind: EventFill, Fill: Fill{Market: cond, Token: noTok, Side: Buy, Price: 500_000, Size: 2 * One}},
			{Kind: EventOrder, Order: buy, OrderUpdate: OrderPlacement},
			{Kind: EventResolved, Time: 99, Market: cond, Winner: yesTok},
		}, func(t *testing.T, s *State) {
			m := s.Markets[cond]
			if !m.Resolved || m.Winner != Yes || m.Tradable() {
				t.Fatalf("market %+v", m)
			}
			// paid 4 + 1; nothing received until the redeem
			if s.Balance != 100*One-5*One || s.Reserved != 0 || len(s.Orders) != 0 {
				t.Fatalf("balance %d reserved %d orders %d", s.Balance, s.Reserved, len(s.Orders))
			}
			if y, n := s.Positions[yesTok], s.Positions[noTok]; y.Size != 10*One || y.Realized != 0 || n.Size != 2*One || n.Realized != 0 {
				t.Fatalf("yes %+v no %+v", y, n)
			}
			if s.Mark(yesTok) != One || s.Mark(noTok) != 0 || s.Equity() != 100*One-5*One+10*One {
				t.Fatalf("marks %d %d, equity %d", s.Mark(yesTok), s.Mark(noTok), s.Equity())
			}
			if pay, held, ok := s.Redeemable(cond); !ok || pay != 10*One || held != 12*One {
				t.Fatalf("redeemable %d of %d (%v)", pay, held, ok)
			}
			// the redeem: 10 winning shares pay 10, the 2 losing ones nothing
			if paid, ok := s.Redeem(cond); !ok || paid != 10*One || s.Balance != 100*One-5*One+10*One {
				t.Fatalf("redeem paid %d (%v), balance %d", paid, ok, s.Balance)
			}
			if y, n := s.Positions[yesTok], s.Positions[noTok]; y.Size != 0 || y.Realized != 6*One || n.Size != 0 || n.Realized != -One {
				t.Fatalf("after the redeem: yes %+v no %+v", y, n)
			}
			if paid, ok := s.Redeem(cond); !ok || paid != 0 {
				t.Fatalf("a second redeem paid %d (%v)", paid, ok)
			}
		}},
		{"no redeem before the resolution", []Event{
			{Kind: EventFill, Fill: Fill{Market: cond, Token: yesTok, Side: Buy, Price: 400_000, Size: 10 * One}},
		}, func(t *testing.T, s *State) {
			if _, ok := s.Redeem(cond); ok || s.Positions[yesTok].Size != 10*One {
				t.Fatal("redeemed an open market")
			}
			if _, _, ok := s.Redeemable(cond); ok {
				t.Fatal("an open market is redeemable")
			}
		}},
		{"a timer only advances time", []Event{{Kind: EventTimer, Time: 1234}}, func(t *testing.T, s *State) {
			if s.Time != 1234 || s.Balance != 100*One {
				t.Fatalf("time %d", s.Time)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testState()
			for i := range tt.events {
				s.Apply(&tt.events[i])
			}
			tt.check(t, s)
		})
	}
}

func TestApplyOnZeroState(t *testing.T) {
	var s State
	s.Apply(&Event{Kind: EventBook, Token: yesTok, Bids: []Level{{One / 2, One}}})
	s.Apply(&Event{Kind: EventResolved, Market: cond, Winner: yesTok}) // unknown market: ignored
	if len(s.Books) != 1 {
		t.Fatal("book not created")
	}
}

// TestApplyIsDeterministic applies one random event stream to two states.
func TestApplyIsDeterministic(t *testing.T) {
	events := randomEvents(rand.New(rand.NewPCG(7, 9)), 3000)
	a, b := testState(), testState()
	for i := range events {
		a.Apply(&events[i])
	}
	for i := range events {
		b.Apply(&events[i])
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same events gave different states")
	}
	if a.Reserved < 0 {
		t.Fatalf("negative reservation %d", a.Reserved)
	}
}

func randomEvents(r *rand.Rand, n int) []Event {
	var out []Event
	for i := 0; i < n; i++ {
		tok := yesTok
		if r.IntN(2) == 0 {
			tok = noTok
		}
		price := Micros(1+r.IntN(99)) * 10_000
		switch r.IntN(5) {
		case 0:
			out = append(out, Event{Kind: EventBook, Time: int64(i), Token: tok, Bids: []Level{{price, Lot}}, Asks: []Level{{price + 10_000, Lot}}})
		case 1:
			out = append(out, Event{Kind: EventPriceChange, Time: int64(i), Changes: []LevelChange{{Token: tok, Side: Side(1 + r.IntN(2)), Price: price, Size: Micros(r.IntN(3)) * Lot}}})
		case 2:
			id := OrderID(rune('a' + r.IntN(5)))
			o := Order{ID: id, Market: cond, Token: tok, Side: Side(1 + r.IntN(2)), Price: price, Size: 10 * Lot, Matched: Micros(r.IntN(11)) * Lot}
			out = append(out, Event{Kind: EventOrder, Time: int64(i), Order: o, OrderUpdate: OrderUpdate(1 + r.IntN(3))})
		case 3:
			out = append(out, Event{Kind: EventFill, Time: int64(i), Fill: Fill{Market: cond, Token: tok, Side: Side(1 + r.IntN(2)), Price: price, Size: Lot}})
		default:
			out = append(out, Event{Kind: EventLastTrade, Time: int64(i), Token: tok, Price: price, Size: Lot, Side: Buy})
		}
	}
	return out
}

func TestApplyBookEventsDoNotAllocate(t *testing.T) {
	s := testState()
	snap := Event{Kind: EventBook, Token: yesTok,
		Bids: []Level{{450_000, One}, {440_000, One}, {430_000, One}},
		Asks: []Level{{460_000, One}, {470_000, One}, {480_000, One}}}
	delta := Event{Kind: EventPriceChange, Market: cond, Changes: []LevelChange{
		{Token: yesTok, Side: Buy, Price: 455_000, Size: One}, {Token: yesTok, Side: Buy, Price: 455_000, Size: 0}}}
	trade := Event{Kind: EventLastTrade, Token: yesTok, Price: 450_000, Size: One, Side: Sell}
	s.Apply(&snap)
	s.Apply(&delta)
	s.Apply(&trade)
	n := testing.AllocsPerRun(500, func() {
		s.Apply(&snap)
		s.Apply(&delta)
		s.Apply(&trade)
	})
	if n != 0 {
		t.Fatalf("Apply allocates %v times per book update", n)
	}
}

func BenchmarkApplyBook(b *testing.B) {
	s := testState()
	snap := Event{Kind: EventBook, Token: yesTok,
		Bids: []Level{{450_000, One}, {440_000, One}, {430_000, One}},
		Asks: []Level{{460_000, One}, {470_000, One}, {480_000, One}}}
	delta := Event{Kind: EventPriceChange, Market: cond, Changes: []LevelChange{{Token: yesTok, Side: Buy, Price: 455_000, Size: One}}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if i%10 == 0 {
			s.Apply(&snap)
		} else {
			delta.Changes[0].Size = Micros(i%3) * One
			s.Apply(&delta)
		}
	}
}

// TestApplyFindsEachTokensBook checks the books Apply remembers (State.recent)
// against a state without them: three tokens in turn (more than it remembers),
// token ids that are equal strings with other data, and a Books map swapped for
// another one between events.
func TestApplyFindsEachTokensBook(t *testing.T) {
	toks := []TokenID{yesTok, noTok, "third"}
	r := rand.New(rand.NewPCG(3, 4))
	s := testState()
	want := map[TokenID]*Book{}
	for i := range 3000 {
		tok := toks[r.IntN(len(toks))]
		if r.IntN(2) == 0 {
			tok = TokenID(string([]byte(tok))) // equal, not the same data
		}
		if i == 1500 {
			s.Books, want = map[TokenID]*Book{}, map[TokenID]*Book{}
		}
		side, price, size := Side(1+r.IntN(2)), Micros(1+r.IntN(99))*10_000, Micros(r.IntN(3))*Lot
		s.Apply(&Event{Kind: EventPriceChange, Time: int64(i), Changes: []LevelChange{{Token: tok, Side: side, Price: price, Size: size}}})
		w := want[tok]
		if w == nil {
			w = &Book{Token: tok}
			want[tok] = w
		}
		w.Set(side, price, size)
		w.Time = int64(i)
		if len(s.Books) != len(want) {
			t.Fatalf("event %d: %d books, want %d", i, len(s.Books), len(want))
		}
		for k, b := range want {
			if !reflect.DeepEqual(s.Books[k].Bids, b.Bids) || !reflect.DeepEqual(s.Books[k].Asks, b.Asks) || s.Books[k].Time != b.Time {
				t.Fatalf("event %d: book of %s differs", i, k)
			}
		}
	}
}

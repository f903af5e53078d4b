package market

import "testing"

func TestMarkValuesLikeTheLossLimits(t *testing.T) {
	m := &Info{Condition: "c", Tokens: [2]TokenID{"y", "n"}}
	st := func() *State {
		s := &State{}
		s.Init()
		s.Markets["c"] = m
		s.Balance, s.Reserved = 100*One, 5*One
		s.Positions["y"] = &Position{Market: "c", Token: "y", Size: 10 * One, Cost: 4 * One, Realized: One / 2}
		return s
	}
	tests := []struct {
		name  string
		books map[TokenID]*Book
		mark  Micros
	}{
		{"its own mid", map[TokenID]*Book{"y": {Bids: []Level{{Price: 450_000, Size: One}}, Asks: []Level{{Price: 470_000, Size: One}}}}, 460_000},
		{"the complement's mid mirrored", map[TokenID]*Book{"n": {Bids: []Level{{Price: 500_000, Size: One}}, Asks: []Level{{Price: 560_000, Size: One}}}}, 470_000},
		{"the average cost without a two-sided book", map[TokenID]*Book{"y": {Bids: []Level{{Price: 450_000, Size: One}}}}, 400_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := st()
			for k, b := range tc.books {
				s.Books[k] = b
			}
			if got := s.Mark("y"); got != tc.mark {
				t.Fatalf("Mark = %s, want %s", got, tc.mark)
			}
			value, _ := Notional(tc.mark, 10*One)
			if got, want := s.Equity(), 105*One+value; got != want {
				t.Fatalf("Equity = %s, want %s", got, want)
			}
			r, u := s.PnL()
			if r != One/2 || u != value-4*One {
				t.Fatalf("PnL = %s, %s", r, u)
			}
		})
	}
}

func TestTakerFeeIsTheServiceFormula(t *testing.T) {
	tests := []struct {
		name              string
		bps               uint32
		price, size, want Micros
	}{
		{"largest at one half", 100, 500_000, 10 * One, 50_000},
		{"symmetric: 0.9 pays like 0.1", 100, 900_000, 10 * One, 10_000},
		{"one lot", 100, 500_000, Lot, 50},
		{"rounded down", 1, 100, Lot, 0},
		{"no fee rate", 0, 500_000, 10 * One, 0},
		{"out of range price", 100, One, 10 * One, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TakerFee(tc.bps, tc.price, tc.size); got != tc.want {
				t.Fatalf("TakerFee = %d, want %d", got, tc.want)
			}
		})
	}
	// The bound covers every fill at or below the limit.
	for _, p := range []Micros{10_000, 300_000, 500_000, 700_000, 990_000} {
		if b := TakerFeeBound(250, 700_000, 10*One); TakerFee(250, min(p, 700_000), 10*One) > b {
			t.Fatalf("fee at %s above the bound %s", p, b)
		}
	}
}

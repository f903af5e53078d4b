package market

import "testing"

func TestPositionAccounting(t *testing.T) {
	var p Position
	p.Buy(400_000, 10*One, 0)       // cost 4
	p.Buy(600_000, 10*One, 100_000) // cost 6 + 0.1 fee
	if p.Size != 20*One || p.Cost != 10_100_000 {
		t.Fatalf("size %d cost %d", p.Size, p.Cost)
	}
	if avg := p.AvgPrice(); avg != 505_000 {
		t.Fatalf("avg %d", avg)
	}
	r, ok := p.Sell(700_000, 5*One, 0) // proceeds 3.5, removed 2.525
	if !ok || r != 975_000 {
		t.Fatalf("realized %d %v", r, ok)
	}
	if _, ok := p.Sell(One, 16*One, 0); ok {
		t.Fatal("sold more than held")
	}
	// settle the rest as winner: 15 shares pay 15, remaining cost 7.575
	if r := p.Settle(true); r != 15*One-7_575_000 {
		t.Fatalf("settle %d", r)
	}
	if p.Size != 0 || p.Cost != 0 {
		t.Fatalf("not flat: %+v", p)
	}
	if p.Realized != 975_000+15*One-7_575_000 {
		t.Fatalf("realized total %d", p.Realized)
	}
}

// TestPositionNoResidue checks that closing in odd fractions leaves no cost behind.
func TestPositionNoResidue(t *testing.T) {
	var p Position
	p.Buy(333_300, 3*One, 1)
	var total Micros
	for i := 0; i < 3; i++ {
		r, ok := p.Sell(500_000, One, 0)
		if !ok {
			t.Fatal("sell failed")
		}
		total += r
	}
	if p.Cost != 0 || total != 3*500_000-(999_900+1) {
		t.Fatalf("cost residue %d, total %d", p.Cost, total)
	}
}

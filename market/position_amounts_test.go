package market

import (
	"math/rand/v2"
	"testing"
)

// BuyCost and SellProceeds are Buy and Sell with the notional given as an amount:
// on exact prices and lot sizes both paths must agree field for field.
func TestAmountAccountingAgreesWithPriceAccounting(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var a, b Position
		for range 6 {
			price := Micros(r.IntN(9_999)+1) * 100
			size := Micros(r.IntN(10_000)+1) * Lot
			fee := Micros(r.IntN(5_000))
			if r.IntN(2) == 0 || a.Size == 0 {
				n, _ := Notional(price, size)
				if a.Buy(price, size, fee) != b.BuyCost(size, n, fee) {
					t.Fatalf("case %d: Buy and BuyCost disagree on validity", i)
				}
				continue
			}
			size = min(size, a.Size)
			n, _ := Notional(price, size)
			ra, oka := a.Sell(price, size, fee)
			rb, okb := b.SellProceeds(size, n, fee)
			if ra != rb || oka != okb {
				t.Fatalf("case %d: realized %v/%v ok %v/%v", i, ra, rb, oka, okb)
			}
		}
		if a != b {
			t.Fatalf("case %d: %+v != %+v", i, a, b)
		}
	}
}

func TestAmountAccountingRefusesInvalidInput(t *testing.T) {
	p := Position{Size: 10 * One, Cost: 5 * One}
	cases := []struct {
		name string
		ok   bool
	}{
		{"buy zero size", p.BuyCost(0, 1, 0)},
		{"buy negative notional", p.BuyCost(One, -1, 0)},
		{"buy negative fee", p.BuyCost(One, 1, -1)},
	}
	for _, c := range cases {
		if c.ok {
			t.Fatalf("%s accepted", c.name)
		}
	}
	for _, c := range []struct {
		name                 string
		size, proceeds, fees Micros
	}{
		{"sell zero", 0, 1, 0}, {"sell too much", 11 * One, 1, 0}, {"negative proceeds", One, -1, 0}, {"negative fee", One, 1, -1},
	} {
		if _, ok := p.SellProceeds(c.size, c.proceeds, c.fees); ok {
			t.Fatalf("%s accepted", c.name)
		}
	}
	if p != (Position{Size: 10 * One, Cost: 5 * One}) {
		t.Fatalf("a refused operation changed the position: %+v", p)
	}
	r, ok := p.SellProceeds(10*One, 7*One, One)
	if !ok || r != One || p.Size != 0 || p.Cost != 0 || p.Realized != One {
		t.Fatalf("closing sale: %v %v %+v", r, ok, p)
	}
}

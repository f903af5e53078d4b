package exchange

import (
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestSwap settles a negotiated trade: tokens one way, collateral the other, in
// one command; every refusal leaves the state unchanged (harness.fails) and the
// ledger's invariants hold after each command (harness.do).
func TestSwap(t *testing.T) {
	h := newHarness(t)
	h.ok(Command{Kind: Split, Owner: bob, Market: cond, Amount: d("10")})
	evs := h.ok(Command{Kind: Swap, Owner: bob, To: alice, Token: yes, Size: d("4"), Amount: d("2.6")})
	sw := find(evs, Swapped)
	if len(sw) != 1 || sw[0].Trade != 1 || sw[0].Owner != bob || sw[0].To != alice || sw[0].Market != cond || sw[0].Token != yes ||
		sw[0].Outcome != market.Yes || sw[0].Size != d("4") || sw[0].Amount != d("2.6") || sw[0].Price != d("0.65") {
		t.Fatalf("swapped %+v", sw)
	}
	if got, _ := h.e.TokenBalance(alice, yes); got != d("4") {
		t.Fatalf("alice YES %s", got)
	}
	if got, _ := h.e.TokenBalance(bob, yes); got != d("6") {
		t.Fatalf("bob YES %s", got)
	}
	if got, _ := h.e.Collateral(alice); got != d("997.4") {
		t.Fatalf("alice collateral %s", got)
	}
	if got, _ := h.e.Collateral(bob); got != d("992.6") {
		t.Fatalf("bob collateral %s", got)
	}
	// Tokens reserved by an order do not move.
	h.ok(Command{Kind: Place, Order: "s1", Owner: bob, Token: yes, Side: market.Sell, Price: d("0.9"), Size: d("5"), FeeRateBps: 0})
	h.fails(Command{Kind: Swap, Owner: bob, To: alice, Token: yes, Size: d("2"), Amount: d("1")}, market.CodeInsufficientBalance, "")
	h.fails(Command{Kind: Swap, Owner: carol, To: alice, Token: no, Size: d("1"), Amount: d("1")}, market.CodeInsufficientBalance, "")
	h.fails(Command{Kind: Swap, Owner: bob, To: alice, Token: no, Size: d("1"), Amount: d("1001")}, market.CodeInsufficientBalance, "")
	h.fails(Command{Kind: Swap, Owner: bob, To: bob, Token: no, Size: d("1"), Amount: d("1")}, market.CodeBadRequest, "")
	h.fails(Command{Kind: Swap, To: alice, Token: no, Size: d("1"), Amount: d("1")}, market.CodeBadRequest, "")
	h.fails(Command{Kind: Swap, Owner: bob, To: alice, Token: "nope", Size: d("1"), Amount: d("1")}, market.CodeMarketNotFound, "")
	h.fails(Command{Kind: Swap, Owner: bob, To: alice, Token: no, Size: 0, Amount: d("1")}, market.CodeInvalidAmount, "")
	h.fails(Command{Kind: Swap, Owner: bob, To: alice, Token: no, Size: d("1"), Amount: -1}, market.CodeInvalidAmount, "")
	// A close-only buyer may not open; a close-only seller may sell.
	h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeCloseOnly})
	h.fails(Command{Kind: Swap, Owner: bob, To: alice, Token: no, Size: d("1"), Amount: d("0.5")}, market.CodeAddressCloseOnly, "")
	// Refusals take no trade number: the next swap is trade 2.
	if sw := find(h.ok(Command{Kind: Swap, Owner: alice, To: carol, Token: yes, Size: d("1"), Amount: d("0.5")}), Swapped); len(sw) != 1 || sw[0].Trade != 2 {
		t.Fatalf("second swap %+v", sw)
	}
	h.ok(Command{Kind: SetAccountMode, Owner: bob, Mode: market.ModeBanned})
	h.fails(Command{Kind: Swap, Owner: bob, To: carol, Token: no, Size: d("1"), Amount: d("0.5")}, market.CodeAddressBanned, "")
	h.ok(Command{Kind: Resolve, Market: cond, Winner: market.Yes})
	h.fails(Command{Kind: Swap, Owner: carol, To: alice, Token: yes, Size: d("1"), Amount: d("0.5")}, market.CodeMarketResolved, "")
}

// TestSwapConserves: random swaps between three accounts, with splits and
// orders in between, keep the ledger's invariants (Check: collateral and
// tokens conserved, nothing negative) and the totals of collateral and of each
// token unchanged by the swaps themselves.
func TestSwapConserves(t *testing.T) {
	h := newHarness(t)
	r := rand.New(rand.NewPCG(1, 2))
	owners := []market.Address{alice, bob, carol}
	for _, a := range owners {
		h.ok(Command{Kind: Split, Owner: a, Market: cond, Amount: d("100")})
	}
	total := func() (c, y, n market.Micros) {
		for _, a := range owners {
			ca, cr := h.e.Collateral(a)
			ya, yr := h.e.TokenBalance(a, yes)
			na, nr := h.e.TokenBalance(a, no)
			c, y, n = c+ca+cr, y+ya+yr, n+na+nr
		}
		return
	}
	c0, y0, n0 := total()
	ok := 0
	for i := range 400 {
		s, b := owners[r.IntN(3)], owners[r.IntN(3)]
		tok := []market.TokenID{yes, no}[r.IntN(2)]
		c := Command{Kind: Swap, Owner: s, To: b, Token: tok, Size: market.Micros(1 + r.IntN(30_000_000)), Amount: market.Micros(1 + r.IntN(30_000_000))}
		if i%10 == 0 {
			h.do(Command{Kind: Place, Order: market.OrderID("o" + string(rune('a'+i/10))), Owner: s, Token: tok, Side: market.Sell,
				Price: d("0.99"), Size: d("5"), FeeRateBps: 0})
		}
		if _, err := h.do(c); err == nil {
			ok++
		}
	}
	if c1, y1, n1 := total(); c1 != c0 || y1 != y0 || n1 != n0 {
		t.Fatalf("totals moved: collateral %s→%s, YES %s→%s, NO %s→%s", c0, c1, y0, y1, n0, n1)
	}
	if ok < 100 {
		t.Fatalf("only %d of 400 swaps applied", ok)
	}
}

package market

import "testing"

// TestApplyReusesRemovedOrders checks that placing and cancelling orders in a
// steady state allocates nothing for the orders (removed ones are reused), and that
// a reused order carries nothing of its previous life.
func TestApplyReusesRemovedOrders(t *testing.T) {
	s := testState()
	ids := []OrderID{"0xa", "0xb"}
	place := func(id OrderID, size Micros) {
		s.Apply(&Event{Kind: EventOrder, OrderUpdate: OrderPlacement, Order: Order{ID: id, Token: "tY", Side: Buy,
			Price: One / 2, Size: size, Status: StatusLive}})
	}
	cancel := func(id OrderID) {
		s.Apply(&Event{Kind: EventOrder, OrderUpdate: OrderCancellation, Order: Order{ID: id, Token: "tY", Status: StatusCanceled}})
	}
	place(ids[0], 10*One)
	s.Apply(&Event{Kind: EventOrder, OrderUpdate: OrderUpdate(0), Order: Order{ID: ids[0], Token: "tY", Side: Buy,
		Price: One / 2, Size: 10 * One, Matched: 4 * One, Status: StatusLive}})
	cancel(ids[0])
	balance := s.Balance
	allocs := testing.AllocsPerRun(100, func() {
		place(ids[1], 5*One)
		cancel(ids[1])
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per placement and cancel, want 0", allocs)
	}
	place(ids[0], 3*One)
	if o := s.Orders[ids[0]]; o.Matched != 0 || o.Size != 3*One {
		t.Fatalf("a reused order kept its past: %+v", *o)
	}
	if s.Balance != balance-3*One/2 || s.Reserved != 3*One/2 {
		t.Fatalf("balance %v reserved %v", s.Balance, s.Reserved)
	}
}

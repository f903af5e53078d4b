package exchange

import (
	"slices"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// asks puts two YES asks on the book: alice 10 at 0.5, bob 10 at 0.55.
func asks(h *harness) (market.OrderID, market.OrderID) {
	h.split(alice, "10")
	h.split(bob, "10")
	return h.place(alice, yes, market.Sell, "0.5", "10"), h.place(bob, yes, market.Sell, "0.55", "10")
}

// TestTimeInForce checks FOK, FAK, post-only and GTD.
func TestTimeInForce(t *testing.T) {
	t.Run("FOK fills completely across levels", func(t *testing.T) {
		h := newHarness(t)
		asks(h)
		c := h.order(carol, yes, market.Buy, "0.55", "20")
		c.Type = market.FOK
		evs := h.ok(c)
		tr := find(evs, TradeExecuted)
		if len(tr) != 1 || tr[0].Size != d("20") || tr[0].Status != market.StatusMatched || len(find(evs, OrderFilled)) != 2 {
			t.Fatalf("events %v", kinds(evs))
		}
		h.wantColl(carol, "989.5", "0")
		h.wantStatus(c.Order, market.StatusMatched)
	})
	t.Run("FOK that cannot fill completely is rejected and changes nothing", func(t *testing.T) {
		h := newHarness(t)
		asks(h)
		c := h.order(carol, yes, market.Buy, "0.55", "20.01")
		c.Type = market.FOK
		h.fails(c, market.CodeFOKNotFilled, "order couldn't be fully filled. FOK orders are fully filled or killed.")
	})
	t.Run("FOK only counts liquidity within its limit", func(t *testing.T) {
		h := newHarness(t)
		asks(h)
		c := h.order(carol, yes, market.Buy, "0.54", "15")
		c.Type = market.FOK
		h.fails(c, market.CodeFOKNotFilled, "")
	})
	t.Run("FAK fills what it can and cancels the rest", func(t *testing.T) {
		h := newHarness(t)
		asks(h)
		c := h.order(carol, yes, market.Buy, "0.55", "25")
		c.Type = market.FAK
		evs := h.ok(c)
		k := kinds(evs)
		if !slices.Equal(k[:5], []EventKind{OrderAccepted, OrderFilled, OrderFilled, TradeExecuted, OrderCancelled}) {
			t.Fatalf("events %v", k)
		}
		cx := find(evs, OrderCancelled)[0]
		if cx.Reason != ReasonUnfilled || cx.Remaining != d("5") || cx.Matched != d("20") {
			t.Fatalf("cancel %+v", cx)
		}
		h.wantColl(carol, "989.5", "0")
		h.wantStatus(c.Order, market.StatusCanceled)
		h.wantLevels(yes, market.Sell)
	})
	t.Run("FAK with nothing to match is rejected", func(t *testing.T) {
		h := newHarness(t)
		c := h.order(carol, yes, market.Buy, "0.55", "5")
		c.Type = market.FAK
		h.fails(c, market.CodeFAKNoMatch, "no orders found to match with FAK order.")
	})
	t.Run("FAK whose only counterparties are its owner's is rejected", func(t *testing.T) {
		h := newHarness(t)
		h.split(carol, "10")
		h.place(carol, yes, market.Sell, "0.5", "10")
		c := h.order(carol, yes, market.Buy, "0.55", "5")
		c.Type = market.FAK
		h.fails(c, market.CodeFAKNoMatch, "")
	})
	t.Run("FOK and FAK are exempt from the resting minimum size", func(t *testing.T) {
		h := newHarness(t)
		asks(h)
		c := h.order(carol, yes, market.Buy, "0.5", "0.5")
		c.Type = market.FAK
		h.ok(c)
		h.wantTokens(carol, yes, "0.5", "0")
	})
	t.Run("post-only that crosses is rejected", func(t *testing.T) {
		h := newHarness(t)
		asks(h)
		c := h.order(carol, yes, market.Buy, "0.5", "5")
		c.PostOnly = true
		h.fails(c, market.CodePostOnlyCrosses, "invalid post-only order: order crosses book")
	})
	t.Run("post-only that does not cross rests", func(t *testing.T) {
		h := newHarness(t)
		asks(h)
		c := h.order(carol, yes, market.Buy, "0.49", "5")
		c.PostOnly = true
		h.ok(c)
		h.wantLevels(yes, market.Buy, "0.49x5")
	})
	t.Run("GTD is live through its expiration second and expires after it", func(t *testing.T) {
		h := newHarness(t)
		exp := h.now/1000 + 60
		c := h.order(alice, yes, market.Buy, "0.4", "10")
		c.Type, c.Expiration = market.GTD, exp
		h.ok(c)
		h.wantColl(alice, "996", "4")
		if evs := h.ok(Command{Kind: AdvanceTime, Time: exp * 1000}); len(evs) != 0 {
			t.Fatalf("events at the expiration instant: %v", kinds(evs))
		}
		evs := h.ok(Command{Kind: AdvanceTime, Time: exp*1000 + 1})
		if k := kinds(evs); !slices.Equal(k, []EventKind{OrderExpired, BookChanged, BalanceChanged}) {
			t.Fatalf("events %v", k)
		}
		if ev := evs[0]; ev.Status != market.StatusExpired || ev.Reason != ReasonExpired || ev.Order != c.Order {
			t.Fatalf("expiry %+v", ev)
		}
		h.wantColl(alice, "1000", "0")
		h.wantStatus(c.Order, market.StatusExpired)
	})
	t.Run("any command's time expires due orders before the command", func(t *testing.T) {
		h := newHarness(t)
		exp := h.now/1000 + 60
		c := h.order(alice, yes, market.Buy, "0.4", "10")
		c.Type, c.Expiration = market.GTD, exp
		h.ok(c)
		evs := h.ok(Command{Kind: Withdraw, Owner: alice, Amount: d("1000"), Time: (exp + 1) * 1000})
		if k := kinds(evs); !slices.Equal(k, []EventKind{OrderExpired, BookChanged, BalanceChanged, Withdrawn, BalanceChanged}) {
			t.Fatalf("events %v", k)
		}
	})
	t.Run("expirations come in expiration then acceptance order", func(t *testing.T) {
		h := newHarness(t)
		base := h.now / 1000
		var ids []market.OrderID
		for _, off := range []int64{90, 30, 60, 30} {
			c := h.order(alice, yes, market.Buy, "0.4", "1")
			c.Type, c.Expiration = market.GTD, base+off
			h.ok(c)
			ids = append(ids, c.Order)
		}
		evs := h.ok(Command{Kind: AdvanceTime, Time: (base + 100) * 1000})
		var got []market.OrderID
		for _, ev := range find(evs, OrderExpired) {
			got = append(got, ev.Order)
		}
		if want := []market.OrderID{ids[1], ids[3], ids[2], ids[0]}; !slices.Equal(got, want) {
			t.Fatalf("expired %v, want %v", got, want)
		}
	})
	t.Run("a cancelled GTD order leaves the expiry queue", func(t *testing.T) {
		h := newHarness(t)
		c := h.order(alice, yes, market.Buy, "0.4", "10")
		c.Type, c.Expiration = market.GTD, h.now/1000+60
		h.ok(c)
		h.ok(Command{Kind: Cancel, Order: c.Order, Owner: alice})
		if evs := h.ok(Command{Kind: AdvanceTime, Time: h.now + 3_600_000}); len(evs) != 0 {
			t.Fatalf("events %v", kinds(evs))
		}
	})
}

// TestCancel checks cancelling one order.
func TestCancel(t *testing.T) {
	t.Run("the owner's cancel releases the reservation and clears the level", func(t *testing.T) {
		h := newHarness(t)
		id := h.place(alice, yes, market.Buy, "0.4", "10")
		evs := h.ok(Command{Kind: Cancel, Order: id, Owner: alice})
		if k := kinds(evs); !slices.Equal(k, []EventKind{OrderCancelled, BookChanged, BalanceChanged}) {
			t.Fatalf("events %v", k)
		}
		if evs[0].Reason != ReasonOwner || evs[0].Status != market.StatusCanceled || evs[0].Remaining != d("10") {
			t.Fatalf("cancel %+v", evs[0])
		}
		if evs[1].Size != 0 || evs[1].Price != d("0.4") || evs[1].BestBid != 0 {
			t.Fatalf("book %+v", evs[1])
		}
		h.wantColl(alice, "1000", "0")
		h.wantStatus(id, market.StatusCanceled)
	})
	t.Run("the venue cancels any order with the zero owner", func(t *testing.T) {
		h := newHarness(t)
		id := h.place(alice, yes, market.Buy, "0.4", "10")
		evs := h.ok(Command{Kind: Cancel, Order: id})
		if evs[0].Reason != ReasonVenue {
			t.Fatalf("reason %v", evs[0].Reason)
		}
	})
	t.Run("another owner's order is unknown", func(t *testing.T) {
		h := newHarness(t)
		id := h.place(alice, yes, market.Buy, "0.4", "10")
		h.fails(Command{Kind: Cancel, Order: id, Owner: bob}, market.CodeUnknownOrder, "order not found")
	})
	t.Run("an unknown order is unknown", func(t *testing.T) {
		h := newHarness(t)
		h.fails(Command{Kind: Cancel, Order: "nope", Owner: bob}, market.CodeUnknownOrder, "order not found")
	})
	t.Run("an empty order id is invalid", func(t *testing.T) {
		h := newHarness(t)
		h.fails(Command{Kind: Cancel, Owner: bob}, market.CodeInvalidOrderID, "Invalid orderID")
	})
	t.Run("a cancelled order is already canceled", func(t *testing.T) {
		h := newHarness(t)
		id := h.place(alice, yes, market.Buy, "0.4", "10")
		h.ok(Command{Kind: Cancel, Order: id, Owner: alice})
		h.fails(Command{Kind: Cancel, Order: id, Owner: alice}, market.CodeAlreadyCanceled, "the order is already canceled")
	})
	t.Run("a filled order is already matched", func(t *testing.T) {
		h := newHarness(t)
		a, _ := asks(h)
		h.ok(h.order(carol, yes, market.Buy, "0.5", "10"))
		h.fails(Command{Kind: Cancel, Order: a, Owner: alice}, market.CodeAlreadyMatchedOrCxl, "already canceled or matched")
	})
	t.Run("a partially filled order cancels its remaining size", func(t *testing.T) {
		h := newHarness(t)
		a, _ := asks(h)
		h.ok(h.order(carol, yes, market.Buy, "0.5", "4"))
		evs := h.ok(Command{Kind: Cancel, Order: a, Owner: alice})
		if evs[0].Remaining != d("6") || evs[0].Matched != d("4") {
			t.Fatalf("cancel %+v", evs[0])
		}
		h.wantTokens(alice, yes, "6", "0")
	})
}

// TestCancelAll checks cancelling by owner, market and token.
func TestCancelAll(t *testing.T) {
	setup := func(t *testing.T) (*harness, map[string]market.OrderID) {
		h := newHarness(t)
		h.ok(Command{Kind: CreateMarket, Market: cond2, Spec: spec(yes2, no2, "0.01")})
		ids := map[string]market.OrderID{
			"alice yes":  h.place(alice, yes, market.Buy, "0.4", "1"),
			"alice no":   h.place(alice, no, market.Buy, "0.4", "1"),
			"alice yes2": h.place(alice, yes2, market.Buy, "0.4", "1"),
			"bob yes":    h.place(bob, yes, market.Buy, "0.4", "1"),
			"bob yes2":   h.place(bob, yes2, market.Buy, "0.4", "1"),
		}
		return h, ids
	}
	tests := []struct {
		name      string
		cmd       Command
		cancelled []string
		reason    Reason
	}{
		{"by owner: all of the owner's orders, in acceptance order", Command{Owner: alice}, []string{"alice yes", "alice no", "alice yes2"}, ReasonOwner},
		{"by owner and market", Command{Owner: alice, Market: cond}, []string{"alice yes", "alice no"}, ReasonOwner},
		{"by owner and token", Command{Owner: alice, Token: yes}, []string{"alice yes"}, ReasonOwner},
		{"by market, for the venue", Command{Market: cond2}, []string{"alice yes2", "bob yes2"}, ReasonVenue},
		{"by token, for the venue", Command{Token: yes}, []string{"alice yes", "bob yes"}, ReasonVenue},
		{"everything, for the venue", Command{}, []string{"alice yes", "alice no", "bob yes", "alice yes2", "bob yes2"}, ReasonVenue},
		{"an unknown owner cancels nothing", Command{Owner: dave}, nil, 0},
		{"an unknown market cancels nothing", Command{Owner: alice, Market: "0xnone"}, nil, 0},
		{"a token of another market cancels nothing", Command{Owner: alice, Market: cond, Token: yes2}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ids := setup(t)
			tt.cmd.Kind = CancelAll
			evs := h.ok(tt.cmd)
			var got []market.OrderID
			for _, ev := range find(evs, OrderCancelled) {
				if ev.Reason != tt.reason {
					t.Fatalf("reason %v, want %v", ev.Reason, tt.reason)
				}
				got = append(got, ev.Order)
			}
			var want []market.OrderID
			for _, n := range tt.cancelled {
				want = append(want, ids[n])
			}
			if !slices.Equal(got, want) {
				t.Fatalf("cancelled %v, want %v", got, want)
			}
		})
	}
}

// TestSelfTradePrevention checks the rule: a taker meeting a resting order of its own
// account cancels that resting order and continues matching.
func TestSelfTradePrevention(t *testing.T) {
	t.Run("the taker's own resting order is cancelled and matching continues", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.split(bob, "10")
		own := h.place(alice, yes, market.Sell, "0.5", "10")
		other := h.place(bob, yes, market.Sell, "0.55", "10")
		evs := h.ok(h.order(alice, yes, market.Buy, "0.55", "10"))
		k := kinds(evs)
		if !slices.Equal(k[:4], []EventKind{OrderAccepted, OrderCancelled, OrderFilled, TradeExecuted}) {
			t.Fatalf("events %v", k)
		}
		if evs[1].Order != own || evs[1].Reason != ReasonSelfTrade || evs[2].Order != other {
			t.Fatalf("events %+v", evs[:3])
		}
		h.wantStatus(own, market.StatusCanceled)
		h.wantTokens(alice, yes, "20", "0")
	})
	t.Run("self-trade prevention applies to mints too", func(t *testing.T) {
		h := newHarness(t)
		own := h.place(alice, no, market.Buy, "0.5", "10") // YES ask at 0.5
		evs := h.ok(h.order(alice, yes, market.Buy, "0.5", "10"))
		if k := kinds(evs); !slices.Equal(k[:3], []EventKind{OrderAccepted, OrderCancelled, OrderRested}) {
			t.Fatalf("events %v", k)
		}
		h.wantStatus(own, market.StatusCanceled)
		h.wantLevels(yes, market.Buy, "0.5x10")
		h.wantLevels(yes, market.Sell)
		if h.e.Totals().Locked != 0 {
			t.Fatal("a self-trade minted a set")
		}
	})
	t.Run("FOK counts no own liquidity", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.split(bob, "10")
		h.place(alice, yes, market.Sell, "0.5", "10")
		h.place(bob, yes, market.Sell, "0.5", "5")
		c := h.order(alice, yes, market.Buy, "0.5", "10")
		c.Type = market.FOK
		h.fails(c, market.CodeFOKNotFilled, "")
	})
}

// TestNonce checks the exchange nonce rule: orders carry the owner's current nonce, and
// IncrementNonce invalidates (cancels) every open order of the owner.
func TestNonce(t *testing.T) {
	h := newHarness(t)
	id := h.place(alice, yes, market.Buy, "0.4", "10")
	evs := h.ok(Command{Kind: IncrementNonce, Owner: alice})
	if k := kinds(evs); !slices.Equal(k, []EventKind{OrderCancelled, NonceIncremented, BookChanged, BalanceChanged}) {
		t.Fatalf("events %v", k)
	}
	if evs[0].Reason != ReasonNonce || evs[1].Nonce != 1 || h.e.Nonce(alice) != 1 {
		t.Fatalf("events %+v", evs[:2])
	}
	h.wantStatus(id, market.StatusCanceled)
	h.fails(h.order(alice, yes, market.Buy, "0.4", "10"), market.CodeInvalidNonce, "invalid nonce")
	c := h.order(alice, yes, market.Buy, "0.4", "10")
	c.Nonce = 1
	h.ok(c)
}

// TestAccountModes checks normal, close-only and banned.
func TestAccountModes(t *testing.T) {
	banned := "'" + alice.String() + "' address banned"
	closeOnly := "'" + alice.String() + "' address in closed only mode"
	t.Run("a banned account cannot place orders", func(t *testing.T) {
		h := newHarness(t)
		h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeBanned})
		h.fails(h.order(alice, yes, market.Buy, "0.4", "10"), market.CodeAddressBanned, banned)
		h.fails(Command{Kind: Split, Owner: alice, Market: cond, Amount: d("1")}, market.CodeAddressBanned, banned)
	})
	t.Run("banning cancels every open order", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		b := h.place(alice, yes, market.Buy, "0.4", "10")
		s := h.place(alice, no, market.Sell, "0.7", "10")
		evs := h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeBanned})
		if c := find(evs, OrderCancelled); len(c) != 2 || c[0].Reason != ReasonMode {
			t.Fatalf("events %v", kinds(evs))
		}
		h.wantStatus(b, market.StatusCanceled)
		h.wantStatus(s, market.StatusCanceled)
		if h.e.Mode(alice) != market.ModeBanned {
			t.Fatal("mode not set")
		}
	})
	t.Run("a banned account may still cancel, merge and withdraw", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeBanned})
		h.ok(Command{Kind: CancelAll, Owner: alice})
		h.ok(Command{Kind: Merge, Owner: alice, Market: cond, Amount: d("10")})
		h.ok(Command{Kind: Withdraw, Owner: alice, Amount: d("1000")})
	})
	t.Run("close-only rejects buys", func(t *testing.T) {
		h := newHarness(t)
		h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeCloseOnly})
		h.fails(h.order(alice, yes, market.Buy, "0.4", "10"), market.CodeAddressCloseOnly, closeOnly)
		h.fails(h.order(alice, no, market.Buy, "0.4", "10"), market.CodeAddressCloseOnly, closeOnly)
		h.fails(Command{Kind: Split, Owner: alice, Market: cond, Amount: d("1")}, market.CodeAddressCloseOnly, closeOnly)
	})
	t.Run("close-only allows selling held tokens up to the unreserved balance", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeCloseOnly})
		h.place(alice, yes, market.Sell, "0.6", "6")
		h.place(alice, yes, market.Sell, "0.7", "4")
		h.fails(h.order(alice, yes, market.Sell, "0.8", "1"), market.CodeInsufficientBalance, "")
		h.place(alice, no, market.Sell, "0.6", "10")
	})
	t.Run("becoming close-only cancels buys and keeps sells", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		b := h.place(alice, yes, market.Buy, "0.4", "10")
		s := h.place(alice, yes, market.Sell, "0.7", "10")
		h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeCloseOnly})
		h.wantStatus(b, market.StatusCanceled)
		h.wantStatus(s, market.StatusLive)
	})
	t.Run("back to normal, the account trades again", func(t *testing.T) {
		h := newHarness(t)
		h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeBanned})
		h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: market.ModeNormal})
		h.place(alice, yes, market.Buy, "0.4", "10")
	})
	t.Run("an unknown mode is refused", func(t *testing.T) {
		h := newHarness(t)
		h.fails(Command{Kind: SetAccountMode, Owner: alice, Mode: 7}, market.CodeBadRequest, "invalid account mode")
	})
}

package exchange

import (
	"slices"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestOrderValidation checks the rules a Place must pass before it is accepted, each
// with its exact catalog message, and that a rejection changes no state.
func TestOrderValidation(t *testing.T) {
	tests := []struct {
		name string
		edit func(h *harness, c *Command)
		code market.Code
		msg  string
	}{
		{"price must be on the market's tick", func(h *harness, c *Command) { c.Price = d("0.555") },
			market.CodeTickSize, "order o1 is invalid. Price (0.555) breaks minimum tick size rule: 0.01"},
		{"price must be above zero", func(h *harness, c *Command) { c.Price = 0 },
			market.CodeTickSize, "order o1 is invalid. Price (0) breaks minimum tick size rule: 0.01"},
		{"price must be below one", func(h *harness, c *Command) { c.Price = market.One },
			market.CodeTickSize, "order o1 is invalid. Price (1) breaks minimum tick size rule: 0.01"},
		{"resting size must reach the market minimum", func(h *harness, c *Command) { c.Size = d("0.5") },
			market.CodeMinSize, "order o1 is invalid. Size (0.5) lower than the minimum: 1"},
		{"size must be a whole number of lots", func(h *harness, c *Command) { c.Size = d("1.005") },
			market.CodeAmountNotExact, "amount 1.005 is not exactly representable"},
		{"size must be positive", func(h *harness, c *Command) { c.Size = 0 },
			market.CodeInvalidAmount, "invalid amount"},
		{"size must be within MaxMicros", func(h *harness, c *Command) { c.Size = market.MaxMicros + market.Lot },
			market.CodeInvalidAmount, "invalid amount"},
		{"side must be BUY or SELL", func(h *harness, c *Command) { c.Side = 0 },
			market.CodeInvalidOrderPayload, "Invalid order payload"},
		{"type must be known", func(h *harness, c *Command) { c.Type = 9 },
			market.CodeInvalidOrderPayload, "Invalid order payload"},
		{"order id is required", func(h *harness, c *Command) { c.Order = "" },
			market.CodeInvalidOrderPayload, "Invalid order payload"},
		{"owner is required", func(h *harness, c *Command) { c.Owner = market.Address{} },
			market.CodeInvalidOrderPayload, "Invalid order payload"},
		{"token must have a book", func(h *harness, c *Command) { c.Token = "999" },
			market.CodeNoOrderbook, "No orderbook exists for the requested token id"},
		{"market, when given, must be the token's", func(h *harness, c *Command) { c.Market = "0xother" },
			market.CodeInvalidOrderPayload, "Invalid order payload"},
		{"post-only is for GTC and GTD only", func(h *harness, c *Command) { c.PostOnly, c.Type = true, market.FAK },
			market.CodeInvalidOrderPayload, "Invalid order payload"},
		{"GTD needs an expiration", func(h *harness, c *Command) { c.Type = market.GTD },
			market.CodeInvalidExpiration, "invalid expiration"},
		{"GTD expiration already past is invalid", func(h *harness, c *Command) {
			c.Type, c.Expiration = market.GTD, h.now/1000-1
		}, market.CodeInvalidExpiration, "invalid expiration"},
		{"only GTD orders carry an expiration", func(h *harness, c *Command) { c.Expiration = h.now/1000 + 60 },
			market.CodeInvalidExpiration, "invalid expiration"},
		{"nonce must be the owner's current nonce", func(h *harness, c *Command) { c.Nonce = 1 },
			market.CodeInvalidNonce, "invalid nonce"},
		{"a BUY needs collateral for price × size", func(h *harness, c *Command) { c.Price, c.Size = d("0.5"), d("2000.02") },
			market.CodeInsufficientBalance, "not enough balance / allowance"},
		{"a SELL needs the tokens", func(h *harness, c *Command) { c.Side = market.Sell },
			market.CodeInsufficientBalance, "not enough balance / allowance"},
		{"an unknown owner has nothing", func(h *harness, c *Command) { c.Owner = dave },
			market.CodeInsufficientBalance, "not enough balance / allowance"},
		{"the market must accept orders", func(h *harness, c *Command) {
			s := spec(yes, no, "0.01")
			s.AcceptingOrders = false
			h.ok(Command{Kind: UpdateMarket, Market: cond, Spec: s})
		}, market.CodeMarketNotAccepting, "market is not accepting orders"},
		{"the market must be active", func(h *harness, c *Command) {
			s := spec(yes, no, "0.01")
			s.Active = false
			h.ok(Command{Kind: UpdateMarket, Market: cond, Spec: s})
		}, market.CodeMarketNotAccepting, "market is not accepting orders"},
		{"a resolved market takes no orders", func(h *harness, c *Command) {
			h.ok(Command{Kind: Resolve, Market: cond, Winner: market.Yes})
		}, market.CodeMarketResolved, "market is resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			c := Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.5"), Size: d("10")}
			tt.edit(h, &c)
			h.fails(c, tt.code, tt.msg)
		})
	}
}

// TestOrderValidationAccepts checks the boundary cases that the rules above must let
// through.
func TestOrderValidationAccepts(t *testing.T) {
	tests := []struct {
		name string
		edit func(h *harness, c *Command)
	}{
		{"a BUY may reserve exactly all available collateral", func(h *harness, c *Command) { c.Price, c.Size = d("0.5"), d("2000") }},
		{"resting size equal to the minimum is allowed", func(h *harness, c *Command) { c.Size = d("1") }},
		{"GTD expiring this very second is allowed", func(h *harness, c *Command) { c.Type, c.Expiration = market.GTD, h.now/1000 }},
		{"a signed fee rate above the market's is allowed", func(h *harness, c *Command) { c.FeeRateBps = 200 }},
		{"post-only GTD that does not cross rests", func(h *harness, c *Command) {
			c.Type, c.PostOnly, c.Expiration = market.GTD, true, h.now/1000+3600
		}},
		{"the finest tick 0.0001 is accepted on a 0.0001 market", func(h *harness, c *Command) {
			h.ok(Command{Kind: CreateMarket, Market: cond2, Spec: spec(yes2, no2, "0.0001")})
			c.Token, c.Price = yes2, d("0.0001")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			c := Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.5"), Size: d("10")}
			tt.edit(h, &c)
			evs := h.ok(c)
			if acc := find(evs, OrderAccepted); len(acc) != 1 || len(find(evs, OrderRested)) != 1 {
				t.Fatalf("events %v", kinds(evs))
			}
			h.wantStatus("o1", market.StatusLive)
		})
	}
}

// TestDuplicateOrders checks that an accepted order id can never be used again, and
// that ForgetFinal trades that guarantee for bounded memory.
func TestDuplicateOrders(t *testing.T) {
	dup := "order o1 is invalid. Duplicated."
	t.Run("an open order's id is duplicated", func(t *testing.T) {
		h := newHarness(t)
		h.ok(Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.4"), Size: d("10")})
		h.fails(Command{Kind: Place, Order: "o1", Owner: bob, Token: no, Side: market.Buy, Price: d("0.4"), Size: d("10")}, market.CodeDuplicated, dup)
	})
	t.Run("a cancelled order's id stays duplicated", func(t *testing.T) {
		h := newHarness(t)
		h.ok(Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.4"), Size: d("10")})
		h.ok(Command{Kind: Cancel, Order: "o1", Owner: alice})
		h.fails(Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.4"), Size: d("10")}, market.CodeDuplicated, dup)
	})
	t.Run("a rejected order's id is not taken", func(t *testing.T) {
		h := newHarness(t)
		h.fails(Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.4"), Size: d("5000")}, market.CodeInsufficientBalance, "")
		h.ok(Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.4"), Size: d("10")})
	})
	t.Run("ForgetFinal frees the ids of final orders", func(t *testing.T) {
		h := newHarness(t)
		h.e.cfg.ForgetFinal = true
		h.ok(Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.4"), Size: d("10")})
		h.ok(Command{Kind: Cancel, Order: "o1", Owner: alice})
		if _, known := h.e.OrderStatus("o1"); known {
			t.Fatal("final order still known")
		}
		h.ok(Command{Kind: Place, Order: "o1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.4"), Size: d("10")})
	})
}

// TestPriceTimePriority checks that better prices fill first and, at one price, the
// earlier order first.
func TestPriceTimePriority(t *testing.T) {
	h := newHarness(t)
	for _, a := range []market.Address{alice, bob, carol} {
		h.split(a, "10")
	}
	oa := h.place(alice, yes, market.Sell, "0.55", "10")
	ob := h.place(bob, yes, market.Sell, "0.55", "10")
	oc := h.place(carol, yes, market.Sell, "0.5", "10")
	h.ok(Command{Kind: Deposit, Owner: dave, Amount: d("100")})
	evs := h.ok(h.order(dave, yes, market.Buy, "0.55", "15"))
	fills := find(evs, OrderFilled)
	if len(fills) != 2 || fills[0].Order != oc || fills[0].Size != d("10") || fills[0].Price != d("0.5") ||
		fills[1].Order != oa || fills[1].Size != d("5") || fills[1].Price != d("0.55") {
		t.Fatalf("fills %+v", fills)
	}
	h.wantStatus(oc, market.StatusMatched)
	h.wantStatus(oa, market.StatusLive)
	h.wantStatus(ob, market.StatusLive)
	h.wantLevels(yes, market.Sell, "0.55x15")
	// dave paid 10×0.5 + 5×0.55 = 7.75 and got 15 YES
	h.wantColl(dave, "92.25", "0")
	h.wantTokens(dave, yes, "15", "0")
	tr := find(evs, TradeExecuted)
	if len(tr) != 1 || tr[0].Price != d("0.5") || tr[0].Size != d("15") || tr[0].Amount != d("7.75") || tr[0].Status != market.StatusMatched {
		t.Fatalf("trade %+v", tr)
	}
}

// TestSettlement checks the four ways a match settles, with every balance and the
// collateral locked in complete sets.
func TestSettlement(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(h *harness)
		maker  func(h *harness) Command
		taker  func(h *harness) Command
		check  func(h *harness)
		locked string
	}{
		{
			name:  "transfer: BUY YES meets SELL YES",
			setup: func(h *harness) { h.split(alice, "10") },
			maker: func(h *harness) Command { return h.order(alice, yes, market.Sell, "0.6", "10") },
			taker: func(h *harness) Command { return h.order(bob, yes, market.Buy, "0.6", "10") },
			check: func(h *harness) {
				h.wantColl(alice, "996", "0")
				h.wantTokens(alice, yes, "0", "0")
				h.wantTokens(alice, no, "10", "0")
				h.wantColl(bob, "994", "0")
				h.wantTokens(bob, yes, "10", "0")
			},
			locked: "10",
		},
		{
			name:  "transfer: BUY NO meets SELL NO",
			setup: func(h *harness) { h.split(alice, "10") },
			maker: func(h *harness) Command { return h.order(alice, no, market.Sell, "0.3", "10") },
			taker: func(h *harness) Command { return h.order(bob, no, market.Buy, "0.3", "10") },
			check: func(h *harness) {
				h.wantColl(alice, "993", "0")
				h.wantTokens(alice, no, "0", "0")
				h.wantColl(bob, "997", "0")
				h.wantTokens(bob, no, "10", "0")
			},
			locked: "10",
		},
		{
			name:  "mint: BUY YES meets BUY NO, both pay and a complete set is created",
			maker: func(h *harness) Command { return h.order(alice, yes, market.Buy, "0.6", "10") },
			taker: func(h *harness) Command { return h.order(bob, no, market.Buy, "0.4", "10") },
			check: func(h *harness) {
				h.wantColl(alice, "994", "0")
				h.wantTokens(alice, yes, "10", "0")
				h.wantColl(bob, "996", "0")
				h.wantTokens(bob, no, "10", "0")
			},
			locked: "10",
		},
		{
			name:  "merge: SELL YES meets SELL NO, a complete set is burned",
			setup: func(h *harness) { h.split(alice, "10"); h.split(bob, "10") },
			maker: func(h *harness) Command { return h.order(alice, yes, market.Sell, "0.6", "10") },
			taker: func(h *harness) Command { return h.order(bob, no, market.Sell, "0.4", "10") },
			check: func(h *harness) {
				h.wantColl(alice, "996", "0")
				h.wantTokens(alice, yes, "0", "0")
				h.wantTokens(alice, no, "10", "0")
				h.wantColl(bob, "994", "0")
				h.wantTokens(bob, yes, "10", "0")
				h.wantTokens(bob, no, "0", "0")
			},
			locked: "10",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.setup != nil {
				tt.setup(h)
			}
			mk := tt.maker(h)
			h.ok(mk)
			evs := h.ok(tt.taker(h))
			if k := kinds(evs); !slices.Equal(k[:3], []EventKind{OrderAccepted, OrderFilled, TradeExecuted}) {
				t.Fatalf("events %v", k)
			}
			h.wantStatus(mk.Order, market.StatusMatched)
			tt.check(h)
			if got := h.e.Totals().Locked; got != d(tt.locked) {
				t.Fatalf("locked %s, want %s", got, tt.locked)
			}
		})
	}
}

// TestPriceImprovement checks that the maker's price sets the trade price and that a
// taker never pays more (or receives less) than that; the unused reservation of a BUY
// taker is released.
func TestPriceImprovement(t *testing.T) {
	t.Run("a BUY taker pays the maker's lower price", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.place(alice, yes, market.Sell, "0.5", "10")
		evs := h.ok(h.order(bob, yes, market.Buy, "0.6", "10"))
		h.wantColl(bob, "995", "0")
		if tr := find(evs, TradeExecuted); tr[0].Price != d("0.5") || tr[0].Amount != d("5") {
			t.Fatalf("trade %+v", tr[0])
		}
		if acc := find(evs, OrderAccepted); acc[0].Amount != d("6") {
			t.Fatalf("reserved %s, want 6", acc[0].Amount)
		}
	})
	t.Run("a BUY NO taker pays one minus the YES maker's price", func(t *testing.T) {
		h := newHarness(t)
		h.place(alice, yes, market.Buy, "0.5", "10")
		evs := h.ok(h.order(bob, no, market.Buy, "0.6", "10"))
		h.wantColl(bob, "995", "0")
		h.wantColl(alice, "995", "0")
		if tr := find(evs, TradeExecuted); tr[0].Price != d("0.5") {
			t.Fatalf("trade %+v", tr[0])
		}
	})
	t.Run("a SELL taker receives the maker's higher price", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.place(bob, yes, market.Buy, "0.7", "10")
		h.ok(h.order(alice, yes, market.Sell, "0.6", "10"))
		h.wantColl(alice, "997", "0")
	})
	t.Run("a resting rest keeps only price × remaining reserved", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.place(alice, yes, market.Sell, "0.5", "4")
		id := h.place(bob, yes, market.Buy, "0.6", "10")
		// 4 at 0.5 = 2 paid; 6 rest at 0.6 = 3.6 reserved
		h.wantColl(bob, "994.4", "3.6")
		h.wantLevels(yes, market.Buy, "0.6x6")
		if o, ok := h.e.Order(id); !ok || o.Matched != d("4") || o.Remaining() != d("6") {
			t.Fatalf("order %+v", o)
		}
	})
}

// TestNoBookMirror checks that orders on the NO token rest in the YES book at 1−q and
// that the NO token's views mirror the YES book.
func TestNoBookMirror(t *testing.T) {
	h := newHarness(t)
	h.place(alice, no, market.Buy, "0.3", "10") // YES ask at 0.7
	h.split(bob, "20")
	h.place(bob, no, market.Sell, "0.45", "5") // YES bid at 0.55
	h.place(carol, yes, market.Buy, "0.5", "7")
	h.wantLevels(yes, market.Buy, "0.55x5", "0.5x7")
	h.wantLevels(yes, market.Sell, "0.7x10")
	h.wantLevels(no, market.Buy, "0.3x10")
	h.wantLevels(no, market.Sell, "0.45x5", "0.5x7")
	if l, ok := h.e.BestBid(no); !ok || l.Price != d("0.3") {
		t.Fatalf("NO best bid %+v", l)
	}
	if l, ok := h.e.BestAsk(no); !ok || l.Price != d("0.45") {
		t.Fatalf("NO best ask %+v", l)
	}
	if got := h.e.Depth(no, market.Sell, 0); got != d("12") {
		t.Fatalf("NO ask depth %s", got)
	}
	var b market.Book
	if !h.e.Book(no, &b) || len(b.Bids) != 1 || len(b.Asks) != 2 || b.Crossed() {
		t.Fatalf("NO book %+v", b)
	}
	var yb, mirrored market.Book
	h.e.Book(yes, &yb)
	yb.MirrorInto(&mirrored)
	if !slices.Equal(mirrored.Bids, b.Bids) || !slices.Equal(mirrored.Asks, b.Asks) {
		t.Fatalf("NO book %+v is not the mirror of %+v", b, yb)
	}
	// a trade prints in both tokens' terms
	h.split(carol, "5")
	h.ok(h.order(carol, yes, market.Sell, "0.55", "5"))
	if p, s, ok := h.e.LastTrade(yes); !ok || p != d("0.55") || s != market.Sell {
		t.Fatalf("YES last trade %s %s", p, s)
	}
	if p, s, ok := h.e.LastTrade(no); !ok || p != d("0.45") || s != market.Buy {
		t.Fatalf("NO last trade %s %s", p, s)
	}
}

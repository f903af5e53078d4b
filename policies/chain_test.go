package policies

import (
	"errors"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestGuards(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		opts    []Option
		setup   func(s *market.State, c *Chain)
		intent  *market.Intent
		replace market.OrderID
		guard   string // "" means allowed
		err     error
		reason  string // substring of the reason, if set
	}{
		{name: "allows a quote within every limit", intent: quote(yes, market.Buy, "0.45", "10")},
		{name: "allows a take within every limit", intent: take(yes, market.Buy, "0.46", "10")},
		{name: "allows a cancel", intent: &market.Intent{Kind: market.IntentCancel, Key: "q1"}},
		{name: "allows a quote naming only its token", intent: &market.Intent{Kind: market.IntentQuote, Token: no, Side: market.Buy, Price: m("0.55"), Size: m("10")}},

		// allowlist: default deny
		{name: "allowlist denies the zero kind", intent: &market.Intent{}, guard: GuardAllowlist, err: ErrNotAllowed},
		{name: "allowlist denies an undefined kind", intent: &market.Intent{Kind: 200}, guard: GuardAllowlist, err: ErrNotAllowed},
		{name: "allowlist denies a quote that does not rest", intent: &market.Intent{Kind: market.IntentQuote, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10"), Type: market.FOK}, guard: GuardAllowlist},
		{name: "allowlist denies a take that rests", intent: &market.Intent{Kind: market.IntentTake, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10")}, guard: GuardAllowlist},
		{name: "allowlist denies a post-only take", intent: &market.Intent{Kind: market.IntentTake, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10"), Type: market.FOK, PostOnly: true}, guard: GuardAllowlist},
		{name: "allowlist denies an invalid side", intent: &market.Intent{Kind: market.IntentQuote, Token: yes, Price: m("0.45"), Size: m("10")}, guard: GuardAllowlist},
		{name: "allowlist denies a price of 1", intent: quote(yes, market.Buy, "1", "10"), guard: GuardAllowlist},
		{name: "allowlist denies a zero size", intent: quote(yes, market.Buy, "0.45", "0"), guard: GuardAllowlist},
		{name: "allowlist denies a quote without token", intent: &market.Intent{Kind: market.IntentQuote, Side: market.Buy, Price: m("0.45"), Size: m("10")}, guard: GuardAllowlist},
		{name: "allowlist denies a cancel naming nothing", intent: &market.Intent{Kind: market.IntentCancel}, guard: GuardAllowlist},

		// kill switch
		{name: "kill switch denies opening", setup: func(s *market.State, c *Chain) { c.Trip(s.Time, "test") },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardKillSwitch, err: ErrHalted},
		{name: "kill switch denies reducing sells too", setup: func(s *market.State, c *Chain) { hold(s, yes, "10", "0.4"); c.Trip(s.Time, "test") },
			intent: quote(yes, market.Sell, "0.46", "10"), guard: GuardKillSwitch, err: ErrHalted},
		{name: "kill switch lets cancel_all pass", setup: func(s *market.State, c *Chain) { c.Trip(s.Time, "test") },
			intent: &market.Intent{Kind: market.IntentCancelAll}},
		{name: "kill switch lets flatten pass", setup: func(s *market.State, c *Chain) { c.Trip(s.Time, "test") },
			intent: &market.Intent{Kind: market.IntentFlatten}},
		{name: "kill switch lets pause pass", setup: func(s *market.State, c *Chain) { c.Trip(s.Time, "test") },
			intent: &market.Intent{Kind: market.IntentPause}},

		// geoblock
		{name: "geoblock unknown denies every order", opts: []Option{WithGeoblock(Geoblock{})},
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardGeoblock, err: ErrGeoUnknown},
		{name: "geoblock unknown lets cancels pass", opts: []Option{WithGeoblock(Geoblock{})},
			intent: &market.Intent{Kind: market.IntentCancelAll}},
		{name: "geoblock unknown lets flatten pass", opts: []Option{WithGeoblock(Geoblock{})},
			intent: &market.Intent{Kind: market.IntentFlatten}},
		{name: "geoblock unknown denies a reducing sell", opts: []Option{WithGeoblock(Geoblock{})},
			setup: func(s *market.State, c *Chain) { hold(s, yes, "10", "0.4") }, intent: quote(yes, market.Sell, "0.46", "10"), guard: GuardGeoblock, err: ErrGeoUnknown},
		{name: "geoblock blocked denies a buy", opts: []Option{WithGeoblock(GeoblockFrom(true, false, "US", ""))},
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardGeoblock, err: market.ErrGeoblocked},
		{name: "geoblock blocked denies a reducing sell", opts: []Option{WithGeoblock(GeoblockFrom(true, true, "US", ""))},
			setup: func(s *market.State, c *Chain) { hold(s, yes, "10", "0.4") }, intent: quote(yes, market.Sell, "0.46", "10"), guard: GuardGeoblock, err: market.ErrGeoblocked},
		{name: "geoblock blocked denies flatten", opts: []Option{WithGeoblock(GeoblockFrom(true, false, "US", ""))},
			intent: &market.Intent{Kind: market.IntentFlatten}, guard: GuardGeoblock},
		{name: "geoblock blocked lets cancels pass", opts: []Option{WithGeoblock(GeoblockFrom(true, false, "US", ""))},
			intent: &market.Intent{Kind: market.IntentCancel, OrderID: "0xabc"}},
		{name: "geoblock close-only allows a sell of a holding", opts: []Option{WithGeoblock(GeoblockFrom(false, true, "PL", ""))},
			setup: func(s *market.State, c *Chain) { hold(s, yes, "10", "0.4") }, intent: quote(yes, market.Sell, "0.46", "10")},
		{name: "geoblock close-only denies a buy", opts: []Option{WithGeoblock(GeoblockFrom(false, true, "PL", ""))},
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardGeoblock, err: market.ErrGeoblocked, reason: "close-only location PL"},
		{name: "geoblock close-only denies a sell beyond the holding", opts: []Option{WithGeoblock(GeoblockFrom(false, true, "PL", ""))},
			setup: func(s *market.State, c *Chain) { hold(s, yes, "10", "0.4") }, intent: quote(yes, market.Sell, "0.46", "11"), guard: GuardGeoblock},
		{name: "geoblock close-only counts open sells against the holding", opts: []Option{WithGeoblock(GeoblockFrom(false, true, "PL", ""))},
			setup: func(s *market.State, c *Chain) {
				hold(s, yes, "10", "0.4")
				openOrder(s, "0xs1", yes, market.Sell, "0.50", "6")
			}, intent: quote(yes, market.Sell, "0.46", "5"), guard: GuardGeoblock},
		{name: "geoblock close-only lets a re-quote reuse the replaced sell's shares", opts: []Option{WithGeoblock(GeoblockFrom(false, true, "PL", ""))},
			setup: func(s *market.State, c *Chain) {
				hold(s, yes, "10", "0.4")
				openOrder(s, "0xs1", yes, market.Sell, "0.50", "6")
			}, intent: quote(yes, market.Sell, "0.46", "10"), replace: "0xs1"},
		{name: "geoblock close-only treats BUY NO while long YES as opening", opts: []Option{WithGeoblock(GeoblockFrom(false, true, "PL", ""))},
			setup: func(s *market.State, c *Chain) { hold(s, yes, "10", "0.4") }, intent: quote(no, market.Buy, "0.55", "10"), guard: GuardGeoblock},
		{name: "geoblock close-only lets flatten pass", opts: []Option{WithGeoblock(GeoblockFrom(false, true, "PL", ""))},
			intent: &market.Intent{Kind: market.IntentFlatten, Market: cond}},

		// account mode
		{name: "account banned denies orders", setup: func(s *market.State, c *Chain) { s.Mode = market.ModeBanned },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardAccountMode, err: market.ErrBanned, reason: "address banned"},
		{name: "account banned denies flatten", setup: func(s *market.State, c *Chain) { s.Mode = market.ModeBanned },
			intent: &market.Intent{Kind: market.IntentFlatten}, guard: GuardAccountMode, err: market.ErrBanned},
		{name: "account banned lets cancels pass", setup: func(s *market.State, c *Chain) { s.Mode = market.ModeBanned },
			intent: &market.Intent{Kind: market.IntentCancelAll}},
		{name: "account unknown mode is denied", setup: func(s *market.State, c *Chain) { s.Mode = 9 },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardAccountMode},
		{name: "account close-only denies a buy", setup: func(s *market.State, c *Chain) { s.Mode = market.ModeCloseOnly },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardAccountMode, err: market.ErrCloseOnly, reason: "address in closed only mode"},
		{name: "account close-only allows a reducing sell", setup: func(s *market.State, c *Chain) { s.Mode = market.ModeCloseOnly; hold(s, yes, "10", "0.4") },
			intent: take(yes, market.Sell, "0.44", "10")},

		// market state
		{name: "market state denies an unknown token", intent: quote("999", market.Buy, "0.45", "10"), guard: GuardMarketState, err: market.ErrMarketNotFound},
		{name: "market state denies a token of another market", intent: &market.Intent{Kind: market.IntentQuote, Market: cond2, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10")},
			guard: GuardMarketState, err: market.ErrMarketNotFound},
		{name: "market state denies a closed market", setup: func(s *market.State, c *Chain) { s.Markets[cond].Closed = true },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardMarketState, err: market.ErrMarketNotAccepting},
		{name: "market state denies a market not accepting orders", setup: func(s *market.State, c *Chain) { s.Markets[cond].AcceptingOrders = false },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardMarketState, err: market.ErrMarketNotAccepting},
		{name: "market state denies an inactive market", setup: func(s *market.State, c *Chain) { s.Markets[cond].Active = false },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardMarketState, err: market.ErrMarketNotAccepting},
		{name: "market state denies a resolved market", setup: func(s *market.State, c *Chain) { s.Markets[cond].Resolved = true },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardMarketState, err: market.ErrMarketResolved},
		{name: "market state denies flattening a resolved market", setup: func(s *market.State, c *Chain) { s.Markets[cond].Resolved = true },
			intent: &market.Intent{Kind: market.IntentFlatten, Market: cond}, guard: GuardMarketState, err: market.ErrMarketResolved},
		{name: "market state lets flattening everything pass", setup: func(s *market.State, c *Chain) { s.Markets[cond].Resolved = true },
			intent: &market.Intent{Kind: market.IntentFlatten}},

		// pre-flight: the venue's own checks, with the venue's errors
		{name: "preflight denies a price off the tick", intent: quote(yes, market.Buy, "0.455", "10"), guard: GuardPreflight, err: market.ErrTickSize,
			reason: "order q1 is invalid. Price (0.455) breaks minimum tick size rule: 0.01"},
		{name: "preflight denies a size off the lot", intent: quote(yes, market.Buy, "0.45", "10.005"), guard: GuardPreflight, err: market.ErrAmountNotExact},
		{name: "preflight denies a size under the minimum", intent: quote(yes, market.Buy, "0.45", "4.99"), guard: GuardPreflight, err: market.ErrMinSize,
			reason: "order q1 is invalid. Size (4.99) lower than the minimum: 5"},
		{name: "preflight lets a take under the minimum size pass", intent: take(yes, market.Buy, "0.46", "1")},
		{name: "preflight allows a GTD expiring now", intent: &market.Intent{Kind: market.IntentQuote, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10"), Type: market.GTD, Expiration: t0 / 1000}},
		{name: "preflight denies a GTD that expired", intent: &market.Intent{Kind: market.IntentQuote, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10"), Type: market.GTD, Expiration: t0/1000 - 1},
			guard: GuardPreflight, err: market.ErrInvalidExpiration},
		{name: "preflight denies an expiration on a GTC", intent: &market.Intent{Kind: market.IntentQuote, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10"), Expiration: t0/1000 + 600},
			guard: GuardPreflight, err: market.ErrInvalidExpiration},
		{name: "preflight allows a GTD in the future", intent: &market.Intent{Kind: market.IntentQuote, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10"), Type: market.GTD, Expiration: t0/1000 + 600}},
		{name: "preflight denies a post-only buy that crosses", intent: &market.Intent{Kind: market.IntentQuote, Token: yes, Side: market.Buy, Price: m("0.46"), Size: m("10"), PostOnly: true},
			guard: GuardPreflight, err: market.ErrPostOnlyCrosses},
		{name: "preflight denies a post-only BUY NO crossing the mirrored book", intent: &market.Intent{Kind: market.IntentQuote, Token: no, Side: market.Buy, Price: m("0.56"), Size: m("10"), PostOnly: true},
			guard: GuardPreflight, err: market.ErrPostOnlyCrosses},
		{name: "preflight allows a post-only buy under the ask", intent: &market.Intent{Kind: market.IntentQuote, Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10"), PostOnly: true}},
		{name: "preflight denies a buy beyond the balance", setup: func(s *market.State, c *Chain) { s.Balance = m("4") },
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardPreflight, err: market.ErrInsufficientBalance, reason: "not enough balance / allowance"},
		{name: "preflight counts the worst-case fee", setup: func(s *market.State, c *Chain) { s.Balance = m("10"); s.Markets[cond].FeeBps = 200 },
			intent: quote(yes, market.Buy, "0.45", "22.2"), guard: GuardPreflight, err: market.ErrInsufficientBalance},
		{name: "preflight allows a buy that uses all the balance", setup: func(s *market.State, c *Chain) { s.Balance = m("9.99") },
			intent: quote(yes, market.Buy, "0.45", "22.2")},
		{name: "preflight frees the replaced buy's collateral", setup: func(s *market.State, c *Chain) {
			s.Balance = m("1")
			openOrder(s, "0xb1", yes, market.Buy, "0.44", "10")
		}, intent: quote(yes, market.Buy, "0.45", "10"), replace: "0xb1"},
		{name: "preflight denies a sell of a token not held", intent: quote(yes, market.Sell, "0.46", "10"), guard: GuardPreflight, err: market.ErrInsufficientBalance},

		// limits
		{name: "max_order_size denies a large order", intent: quote(yes, market.Buy, "0.10", "100.01"), cfg: Config{PriceBand: m("0.5")}, guard: GuardOrderSize, err: ErrLimit},
		{name: "max_order_notional denies a large notional", intent: quote(yes, market.Buy, "0.45", "100"), cfg: Config{MaxOrderNotional: m("40")}, guard: GuardOrderNotional, err: ErrLimit,
			reason: "order notional 45 exceeds max_order_notional 40"},
		{name: "max_position counts the holding and open buys", cfg: Config{MaxPosition: m("50")}, setup: func(s *market.State, c *Chain) {
			hold(s, yes, "30", "0.4")
			openOrder(s, "0xb1", yes, market.Buy, "0.40", "15")
		}, intent: quote(yes, market.Buy, "0.45", "6"), guard: GuardPosition, err: ErrLimit, reason: "would reach 51"},
		{name: "max_position allows up to the limit", cfg: Config{MaxPosition: m("50")}, setup: func(s *market.State, c *Chain) {
			hold(s, yes, "30", "0.4")
			openOrder(s, "0xb1", yes, market.Buy, "0.40", "15")
		}, intent: quote(yes, market.Buy, "0.45", "5")},
		{name: "max_position does not limit sells", cfg: Config{MaxPosition: m("5")}, setup: func(s *market.State, c *Chain) { hold(s, yes, "30", "0.4") },
			intent: quote(yes, market.Sell, "0.46", "10")},
		{name: "max_market_position counts both tokens", cfg: Config{MaxMarketPosition: m("100")}, setup: func(s *market.State, c *Chain) {
			hold(s, yes, "60", "0.4")
			hold(s, no, "30", "0.5")
		}, intent: quote(no, market.Buy, "0.55", "11"), guard: GuardMarketPos, err: ErrLimit},
		{name: "max_gross_exposure counts positions at mark and open buys", cfg: Config{MaxGrossExposure: m("20")}, setup: func(s *market.State, c *Chain) {
			hold(s, yes, "10", "0.1")                            // 10 × mid 0.45 = 4.5
			openOrder(s, "0xb1", yes2, market.Buy, "0.40", "10") // 4
			openOrder(s, "0xs1", yes, market.Sell, "0.90", "10") // sells add nothing
		}, intent: quote(yes, market.Buy, "0.45", "26"), guard: GuardGross, err: ErrLimit, reason: "would reach 20.2"},
		{name: "max_gross_exposure allows up to the limit", cfg: Config{MaxGrossExposure: m("20")}, setup: func(s *market.State, c *Chain) {
			hold(s, yes, "10", "0.1")
			openOrder(s, "0xb1", yes2, market.Buy, "0.40", "10")
		}, intent: quote(yes, market.Buy, "0.45", "25")},
		{name: "max_open_orders denies one more quote", cfg: Config{MaxOpenOrders: 2}, setup: func(s *market.State, c *Chain) {
			openOrder(s, "0xb1", yes, market.Buy, "0.40", "10")
			openOrder(s, "0xb2", yes2, market.Buy, "0.40", "10")
		}, intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardOpenOrders, err: ErrLimit},
		{name: "max_open_orders allows a re-quote", cfg: Config{MaxOpenOrders: 2}, setup: func(s *market.State, c *Chain) {
			openOrder(s, "0xb1", yes, market.Buy, "0.40", "10")
			openOrder(s, "0xb2", yes2, market.Buy, "0.40", "10")
		}, intent: quote(yes, market.Buy, "0.45", "10"), replace: "0xb1"},
		{name: "max_open_orders does not count takes", cfg: Config{MaxOpenOrders: 2}, setup: func(s *market.State, c *Chain) {
			openOrder(s, "0xb1", yes, market.Buy, "0.40", "10")
			openOrder(s, "0xb2", yes2, market.Buy, "0.40", "10")
		}, intent: take(yes, market.Buy, "0.46", "10")},
		{name: "price_band denies a price far from the mid", intent: quote(yes, market.Buy, "0.34", "10"), guard: GuardPriceBand, err: ErrLimit,
			reason: "price 0.34 is 0.11 from the mid 0.45"},
		{name: "price_band allows the edge of the band", intent: quote(yes, market.Buy, "0.35", "10")},
		{name: "price_band mirrors the mid for the NO token", intent: quote(no, market.Buy, "0.50", "10")},
		{name: "price_band denies without a two-sided book", setup: func(s *market.State, c *Chain) {
			s.Books[yes].Reset(nil, []market.Level{{Price: m("0.46"), Size: m("1")}})
		},
			intent: quote(yes, market.Buy, "0.45", "10"), guard: GuardPriceBand, err: ErrLimit, reason: "no two-sided book"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, col := newChain(t, tt.cfg, tt.opts...)
			s := fixture()
			if tt.setup != nil {
				tt.setup(s, c)
			}
			d := c.EvaluateReplacing(s, tt.intent, tt.replace)
			if tt.guard == "" {
				if !d.Allowed || d.Denied != nil || d.Err() != nil {
					t.Fatalf("denied: %v", d.Err())
				}
			} else {
				if d.Allowed || d.Denied == nil {
					t.Fatalf("allowed, want a denial by %s", tt.guard)
				}
				if d.Denied.Guard != tt.guard {
					t.Fatalf("denied by %s (%v), want %s", d.Denied.Guard, d.Denied, tt.guard)
				}
				if tt.err != nil && !errors.Is(d.Err(), tt.err) {
					t.Fatalf("error %v does not match %v", d.Err(), tt.err)
				}
				if !strings.Contains(d.Denied.Reason, tt.reason) {
					t.Fatalf("reason %q does not contain %q", d.Denied.Reason, tt.reason)
				}
			}
			// every decision is audited, exactly once, with the deciding guard
			var decisions []Record
			for _, r := range col.recs {
				if r.Kind == RecordDecision {
					decisions = append(decisions, r)
				}
			}
			if len(decisions) != 1 {
				t.Fatalf("%d decision records, want 1", len(decisions))
			}
			r := decisions[0]
			if r.Allowed != d.Allowed || r.Guard != tt.guard || r.Intent != *tt.intent || r.Agent != "test" || r.Time != s.Time {
				t.Fatalf("audit record %+v does not match the decision", r)
			}
			if d.Denied != nil && r.Reason != d.Denied.Reason {
				t.Fatalf("audit reason %q, want %q", r.Reason, d.Denied.Reason)
			}
		})
	}
}

// TestCloseOnlyReducesOnlyUpToTheHolding walks sizes around the closable amount.
func TestCloseOnlyReducesOnlyUpToTheHolding(t *testing.T) {
	c, _ := newChain(t, Config{})
	s := fixture()
	s.Mode = market.ModeCloseOnly
	hold(s, yes, "20", "0.4")
	openOrder(s, "0xs1", yes, market.Sell, "0.60", "7.5")
	for _, tt := range []struct {
		size  string
		allow bool
	}{{"5", true}, {"12.5", true}, {"12.51", false}, {"20", false}} {
		t.Run(tt.size, func(t *testing.T) {
			d := c.Evaluate(s, quote(yes, market.Sell, "0.46", tt.size))
			if d.Allowed != tt.allow {
				t.Fatalf("allowed=%v, want %v (%v)", d.Allowed, tt.allow, d.Err())
			}
		})
	}
}

func TestDeniedUnwrapsToCatalogCode(t *testing.T) {
	c, _ := newChain(t, Config{}, WithAddress(market.Address{0xab}))
	s := fixture()
	s.Mode = market.ModeBanned
	d := c.Evaluate(s, quote(yes, market.Buy, "0.45", "10"))
	if d.Denied.Code() != market.CodeAddressBanned {
		t.Fatalf("code %q", d.Denied.Code())
	}
	want := "account_mode: '0xab00000000000000000000000000000000000000' address banned"
	if d.Err().Error() != want {
		t.Fatalf("error %q, want %q", d.Err(), want)
	}
	var den *Denied
	if !errors.As(d.Err(), &den) || den.Guard != GuardAccountMode {
		t.Fatal("errors.As does not find *Denied")
	}
	if (&Denied{Err: ErrLimit}).Code() != "" {
		t.Fatal("a sentinel denial has no catalog code")
	}
}

func TestRateLimitCountsOrdersInTheLastMinute(t *testing.T) {
	c, _ := newChain(t, Config{MaxOrdersPerMinute: 3})
	s := fixture()
	for i := 0; i < 3; i++ {
		c.RecordOrder(s.Time + int64(i)*10_000) // t0, +10s, +20s
	}
	tests := []struct {
		at    int64
		allow bool
	}{
		{20_000, false}, // three orders within the last minute
		{59_999, false},
		{60_000, true}, // the first one left the window
		{70_000, true},
	}
	for _, tt := range tests {
		s.Time = t0 + tt.at
		d := c.Evaluate(s, quote(yes, market.Buy, "0.45", "10"))
		if d.Allowed != tt.allow {
			t.Fatalf("at +%dms allowed=%v, want %v (%v)", tt.at, d.Allowed, tt.allow, d.Err())
		}
		if !tt.allow && d.Denied.Guard != GuardRate {
			t.Fatalf("denied by %s", d.Denied.Guard)
		}
	}
}

func TestChainOrderIsTheDocumentedOne(t *testing.T) {
	c, _ := newChain(t, Config{Custom: []CustomGuard{{Name: "late", DenyIf: "hours_to_end < 1"}}},
		WithGuards(funcGuard{name: "mine", check: func(*View) *Denied { return nil }}))
	want := []string{GuardAllowlist, GuardKillSwitch, GuardGeoblock, GuardAccountMode, GuardMarketState, GuardPreflight,
		GuardOrderSize, GuardOrderNotional, GuardPosition, GuardMarketPos, GuardGross, GuardOpenOrders, GuardPriceBand, GuardRate,
		"mine", "custom:late"}
	if got := c.Guards(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("guards\n got %v\nwant %v", got, want)
	}
}

func TestEvaluateKeepsNoReferences(t *testing.T) {
	c, _ := newChain(t, Config{})
	s := fixture()
	c.Evaluate(s, quote(yes, market.Buy, "0.45", "10"))
	if c.view.State != nil || c.view.Intent != nil || c.view.Market != nil || c.view.Replaces != nil {
		t.Fatal("the chain keeps references to the state after Evaluate")
	}
}

func TestFixedDenialsDoNotAllocate(t *testing.T) {
	c, _ := newChain(t, Config{})
	s := fixture()
	c.Trip(s.Time, "test")
	it := quote(yes, market.Buy, "0.45", "10")
	n := testing.AllocsPerRun(200, func() {
		if d := c.Evaluate(s, it); d.Allowed {
			t.Fatal("allowed while halted")
		}
	})
	if n != 0 {
		t.Fatalf("a kill-switch denial allocates %v times", n)
	}
	c2, _ := newChain(t, Config{}, WithGeoblock(GeoblockFrom(true, false, "US", "")))
	n = testing.AllocsPerRun(200, func() { c2.Evaluate(s, it) })
	if n != 0 {
		t.Fatalf("a geoblock denial allocates %v times", n)
	}
}

func TestEvaluateDoesNotAllocateWhenAllowing(t *testing.T) {
	c, _ := newChain(t, Config{})
	s := fixture()
	hold(s, yes, "10", "0.4")
	openOrder(s, "0xb1", yes, market.Buy, "0.40", "10")
	it := quote(yes, market.Buy, "0.45", "10")
	c.sink = Discard
	n := testing.AllocsPerRun(200, func() {
		if d := c.Evaluate(s, it); !d.Allowed {
			t.Fatal(d.Err())
		}
	})
	if n != 0 {
		t.Fatalf("Evaluate allocates %v times per allowed intent", n)
	}
}

// TestBatchCountsEarlierIntents: intents allowed earlier in a batch count against
// the limits of later ones, as if their orders were open.
func TestBatchCountsEarlierIntents(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		setup   func(s *market.State)
		intents []*market.Intent
		replace []market.OrderID
		want    []string // deciding guard per intent, "" for allowed
	}{
		{name: "two legs exceed the balance together", setup: func(s *market.State) { s.Balance = m("20") },
			intents: []*market.Intent{take(yes, market.Buy, "0.46", "30"), take(no, market.Buy, "0.56", "30")},
			want:    []string{"", GuardPreflight}},
		{name: "two buys exceed max_position together", cfg: Config{MaxPosition: m("25")},
			intents: []*market.Intent{quote(yes, market.Buy, "0.45", "15"), quote(yes, market.Buy, "0.44", "15")},
			want:    []string{"", GuardPosition}},
		{name: "two buys of both tokens exceed max_market_position", cfg: Config{MaxMarketPosition: m("25")},
			intents: []*market.Intent{quote(yes, market.Buy, "0.45", "15"), quote(no, market.Buy, "0.55", "15")},
			want:    []string{"", GuardMarketPos}},
		{name: "two sells exceed the holding together", setup: func(s *market.State) { hold(s, yes, "20", "0.4") },
			intents: []*market.Intent{quote(yes, market.Sell, "0.46", "15"), quote(yes, market.Sell, "0.47", "10")},
			want:    []string{"", GuardPreflight}},
		{name: "new quotes fill max_open_orders", cfg: Config{MaxOpenOrders: 2}, setup: func(s *market.State) { hold(s, yes, "20", "0.4") },
			intents: []*market.Intent{quote(yes, market.Buy, "0.44", "10"), quote(yes, market.Sell, "0.46", "10"), quote(no, market.Buy, "0.55", "10")},
			want:    []string{"", "", GuardOpenOrders}},
		{name: "re-quotes do not fill max_open_orders", cfg: Config{MaxOpenOrders: 2}, setup: func(s *market.State) {
			openOrder(s, "0xb1", yes, market.Buy, "0.40", "10")
			openOrder(s, "0xb2", no, market.Buy, "0.50", "10")
		}, intents: []*market.Intent{quote(yes, market.Buy, "0.44", "10"), quote(no, market.Buy, "0.54", "10")},
			replace: []market.OrderID{"0xb1", "0xb2"}, want: []string{"", ""}},
		{name: "a re-quote frees its collateral for the rest of the batch", setup: func(s *market.State) {
			s.Balance = m("1")
			openOrder(s, "0xb1", yes, market.Buy, "0.40", "10") // reserves 4
		}, intents: []*market.Intent{quote(yes, market.Buy, "0.44", "5"), quote(no, market.Buy, "0.55", "5"), quote(yes2, market.Buy, "0.45", "5")},
			replace: []market.OrderID{"0xb1", "", ""}, want: []string{"", "", GuardPreflight}}, // 1 + 4 freed − 2.2 − 2.75 = 0.05 left
		{name: "the rate limit counts the batch's orders", cfg: Config{MaxOrdersPerMinute: 2},
			intents: []*market.Intent{take(yes, market.Buy, "0.46", "5"), take(yes, market.Buy, "0.46", "5"), take(yes, market.Buy, "0.46", "5")},
			want:    []string{"", "", GuardRate}},
		{name: "a denied intent does not count", cfg: Config{MaxPosition: m("25")},
			intents: []*market.Intent{quote(yes, market.Buy, "0.45", "30"), quote(yes, market.Buy, "0.44", "20")},
			want:    []string{GuardPosition, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newChain(t, tt.cfg)
			s := fixture()
			if tt.setup != nil {
				tt.setup(s)
			}
			b := c.Batch(s)
			for i, it := range tt.intents {
				var rep market.OrderID
				if tt.replace != nil {
					rep = tt.replace[i]
				}
				d := b.EvaluateReplacing(it, rep)
				got := ""
				if d.Denied != nil {
					got = d.Denied.Guard
				}
				if got != tt.want[i] {
					t.Fatalf("intent %d: decided by %q (%v), want %q", i, got, d.Err(), tt.want[i])
				}
			}
			// a new batch starts from the state alone
			if d := c.Batch(s).Evaluate(tt.intents[len(tt.intents)-1]); tt.want[len(tt.want)-1] == GuardPosition && !d.Allowed {
				t.Fatalf("the next batch still counts the previous one: %v", d.Err())
			}
		})
	}
}

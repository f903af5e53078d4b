package policies

import (
	"errors"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// resolve marks the fixture's market cond resolved with winner w.
func resolve(s *market.State, w market.Outcome) {
	mk := s.Markets[cond]
	mk.Resolved, mk.Winner, mk.AcceptingOrders = true, w, false
}

// TestRedeemGoesThroughTheGuards: a redeem is judged and audited like any intent. It
// needs a known, resolved market where something is held, and names what it expects
// to be paid (the winning shares held; 0 for a losing position); before the
// resolution it is refused with the catalogue's market_not_resolved. It places no
// order and pays into the same account, so a tripped kill switch, a close-only
// account or location and the limits let it through.
func TestRedeemGoesThroughTheGuards(t *testing.T) {
	redeem := func(size string) *market.Intent {
		return &market.Intent{Kind: market.IntentRedeem, Key: "r/collect", Market: cond, Size: m(size)}
	}
	won := func(s *market.State, c *Chain) {
		hold(s, yes, "10", "0.5")
		hold(s, no, "4", "0.4")
		resolve(s, market.Yes)
	}
	for _, tc := range []struct {
		name   string
		opts   []Option
		setup  func(s *market.State, c *Chain)
		intent *market.Intent
		reason string      // "" when allowed
		code   market.Code // the denial's catalogue code, when it has one
	}{
		{"the winning shares", nil, won, redeem("10"), "", ""},
		{"a losing position, for nothing", nil, func(s *market.State, c *Chain) { hold(s, no, "4", "0.4"); resolve(s, market.Yes) }, redeem("0"), "", ""},
		{"before the resolution", nil, func(s *market.State, c *Chain) { hold(s, yes, "10", "0.5") }, redeem("10"), "not resolved yet", market.CodeMarketNotResolved},
		{"nothing held", nil, func(s *market.State, c *Chain) { resolve(s, market.Yes) }, redeem("0"), "nothing held", market.CodeNothingToRedeem},
		{"expecting more than it pays", nil, won, redeem("14"), "winning shares held pay 10", ""},
		{"an unknown market", nil, won, &market.Intent{Kind: market.IntentRedeem, Market: "0x9"}, "no known market", ""},
		{"tripped kill switch", nil, func(s *market.State, c *Chain) { won(s, c); c.Trip(s.Time, "test") }, redeem("10"), "", ""},
		{"close-only account", nil, func(s *market.State, c *Chain) { won(s, c); s.Mode = market.ModeCloseOnly }, redeem("10"), "", ""},
		{"close-only location", []Option{WithGeoblock(GeoblockFrom(false, true, "CA", ""))}, won, redeem("10"), "", ""},
		{"blocked location", []Option{WithGeoblock(GeoblockFrom(true, false, "US", ""))}, won, redeem("10"), "", ""},
		{"limits at zero room", nil, func(s *market.State, c *Chain) { won(s, c); s.Balance = 0 }, redeem("10"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := judgeOnce(t, tc.opts, tc.setup, tc.intent, tc.reason)
			var e *market.Error
			if tc.code != "" && (!errors.As(d.Err(), &e) || e.Code != tc.code) {
				t.Fatalf("denial %v, want code %s", d.Err(), tc.code)
			}
		})
	}
}

// TestMergeInAResolvedMarketIsRefused: complete sets of a resolved market are
// redeemed, not merged (the exchange refuses the merge too).
func TestMergeInAResolvedMarketIsRefused(t *testing.T) {
	c, _ := newChain(t, Config{})
	s := fixture()
	hold(s, yes, "10", "0.5")
	hold(s, no, "10", "0.4")
	resolve(s, market.No)
	d := c.Evaluate(s, &market.Intent{Kind: market.IntentMerge, Market: cond, Size: m("10")})
	if d.Allowed || !strings.Contains(d.Denied.Reason, "redeem its tokens instead") {
		t.Fatalf("decision %+v", d)
	}
}

// TestResolvedPositionsAreNotExposure: a resolved market's tokens awaiting their
// redeem are a claim on collateral at their payout, not market risk:
// max_gross_exposure and the usage report leave them out, while equity (the loss
// limits) counts them at 1 a winning share and 0 a losing one — a loss at the
// resolution trips max_drawdown, a win does not. Both valuations (with and without a
// declared state version) agree.
func TestResolvedPositionsAreNotExposure(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		cfg := Config{MaxGrossExposure: m("100"), MaxDrawdown: m("50")}
		buy := take(yes2, market.Buy, "0.46", "10") // 4.6 more exposure
		setup := func(w market.Outcome) (*Chain, *market.State) {
			c, _ := newChain(t, cfg)
			s := fixture()
			hold(s, yes, "300", "0.45") // 300 × 0.45 = 135 at the mid
			if versioned {
				c.SetStateVersion(s, 1)
			}
			if a := c.Observe(s); a.Any() {
				t.Fatalf("tripped at the start: %+v", a)
			}
			if d := c.Evaluate(s, buy); d.Allowed || d.Denied.Guard != GuardGross {
				t.Fatalf("an open market's 135: %+v, want max_gross_exposure's denial", d)
			}
			resolve(s, w)
			if versioned {
				c.SetStateVersion(s, 2)
			}
			return c, s
		}
		c, s := setup(market.Yes)
		if a := c.Observe(s); a.Any() {
			t.Fatalf("versioned %v: a win tripped %+v", versioned, a)
		}
		if d := c.Evaluate(s, buy); !d.Allowed {
			t.Fatalf("versioned %v: a resolved market's shares counted as exposure: %v", versioned, d.Err())
		}
		for _, u := range c.Usage(s) {
			if (u.Guard == GuardGross || u.Guard == GuardPosition) && u.Used != 0 {
				t.Fatalf("versioned %v: usage %+v counts the resolved position", versioned, u)
			}
			if u.Guard == "max_drawdown" && u.Used != 0 {
				t.Fatalf("versioned %v: drawdown %s after a win", versioned, u.Used)
			}
		}
		if eq := s.Equity(); eq != m("400") {
			t.Fatalf("equity %s, want 100 + 300 × 1", eq)
		}
		c, s = setup(market.No)
		if a := c.Observe(s); !a.Halt {
			t.Fatalf("versioned %v: losing 135 at the resolution did not trip max_drawdown 50", versioned)
		}
	}
}

package sim

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// The engine's invariants (conservation, reservations, books, indexes) hold after
// every few hundred commands of long runs with frequent news, resolutions and
// the redemptions that follow.
func TestEngineInvariantsHoldOverLongRuns(t *testing.T) {
	markets := SyntheticMarkets(4, 0)
	cfg := TapeConfig{
		Seed: 808, Duration: 3 * time.Hour, CheckEvery: 250, Markets: markets,
		Sim: Config{Defaults: Params{NewsEvery: 4 * time.Minute, NewsJump: 0.6},
			Markets: []MarketConfig{
				{Market: markets[0].Market, Params: Params{ResolveAt: t0 + 2*3_600_000}},
				{Market: markets[1].Market, Params: Params{ResolveAt: t0 + 3_600_000, Fair: 20_000}},
				{Market: markets[2].Market},
				{Market: markets[3].Market, Params: Params{NoiseTake: 0.95, NoiseEvery: 500 * time.Millisecond}},
			}},
	}
	var commands, rejected int
	cfg.Raw = func(c *exchange.Command, evs []exchange.Event) {
		commands++
		if len(evs) > 0 && evs[len(evs)-1].Kind == exchange.CommandRejected {
			rejected++
		}
	}
	sum, err := RunTape(context.Background(), cfg, func(*market.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d commands, %d rejected", commands, rejected)
	if commands < 20_000 || rejected*1000 > commands {
		t.Fatalf("%d commands, %d rejected", commands, rejected)
	}
	for i, m := range sum.Markets {
		if resolved := i < 2; m.Resolved != resolved {
			t.Errorf("market %d resolved = %v", i, m.Resolved)
		}
	}
}

// After the sim resolves a market its participants redeem everything, and it acts
// there no more.
func TestResolutionRedeemsAndStops(t *testing.T) {
	e := newEngine(t, 2)
	id := SyntheticMarkets(2, 0)[0].Market
	s := New(Config{Start: t0, Markets: []MarketConfig{{Market: id, Params: Params{ResolveAt: t0 + 600_000}}}}, 909)
	var after int
	s.AdvanceTo(t0+1_200_000, e, func(c *exchange.Command, _ []exchange.Event) {
		if c.Time > t0+600_000 {
			after++
		}
	})
	if after != 0 {
		t.Errorf("%d commands after the resolution", after)
	}
	if _, ok := s.Next(); ok {
		t.Error("something is still scheduled after the only market resolved")
	}
	info, _ := e.Market(id)
	sum := s.Summary().Markets[0]
	if !info.Resolved || !sum.Resolved || info.Winner != sum.Winner {
		t.Fatalf("engine resolved %v winner %v; summary %v %v", info.Resolved, info.Winner, sum.Resolved, sum.Winner)
	}
	for _, a := range s.Accounts() {
		for _, tok := range info.Tokens {
			if av, res := e.TokenBalance(a, tok); av+res != 0 {
				t.Errorf("%s still holds %s of %s", a, av+res, tok)
			}
		}
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}

// A market resolved, paused or closed by someone else: the sim redeems after a
// resolution, stays quiet while paused and resumes afterwards.
func TestMarketStateChangesByOthers(t *testing.T) {
	e := newEngine(t, 3)
	specs := SyntheticMarkets(3, 0)
	s := New(Config{Start: t0}, 1001)
	apply := func(c exchange.Command) {
		if _, err := e.Apply(&c); err != nil {
			t.Fatalf("%s: %v", c.Kind, err)
		}
	}
	s.AdvanceTo(t0+60_000, e, nil)

	// Market 0 resolves, market 1 pauses, market 2 closes.
	apply(exchange.Command{Kind: exchange.Resolve, Time: t0 + 60_000, Market: specs[0].Market, Winner: market.No})
	paused := specs[1].Spec
	paused.AcceptingOrders = false
	apply(exchange.Command{Kind: exchange.UpdateMarket, Time: t0 + 60_000, Market: specs[1].Market, Spec: paused})
	closed := specs[2].Spec
	closed.Closed = true
	apply(exchange.Command{Kind: exchange.UpdateMarket, Time: t0 + 60_000, Market: specs[2].Market, Spec: closed})

	redeemed := map[market.Address]bool{}
	var places int
	s.AdvanceTo(t0+120_000, e, func(c *exchange.Command, evs []exchange.Event) {
		switch c.Kind {
		case exchange.Redeem:
			redeemed[c.Owner] = true
		case exchange.Place:
			places++
		}
	})
	if places != 0 {
		t.Errorf("%d orders placed while no market accepted any", places)
	}
	if len(redeemed) == 0 {
		t.Error("nobody redeemed after the resolution")
	}
	if _, ok := s.byID[specs[2].Market]; !ok || !s.markets[s.byID[specs[2].Market]].done {
		t.Error("the closed market is still driven")
	}

	apply(exchange.Command{Kind: exchange.UpdateMarket, Time: t0 + 120_000, Market: specs[1].Market, Spec: specs[1].Spec})
	s.AdvanceTo(t0+180_000, e, func(c *exchange.Command, _ []exchange.Event) {
		if c.Kind == exchange.Place {
			places++
		}
	})
	if places == 0 {
		t.Error("no order after the market reopened")
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestNextAndStepFollowTheSchedule(t *testing.T) {
	e := newEngine(t, 1)
	s := New(Config{Start: t0 + 5000}, 1)
	if due, ok := s.Next(); !ok || due != t0+5000 {
		t.Fatalf("Next before the start = %d, %v", due, ok)
	}
	if _, acted := s.Step(t0, e, nil); acted {
		t.Fatal("acted before the start")
	}
	cmds, acted := s.Step(t0+5000, e, nil)
	if !acted || len(cmds) == 0 || cmds[0].Kind != exchange.Deposit || cmds[0].Time != t0+5000 {
		t.Fatalf("first action: %v %+v", acted, cmds)
	}
	for i := range cmds {
		if _, err := e.Apply(&cmds[i]); err != nil {
			t.Fatal(err)
		}
	}
	due, ok := s.Next()
	if !ok || due != t0+5000 {
		t.Fatalf("the maker's first quote is due at %d, %v; want at the start", due, ok)
	}
	if n := s.AdvanceTo(t0+5000, e, nil); n == 0 {
		t.Fatal("the maker did not quote")
	}
	if n := s.AdvanceTo(t0+5000, e, nil); n != 0 {
		t.Fatalf("a second AdvanceTo to the same time applied %d commands", n)
	}
	if due, _ := s.Next(); due <= t0+5000 {
		t.Fatalf("next action at %d, not after now", due)
	}
}

func TestSkipToDropsTheMissedFlow(t *testing.T) {
	e := newEngine(t, 2)
	s := New(Config{Start: t0}, 2)
	s.AdvanceTo(t0+10_000, e, nil)
	later := int64(t0 + 3_600_000)
	s.SkipTo(later)
	if due, _ := s.Next(); due < later {
		t.Fatalf("after SkipTo(%d) the next action is due at %d", later, due)
	}
	var first int64
	s.AdvanceTo(later+10_000, e, func(c *exchange.Command, _ []exchange.Event) {
		if first == 0 {
			first = c.Time
		}
	})
	if first < later {
		t.Fatalf("a command at %d, before the skip target", first)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}

var orderIDShape = regexp.MustCompile(`^0x[0-9a-f]{64}$`)

// Participants are ordinary accounts funded through the command path, with
// addresses derived from the seed; order ids look like the service's and are unique.
func TestAccountsAndOrderIDsAreDerivedFromTheSeed(t *testing.T) {
	e := newEngine(t, 2)
	s := New(Config{Start: t0}, 77)
	ids := map[market.OrderID]bool{}
	funded := map[market.Address]bool{}
	s.AdvanceTo(t0+600_000, e, func(c *exchange.Command, _ []exchange.Event) {
		switch c.Kind {
		case exchange.Deposit, exchange.Split:
			funded[c.Owner] = true
		case exchange.Place:
			if !orderIDShape.MatchString(string(c.Order)) {
				t.Fatalf("order id %q", c.Order)
			}
			if ids[c.Order] {
				t.Fatalf("order id %s used twice", c.Order)
			}
			ids[c.Order] = true
			if !funded[c.Owner] {
				t.Fatalf("%s placed an order before being funded", c.Owner)
			}
		}
	})
	accts := s.Accounts()
	if len(accts) != 2*(1+4+2) {
		t.Fatalf("%d accounts", len(accts))
	}
	m := SyntheticMarkets(1, 0)[0].Market
	if accts[0] != Address(77, m, "maker", 0) || accts[1] != Address(77, m, "noise", 0) || accts[5] != Address(77, m, "informed", 0) {
		t.Fatal("accounts are not the documented derivation")
	}
	if Address(78, m, "maker", 0) == accts[0] || !Address(77, m, "dealer", 0).IsZero() {
		t.Fatal("Address ignores the seed or accepts an unknown role")
	}

	// Another start time gives other order ids (restarts never reuse one).
	firstID := func(start int64) market.OrderID {
		var id market.OrderID
		New(Config{Start: start}, 77).AdvanceTo(start+5000, newEngine(t, 1), func(c *exchange.Command, _ []exchange.Event) {
			if c.Kind == exchange.Place && id == "" {
				id = c.Order
			}
		})
		return id
	}
	if a, b := firstID(t0), firstID(t0+1); a == "" || a == b {
		t.Fatalf("first order ids %s and %s", a, b)
	}
	if a, b := firstID(t0), firstID(t0); a != b {
		t.Fatalf("one start time gave order ids %s and %s", a, b)
	}
}

// A market's flow depends only on the seed, the market and its own state: driving
// another market beside it changes nothing of it.
func TestAMarketsFlowIsIndependentOfOtherMarkets(t *testing.T) {
	flow := func(n int) []byte {
		e := newEngine(t, n)
		s := New(Config{Start: t0}, 55)
		var out []byte
		mine := map[market.Address]bool{}
		for _, a := range []string{"maker", "noise", "informed"} {
			for i := 0; i < 4; i++ {
				mine[Address(55, SyntheticMarkets(1, 0)[0].Market, a, i)] = true
			}
		}
		s.AdvanceTo(t0+1_800_000, e, func(c *exchange.Command, _ []exchange.Event) {
			if mine[c.Owner] {
				out, _ = c.AppendBinary(out)
			}
		})
		return out
	}
	one, three := flow(1), flow(3)
	if len(one) == 0 || !bytes.Equal(one, three) {
		t.Fatalf("market 0's commands differ with other markets beside it (%d and %d bytes)", len(one), len(three))
	}
}

// Configured markets are found by condition id or slug; unknown ones are reported.
func TestConfiguredMarketsByIDOrSlug(t *testing.T) {
	e := newEngine(t, 3)
	specs := SyntheticMarkets(3, 0)
	s := New(Config{Start: t0, Markets: []MarketConfig{
		{Market: market.ConditionID(specs[2].Spec.Slug)}, {Market: specs[0].Market}, {Market: "0xmissing"},
	}}, 3)
	s.AdvanceTo(t0, e, nil)
	sum := s.Summary()
	if len(sum.Markets) != 2 || sum.Markets[0].Market != specs[2].Market || sum.Markets[1].Market != specs[0].Market {
		t.Fatalf("markets %v", sum.Markets)
	}
	if len(sum.Missing) != 1 || sum.Missing[0] != "0xmissing" {
		t.Fatalf("missing %v", sum.Missing)
	}
	if f, ok := s.Fair(specs[2].Market); !ok || f <= 0 || f >= market.One {
		t.Fatalf("Fair = %d, %v", f, ok)
	}
	if _, ok := s.Fair(specs[1].Market); ok {
		t.Fatal("Fair of a market the sim does not drive")
	}
}

// The fair-value path spans the whole run within its bound.
func TestPathIsBoundedAndSpansTheRun(t *testing.T) {
	s, m := latent(t, Params{Fair: 500_000, NewsEvery: -1}, 9)
	s.pathMax = 16
	m.advanceFair(s, t0+10*3_600_000)
	p := s.Summary().Markets[0].Path
	if len(p) > 16 || len(p) < 8 {
		t.Fatalf("%d points", len(p))
	}
	if p[0].Time != t0 || p[len(p)-1].Time < t0+9*3_600_000 {
		t.Fatalf("path from %d to %d", p[0].Time, p[len(p)-1].Time)
	}
}

// Before a timed resolution the outcome is revealed and the fair value converges to
// it; the resolution then pays the revealed winner.
func TestRevealConvergesBeforeTheResolution(t *testing.T) {
	const at = t0 + 3_600_000
	e := newEngine(t, 1)
	s := New(Config{Start: t0, Defaults: Params{ResolveAt: at, ResolveReveal: 20 * time.Minute}}, 31)
	var late []market.Micros
	s.AdvanceTo(at, e, func(c *exchange.Command, _ []exchange.Event) {
		if c.Time >= at-60_000 && c.Time < at {
			late = append(late, s.markets[0].fair)
		}
	})
	m := s.markets[0]
	sum := s.Summary().Markets[0]
	if !sum.Resolved || sum.Winner != m.winner || !m.revealed {
		t.Fatalf("resolved %v winner %v, revealed %v %v", sum.Resolved, sum.Winner, m.revealed, m.winner)
	}
	want := market.Micros(990_000)
	if m.winner == market.No {
		want = 10_000
	}
	if len(late) == 0 {
		t.Fatal("no activity in the last minute")
	}
	for _, f := range late {
		if d := f - want; d > 50_000 || d < -50_000 {
			t.Fatalf("fair %s in the last minute, converging to %s", f, want)
		}
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}

// The winner is YES with probability equal to the fair value when it is drawn.
func TestWinnersFollowTheFairValue(t *testing.T) {
	const n = 400
	yes := 0
	for seed := uint64(0); seed < n; seed++ {
		s, _, e := latentOn(t, Params{Fair: 300_000, Vol: -1, NewsEvery: -1, ResolveAt: t0 + 1000, ResolveReveal: -1}, seed)
		s.AdvanceTo(t0+1000, e, nil)
		if sum := s.Summary().Markets[0]; !sum.Resolved {
			t.Fatal("not resolved")
		} else if sum.Winner == market.Yes {
			yes++
		}
	}
	sd := math.Sqrt(n * 0.3 * 0.7)
	if math.Abs(float64(yes)-0.3*n) > 4*sd {
		t.Fatalf("YES won %d of %d resolutions at fair 0.3", yes, n)
	}
}

// A market listed after the sim started joins at the next rescan.
func TestNewMarketsJoinAtTheNextRescan(t *testing.T) {
	e := newEngine(t, 1)
	s := New(Config{Start: t0, Rescan: 30 * time.Second}, 5)
	s.AdvanceTo(t0+10_000, e, nil)
	late := SyntheticMarkets(2, 0)[1]
	late.Time = t0 + 10_000
	if _, err := e.Apply(&late); err != nil {
		t.Fatal(err)
	}
	var first int64
	s.AdvanceTo(t0+120_000, e, func(c *exchange.Command, _ []exchange.Event) {
		if first == 0 && (c.Market == late.Market || c.Owner == Address(5, late.Market, "maker", 0)) {
			first = c.Time
		}
	})
	if first != t0+30_000 {
		t.Fatalf("the new market's first command at %d, want at the rescan (%d)", first, t0+30_000)
	}
	if len(s.Summary().Markets) != 2 {
		t.Fatal("the new market is not in the summary")
	}
}

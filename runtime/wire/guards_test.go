package wire

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// TestKillStateIsEncodedAgainWhenItChanges checks the cached encoding of the kill
// switch: the same bytes while it is unchanged, the new state after a trip, and a
// round trip through RestoreKill.
func TestKillStateIsEncodedAgainWhenItChanges(t *testing.T) {
	g, err := NewGuards(policies.Config{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := g.KillState()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := g.KillState()
	if &before[0] != &again[0] {
		t.Fatal("an unchanged kill switch was encoded again")
	}
	g.Trip(1_000, "operator")
	tripped, _ := g.KillState()
	if string(tripped) == string(before) {
		t.Fatalf("the trip is not in the saved state: %s", tripped)
	}
	h, _ := NewGuards(policies.Config{})
	if err := h.RestoreKill(tripped); err != nil {
		t.Fatal(err)
	}
	if !h.Halted() || h.KillReason() != "operator" {
		t.Fatalf("restored: halted=%v reason=%q", h.Halted(), h.KillReason())
	}
	var st market.State
	if !g.Resume(&st, "operator") {
		t.Fatal("not resumed")
	}
	if resumed, _ := g.KillState(); string(resumed) == string(tripped) {
		t.Fatal("the resume is not in the saved state")
	}
}

// TestAKeptOrderIsDecidedAnewWhenTheTopOfTheBookMoved pins what the agent's audit
// trail rests on (runtime/agent checkKeep): a kept order's allowance is reported
// Reused, and so not audited again, only while the top of the books is unchanged;
// after a move it is reported as a new decision, which the agent audits.
func TestAKeptOrderIsDecidedAnewWhenTheTopOfTheBookMoved(t *testing.T) {
	g, err := NewGuards(policies.Config{}, policies.WithGeoblock(policies.Geoblock{Status: policies.GeoAllowed}))
	if err != nil {
		t.Fatal(err)
	}
	const cond, yes, no = market.ConditionID("0xc1"), market.TokenID("101"), market.TokenID("102")
	st := &market.State{Time: 1_767_225_600_000, Balance: 100 * market.One}
	st.Init()
	st.Markets[cond] = &market.Info{Condition: cond, Tokens: [2]market.TokenID{yes, no}, TickSize: market.One / 100,
		MinSize: 5 * market.One, Active: true, AcceptingOrders: true}
	book := &market.Book{Token: yes}
	top := func(bid, ask market.Micros) {
		book.Reset([]market.Level{{Price: bid, Size: 100 * market.One}}, []market.Level{{Price: ask, Size: 100 * market.One}})
	}
	top(44*market.One/100, 46*market.One/100)
	st.Books[yes] = book
	st.Orders["0xkeep"] = &market.Order{ID: "0xkeep", Market: cond, Token: yes, Side: market.Buy,
		Price: 44 * market.One / 100, Size: 10 * market.One, Status: market.StatusLive}
	it := &market.Intent{Kind: market.IntentQuote, Key: "bid", Market: cond, Token: yes, Side: market.Buy,
		Price: 44 * market.One / 100, Size: 10 * market.One, PostOnly: true}
	g.StateVersion(st, 1)
	steps := []struct {
		name   string
		move   func()
		reused bool
	}{
		{"first decision", func() {}, false},
		{"nothing moved", func() {}, true},
		{"time passed", func() { st.Time += 1000 }, true},
		{"the top moved", func() { top(43*market.One/100, 45*market.One/100) }, false},
		{"nothing moved since", func() {}, true},
	}
	for _, s := range steps {
		s.move()
		g.Begin(st)
		v := g.CheckKeep(it, "0xkeep")
		if !v.Allowed || v.Reused != s.reused {
			t.Fatalf("%s: allowed=%v reused=%v, want reused=%v (%s)", s.name, v.Allowed, v.Reused, s.reused, v.Reason)
		}
	}
}

// TestACheckBeforeBeginIsDenied checks that Check and CheckKeep made before the
// first Begin, or after RestoreKill rebuilt the chain, deny as "no batch started",
// and that after a Begin they decide.
func TestACheckBeforeBeginIsDenied(t *testing.T) {
	it := &market.Intent{Kind: market.IntentCancelAll, Key: "stop"}
	var st market.State
	st.Init()
	tests := []struct {
		name  string
		setup func(g *Guards)
		check func(g *Guards) agent.Verdict
		begun bool // a batch was started: the intent is decided
	}{
		{"Check before Begin", func(*Guards) {}, func(g *Guards) agent.Verdict { return g.Check(it, "") }, false},
		{"CheckKeep before Begin", func(*Guards) {}, func(g *Guards) agent.Verdict { return g.CheckKeep(it, "0xkeep") }, false},
		{"Check after Begin", func(g *Guards) { g.Begin(&st) }, func(g *Guards) agent.Verdict { return g.Check(it, "") }, true},
		{"CheckKeep after RestoreKill", func(g *Guards) {
			g.Begin(&st)
			if err := g.RestoreKill([]byte(`{"Tripped":true,"Reason":"operator"}`)); err != nil {
				t.Fatal(err)
			}
		}, func(g *Guards) agent.Verdict { return g.CheckKeep(it, "0xkeep") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewGuards(policies.Config{})
			if err != nil {
				t.Fatal(err)
			}
			tt.setup(g)
			v := tt.check(g)
			if denied := !v.Allowed && v.Guard == "agent" && v.Reason == "no batch started"; denied == tt.begun {
				t.Fatalf("allowed=%v guard=%q reason=%q, want no batch started: %v", v.Allowed, v.Guard, v.Reason, !tt.begun)
			}
			if tt.begun && !v.Allowed {
				t.Fatalf("a cancel_all in a batch: %s: %s", v.Guard, v.Reason)
			}
		})
	}
}

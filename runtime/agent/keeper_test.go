package agent_test

import (
	"context"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// keeperGuards is fakeGuards with agent.Keeper: it records the state versions
// declared and reuses an allowed keep while the version is the one of its last
// decision (as policies.Chain does for a quote whose inputs did not change).
type keeperGuards struct {
	fakeGuards
	version  uint64
	versions []uint64 // the versions declared before each CheckKeep
	decided  uint64   // the version of the last full keep decision (0: none)
	full     int      // keep decisions made in full
}

func (g *keeperGuards) StateVersion(_ *market.State, v uint64) { g.version = v }

func (g *keeperGuards) CheckKeep(it *market.Intent, keeps market.OrderID) agent.Verdict {
	g.versions = append(g.versions, g.version)
	if g.decided != 0 && g.decided == g.version {
		return agent.Verdict{Allowed: true, Reused: true}
	}
	g.decided = g.version
	g.full++
	return g.Check(it, keeps)
}

// TestKeptOrdersUseTheKeeper checks the agent's side of docs/design/0105: the state
// version it declares changes with its orders but not with book events, a kept
// order is re-checked through CheckKeep, and a reused allowance is neither audited
// nor counted again.
func TestKeptOrdersUseTheKeeper(t *testing.T) {
	var evs []market.Event
	for i := range 20 {
		evs = append(evs, book(int64(1+i)*1000, "0.45", "0.50")) // the same book: the bid is kept
	}
	g := &keeperGuards{}
	log := &auditLog{}
	v := newFakeVenue()
	v.sync = true // answers on the loop, in order
	a := newAgent(t, baseConfig(), v, &scriptFeed{events: evs}, bidQuoter("10"), g,
		func(d *agent.Deps) { d.Audit = log; d.Clock = agent.EventClock })
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(g.versions) < 18 {
		t.Fatalf("%d keep checks, want one per event after the placement", len(g.versions))
	}
	// The placement's answer changed the state (a new version) before the first
	// keep; the book events after it did not.
	first := g.versions[0]
	for i, v := range g.versions {
		if v != first {
			t.Fatalf("keep check %d saw version %d, the first %d: book events changed the version", i, v, first)
		}
	}
	if first == 0 {
		t.Fatal("no version declared")
	}
	if g.full != 1 {
		t.Fatalf("%d full keep decisions, want 1", g.full)
	}
	decisions := 0
	log.mu.Lock()
	for _, r := range log.recs {
		if r.Kind == agent.AuditDecision && r.Intent.Kind == market.IntentQuote {
			decisions++
		}
	}
	log.mu.Unlock()
	if decisions != 2 { // the placement's and the first keep's
		t.Fatalf("%d quote decisions audited, want 2", decisions)
	}
}

package wire

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
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

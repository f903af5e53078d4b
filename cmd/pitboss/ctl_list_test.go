package main

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// TestCtlListNamesMarketsAndSides (issue 15, item 7): ctl list shows an agent's
// markets by slug and its positions as slug, YES or NO, size and price — from the
// status the agent publishes — not a count and a bare outcome.
func TestCtlListNamesMarketsAndSides(t *testing.T) {
	st := &natsbus.Status{Agent: "q-1", State: natsbus.StateRunning,
		Markets: []market.ConditionID{"0x01"}, MarketLabels: []string{"fed-cuts-rates-in-june-2026"},
		Positions: []natsbus.PositionStatus{{Market: "0x01", Label: "fed-cuts-rates-in-june-2026", Token: "123", Outcome: "YES",
			Size: natsbus.Amount(10 * market.One), AvgPrice: natsbus.Amount(market.One / 2)}}}
	fl := supervisor.Fleet{Supervisors: []supervisor.FleetView{{Supervisor: "s", Host: "h",
		Agents: []supervisor.AgentView{{ID: "q-1", Supervisor: "s", Status: st, HeartbeatAgeMS: 100}}}}}
	var b strings.Builder
	printList(&b, fl)
	if !strings.Contains(b.String(), "fed-cuts-rates-in-june-2026 YES 10 @0.5") || !strings.Contains(b.String(), " fed-cuts-rates-in-june-2026 ") {
		t.Fatalf("ctl list:\n%s", b.String())
	}
}

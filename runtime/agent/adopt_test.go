package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// TestStartAdoptsHoldingsAtTheVenuesCost: on a venue that keeps no cost basis of
// its own, a holding the checkpoint accounts for keeps the checkpoint's figures;
// any other is adopted with the venue's cost basis (Account.Basis), or at cost 0
// when the venue knows none — each adoption audited with its source and reason.
func TestStartAdoptsHoldingsAtTheVenuesCost(t *testing.T) {
	held := market.Position{Market: cond, Token: yes, Outcome: market.Yes, Size: mic("20")}
	fromVenue := map[market.TokenID]agent.Basis{yes: {Cost: mic("9.8"), Source: "the data service's average price"}}
	saved := func(size, cost, realized string) *agent.Checkpoint {
		return &agent.Checkpoint{Version: agent.CheckpointVersion, Agent: "t1", Wallet: wallet, Runs: 1,
			Positions: []agent.CheckpointPosition{{Market: cond, Token: yes, Outcome: market.Yes, Size: agent.Amount(mic(size)),
				Cost: agent.Amount(mic(cost)), Realized: agent.Amount(mic(realized))}}}
	}
	for _, tc := range []struct {
		name       string
		cp         *agent.Checkpoint
		basis      map[market.TokenID]agent.Basis
		cost       string
		realized   string
		adoptWhy   string // "" when nothing is adopted
		adoptAudit string
	}{
		{"first start, the venue's cost", nil, fromVenue, "9.8", "0", "first start", "data service"},
		{"first start, no cost known", nil, nil, "0", "0", "cost unknown", "cost unknown"},
		{"the checkpoint accounts for it", saved("20", "10", "1"), fromVenue, "10", "1", "", ""},
		{"the size changed while away", saved("10", "4.5", "1"), fromVenue, "9.8", "1", "the checkpoint had 10", "data service"},
		{"the checkpoint had no cost", saved("20", "0", "0"), fromVenue, "9.8", "0", "no cost", "data service"},
		{"the size changed, no cost known", saved("10", "4.5", "0"), nil, "9", "0", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newFakeVenue()
			v.positions, v.basis = []market.Position{held}, tc.basis
			store := agent.NewMemStore()
			if tc.cp != nil {
				if err := store.Save(tc.cp); err != nil {
					t.Fatal(err)
				}
			}
			var audit auditLog
			a := newAgent(t, baseConfig(), v, &scriptFeed{}, bidQuoter("10"), &fakeGuards{},
				func(d *agent.Deps) { d.Store, d.Audit = store, &audit })
			if err := a.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			cp, err := store.Load()
			if err != nil {
				t.Fatal(err)
			}
			if len(cp.Positions) != 1 {
				t.Fatalf("checkpoint positions %+v", cp.Positions)
			}
			p := cp.Positions[0]
			if market.Micros(p.Size) != mic("20") || market.Micros(p.Cost) != mic(tc.cost) || market.Micros(p.Realized) != mic(tc.realized) {
				t.Errorf("position size %s cost %s realized %s; want 20, %s, %s", market.Micros(p.Size), market.Micros(p.Cost),
					market.Micros(p.Realized), tc.cost, tc.realized)
			}
			var adopts []agent.AuditRecord
			for _, r := range audit.recs {
				if r.Kind == agent.AuditAdopt {
					adopts = append(adopts, r)
				}
			}
			switch {
			case tc.adoptWhy == "" && len(adopts) != 0:
				t.Errorf("adopted %+v, want nothing adopted", adopts)
			case tc.adoptWhy != "" && (len(adopts) != 1 || !strings.Contains(adopts[0].Reason, tc.adoptWhy) ||
				!strings.Contains(adopts[0].Reason, tc.adoptAudit) || adopts[0].Position.Cost != mic(tc.cost) ||
				adopts[0].Position.Token != yes || adopts[0].Position.Size != mic("20")):
				t.Errorf("adopt records %+v, want one for cost %s saying %q and %q", adopts, tc.cost, tc.adoptWhy, tc.adoptAudit)
			}
			if tc.cp == nil && market.Micros(cp.StartEquity) != v.balance+mic(tc.cost) {
				t.Errorf("start equity %s, want the balance plus the holding at cost %s", market.Micros(cp.StartEquity), tc.cost)
			}
		})
	}
}

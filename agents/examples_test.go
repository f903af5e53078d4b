package agents

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesAreSafe: every example agent file loads cleanly, is dry run on the
// embedded venue, names a wallet by reference, sets its guards explicitly, and its
// strategy loads with its overrides.
func TestExamplesAreSafe(t *testing.T) {
	files, err := filepath.Glob("examples/*/agent.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), "strategy.yaml")); err != nil {
				t.Skip("its strategy file is not written yet")
			}
			s, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if !s.DryRun() || s.Venue.Kind != VenueEmbedded || s.Wallet.Scheme == "" {
				t.Fatalf("not dry run on the embedded venue with a wallet reference: %+v", s)
			}
			g := s.Guards
			if g.MaxOrderNotional == 0 || g.MaxPosition == 0 || g.PriceBand == 0 || g.MaxDailyLoss == 0 || g.MaxDrawdown == 0 {
				t.Fatalf("guards are not set explicitly: %+v", g)
			}
			if _, err := s.LoadStrategy(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

package policies

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestMergeGoesThroughTheGuards: a merge is judged and audited like any intent. It
// needs a known market and at most the complete sets held; it places no order and
// adds no exposure, so a tripped kill switch, a close-only account, an unknown or
// close-only location and the limits let it through.
func TestMergeGoesThroughTheGuards(t *testing.T) {
	merge := func(size string) *market.Intent {
		return &market.Intent{Kind: market.IntentMerge, Key: "m/sets", Market: cond, Size: m(size)}
	}
	sets := func(s *market.State, c *Chain) { hold(s, yes, "10", "0.5"); hold(s, no, "6", "0.55") }
	for _, tc := range []struct {
		name   string
		opts   []Option
		setup  func(s *market.State, c *Chain)
		intent *market.Intent
		reason string // "" when allowed
	}{
		{"the sets held", nil, sets, merge("6"), ""},
		{"fewer than held", nil, sets, merge("2.5"), ""},
		{"more than held", nil, sets, merge("7"), "6 complete sets held"},
		{"nothing held", nil, nil, merge("1"), "0 complete sets held"},
		{"a zero size", nil, sets, merge("0"), "must be positive"},
		{"an unknown market", nil, sets, &market.Intent{Kind: market.IntentMerge, Market: "0x9", Size: m("1")}, "no known market"},
		{"tripped kill switch", nil, func(s *market.State, c *Chain) { sets(s, c); c.Trip(s.Time, "test") }, merge("6"), ""},
		{"close-only account", nil, func(s *market.State, c *Chain) { sets(s, c); s.Mode = market.ModeCloseOnly }, merge("6"), ""},
		{"unknown location", []Option{WithGeoblock(Geoblock{})}, sets, merge("6"), ""},
		{"blocked location", []Option{WithGeoblock(GeoblockFrom(true, false, "US", ""))}, sets, merge("6"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) { judgeOnce(t, tc.opts, tc.setup, tc.intent, tc.reason) })
	}
}

// judgeOnce evaluates one intent on the fixture after setup: allowed when reason is
// "", else denied by the allowlist saying reason; either way one decision record
// audited. It returns the decision.
func judgeOnce(t *testing.T, opts []Option, setup func(s *market.State, c *Chain), it *market.Intent, reason string) Decision {
	t.Helper()
	c, col := newChain(t, Config{}, opts...)
	s := fixture()
	if setup != nil {
		setup(s, c)
	}
	d := c.Evaluate(s, it)
	switch {
	case reason == "" && !d.Allowed:
		t.Fatalf("denied: %v", d.Err())
	case reason != "" && (d.Allowed || d.Denied.Guard != GuardAllowlist || !strings.Contains(d.Denied.Reason, reason)):
		t.Fatalf("decision %+v, want the allowlist's denial saying %q", d, reason)
	}
	n := 0
	for _, r := range col.recs {
		if r.Kind == RecordDecision {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d decision records, want 1", n)
	}
	return d
}

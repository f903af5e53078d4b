package strategy

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestMergeRuleAsksForEveryCompleteSetHeld: a rule with do: merge intends to merge
// the smaller of the two positions of its market (nothing when one side is
// empty), and, unlike cancel_all, flatten and pause, leaves the market's quotes in
// place.
func TestMergeRuleAsksForEveryCompleteSetHeld(t *testing.T) {
	s := mustParse(t, `
quotes:
  bid: {side: BUY, price: 0.4, size: 5}
rules:
  sets: {when: "yes.position > 0 && no.position > 0", do: merge}
`)
	in, st := holding(t, s, 0, 0)
	for _, tc := range []struct {
		yes, no market.Micros
		want    string
	}{
		{0, 0, "quote m/bid"},
		{12 * market.One, 0, "quote m/bid"},
		{12 * market.One, 7_500_000, "merge m/sets 7.5,quote m/bid"},
		{3 * market.One, 7_500_000, "merge m/sets 3,quote m/bid"},
	} {
		st.Positions[benchYes].Size, st.Positions[benchNo].Size = tc.yes, tc.no
		out, err := in.Decide(&market.Event{Kind: market.EventTimer, Time: 5}, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range out {
			g := it.Kind.String() + " " + it.Key
			if it.Kind == market.IntentMerge {
				if it.Market != benchCond {
					t.Fatalf("merge of market %s", it.Market)
				}
				g += " " + it.Size.String()
			}
			got = append(got, g)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("yes %s no %s: intents %v, want %s", tc.yes, tc.no, got, tc.want)
		}
	}
}

// TestMergeIsAnAction: merge is named among do:'s actions, and a near miss is
// suggested.
func TestMergeIsAnAction(t *testing.T) { suggestsAction(t, "merge", "merg") }

// holding returns an instance of s bound to the test market as "m" and a state
// holding yes and no shares of it (positions updated in place by the tests, as
// market.State.Apply does).
func holding(t *testing.T, s *Strategy, yes, no market.Micros) (*Instance, *market.State) {
	t.Helper()
	in, err := s.NewInstance([]Binding{{Name: "m", Market: benchCond}})
	if err != nil {
		t.Fatal(err)
	}
	st := newTestState()
	st.Positions[benchYes] = &market.Position{Market: benchCond, Token: benchYes, Outcome: market.Yes, Size: yes}
	st.Positions[benchNo] = &market.Position{Market: benchCond, Token: benchNo, Outcome: market.No, Size: no}
	return in, st
}

// suggestsAction checks that a rule's do: typo is refused with every action listed
// and action suggested.
func suggestsAction(t *testing.T, action, typo string) {
	t.Helper()
	_, err := Parse(action+".yaml", []byte("rules:\n  r: {when: \"true\", do: "+typo+"}\n"))
	if err == nil || !strings.Contains(err.Error(), "cancel_all, flatten, pause, merge or redeem") || !strings.Contains(err.Error(), "did you mean "+action) {
		t.Fatalf("error %v, want the actions listed and %s suggested", err, action)
	}
}

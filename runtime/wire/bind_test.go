package wire

import (
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/strategy"
)

// TestBindMarketsIsBuildsBinding: the exported binding is the one Build uses, for
// the forms a recording's catalogue meets (conditions, tokens, repeated slugs).
func TestBindMarketsIsBuildsBinding(t *testing.T) {
	cat := []market.Info{
		{Condition: "0xc1", Slug: "rain", Tokens: [2]market.TokenID{"1", "2"}},
		{Condition: "0xc2", Slug: "rain", Tokens: [2]market.TokenID{"3", "4"}},
		{Condition: "0xc3", Slug: "snow", Tokens: [2]market.TokenID{"5", "6"}},
	}
	for _, tc := range []struct {
		name string
		m    agents.Markets
		want []strategy.Binding
	}{
		{"conditions", agents.Markets{Conditions: []market.ConditionID{"0xc3", "0xc1"}},
			[]strategy.Binding{{Name: "snow", Market: "0xc3"}, {Name: "rain", Market: "0xc1"}}},
		{"tokens with a repeated slug", agents.Markets{Tokens: []market.TokenID{"4", "1"}},
			[]strategy.Binding{{Name: "m1", Market: "0xc2"}, {Name: "m2", Market: "0xc1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BindMarkets(&tc.m, cat, 0)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := bindMarkets(&tc.m, cat, 0)
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := BindMarkets(&agents.Markets{Conditions: []market.ConditionID{"0xc9"}}, cat, 0); err == nil {
		t.Fatal("an unknown condition was bound")
	}
}

package market

import "testing"

func TestLabelPrefersSlugThenQuestionThenCondition(t *testing.T) {
	tests := []struct {
		name string
		info Info
		want string
	}{
		{"slug", Info{Condition: "0xc1", Question: "Will it rain?", Slug: "will-it-rain"}, "will-it-rain"},
		{"question", Info{Condition: "0xc1", Question: "Will it rain?"}, "Will it rain?"},
		{"condition", Info{Condition: "0xc1"}, "0xc1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.info.Label(); got != tc.want {
				t.Fatalf("Label() = %q, want %q", got, tc.want)
			}
		})
	}
	m := Info{Condition: "0xc1", Slug: "will-it-rain", Outcomes: [2]string{"Up", "Down"}}
	if got := m.TokenLabel(No); got != "will-it-rain NO" {
		t.Fatalf("TokenLabel(No) = %q", got)
	}
}

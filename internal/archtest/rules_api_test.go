package archtest

import "testing"

// TestAPIIsALeaf checks that rule 7 forbids every non-leaf import of api (directly or
// through a dependency) and allows market, the standard library and decimal.
func TestAPIIsALeaf(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	tests := []struct {
		name string
		pkg  Package
		bad  []string
	}{
		{
			name: "allowed imports",
			pkg:  Package{Path: m("api"), Imports: []string{"encoding/json", m("market")}, Deps: []string{"encoding/json", m("market"), "github.com/shopspring/decimal", "internal/bytealg"}},
		},
		{
			name: "adapter forbidden",
			pkg:  Package{Path: m("api"), Deps: []string{m("adapters/auth"), "github.com/ethereum/go-ethereum/crypto"}},
			bad:  []string{m("adapters/auth"), "github.com/ethereum/go-ethereum/crypto"},
		},
		{
			name: "sandbox and zap forbidden in a subpackage",
			pkg:  Package{Path: m("api/sub"), Deps: []string{m("sandbox/exchange"), "go.uber.org/zap"}},
			bad:  []string{m("sandbox/exchange"), "go.uber.org/zap"},
		},
	}
	var rule7 []Rule
	for _, r := range Rules {
		if len(r.Name) > 2 && r.Name[:2] == "7:" {
			rule7 = append(rule7, r)
		}
	}
	if len(rule7) != 1 {
		t.Fatalf("want exactly one rule 7, have %d", len(rule7))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, v := range Check([]Package{tc.pkg}, rule7) {
				got[v.Import] = true
			}
			if len(got) != len(tc.bad) {
				t.Errorf("violations %v, want %v", got, tc.bad)
			}
			for _, b := range tc.bad {
				if !got[b] {
					t.Errorf("violation not caught: %s", b)
				}
			}
		})
	}
}

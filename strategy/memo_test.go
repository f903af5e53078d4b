package strategy

import (
	"math/bits"
	"reflect"
	"slices"
	"testing"
)

// TestMemoKnowsEveryField checks that every field expressions can read of a token,
// the market and the account is placed in a dependency bit (memo.go) or rules the
// memo out: a field added to Env's structs must be placed before this passes.
func TestMemoKnowsEveryField(t *testing.T) {
	if bits.TrailingZeros64(depSlot0) != slotShift {
		t.Fatalf("depSlot0 is bit %d, slotShift %d", bits.TrailingZeros64(depSlot0), slotShift)
	}
	names := func(v any) []string {
		typ := reflect.TypeOf(v)
		var out []string
		for i := 0; i < typ.NumField(); i++ {
			if n := typ.Field(i).Tag.Get("expr"); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	for _, n := range names(Token{}) {
		if _, ok := tokenFieldDeps[n]; !ok {
			t.Errorf("token field %s has no dependency bit", n)
		}
	}
	if got := names(MarketInfo{}); !slices.Equal(got, marketFieldNames) {
		t.Errorf("MarketInfo's names %v, memo.go knows %v", got, marketFieldNames)
	}
	for _, n := range names(Account{}) {
		if _, ok := accountDeps[n]; !ok && n != "time" && n != "orders" {
			t.Errorf("account field %s has no dependency bit", n)
		}
	}
	// unknown and unkeepable names depend on everything
	for _, n := range []string{"market.ends_in", "yes.nothing", "markets.h.yes.bid", "feeds.btc", "event.kind", "nobody"} {
		if d := nameDeps(n, nil, map[string]bool{}); d != depAll {
			t.Errorf("%s: mask %x, want all", n, d)
		}
	}
}

// TestMemoMasksOfTheQuoter checks the quoter's masks: the vars that read only
// positions do not depend on the book or the indicators.
func TestMemoMasksOfTheQuoter(t *testing.T) {
	s, err := Load("../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.memo == nil {
		t.Fatal("the quoter keeps no vars")
	}
	pos := depPos | depPos<<depNo
	ind := func(i int) uint64 { return depSlot0 << i }
	v := func(name string) uint64 {
		for i := range s.vars {
			if s.vars[i].name == name {
				return depSlot0 << (len(s.indicators) + i)
			}
		}
		t.Fatalf("no var %s", name)
		return 0
	}
	want := map[string]uint64{
		"to_merge": pos,
		"free_yes": depPos | v("to_merge"),
		"shift":    pos,
		"width":    ind(1),
		"bid_px":   ind(0) | v("width") | v("shift") | depBook | depMarket,
		"ask_px":   ind(0) | v("width") | v("shift") | depBook | depMarket,
	}
	for i := range s.vars {
		if got := s.memo.vars[i]; got != want[s.vars[i].name] {
			t.Errorf("var %s: mask %x, want %x", s.vars[i].name, got, want[s.vars[i].name])
		}
	}
}

package api

import (
	"strings"
	"testing"
)

// TestDecodeRTDSRFQFilters: the accepted shapes and every refusal.
func TestDecodeRTDSRFQFilters(t *testing.T) {
	for _, c := range []struct {
		in            string
		markets, toks int
		err           string
	}{
		{in: ""}, {in: "  "},
		{in: `{"market":"0xa"}`, markets: 1},
		{in: ` {"markets":["0xa","0xb"],"token":"7","tokens":["8"]} `, markets: 2, toks: 2},
		{in: `{}`},
		{in: `["0xa"]`, err: "filters: a JSON object with market, markets, token or tokens"},
		{in: `{"market_slug":"x"}`, err: "filters: a JSON object"},
		{in: `{"markets":[""]}`, err: "filters: a JSON object"},
		{in: `{"market":"0xa"} {}`, err: "filters: a JSON object"},
		{in: `{"tokens":["` + strings.Repeat(`1","`, MaxWSAssets) + `1"]}`, err: "Payload exceeds the limit"},
	} {
		f, err := DecodeRTDSRFQFilters(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(AsCatalog(err).Message, c.err)):
			t.Errorf("%.40s: %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || len(f.Markets) != c.markets || len(f.Tokens) != c.toks):
			t.Errorf("%.40s: %+v %v", c.in, f, err)
		}
	}
}

// FuzzDecodeRTDSRFQFilters: any filters string decodes or is refused with a
// catalog error, never panics, and what decodes is bounded and has no empty id.
func FuzzDecodeRTDSRFQFilters(f *testing.F) {
	for _, s := range []string{"", `{"market":"0xa"}`, `{"markets":["0xa"],"tokens":["1"]}`, `{"x":1}`, `[`, `{"token":""}`, "\x00{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeRTDSRFQFilters(s)
		if err != nil {
			if AsCatalog(err).Message == "" {
				t.Fatalf("%q: uncatalogued error %v", s, err)
			}
			return
		}
		if len(v.Markets)+len(v.Tokens) > MaxWSAssets {
			t.Fatalf("%q: %d entries", s, len(v.Markets)+len(v.Tokens))
		}
		for _, m := range v.Markets {
			if m == "" {
				t.Fatalf("%q: empty market", s)
			}
		}
		for _, tok := range v.Tokens {
			if tok == "" {
				t.Fatalf("%q: empty token", s)
			}
		}
	})
}

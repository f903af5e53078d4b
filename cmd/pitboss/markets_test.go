package main

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// The slug of a demo market with tick 0.01 and min size 5 (sandbox/catalog/demo.yaml).
const fedSlug = "fed-cuts-rates-in-june-2026"

func TestMarketRefIsToldByItsShape(t *testing.T) {
	cond := "0x" + strings.Repeat("ab", 32)
	cases := []struct {
		in   string
		kind marketRefKind
		err  string
	}{
		{fedSlug, refSlug, ""},
		{"Will-Brazil-win", refSlug, ""},
		{cond, refCondition, ""},
		{"0X" + strings.Repeat("AB", 32), refCondition, ""},
		{"0x" + strings.Repeat("ab", 31), 0, "neither a condition id"}, // 62 digits
		{"0xfed-cuts", 0, "neither a condition id"},
		{"0x12", 0, "neither a condition id"},
		{"109722772811270566690229295643063627410949558594057489016141439518716841439881", refToken, ""},
		{"", 0, "empty market"},
		{"fed cuts", 0, "is not a slug"},
		{"fed\tcuts", 0, "is not a slug"},
		{"fed\x7f", 0, "is not a slug"},
		{strings.Repeat("a", 201), 0, "at most 200 characters"},
	}
	for _, tc := range cases {
		t.Run(tc.in[:min(len(tc.in), 24)], func(t *testing.T) {
			kind, err := classifyMarketRef(tc.in)
			if tc.err == "" && (err != nil || kind != tc.kind) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("classifyMarketRef(%.40q) = %v, %v; want %v, %q", tc.in, kind, err, tc.kind, tc.err)
			}
		})
	}
}

func TestOutcomeIsYesNoOrTheMarketsLabel(t *testing.T) {
	info := &market.Info{Slug: "btc-up-or-down", Outcomes: [2]string{"Up", "Down"}, Tokens: [2]market.TokenID{"11", "22"}}
	cases := []struct {
		in    string
		named market.TokenID
		token market.TokenID
		err   string
	}{
		{"yes", "", "11", ""},
		{"NO", "", "22", ""},
		{"up", "", "11", ""},
		{"Down", "", "22", ""},
		{"", "", "", "name the outcome: --outcome yes|no (btc-up-or-down: Up / Down)"},
		{"sideways", "", "", `--outcome "sideways": btc-up-or-down has outcomes yes (Up) and no (Down)`},
		{"", "22", "22", ""},
		{"down", "22", "22", ""},
		{"yes", "22", "", "token 22 is the Down outcome of btc-up-or-down, not yes"},
	}
	for _, tc := range cases {
		t.Run(tc.in+"/"+string(tc.named), func(t *testing.T) {
			tok, _, err := pickToken(info, tc.named, tc.in, nil)
			if tc.err == "" && (err != nil || tok != tc.token) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("pickToken(%q, %q) = %q, %v; want %q, %q", tc.named, tc.in, tok, err, tc.token, tc.err)
			}
		})
	}
}

func FuzzClassifyMarketRef(f *testing.F) {
	for _, s := range []string{fedSlug, "0x" + strings.Repeat("ab", 32), "0x12", "12345", "", "a b", "\x00", strings.Repeat("z", 300), "0X" + strings.Repeat("0", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kind, err := classifyMarketRef(s)
		if err != nil {
			if kind != 0 {
				t.Fatalf("%q: kind %v with error %v", s, kind, err)
			}
			return
		}
		switch kind {
		case refCondition:
			if !api.ValidConditionID(s) {
				t.Fatalf("%q is no condition id", s)
			}
		case refToken:
			if !api.ValidTokenID(s) {
				t.Fatalf("%q is no token id", s)
			}
		case refSlug:
			if s == "" || len(s) > 200 || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
				t.Fatalf("%q accepted as a slug", s)
			}
		default:
			t.Fatalf("%q: kind %v", s, kind)
		}
	})
}

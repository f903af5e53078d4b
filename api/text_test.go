package api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSafeText(t *testing.T) {
	for _, tc := range []struct {
		s         string
		multiline bool
		want      bool
	}{
		{"Will it rain in Lisbon? ☔ 90%", false, true},
		{"über café — 東京 ✓", false, true},
		{"<script>alert(1)</script> ../../etc", false, true}, // markup is JSON-escaped, not refused
		{"two\nlines\tand a tab", true, true},
		{"two\nlines", false, false},
		{"nul\x00byte", true, false},
		{"bell\x07", true, false},
		{"del\x7f", true, false},
		{"c1\u0085next line", true, false},
		{"right-to-left \u202e override", false, false},
		{"isolate \u2066x\u2069", false, false},
		{"mark \u200f", false, false},
		{"zero\u200bwidth", false, false},
		{"\ufeffbom", false, false},
		{"line\u2028separator", true, false},
		{"private \ue000", false, false},
		{"unassigned \U000e0080", false, false},
		{"bad \xff utf-8", false, false},
		{"truncated \xe2\x82", false, false},
		{"", false, true},
	} {
		if got := SafeText(tc.s, tc.multiline); got != tc.want {
			t.Errorf("SafeText(%q, %v) = %v, want %v", tc.s, tc.multiline, got, tc.want)
		}
	}
}

func TestValidEmailAndIdentifier(t *testing.T) {
	for _, tc := range []struct {
		e    string
		want bool
	}{
		{"ada@example.com", true},
		{"first.last+tag@mail.example.co.uk", true},
		{"a_b%c-d@x-y.io", true},
		{"no-at.example.com", false},
		{"two@@example.com", false},
		{"a@b@example.com", false},
		{"ada@localhost", false},
		{"ada@-example.com", false},
		{"ada@example-.com", false},
		{"ada@example..com", false},
		{"../../etc@example.com", false},
		{"<script>@example.com", false},
		{"ada\x00@example.com", false},
		{"ada\u202e@example.com", false},
		{"adá@example.com", false},
		{"ada@exa mple.com", false},
		{strings.Repeat("a", 65) + "@example.com", false},
		{"ada@" + strings.Repeat("a", 64) + ".com", false},
		{"ada@example.com.", false},
	} {
		if got := ValidEmail(tc.e); got != tc.want {
			t.Errorf("ValidEmail(%q) = %v, want %v", tc.e, got, tc.want)
		}
	}
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"my-builder_1.v2:eu", true},
		{"", false},
		{strings.Repeat("b", 129), false},
		{"../../etc", false},
		{"<script>", false},
		{"a b", false},
		{"bidi\u202e", false},
		{"nul\x00", false},
	} {
		if got := ValidIdentifier(tc.s, 128); got != tc.want {
			t.Errorf("ValidIdentifier(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// FuzzSafeText: whatever SafeText accepts is valid UTF-8 without a control or bidi
// character; ValidEmail and ValidIdentifier accept only ASCII.
func FuzzSafeText(f *testing.F) {
	for _, s := range []string{"hello", "a\u202eb", "\xff", "ada@example.com", "x\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if SafeText(s, true) {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 accepted: %q", s)
			}
			for _, r := range s {
				if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
					t.Fatalf("%U accepted in %q", r, s)
				}
			}
		}
		for _, ok := range []bool{ValidEmail(s), ValidIdentifier(s, 1000)} {
			if ok {
				for i := 0; i < len(s); i++ {
					if s[i] >= utf8.RuneSelf || s[i] < 0x21 {
						t.Fatalf("non-ASCII or space accepted in %q", s)
					}
				}
			}
		}
	})
}

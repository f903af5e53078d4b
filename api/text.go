package api

import (
	"unicode"
	"unicode/utf8"
)

// Strings a client gives the exchange and the exchange keeps (waitlist emails,
// builder ids, comments, messages) end up in operator views and in other clients'
// screens. These checks refuse what can hide or reorder text there: invalid UTF-8,
// control characters, bidirectional controls and other invisible format characters
// (issue 20, point 9). Markup is not refused in free text: every answer is JSON,
// which escapes <, > and &, and a renderer of free text must escape it too.

// SafeText reports whether s is valid UTF-8 made only of letters, marks, numbers,
// punctuation, symbols and spaces (Unicode categories L, M, N, P, S, Zs), plus
// newline and tab when multiline. Refused, among others: C0 and C1 controls, the
// bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C),
// zero-width and other format characters, line and paragraph separators,
// private-use and unassigned code points.
func SafeText(s string, multiline bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if !multiline || (c != '\n' && c != '\t') {
					return false
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs) {
			return false
		}
		i += n
	}
	return true
}

// ValidIdentifier reports whether s is 1 to max bytes of ASCII letters, digits and
// ". _ - :" — the form of the identifiers a client names itself by (a builder id).
func ValidIdentifier(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

// ValidEmail reports whether e looks like an address a person can receive mail at,
// deliberately conservative: at most 254 bytes, one @, a local part of ASCII letters,
// digits and ". _ % + -", a domain of dot-separated labels of letters, digits and
// hyphens with at least one dot. Quoted local parts, comments, slashes and non-ASCII
// addresses are refused.
func ValidEmail(e string) bool {
	if len(e) < 5 || len(e) > 254 {
		return false
	}
	at := -1
	for i := 0; i < len(e); i++ {
		if e[i] == '@' {
			if at >= 0 {
				return false
			}
			at = i
		}
	}
	if at <= 0 || at > 64 || at == len(e)-1 {
		return false
	}
	for i := 0; i < at; i++ {
		c := e[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '%' || c == '+' || c == '-') {
			return false
		}
	}
	labels, label := 0, 0
	for i := at + 1; i <= len(e); i++ {
		if i == len(e) || e[i] == '.' {
			if label == 0 || e[i-1] == '-' || e[i-label] == '-' {
				return false
			}
			labels++
			label = 0
			continue
		}
		c := e[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') || label == 63 {
			return false
		}
		label++
	}
	return labels >= 2
}

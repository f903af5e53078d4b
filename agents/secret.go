package agents

import "strings"

// Secret detection. An agent file names its wallet by reference; a raw private key
// or a recovery phrase pasted into it is refused, and never quoted back.

// secretKind says what a value looks like, or "" when it looks like no secret.
func secretKind(v string) string {
	s := strings.TrimSpace(v)
	switch {
	case isHex(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 64):
		return "a raw private key"
	case len(s) >= 100 && (strings.HasPrefix(s, "xprv") || strings.HasPrefix(s, "tprv")):
		return "an extended private key"
	case looksMnemonic(s):
		return "a mnemonic (recovery phrase)"
	}
	return ""
}

// bareSecret reports whether a value outside the wallet field must be refused: a
// 64-digit hex string without 0x (condition ids always carry the prefix), an
// extended private key or a mnemonic.
func bareSecret(v string) string {
	s := strings.TrimSpace(v)
	if isHex(s, 64) {
		return "a raw private key"
	}
	if k := secretKind(s); k != "" && k != "a raw private key" {
		return k
	}
	return ""
}

// hideValue reports whether a value must not be quoted in a message: anything that
// could be a key, including 0x-prefixed 64-digit hex.
func hideValue(v string) bool { return secretKind(v) != "" }

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// looksMnemonic: 12, 15, 18, 21 or 24 words of 3 to 8 lower-case letters (the shape
// of a BIP-39 phrase), separated by white space.
func looksMnemonic(s string) bool {
	words := strings.Fields(s)
	switch len(words) {
	case 12, 15, 18, 21, 24:
	default:
		return false
	}
	for _, w := range words {
		if len(w) < 3 || len(w) > 8 {
			return false
		}
		for i := 0; i < len(w); i++ {
			if w[i] < 'a' || w[i] > 'z' {
				return false
			}
		}
	}
	return true
}

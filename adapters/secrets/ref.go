package secrets

import (
	"errors"
	"strings"
)

// Scheme is the kind of place a Ref points to. The zero value is SchemeNone (no
// reference).
type Scheme uint8

// Schemes, as written before the colon of a reference.
const (
	SchemeNone     Scheme = iota
	SchemeEnv             // env:VAR — the environment variable VAR holds the secret itself
	SchemeKeyring         // keyring:NAME — an item in the OS keyring (Secret Service, Keychain, Credential Manager)
	SchemeKeystore        // keystore:PATH — a go-ethereum encrypted keystore file (wallets only)
	SchemeFile            // file:NAME — an item in pitboss's encrypted file store
)

var schemeNames = [...]string{"", "env", "keyring", "keystore", "file"}

// String returns the scheme as written in a reference ("env", "keyring", ...), or ""
// for SchemeNone.
func (s Scheme) String() string {
	if int(s) < len(schemeNames) {
		return schemeNames[s]
	}
	return "scheme?"
}

// Ref names where a secret lives, never the secret itself: agent files and flags carry
// refs such as "keyring:main", "keystore:/home/me/.config/pitboss/keystore/UTC--…",
// "env:PITBOSS_WALLET_KEY" or "file:main". A Ref is a plain comparable value and safe
// to log. The zero value means "no reference".
type Ref struct {
	Scheme Scheme
	// Name is the variable (env), item name (keyring, file) or file path (keystore).
	Name string
}

// Errors of ParseRef. Their messages never contain the input, which may be a secret
// pasted in the wrong place.
var (
	ErrBadRef      = errors.New("invalid secret reference: want keyring:NAME, keystore:PATH, env:VAR or file:NAME")
	ErrBadRefName  = errors.New("invalid secret reference: a keyring or file name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	ErrBadRefEnv   = errors.New("invalid secret reference: an environment variable name is letters, digits and '_', not starting with a digit")
	ErrBadRefPath  = errors.New("invalid secret reference: empty or invalid keystore path")
	ErrRefLooksKey = errors.New("invalid secret reference: this looks like a private key; never write a key into a file or flag — import it with 'pitboss wallet import' and use the reference it prints")
	errRefTooLong  = errors.New("invalid secret reference: longer than 4096 bytes")
)

// ParseRef parses "scheme:name". Accepted forms:
//
//	env:VAR         VAR matches [A-Za-z_][A-Za-z0-9_]*
//	keyring:NAME    NAME matches [A-Za-z0-9][A-Za-z0-9._-]{0,63}
//	file:NAME       same NAME rule
//	keystore:PATH   any non-empty path without NUL; "~/" is expanded when resolved
//
// Errors are the Err* values above and never echo the input: a user who pastes a
// private key where a reference belongs gets ErrRefLooksKey, and the key does not
// reach logs.
func ParseRef(s string) (Ref, error) {
	if len(s) > 4096 {
		return Ref{}, errRefTooLong
	}
	if looksLikeKey(s) {
		return Ref{}, ErrRefLooksKey
	}
	scheme, name, ok := strings.Cut(s, ":")
	if !ok {
		return Ref{}, ErrBadRef
	}
	if looksLikeKey(name) {
		return Ref{}, ErrRefLooksKey
	}
	switch scheme {
	case "env":
		if !validEnvName(name) {
			return Ref{}, ErrBadRefEnv
		}
		return Ref{SchemeEnv, name}, nil
	case "keyring":
		if !validItemName(name) {
			return Ref{}, ErrBadRefName
		}
		return Ref{SchemeKeyring, name}, nil
	case "file":
		if !validItemName(name) {
			return Ref{}, ErrBadRefName
		}
		return Ref{SchemeFile, name}, nil
	case "keystore":
		if name == "" || strings.IndexByte(name, 0) >= 0 {
			return Ref{}, ErrBadRefPath
		}
		return Ref{SchemeKeystore, name}, nil
	}
	return Ref{}, ErrBadRef
}

// MustParseRef is ParseRef for constants in tests and examples; it panics on error.
func MustParseRef(s string) Ref {
	r, err := ParseRef(s)
	if err != nil {
		panic(err)
	}
	return r
}

// String returns the canonical "scheme:name" form, or "" for the zero Ref.
func (r Ref) String() string {
	if r.Scheme == SchemeNone {
		return ""
	}
	return r.Scheme.String() + ":" + r.Name
}

// IsZero reports whether r is the zero Ref.
func (r Ref) IsZero() bool { return r == Ref{} }

// MarshalText implements encoding.TextMarshaler (the String form).
func (r Ref) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseRef; empty text gives
// the zero Ref.
func (r *Ref) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*r = Ref{}
		return nil
	}
	v, err := ParseRef(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

func validEnvName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// validItemName is the rule for keyring and file-store names (and venues): short,
// printable, no separators that could collide with the item naming scheme.
func validItemName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// LooksLikeKey reports whether s is 64 hex digits with an optional 0x (surrounding
// space ignored): the shape of a raw secp256k1 private key. Command lines use it to
// refuse, without echoing, a key pasted as an argument.
func LooksLikeKey(s string) bool { return looksLikeKey(s) }

func looksLikeKey(s string) bool {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

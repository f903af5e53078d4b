package secrets

import (
	"crypto/subtle"
	"fmt"

	"go.uber.org/zap/zapcore"
)

// Redacted is what every rendering of a Secret (fmt, JSON, text, zap) shows instead of
// the value.
const Redacted = "[REDACTED]"

// Secret holds secret bytes (a passphrase, an API secret, a hex private key) and never
// reveals them by accident: String, GoString, Format (every verb), MarshalJSON,
// MarshalText and zap's MarshalLogObject all render Redacted. The only way to the
// bytes is Reveal, which makes every use greppable.
//
// The bytes live behind a pointer, so printing a struct that holds a Secret in an
// unexported field (where fmt cannot call methods) shows an address, not the value.
// Copies of a Secret share the buffer: Destroy on any copy zeroes it for all.
//
// The zero value is an empty secret. A Secret is not safe for concurrent Destroy
// and Reveal; share it read-only or guard it.
type Secret struct{ p *secretBuf }

type secretBuf struct{ b []byte }

// NewSecret wraps b, taking ownership: the caller must not keep or modify b.
func NewSecret(b []byte) Secret {
	if len(b) == 0 {
		return Secret{}
	}
	return Secret{p: &secretBuf{b: b}}
}

// SecretString copies s into a new Secret. The string itself cannot be zeroed; prefer
// NewSecret when the value arrives as bytes.
func SecretString(s string) Secret { return NewSecret([]byte(s)) }

// Reveal returns the secret bytes (nil for an empty secret). The slice aliases the
// Secret's buffer: it is zeroed by Destroy, and the caller must not retain it
// beyond the Secret's life.
func (s Secret) Reveal() []byte {
	if s.p == nil {
		return nil
	}
	return s.p.b
}

// Len returns the length of the secret in bytes.
func (s Secret) Len() int { return len(s.Reveal()) }

// IsZero reports whether the secret is empty (or destroyed).
func (s Secret) IsZero() bool { return s.Len() == 0 }

// Equal compares two secrets in constant time with respect to their contents.
func (s Secret) Equal(o Secret) bool { return subtle.ConstantTimeCompare(s.Reveal(), o.Reveal()) == 1 }

// Destroy overwrites the bytes with zeros and empties the secret (for every copy).
// It is safe to call more than once and on the zero value.
func (s Secret) Destroy() {
	if s.p == nil {
		return
	}
	clear(s.p.b)
	s.p.b = nil
}

// String implements fmt.Stringer; it returns Redacted.
func (s Secret) String() string { return Redacted }

// GoString implements fmt.GoStringer; it returns Redacted.
func (s Secret) GoString() string { return Redacted }

// Format implements fmt.Formatter: every verb (%v %+v %#v %s %q %x %X %d ...) prints
// Redacted.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Redacted)) }

// MarshalJSON renders the JSON string "[REDACTED]".
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText renders Redacted (so YAML, TOML and text encoders never see the value).
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// MarshalLogObject implements zapcore.ObjectMarshaler: zap.Any and zap.Object log
// {"value": "[REDACTED]"}.
func (s Secret) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("value", Redacted)
	return nil
}

package auth

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"go.uber.org/zap/zapcore"
)

// Credentials are the L2 API credentials of one (address, nonce): the API key (a
// UUID, not secret), the base64 HMAC secret and the passphrase (both secret).
//
// String, GoString, every fmt verb, zap, slog and JSON renderings show the API key
// only: the secret and the passphrase never reach logs by accident. Code that must
// transmit or store them (the API-key response, a keyring) reads the fields
// explicitly.
type Credentials struct {
	APIKey     string
	Secret     string
	Passphrase string
}

const redacted = "[redacted]"

// String shows the API key only.
func (c Credentials) String() string {
	return "Credentials{apiKey: " + c.APIKey + ", secret: " + redacted + ", passphrase: " + redacted + "}"
}

// GoString shows the API key only.
func (c Credentials) GoString() string { return "auth." + c.String() }

// Format makes every fmt verb (%v, %+v, %#v, %s, %x, ...) print String.
func (c Credentials) Format(f fmt.State, verb rune) { fmt.Fprint(f, c.String()) }

// MarshalLogObject implements zapcore.ObjectMarshaler with the API key only.
func (c Credentials) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("apiKey", c.APIKey)
	enc.AddString("secret", redacted)
	enc.AddString("passphrase", redacted)
	return nil
}

// LogValue implements slog.LogValuer with the API key only.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("apiKey", c.APIKey), slog.String("secret", redacted), slog.String("passphrase", redacted))
}

// MarshalJSON emits the API key only, so that a Credentials logged or marshalled by
// accident leaks nothing. Use api.APIKeyCreds to put credentials on the wire.
func (c Credentials) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		APIKey     string `json:"apiKey"`
		Secret     string `json:"secret"`
		Passphrase string `json:"passphrase"`
	}{c.APIKey, redacted, redacted})
}

// maxSecretTries bounds the regeneration loop of NewSecret. One try succeeds with
// probability (62/64)^43 ≈ 0.26, so 256 tries fail with probability below 10^-33;
// reaching the bound means the random source is broken.
const maxSecretTries = 256

// ErrRandom is returned when the random source fails or produces output that can
// never be accepted.
var ErrRandom = errors.New("auth: random source failed")

// GenerateCredentials returns fresh server-side credentials drawn from rand (use
// crypto/rand.Reader; tests inject a seeded source): a UUID v4 API key, a secret of
// 32 random bytes in padded base64 using only [A-Za-z0-9] before the trailing '='
// (identical in the standard and URL-safe alphabets, so every client version decodes
// it the same way, dialect §2.3) and a 64-hex-digit passphrase.
func GenerateCredentials(rand io.Reader) (Credentials, error) {
	key, err := NewAPIKey(rand)
	if err != nil {
		return Credentials{}, err
	}
	secret, err := NewSecret(rand)
	if err != nil {
		return Credentials{}, err
	}
	var p [32]byte
	if _, err := io.ReadFull(rand, p[:]); err != nil {
		return Credentials{}, ErrRandom
	}
	pass := hex.EncodeToString(p[:])
	clear(p[:])
	return Credentials{APIKey: key, Secret: secret, Passphrase: pass}, nil
}

// NewAPIKey returns a random RFC 4122 version-4 UUID in canonical lower-case form.
func NewAPIKey(rand io.Reader) (string, error) {
	var u [16]byte
	if _, err := io.ReadFull(rand, u[:]); err != nil {
		return "", ErrRandom
	}
	return UUIDv4(u), nil
}

// UUIDv4 formats 16 bytes as an RFC 4122 version-4 UUID in canonical lower-case
// form (8-4-4-4-12 hex digits), overwriting the version and variant bits: random
// bytes give a random UUID (API keys), a digest a deterministic one.
func UUIDv4(u [16]byte) string {
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// NewSecret returns 32 random bytes as padded base64 that contains only [A-Za-z0-9]
// and the trailing '=' (regenerated until it does; see maxSecretTries).
func NewSecret(rand io.Reader) (string, error) {
	var raw [32]byte
	var enc [44]byte
	defer clear(raw[:])
	defer clear(enc[:])
	for range maxSecretTries {
		if _, err := io.ReadFull(rand, raw[:]); err != nil {
			return "", ErrRandom
		}
		base64.StdEncoding.Encode(enc[:], raw[:])
		if alphanumeric(enc[:43]) {
			return string(enc[:]), nil
		}
	}
	return "", ErrRandom
}

func alphanumeric(b []byte) bool {
	for _, c := range b {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

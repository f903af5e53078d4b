package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/market"
)

// Credentials are a venue's L2 API credentials for one wallet: the key's public
// identifier, the HMAC secret (base64) and the passphrase. Key is not secret (it
// travels in request headers); Secret and Passphrase are, and render as Redacted.
//
// The zero value is "no credentials". The owner destroys them with Destroy.
type Credentials struct {
	Key        string
	Secret     Secret
	Passphrase Secret
}

// IsZero reports whether c holds nothing.
func (c Credentials) IsZero() bool { return c.Key == "" && c.Secret.IsZero() && c.Passphrase.IsZero() }

// Destroy zeroes the secret parts.
func (c Credentials) Destroy() {
	c.Secret.Destroy()
	c.Passphrase.Destroy()
}

// String shows the key identifier only.
func (c Credentials) String() string {
	return "api key " + c.Key + " (secret and passphrase " + Redacted + ")"
}

// GoString implements fmt.GoStringer like String.
func (c Credentials) GoString() string { return c.String() }

// Format implements fmt.Formatter: every verb prints String.
func (c Credentials) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// MarshalJSON renders {"key": …, "secret": "[REDACTED]", "passphrase": "[REDACTED]"}.
// It is for diagnostics; the stores use their own encoding.
func (c Credentials) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Key        string `json:"key"`
		Secret     Secret `json:"secret"`
		Passphrase Secret `json:"passphrase"`
	}{c.Key, c.Secret, c.Passphrase})
}

// MarshalLogObject implements zapcore.ObjectMarshaler: the key id only.
func (c Credentials) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("key", c.Key)
	enc.AddString("secret", Redacted)
	enc.AddString("passphrase", Redacted)
	return nil
}

// ErrBadCredentials is returned by ParseCredentials; it never includes the input.
var ErrBadCredentials = errors.New(`invalid API credentials: want JSON {"key":"…","secret":"…","passphrase":"…"} (optionally "address":"0x…") or key:secret:passphrase`)

// maxCredentials bounds the text ParseCredentials accepts.
const maxCredentials = 8 << 10

// ParseCredentials reads API credentials from text, as an env: variable or a store
// item holds them. Two forms are accepted:
//
//	{"key":"…","secret":"…","passphrase":"…","address":"0x…"}
//	key:secret:passphrase
//
// In JSON, "apiKey"/"api_key", "api_secret" and "api_passphrase" are accepted as
// aliases (the spellings of the service's SDKs), and "address", when present, is
// returned so the caller can check the credentials belong to the wallet. None of the
// three parts may be empty, and in the compact form none contains ':' (base64, UUIDs
// and hex never do). The caller keeps ownership of b and should zero it.
func ParseCredentials(b []byte) (Credentials, market.Address, error) {
	b = trimSpace(b)
	if len(b) == 0 || len(b) > maxCredentials || !utf8.Valid(b) {
		return Credentials{}, market.Address{}, ErrBadCredentials
	}
	if b[0] == '{' {
		return parseCredentialsJSON(b)
	}
	parts := bytes.Split(b, []byte{':'})
	if len(parts) != 3 {
		return Credentials{}, market.Address{}, ErrBadCredentials
	}
	for _, p := range parts {
		if len(p) == 0 || bytes.ContainsAny(p, " \t\r\n") {
			return Credentials{}, market.Address{}, ErrBadCredentials
		}
	}
	return Credentials{
		Key:        string(parts[0]),
		Secret:     NewSecret(bytes.Clone(parts[1])),
		Passphrase: NewSecret(bytes.Clone(parts[2])),
	}, market.Address{}, nil
}

func parseCredentialsJSON(b []byte) (Credentials, market.Address, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Credentials{}, market.Address{}, ErrBadCredentials
	}
	field := func(names ...string) ([]byte, error) {
		var found []byte
		for _, n := range names {
			v, ok := raw[n]
			if !ok {
				continue
			}
			if found != nil {
				clear(found)
				return nil, ErrBadCredentials // two spellings of one field
			}
			s, err := unquoteJSON(v)
			if err != nil || len(s) == 0 {
				clear(s)
				return nil, ErrBadCredentials
			}
			found = s
		}
		if found == nil {
			return nil, ErrBadCredentials
		}
		return found, nil
	}
	key, err := field("key", "apiKey", "api_key")
	if err != nil {
		return Credentials{}, market.Address{}, err
	}
	secret, err := field("secret", "api_secret")
	if err != nil {
		return Credentials{}, market.Address{}, err
	}
	pass, err := field("passphrase", "api_passphrase")
	if err != nil {
		clear(secret)
		return Credentials{}, market.Address{}, err
	}
	var addr market.Address
	if v, ok := raw["address"]; ok {
		if err := json.Unmarshal(v, &addr); err != nil {
			clear(secret)
			clear(pass)
			return Credentials{}, market.Address{}, ErrBadCredentials
		}
	}
	for k := range raw {
		switch k {
		case "key", "apiKey", "api_key", "secret", "api_secret", "passphrase", "api_passphrase", "address":
		default:
			clear(secret)
			clear(pass)
			return Credentials{}, market.Address{}, ErrBadCredentials
		}
	}
	return Credentials{Key: string(key), Secret: NewSecret(secret), Passphrase: NewSecret(pass)}, addr, nil
}

// unquoteJSON decodes a JSON string into a new byte slice the caller can zero. Plain
// strings (no escapes, the only kind base64, UUIDs and hex produce) never pass
// through a Go string.
func unquoteJSON(v json.RawMessage) ([]byte, error) {
	v = trimSpace(v)
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, ErrBadCredentials
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		for _, c := range inner {
			if c < 0x20 || c == '"' {
				return nil, ErrBadCredentials
			}
		}
		return bytes.Clone(inner), nil
	}
	var s string // escaped input: rare; this path leaves an unzeroable copy
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, ErrBadCredentials
	}
	return []byte(s), nil
}

// encodeCredentials renders c as the JSON a store item holds, into a buffer the
// caller destroys (through the returned Secret).
func encodeCredentials(c Credentials, addr market.Address) Secret {
	var b []byte
	b = append(b, `{"key":`...)
	b = appendJSONString(b, []byte(c.Key))
	b = append(b, `,"secret":`...)
	b = appendJSONString(b, c.Secret.Reveal())
	b = append(b, `,"passphrase":`...)
	b = appendJSONString(b, c.Passphrase.Reveal())
	b = append(b, `,"address":"`...)
	b = append(b, addr.String()...)
	b = append(b, `"}`...)
	return NewSecret(b)
}

func appendJSONString(dst, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// validateCredentials checks c before it is stored.
func validateCredentials(c Credentials) error {
	if c.Key == "" || c.Secret.IsZero() || c.Passphrase.IsZero() || strings.ContainsAny(c.Key, "\x00\n") {
		return errors.New("incomplete API credentials: key, secret and passphrase are all required")
	}
	return nil
}

// CredentialInfo describes stored API credentials without their secret parts.
type CredentialInfo struct {
	Venue   string
	Address market.Address
	// Key is the API key's public identifier.
	Key string
	// Backend is where they are stored.
	Backend Backend
}

// CredentialStore keeps API credentials keyed by venue and wallet address in one
// Vault: what `pitboss keys create|derive|list|delete` call. Live lookups that fall
// back through several backends use Resolver.Credentials instead. Venue names follow
// the keyring-name rule (letters, digits, '.', '_', '-').
//
// Safe for concurrent use (as safe as its Vault).
type CredentialStore struct{ v Vault }

// NewCredentialStore returns a store over v.
func NewCredentialStore(v Vault) *CredentialStore { return &CredentialStore{v: v} }

// Vault returns the underlying vault.
func (s *CredentialStore) Vault() Vault { return s.v }

// Put stores c for addr on venue, replacing earlier credentials. c stays owned by
// the caller.
func (s *CredentialStore) Put(ctx context.Context, venue string, addr market.Address, c Credentials) error {
	if !validItemName(venue) {
		return fmt.Errorf("venue: %w", ErrBadName)
	}
	if err := validateCredentials(c); err != nil {
		return err
	}
	val := encodeCredentials(c, addr)
	defer val.Destroy()
	return s.v.Put(ctx, Entry{Name: CredentialItem(venue, addr), Address: addr, APIKey: c.Key}, val)
}

// Get returns the credentials of addr on venue, or an error wrapping ErrNotFound.
// The caller destroys them.
func (s *CredentialStore) Get(ctx context.Context, venue string, addr market.Address) (Credentials, error) {
	if !validItemName(venue) {
		return Credentials{}, fmt.Errorf("venue: %w", ErrBadName)
	}
	return getCredentials(ctx, s.v, venue, addr)
}

func getCredentials(ctx context.Context, v Vault, venue string, addr market.Address) (Credentials, error) {
	val, err := v.Get(ctx, CredentialItem(venue, addr))
	if err != nil {
		return Credentials{}, err
	}
	defer val.Destroy()
	c, stored, err := ParseCredentials(val.Reveal())
	if err != nil {
		return Credentials{}, fmt.Errorf("stored credentials for %s on %s in %s: %w", addr, venue, v.Location(), err)
	}
	if !stored.IsZero() && stored != addr {
		c.Destroy()
		return Credentials{}, fmt.Errorf("stored credentials for %s on %s name another address %s", addr, venue, stored)
	}
	return c, nil
}

// List describes every stored credential (never a secret), sorted by venue and
// address.
func (s *CredentialStore) List(ctx context.Context) ([]CredentialInfo, error) {
	entries, err := s.v.List(ctx, apiPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]CredentialInfo, 0, len(entries))
	for _, e := range entries {
		venue, _, ok := strings.Cut(strings.TrimPrefix(e.Name, apiPrefix), "/")
		if !ok {
			continue
		}
		out = append(out, CredentialInfo{Venue: venue, Address: e.Address, Key: e.APIKey, Backend: s.v.Backend()})
	}
	return out, nil
}

// Delete removes the credentials of addr on venue (ErrNotFound if there are none).
func (s *CredentialStore) Delete(ctx context.Context, venue string, addr market.Address) error {
	if !validItemName(venue) {
		return fmt.Errorf("venue: %w", ErrBadName)
	}
	return s.v.Delete(ctx, CredentialItem(venue, addr))
}

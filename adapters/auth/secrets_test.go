package auth

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// renderings returns every way a value commonly reaches a log line.
func renderings(t *testing.T, v any) []string {
	t.Helper()
	out := []string{
		fmt.Sprint(v), fmt.Sprintf("%v", v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v),
		fmt.Sprintf("%s", v), fmt.Sprintf("%x", v), fmt.Sprintf("%q", v),
	}
	if b, err := json.Marshal(v); err == nil {
		out = append(out, string(b))
	}
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(core)
	log.Info("any", zap.Any("v", v))
	if m, ok := v.(zapcore.ObjectMarshaler); ok {
		log.Info("object", zap.Object("v", m))
	}
	for _, e := range logs.All() {
		out = append(out, fmt.Sprint(e.ContextMap()))
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("slog", "v", v)
	out = append(out, buf.String())
	return out
}

func assertHidden(t *testing.T, v any, secrets ...string) {
	t.Helper()
	for _, r := range renderings(t, v) {
		for _, s := range secrets {
			if s != "" && strings.Contains(strings.ToLower(r), strings.ToLower(s)) {
				t.Errorf("rendering %q reveals a secret", r)
			}
		}
	}
}

func TestKeySignerNeverRevealsTheKey(t *testing.T) {
	v := testVectors(t)
	s := testSigner(t)
	key := strings.TrimPrefix(v.Key, "0x")
	assertHidden(t, s, key, key[:16], key[48:])
	if !strings.Contains(s.String(), v.Address) {
		t.Errorf("String() = %q should show the address", s.String())
	}
	// Constructor errors never echo the input.
	for _, bad := range []string{"0x" + strings.Repeat("zz", 32), strings.Repeat("ff", 32), key[:62]} {
		_, err := NewKeySignerFromHex(bad)
		if err == nil || strings.Contains(err.Error(), bad[4:20]) {
			t.Errorf("NewKeySignerFromHex(%.8s…) error %v", bad, err)
		}
	}
}

func TestKeySignerZeroWipesTheKey(t *testing.T) {
	s, err := NewKeySignerFromHex(testVectors(t).Key)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the test checks that the deprecated field is wiped
	d := s.key.D
	words := d.Bits()
	if _, err := s.SignDigest([32]byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, w := range words {
		if w != 0 {
			t.Fatalf("key words not wiped: %x", words)
		}
	}
	if d.Sign() != 0 {
		t.Errorf("key not zero after Close")
	}
	if _, err := s.SignDigest([32]byte{1}); !errors.Is(err, ErrSignerClosed) {
		t.Errorf("SignDigest after Close: %v", err)
	}
	s.Zero() // idempotent
	var zero KeySigner
	if _, err := zero.SignDigest([32]byte{}); !errors.Is(err, ErrSignerClosed) {
		t.Errorf("zero KeySigner signs: %v", err)
	}
}

func TestKeySignerSignaturesAreLowSWithV27or28(t *testing.T) {
	s := testSigner(t)
	r := rand.New(rand.NewChaCha8([32]byte{7}))
	for i := range 64 {
		var d [32]byte
		for j := range d {
			d[j] = byte(r.Uint32())
		}
		sig, err := s.SignDigest(d)
		if err != nil {
			t.Fatal(err)
		}
		if sig[64] != 27 && sig[64] != 28 {
			t.Fatalf("digest %d: v = %d", i, sig[64])
		}
		if bytes.Compare(sig[32:64], curveHalfN[:]) > 0 {
			t.Fatalf("digest %d: high s", i)
		}
		if err := VerifyDigest(d, sig, s.Address()); err != nil {
			t.Fatalf("digest %d: %v", i, err)
		}
	}
}

func TestCredentialsNeverRevealSecretOrPassphrase(t *testing.T) {
	c := Credentials{APIKey: "0b9e4ce5-0a4b-4b38-9ab2-3c1f3a2f10d4", Secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=", Passphrase: strings.Repeat("ab", 32)}
	assertHidden(t, c, c.Secret, c.Passphrase, c.Secret[:12], c.Passphrase[:12])
	assertHidden(t, &c, c.Secret, c.Passphrase)
	if !strings.Contains(c.String(), c.APIKey) {
		t.Errorf("String() = %q should show the API key", c.String())
	}
	k, err := NewL2Key(addrOf(1), c)
	if err != nil {
		t.Fatal(err)
	}
	assertHidden(t, k, c.Secret, c.Passphrase)
	h, _ := k.SignRequest(1, "GET", "/", nil)
	assertHidden(t, h, c.Passphrase, h.Signature)
}

func addrOf(b byte) (a [20]byte) { a[19] = b; return a }

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestGenerateCredentialsFormats(t *testing.T) {
	r := rand.New(rand.NewChaCha8([32]byte{42}))
	reader := readerFunc(func(p []byte) (int, error) {
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		return len(p), nil
	})
	seen := map[string]bool{}
	for i := range 200 {
		c, err := GenerateCredentials(reader)
		if err != nil {
			t.Fatal(err)
		}
		if !uuidV4.MatchString(c.APIKey) {
			t.Fatalf("API key %q is not a UUID v4", c.APIKey)
		}
		if len(c.Secret) != 44 || c.Secret[43] != '=' || !alphanumeric([]byte(c.Secret[:43])) {
			t.Fatalf("secret %d is not alphanumeric padded base64", i)
		}
		raw, err := DecodeSecret(c.Secret)
		if err != nil || len(raw) != 32 {
			t.Fatalf("secret %d decodes to %d bytes: %v", i, len(raw), err)
		}
		if len(c.Passphrase) != 64 {
			t.Fatalf("passphrase length %d", len(c.Passphrase))
		}
		if _, err := hex.DecodeString(c.Passphrase); err != nil {
			t.Fatalf("passphrase not hex")
		}
		if seen[c.APIKey] || seen[c.Secret] {
			t.Fatalf("repeated credentials")
		}
		seen[c.APIKey], seen[c.Secret] = true, true
		if _, err := NewL2Key(addrOf(1), c); err != nil {
			t.Fatalf("generated credentials unusable: %v", err)
		}
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestNewSecretRegeneratesUntilAlphanumeric(t *testing.T) {
	// First draw: 32 × 0xff encodes as "////…" and must be rejected; second draw:
	// zeros, "AAAA…=".
	src := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte{0xff}, 32)), bytes.NewReader(make([]byte, 32)))
	s, err := NewSecret(src)
	if err != nil || s != "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" {
		t.Errorf("NewSecret = %q, %v", s, err)
	}
	ones := readerFunc(func(p []byte) (int, error) {
		for i := range p {
			p[i] = 0xff
		}
		return len(p), nil
	})
	if _, err := NewSecret(ones); !errors.Is(err, ErrRandom) {
		t.Errorf("NewSecret over a stuck source: %v", err)
	}
	if _, err := GenerateCredentials(bytes.NewReader(make([]byte, 20))); !errors.Is(err, ErrRandom) {
		t.Errorf("GenerateCredentials over a short source: %v", err)
	}
}

// TestUUIDv4SetsVersionAndVariant checks UUIDv4's canonical form on fixed inputs:
// hex digits in 8-4-4-4-12 groups, version nibble 4 and variant bits 10 whatever
// the input held there.
func TestUUIDv4SetsVersionAndVariant(t *testing.T) {
	var seq [16]byte
	for i := range seq {
		seq[i] = byte(i)
	}
	tests := []struct {
		name string
		in   [16]byte
		want string
	}{
		{"zero", [16]byte{}, "00000000-0000-4000-8000-000000000000"},
		{"ones", [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "ffffffff-ffff-4fff-bfff-ffffffffffff"},
		{"sequence", seq, "00010203-0405-4607-8809-0a0b0c0d0e0f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := UUIDv4(tc.in)
			if got != tc.want || !uuidV4.MatchString(got) {
				t.Fatalf("UUIDv4(%x) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

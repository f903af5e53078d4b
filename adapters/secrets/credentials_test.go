package secrets

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

const (
	credKey    = "0f6f1a4c-9d1e-4c9b-8f7e-2b1d2e3f4a5b"
	credSecret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA=="
	credPass   = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b"
)

func TestParseCredentials(t *testing.T) {
	addr := testKeyAddr
	cases := []struct {
		name     string
		in       string
		wantAddr string
		err      error
	}{
		{"compact", credKey + ":" + credSecret + ":" + credPass, "", nil},
		{"compact with surrounding newline", "\n" + credKey + ":" + credSecret + ":" + credPass + "\n", "", nil},
		{"json", `{"key":"` + credKey + `","secret":"` + credSecret + `","passphrase":"` + credPass + `"}`, "", nil},
		{"json sdk spelling", `{"apiKey":"` + credKey + `","api_secret":"` + credSecret + `","api_passphrase":"` + credPass + `"}`, "", nil},
		{"json with address", `{"key":"` + credKey + `","secret":"` + credSecret + `","passphrase":"` + credPass + `","address":"` + addr + `"}`, addr, nil},
		{"json with escapes", `{"key":"` + credKey + `","secret":"c2Vj\u0063mV0","passphrase":"` + credPass + `"}`, "", nil},
		{"compact with two parts", credKey + ":" + credSecret, "", ErrBadCredentials},
		{"compact with four parts", credKey + ":" + credSecret + ":" + credPass + ":x", "", ErrBadCredentials},
		{"compact with empty part", credKey + "::" + credPass, "", ErrBadCredentials},
		{"compact with space", credKey + ":" + credSecret + " x:" + credPass, "", ErrBadCredentials},
		{"json missing passphrase", `{"key":"` + credKey + `","secret":"` + credSecret + `"}`, "", ErrBadCredentials},
		{"json empty secret", `{"key":"` + credKey + `","secret":"","passphrase":"` + credPass + `"}`, "", ErrBadCredentials},
		{"json duplicate spellings", `{"key":"a","apiKey":"b","secret":"` + credSecret + `","passphrase":"` + credPass + `"}`, "", ErrBadCredentials},
		{"json unknown field", `{"key":"a","secret":"` + credSecret + `","passphrase":"` + credPass + `","sekret":"x"}`, "", ErrBadCredentials},
		{"json number", `{"key":1,"secret":"` + credSecret + `","passphrase":"` + credPass + `"}`, "", ErrBadCredentials},
		{"json bad address", `{"key":"a","secret":"` + credSecret + `","passphrase":"` + credPass + `","address":"0x12"}`, "", ErrBadCredentials},
		{"broken json", `{"key":"a","secret":"` + credSecret, "", ErrBadCredentials},
		{"empty", "", "", ErrBadCredentials},
		{"invalid utf-8", "\xff:" + credSecret + ":" + credPass, "", ErrBadCredentials},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, a, err := ParseCredentials([]byte(c.in))
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v", err)
			}
			if err != nil {
				if err.Error() != ErrBadCredentials.Error() {
					t.Fatal("error text is not the fixed message")
				}
				return
			}
			defer got.Destroy()
			if got.Key != credKey || got.Passphrase.Len() == 0 || got.Secret.Len() == 0 {
				t.Fatalf("got %v", got)
			}
			if c.wantAddr != "" && a.String() != c.wantAddr {
				t.Fatalf("address %s", a)
			}
		})
	}
}

func TestCredentialsEncodingRoundTrip(t *testing.T) {
	for _, secret := range []string{credSecret, `a"b\c`, "tab\tnew\nline", "ünïcode"} {
		t.Run(fmt.Sprintf("%q", secret), func(t *testing.T) {
			c := Credentials{Key: credKey, Secret: SecretString(secret), Passphrase: SecretString(credPass)}
			enc := encodeCredentials(c, testAddr(t))
			got, a, err := ParseCredentials(enc.Reveal())
			if err != nil {
				t.Fatal(err)
			}
			if got.Key != c.Key || !got.Secret.Equal(c.Secret) || !got.Passphrase.Equal(c.Passphrase) || a != testAddr(t) {
				t.Fatal("round trip changed the credentials")
			}
		})
	}
}

func FuzzParseCredentials(f *testing.F) {
	f.Add([]byte(credKey + ":" + credSecret + ":" + credPass))
	f.Add([]byte(`{"key":"k","secret":"s","passphrase":"p","address":"` + testKeyAddr + `"}`))
	f.Add([]byte(`{"apiKey":"k","api_secret":"s\u0022","api_passphrase":"p"}`))
	f.Add([]byte("::"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, _, err := ParseCredentials(b)
		if err != nil {
			if err != ErrBadCredentials {
				t.Fatalf("error %v is not the fixed message", err)
			}
			return
		}
		if c.Key == "" || c.Secret.IsZero() || c.Passphrase.IsZero() {
			t.Fatal("accepted incomplete credentials")
		}
		// What was accepted survives the store encoding.
		enc := encodeCredentials(c, market.Address{})
		again, _, err := ParseCredentials(enc.Reveal())
		if err != nil || again.Key != c.Key || !again.Secret.Equal(c.Secret) || !again.Passphrase.Equal(c.Passphrase) {
			t.Fatalf("store encoding round trip failed: %v", err)
		}
	})
}

func TestCredentialStore(t *testing.T) {
	ctx := context.Background()
	backends := []struct {
		name string
		v    func(t *testing.T) Vault
	}{
		{"file", func(t *testing.T) Vault {
			return newTinyFileVault(filepath.Join(t.TempDir(), "s.enc"), (&fixedPassphrase{pass: "p"}).fn)
		}},
		{"keyring", func(t *testing.T) Vault { return newMemKeyringVault(newMemKeyring()) }},
	}
	addr := testAddr(t)
	other, _ := market.ParseAddress("0x00000000000000000000000000000000000000aa")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := NewCredentialStore(b.v(t))
			c := Credentials{Key: credKey, Secret: SecretString(credSecret), Passphrase: SecretString(credPass)}
			if err := s.Put(ctx, "clob", addr, c); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "sandbox.local", other, Credentials{Key: "k2", Secret: SecretString("s2"), Passphrase: SecretString("p2")}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "clob", addr)
			if err != nil || got.Key != credKey || !got.Secret.Equal(c.Secret) || !got.Passphrase.Equal(c.Passphrase) {
				t.Fatalf("get: %v", err)
			}
			if _, err := s.Get(ctx, "clob", other); !errors.Is(err, ErrNotFound) {
				t.Fatalf("get other: %v", err)
			}
			list, err := s.List(ctx)
			if err != nil || len(list) != 2 {
				t.Fatalf("list %+v %v", list, err)
			}
			if list[0] != (CredentialInfo{Venue: "clob", Address: addr, Key: credKey, Backend: s.Vault().Backend()}) {
				t.Fatalf("list[0] %+v", list[0])
			}
			assertNoSecret(t, "list", fmt.Sprintf("%+v %#v", list, list), []byte(credSecret), []byte(credPass))
			if err := s.Delete(ctx, "clob", addr); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "clob", addr); !errors.Is(err, ErrNotFound) {
				t.Fatalf("second delete: %v", err)
			}
			t.Run("refuses incomplete credentials and bad venues", func(t *testing.T) {
				if err := s.Put(ctx, "clob", addr, Credentials{Key: "k"}); err == nil {
					t.Fatal("incomplete credentials stored")
				}
				for _, venue := range []string{"", "a/b", "host:8080", strings.Repeat("v", 65)} {
					if err := s.Put(ctx, venue, addr, c); !errors.Is(err, ErrBadName) {
						t.Fatalf("venue %q: %v", venue, err)
					}
				}
			})
		})
	}
}

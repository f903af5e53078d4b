package secrets

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)

func TestWriteKeystoreKDF(t *testing.T) {
	cases := []struct {
		kdf  KDF
		n, p int
	}{{KDFStandard, 1 << 18, 1}, {KDFLight, 1 << 12, 6}, {KDFInsecureTest, 16, 1}}
	for _, c := range cases {
		t.Run(c.kdf.String(), func(t *testing.T) {
			if n, p := c.kdf.scrypt(); n != c.n || p != c.p {
				t.Fatalf("scrypt n=%d p=%d", n, p)
			}
		})
	}
	t.Run("light file records its parameters", func(t *testing.T) {
		path, err := WriteKeystore(t.TempDir(), testKey(t), SecretString("p"), KDFLight, testNow)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		var h struct {
			Crypto struct {
				KDFParams struct{ N, R, P int } `json:"kdfparams"`
			} `json:"crypto"`
		}
		if err := json.Unmarshal(data, &h); err != nil || h.Crypto.KDFParams.N != 1<<12 || h.Crypto.KDFParams.P != 6 || h.Crypto.KDFParams.R != 8 {
			t.Fatalf("%+v %v", h, err)
		}
	})
}

func TestKeystoreRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keystore")
	k := testKey(t)
	pass := SecretString("keystore-pass-1")
	path, err := WriteKeystore(dir, k, pass, KDFInsecureTest, testNow)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("named like go-ethereum", func(t *testing.T) {
		want := "UTC--2026-03-04T05-06-07.000000008Z--" + testKeyAddr[2:]
		if filepath.Base(path) != want {
			t.Fatalf("file %s, want %s", filepath.Base(path), want)
		}
	})
	t.Run("file 0600 in a 0700 directory", func(t *testing.T) {
		fi, _ := os.Stat(path)
		di, _ := os.Stat(dir)
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Fatalf("file %v dir %v", fi.Mode(), di.Mode())
		}
	})
	t.Run("no key or passphrase in the file", func(t *testing.T) {
		data, _ := os.ReadFile(path)
		assertNoSecret(t, "keystore file", string(data), []byte(testKeyHex), pass.Reveal())
	})
	t.Run("address without decrypting", func(t *testing.T) {
		a, err := KeystoreAddress(path)
		if err != nil || a != testAddr(t) {
			t.Fatalf("%v %v", a, err)
		}
	})
	t.Run("decrypts with the passphrase", func(t *testing.T) {
		k2, err := OpenKeystore(path, pass)
		if err != nil {
			t.Fatal(err)
		}
		defer k2.Close()
		if k2.Address() != k.Address() || k2.Ref() != (Ref{SchemeKeystore, path}) {
			t.Fatalf("%v %v", k2.Address(), k2.Ref())
		}
	})
	t.Run("wrong passphrase", func(t *testing.T) {
		_, err := OpenKeystore(path, SecretString("nope"))
		if !errors.Is(err, ErrBadPassphrase) {
			t.Fatalf("err %v", err)
		}
		assertNoSecret(t, "error", err.Error(), []byte("nope"), pass.Reveal())
	})
	t.Run("never overwrites", func(t *testing.T) {
		if _, err := WriteKeystore(dir, k, pass, KDFInsecureTest, testNow); err == nil {
			t.Fatal("second write with the same name succeeded")
		}
	})
	t.Run("listed", func(t *testing.T) {
		files, bad, err := ListKeystores(dir)
		if err != nil || len(bad) != 0 || len(files) != 1 || files[0].Path != path || files[0].Address != k.Address() {
			t.Fatalf("%+v %v %v", files, bad, err)
		}
		if files[0].Ref().String() != "keystore:"+path {
			t.Fatal(files[0].Ref())
		}
	})
}

func TestKeystoreRefusesWidePermissions(t *testing.T) {
	dir := t.TempDir()
	k := testKey(t)
	path, err := WriteKeystore(dir, k, SecretString("p"), KDFInsecureTest, testNow)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		t.Run(mode.String(), func(t *testing.T) {
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			if _, err := OpenKeystore(path, SecretString("p")); !errors.Is(err, ErrInsecurePermissions) {
				t.Fatalf("open: %v", err)
			}
			if _, err := KeystoreAddress(path); !errors.Is(err, ErrInsecurePermissions) {
				t.Fatalf("address: %v", err)
			}
			_, bad, _ := ListKeystores(dir)
			if len(bad) != 1 {
				t.Fatalf("listing does not report the insecure file: %v", bad)
			}
		})
	}
}

// TestKeystoreReferenceVectors decrypts files written by other implementations:
// go-ethereum's own very-light scrypt fixture and the Web3 Secret Storage wiki's
// PBKDF2 vector.
func TestKeystoreReferenceVectors(t *testing.T) {
	cases := []struct {
		file, pass, addr string
	}{
		{"testdata/geth-very-light-scrypt.json", "", "0x45dea0fb0bba44f4fcf290bba71fd57d7117cbb8"},
		{"testdata/wiki-pbkdf2.json", "testpassword", "0x008aeeda4d805471df9b2a5b0f38a0c3bcba786b"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			path := copyPrivate(t, c.file, t.TempDir())
			k, err := OpenKeystore(path, SecretString(c.pass))
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			if k.Address().String() != c.addr {
				t.Fatalf("address %s, want %s", k.Address(), c.addr)
			}
		})
	}
}

func TestKeystoreHeaderValidation(t *testing.T) {
	base := func(kdf string, params map[string]any) []byte {
		b, _ := json.Marshal(map[string]any{
			"address": testKeyAddr[2:], "version": 3, "id": "3198bc9c-6672-5ab3-d995-4942343ae5b6",
			"crypto": map[string]any{"cipher": "aes-128-ctr", "kdf": kdf, "kdfparams": params, "ciphertext": "00", "mac": "00", "cipherparams": map[string]any{"iv": "00"}},
		})
		return b
	}
	cases := []struct {
		name string
		data []byte
		err  error
	}{
		{"standard scrypt", base("scrypt", map[string]any{"n": 1 << 18, "r": 8, "p": 1, "dklen": 32}), nil},
		{"wiki scrypt", base("scrypt", map[string]any{"n": 1 << 18, "r": 1, "p": 8, "dklen": 32}), nil},
		{"pbkdf2", base("pbkdf2", map[string]any{"c": 262144, "prf": "hmac-sha256", "dklen": 32}), nil},
		{"huge N", base("scrypt", map[string]any{"n": 1 << 24, "r": 8, "p": 1, "dklen": 32}), ErrKDFTooExpensive},
		{"huge memory", base("scrypt", map[string]any{"n": 1 << 21, "r": 8, "p": 1, "dklen": 32}), ErrKDFTooExpensive},
		{"huge p", base("scrypt", map[string]any{"n": 1 << 18, "r": 8, "p": 64, "dklen": 32}), ErrKDFTooExpensive},
		{"huge pbkdf2", base("pbkdf2", map[string]any{"c": 1 << 30, "prf": "hmac-sha256", "dklen": 32}), ErrKDFTooExpensive},
		{"N not a power of two", base("scrypt", map[string]any{"n": 1000, "r": 8, "p": 1, "dklen": 32}), ErrNotKeystore},
		{"dklen", base("scrypt", map[string]any{"n": 2, "r": 8, "p": 1, "dklen": 16}), ErrNotKeystore},
		{"unknown kdf", base("argon2", map[string]any{}), ErrNotKeystore},
		{"not json", []byte("{"), ErrNotKeystore},
		{"a private key, not a keystore", []byte(testKeyHex), ErrNotKeystore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseKeystoreHeader(c.data)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), testKeyHex) {
				t.Fatal("error echoes content")
			}
		})
	}
}

func FuzzParseKeystoreHeader(f *testing.F) {
	for _, p := range []string{"testdata/geth-very-light-scrypt.json", "testdata/wiki-pbkdf2.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":3,"crypto":{"cipher":"aes-128-ctr","kdf":"scrypt","kdfparams":{"n":4194304,"r":32,"p":64,"dklen":32}}}`))
	f.Add([]byte(testKeyHex))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := parseKeystoreHeader(data)
		if err != nil && !errors.Is(err, ErrNotKeystore) && !errors.Is(err, ErrKDFTooExpensive) {
			t.Fatalf("unexpected error %v", err)
		}
		if err != nil && len(data) >= 8 && strings.Contains(err.Error(), string(data)) {
			t.Fatal("error echoes input")
		}
	})
}

func BenchmarkKeystoreUnlock(b *testing.B) {
	for _, kdf := range []KDF{KDFLight, KDFStandard} {
		b.Run(kdf.String(), func(b *testing.B) {
			k, err := KeyFromHex([]byte(testKeyHex), Ref{})
			if err != nil {
				b.Fatal(err)
			}
			defer k.Close()
			path, err := WriteKeystore(b.TempDir(), k, SecretString("bench"), kdf, testNow)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				k2, err := OpenKeystore(path, SecretString("bench"))
				if err != nil {
					b.Fatal(err)
				}
				k2.Close()
			}
		})
	}
}

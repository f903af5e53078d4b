package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// newTinyFileVault returns a file vault with KDFInsecureTest (the KDF's cost is not
// under test; -race makes scrypt 10× slower).
func newTinyFileVault(path string, pass PassphraseFunc, opts ...FileOption) *FileVault {
	return NewFileVault(path, pass, append([]FileOption{WithFileKDF(KDFInsecureTest)}, opts...)...)
}

func TestFileVaultContract(t *testing.T) {
	testVaultContract(t, func(t *testing.T) Vault {
		p := &fixedPassphrase{pass: "store-pass"}
		v := newTinyFileVault(filepath.Join(t.TempDir(), "pitboss", "secrets.enc"), p.fn)
		t.Cleanup(func() { v.Close() })
		return v
	})
}

func TestFileScrypt(t *testing.T) {
	cases := []struct {
		kdf     KDF
		n, r, p int
	}{{KDFStandard, 1 << 18, 8, 1}, {KDFLight, 1 << 12, 8, 1}, {KDFInsecureTest, 16, 8, 1}}
	for _, c := range cases {
		t.Run(c.kdf.String(), func(t *testing.T) {
			n, r, p := fileScrypt(c.kdf)
			if n != c.n || r != c.r || p != c.p || checkScrypt(n, r, p) != nil {
				t.Fatalf("n=%d r=%d p=%d", n, r, p)
			}
		})
	}
}

func TestFileVaultAtRest(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "home")
	path := filepath.Join(dir, "secrets.enc")
	pass := &fixedPassphrase{pass: "store-pass-at-rest"}
	v := newTinyFileVault(path, pass.fn)
	defer v.Close()

	t.Run("reading a missing store asks nothing", func(t *testing.T) {
		if _, err := v.Get(ctx, WalletItem("a")); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		if _, err := v.List(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if pass.calls.Load() != 0 {
			t.Fatal("passphrase asked for a store that does not exist")
		}
		if ok, _ := v.Exists(); ok {
			t.Fatal("reading created the store")
		}
	})
	if err := v.Put(ctx, Entry{Name: WalletItem("a"), Address: testAddr(t)}, SecretString(testKeyHex)); err != nil {
		t.Fatal(err)
	}
	t.Run("created with a confirmed passphrase, asked once", func(t *testing.T) {
		if pass.calls.Load() != 1 || !pass.reqs[0].Confirm {
			t.Fatalf("requests %+v", pass.reqs)
		}
		if err := v.Put(ctx, Entry{Name: WalletItem("b")}, SecretString("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Get(ctx, WalletItem("b")); err != nil {
			t.Fatal(err)
		}
		if pass.calls.Load() != 1 {
			t.Fatal("derived key not cached")
		}
	})
	t.Run("0600 file in a 0700 directory", func(t *testing.T) {
		fi, _ := os.Stat(path)
		di, _ := os.Stat(dir)
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Fatalf("file %v dir %v", fi.Mode(), di.Mode())
		}
		lock, _ := os.Stat(path + ".lock")
		if lock.Mode().Perm() != 0o600 {
			t.Fatalf("lock %v", lock.Mode())
		}
	})
	t.Run("nothing in clear, not even names or addresses", func(t *testing.T) {
		data, _ := os.ReadFile(path)
		assertNoSecret(t, "store file", string(data), []byte(testKeyHex), []byte("store-pass-at-rest"))
		for _, s := range []string{"wallet/a", testKeyAddr, testKeyAddr[2:]} {
			if bytes.Contains(data, []byte(s)) {
				t.Fatalf("%q in clear", s)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Fatalf("temporary files left: %v", entries)
		}
	})
	t.Run("fresh nonce on every write", func(t *testing.T) {
		before, _ := os.ReadFile(path)
		if err := v.Put(ctx, Entry{Name: WalletItem("b")}, SecretString("x")); err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(path)
		var e1, e2 fileEnvelope
		if err := json.Unmarshal(before, &e1); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(after, &e2); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(e1.Nonce, e2.Nonce) || !bytes.Equal(e1.Salt, e2.Salt) {
			t.Fatal("nonce reused or salt changed")
		}
	})
	t.Run("another process (a new vault) needs the passphrase", func(t *testing.T) {
		p2 := &fixedPassphrase{pass: "store-pass-at-rest"}
		v2 := NewFileVault(path, p2.fn)
		defer v2.Close()
		s, err := v2.Get(ctx, WalletItem("a"))
		if err != nil || string(s.Reveal()) != testKeyHex || p2.calls.Load() != 1 || p2.reqs[0].Confirm {
			t.Fatalf("%v calls=%d", err, p2.calls.Load())
		}
	})
	t.Run("wrong passphrase", func(t *testing.T) {
		bad := &fixedPassphrase{pass: "wrong"}
		v3 := NewFileVault(path, bad.fn)
		_, err := v3.Get(ctx, WalletItem("a"))
		if !errors.Is(err, ErrBadPassphrase) {
			t.Fatalf("err %v", err)
		}
		assertNoSecret(t, "error", err.Error(), []byte("wrong"), []byte(testKeyHex))
		if !v3.dk.IsZero() {
			t.Fatal("a wrong key was cached")
		}
	})
	t.Run("close forgets the key", func(t *testing.T) {
		v.Close()
		if _, err := v.Get(ctx, WalletItem("a")); err != nil {
			t.Fatal(err)
		}
		if pass.calls.Load() != 2 {
			t.Fatalf("calls %d", pass.calls.Load())
		}
	})
}

func TestFileVaultRefusesInsecurePermissions(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "h")
	path := filepath.Join(dir, "secrets.enc")
	p := &fixedPassphrase{pass: "p"}
	v := newTinyFileVault(path, p.fn)
	if err := v.Put(ctx, Entry{Name: WalletItem("a")}, SecretString("x")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		file, dir os.FileMode
	}{
		{"group-readable file", 0o640, 0o700},
		{"world-readable file", 0o604, 0o700},
		{"group-writable directory", 0o600, 0o770},
		{"world-writable directory", 0o600, 0o777},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Chmod(path, c.file)
			_ = os.Chmod(dir, c.dir)
			defer os.Chmod(path, 0o600)
			defer os.Chmod(dir, 0o700)
			if _, err := v.Get(ctx, WalletItem("a")); !errors.Is(err, ErrInsecurePermissions) {
				t.Fatalf("get: %v", err)
			}
			if err := v.Put(ctx, Entry{Name: WalletItem("b")}, SecretString("x")); !errors.Is(err, ErrInsecurePermissions) {
				t.Fatalf("put: %v", err)
			}
		})
	}
	t.Run("readable directory is fine", func(t *testing.T) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o700)
		if _, err := v.Get(ctx, WalletItem("a")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestFileVaultDetectsTampering(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "secrets.enc")
	p := &fixedPassphrase{pass: "p"}
	v := newTinyFileVault(path, p.fn)
	if err := v.Put(ctx, Entry{Name: WalletItem("a")}, SecretString("x")); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)
	mutate := func(f func(e map[string]any)) []byte {
		var e map[string]any
		_ = json.Unmarshal(orig, &e)
		f(e)
		b, _ := json.Marshal(e)
		return b
	}
	cases := []struct {
		name string
		data []byte
		err  error
	}{
		{"flipped ciphertext byte", mutate(func(e map[string]any) {
			d := []byte(e["data"].(string))
			if d[3] == 'A' {
				d[3] = 'B'
			} else {
				d[3] = 'A'
			}
			e["data"] = string(d)
		}), ErrBadPassphrase},
		{"changed KDF parameter", mutate(func(e map[string]any) { e["n"] = 32 }), ErrBadPassphrase},
		{"changed salt", mutate(func(e map[string]any) { e["salt"] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" }), ErrBadPassphrase},
		{"unknown cipher", mutate(func(e map[string]any) { e["cipher"] = "aes-256-gcm" }), ErrStoreCorrupt},
		{"unknown format", mutate(func(e map[string]any) { e["format"] = "other" }), ErrStoreCorrupt},
		{"hostile KDF cost", mutate(func(e map[string]any) { e["n"] = 1 << 22; e["r"] = 32 }), ErrKDFTooExpensive},
		{"truncated", orig[:len(orig)/2], ErrStoreCorrupt},
		{"empty", []byte{}, ErrStoreCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			v2 := NewFileVault(path, (&fixedPassphrase{pass: "p"}).fn)
			if _, err := v2.Get(ctx, WalletItem("a")); !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
		})
	}
}

func TestFileVaultPassphraseErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		fn   PassphraseFunc
		err  error
	}{
		{"no source", nil, ErrNoPassphrase},
		{"empty new passphrase", (&fixedPassphrase{pass: ""}).fn, ErrEmptyPassphrase},
		{"source fails", func(context.Context, PassphraseRequest) (Secret, error) { return Secret{}, ErrPassphraseMismatch }, ErrPassphraseMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.enc")
			v := newTinyFileVault(path, c.fn)
			if err := v.Put(ctx, Entry{Name: WalletItem("a")}, SecretString("x")); !errors.Is(err, c.err) {
				t.Fatalf("err %v", err)
			}
			if ok, _ := v.Exists(); ok {
				t.Fatal("store created without a passphrase")
			}
		})
	}
}

// TestFileVaultTwoProcesses has two vaults (as two processes would) write the same
// file concurrently; the lock file keeps every write.
func TestFileVaultTwoProcesses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.enc")
	a := newTinyFileVault(path, (&fixedPassphrase{pass: "p"}).fn)
	if err := a.Put(ctx, Entry{Name: WalletItem("seed")}, SecretString("x")); err != nil {
		t.Fatal(err)
	}
	b := newTinyFileVault(path, (&fixedPassphrase{pass: "p"}).fn)
	var wg sync.WaitGroup
	for i, v := range []*FileVault{a, b} {
		wg.Go(func() {
			for j := range 5 {
				name := WalletItem(string(rune('a'+i)) + string(rune('0'+j)))
				if err := v.Put(ctx, Entry{Name: name}, SecretString("v")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l, err := a.List(ctx, "")
	if err != nil || len(l) != 11 {
		t.Fatalf("%d entries (%v), want 11", len(l), err)
	}
}

func TestFileVaultLogsNoSecrets(t *testing.T) {
	ctx := context.Background()
	core, logs := observer.New(zapcore.DebugLevel)
	path := filepath.Join(t.TempDir(), "s.enc")
	v := newTinyFileVault(path, (&fixedPassphrase{pass: "log-pass"}).fn, WithFileLogger(zap.New(core)))
	if err := v.Put(ctx, Entry{Name: WalletItem("a")}, SecretString(testKeyHex)); err != nil {
		t.Fatal(err)
	}
	bad := NewFileVault(path, (&fixedPassphrase{pass: "wrong-pass"}).fn, WithFileLogger(zap.New(core)))
	if _, err := bad.Get(ctx, WalletItem("a")); err == nil {
		t.Fatal("a wrong passphrase opened the store")
	}
	if logs.Len() < 2 {
		t.Fatalf("expected creation and failure logs, got %d", logs.Len())
	}
	for _, e := range logs.All() {
		assertNoSecret(t, "log", e.Message+" "+stringify(e.ContextMap()), []byte(testKeyHex), []byte("log-pass"), []byte("wrong-pass"))
	}
}

func stringify(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func FuzzParseEnvelope(f *testing.F) {
	f.Add([]byte(`{"format":"pitboss-secrets","version":1,"kdf":"scrypt","n":16,"r":8,"p":1,"salt":"AAAAAAAAAAAAAAAAAAAAAA==","cipher":"xchacha20-poly1305","nonce":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","data":"AAAAAAAAAAAAAAAAAAAAAA=="}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"n":4194304,"r":32,"p":64}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := parseEnvelope(data)
		if err != nil {
			if !errors.Is(err, ErrStoreCorrupt) && !errors.Is(err, ErrKDFTooExpensive) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if checkScrypt(env.N, env.R, env.P) != nil {
			t.Fatal("accepted bad parameters")
		}
		// Decrypting garbage must fail cleanly.
		if _, err := openEnvelope(NewSecret(make([]byte, 32)), env); err == nil {
			t.Log("decrypted with a zero key (possible only for crafted input)")
		}
	})
}

func BenchmarkFileVaultGet(b *testing.B) {
	ctx := context.Background()
	v := NewFileVault(filepath.Join(b.TempDir(), "s.enc"), (&fixedPassphrase{pass: "p"}).fn, WithFileKDF(KDFLight))
	if err := v.Put(ctx, Entry{Name: WalletItem("a")}, SecretString(testKeyHex)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := v.Get(ctx, WalletItem("a"))
		if err != nil {
			b.Fatal(err)
		}
		s.Destroy()
	}
}

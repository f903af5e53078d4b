package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/market"
)

// fixture is a resolver over every backend, holding the test key as "main" in each.
type fixture struct {
	res      *Resolver
	kr       *KeyringVault
	mem      *memKeyring
	file     *FileVault
	keystore string
	ksPass   *fixedPassphrase
	env      map[string]string
	logs     *observer.ObservedLogs
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	f := &fixture{mem: newMemKeyring(), ksPass: &fixedPassphrase{pass: "ks-pass"}, env: map[string]string{"WALLET_KEY": "0x" + testKeyHex}}
	f.kr = newMemKeyringVault(f.mem)
	f.file = newTinyFileVault(filepath.Join(dir, "secrets.enc"), (&fixedPassphrase{pass: "store-pass"}).fn)
	k := testKey(t)
	for _, v := range []Vault{f.kr, f.file} {
		if _, err := StoreWallet(ctx, v, "main", k); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if f.keystore, err = WriteKeystore(filepath.Join(dir, "keystore"), k, SecretString("ks-pass"), KDFInsecureTest, testNow); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	f.logs = logs
	f.res = NewResolver(WithEnv(func(k string) string { return f.env[k] }), WithKeyring(f.kr), WithFileVault(f.file),
		WithKeystorePassphrase(f.ksPass.fn), WithLogger(zap.New(core)))
	return f
}

func (f *fixture) assertLogsClean(t *testing.T, secrets ...[]byte) {
	t.Helper()
	for _, e := range f.logs.All() {
		assertNoSecret(t, "log "+e.Message, e.Message+" "+stringify(e.ContextMap()), secrets...)
	}
}

func TestResolverWallet(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	cases := []struct {
		ref string
		err error
	}{
		{"env:WALLET_KEY", nil},
		{"keyring:main", nil},
		{"file:main", nil},
		{"keystore:" + f.keystore, nil},
		{"env:UNSET", ErrNotFound},
		{"keyring:other", ErrNotFound},
		{"file:other", ErrNotFound},
		{"keystore:" + f.keystore + ".missing", os.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			ref := MustParseRef(c.ref)
			k, err := f.res.Wallet(ctx, ref)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if err != nil {
				assertNoSecret(t, "error", err.Error(), []byte(testKeyHex))
				return
			}
			defer k.Close()
			if k.Address() != testAddr(t) || k.Ref() != ref {
				t.Fatalf("%v %v", k.Address(), k.Ref())
			}
		})
	}
	f.assertLogsClean(t, []byte(testKeyHex), []byte("ks-pass"))
}

func TestResolverWalletErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("env holding garbage", func(t *testing.T) {
		f := newFixture(t)
		f.env["BAD"] = "0x" + testKeyHex[:60] + "zzzz"
		_, err := f.res.Wallet(ctx, MustParseRef("env:BAD"))
		if !errors.Is(err, ErrBadKey) {
			t.Fatalf("err %v", err)
		}
		assertNoSecret(t, "error", err.Error(), []byte(testKeyHex[:60]))
	})
	t.Run("keystore with a wrong passphrase", func(t *testing.T) {
		f := newFixture(t)
		f.ksPass.pass = "wrong"
		_, err := f.res.Wallet(ctx, MustParseRef("keystore:"+f.keystore))
		if !errors.Is(err, ErrBadPassphrase) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("keystore prompt names file and address", func(t *testing.T) {
		f := newFixture(t)
		k, err := f.res.Wallet(ctx, MustParseRef("keystore:"+f.keystore))
		if err != nil {
			t.Fatal(err)
		}
		k.Close()
		if p := f.ksPass.reqs[0].Prompt; !strings.Contains(p, f.keystore) || !strings.Contains(p, ChecksumAddress(testAddr(t))) || f.ksPass.reqs[0].Confirm {
			t.Fatalf("prompt %q", p)
		}
	})
	t.Run("a missing keystore asks no passphrase", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.res.Wallet(ctx, MustParseRef("keystore:/nonexistent/k.json")); err == nil {
			t.Fatal("a missing keystore opened")
		}
		if f.ksPass.calls.Load() != 0 {
			t.Fatal("asked for a passphrase before reading the file")
		}
	})
	t.Run("unconfigured backends", func(t *testing.T) {
		r := NewResolver()
		if _, err := r.Wallet(ctx, MustParseRef("keyring:main")); !errors.Is(err, ErrKeyringUnavailable) {
			t.Fatalf("keyring: %v", err)
		}
		if _, err := r.Wallet(ctx, MustParseRef("file:main")); err == nil {
			t.Fatal("file: no error")
		}
		if _, err := r.Wallet(ctx, MustParseRef("keystore:/x")); !errors.Is(err, ErrNoPassphrase) {
			t.Fatalf("keystore: %v", err)
		}
		if _, err := r.Wallet(ctx, Ref{}); !errors.Is(err, ErrBadRef) {
			t.Fatalf("zero ref: %v", err)
		}
	})
}

func TestResolverWalletAddressUnlocksOnlyWhenNeeded(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	for _, ref := range []string{"keystore:" + f.keystore, "keyring:main", "file:main", "env:WALLET_KEY"} {
		t.Run(ref, func(t *testing.T) {
			a, err := f.res.WalletAddress(ctx, MustParseRef(ref))
			if err != nil || a != testAddr(t) {
				t.Fatalf("%v %v", a, err)
			}
		})
	}
	if f.ksPass.calls.Load() != 0 {
		t.Fatal("keystore decrypted to learn an address it records")
	}
}

func TestResolverCredentialsChain(t *testing.T) {
	ctx := context.Background()
	addr := testAddr(t)
	other, _ := market.ParseAddress("0x00000000000000000000000000000000000000bb")
	creds := func(key string) Credentials {
		return Credentials{Key: key, Secret: SecretString(credSecret), Passphrase: SecretString(credPass)}
	}
	compact := func(key string) string { return key + ":" + credSecret + ":" + credPass }
	cases := []struct {
		name    string
		env     map[string]string
		keyring string // key id stored in the keyring ("" = none)
		file    string
		ref     string
		want    string
		backend Backend
		err     error
	}{
		{"env first", map[string]string{EnvCredentials: compact("from-env")}, "from-keyring", "from-file", "", "from-env", BackendEnv, nil},
		{"named env var", map[string]string{"MY_CREDS": compact("mine")}, "from-keyring", "", "env:MY_CREDS", "mine", BackendEnv, nil},
		{"named env var unset does not fall through", nil, "from-keyring", "", "env:MY_CREDS", "", "", ErrNotFound},
		{"keyring before file", nil, "from-keyring", "from-file", "", "from-keyring", BackendKeyring, nil},
		{"file last", nil, "", "from-file", "", "from-file", BackendFile, nil},
		{"nowhere", nil, "", "", "", "", "", ErrNotFound},
		{"env for another address is an error", map[string]string{EnvCredentials: `{"key":"k","secret":"s","passphrase":"p","address":"` + other.String() + `"}`}, "from-keyring", "", "", "", "", nil},
		{"malformed env is an error", map[string]string{EnvCredentials: "garbage"}, "from-keyring", "", "", "", "", ErrBadCredentials},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.env = c.env
			if c.keyring != "" {
				if err := NewCredentialStore(f.kr).Put(ctx, "clob", addr, creds(c.keyring)); err != nil {
					t.Fatal(err)
				}
			}
			if c.file != "" {
				if err := NewCredentialStore(f.file).Put(ctx, "clob", addr, creds(c.file)); err != nil {
					t.Fatal(err)
				}
			}
			var ref Ref
			if c.ref != "" {
				ref = MustParseRef(c.ref)
			}
			got, src, err := f.res.Credentials(ctx, "clob", addr, ref)
			if c.want == "" && err == nil {
				t.Fatalf("no error; got %v from %v", got, src)
			}
			if c.err != nil && !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if c.want != "" {
				if err != nil || got.Key != c.want || src.Backend != c.backend || !got.Secret.Equal(SecretString(credSecret)) {
					t.Fatalf("got %v from %v, %v", got, src, err)
				}
			}
			if err != nil {
				assertNoSecret(t, "error", err.Error(), []byte(credSecret), []byte(credPass))
			}
			f.assertLogsClean(t, []byte(credSecret), []byte(credPass), []byte(testKeyHex))
		})
	}
}

func TestResolverCredentialsBackendFailureStopsChain(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	if err := NewCredentialStore(f.file).Put(ctx, "clob", testAddr(t), Credentials{Key: "stale", Secret: SecretString("s"), Passphrase: SecretString("p")}); err != nil {
		t.Fatal(err)
	}
	f.mem.fail = errors.New("org.freedesktop.DBus.Error.NoReply: keyring crashed")
	_, _, err := f.res.Credentials(ctx, "clob", testAddr(t), Ref{})
	if err == nil || !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("err %v: a failing keyring must not fall through to an older copy", err)
	}
}

func TestChooseVault(t *testing.T) {
	ctx := context.Background()
	fv := NewFileVault(filepath.Join(t.TempDir(), "s.enc"), nil)
	up := newMemKeyringVault(newMemKeyring())
	down := NewKeyring(WithKeyringEnv(func(string) string { return "" }))
	cases := []struct {
		name   string
		choice Backend
		kr     *KeyringVault
		want   Backend
		err    error
	}{
		{"auto picks a working keyring", "", up, BackendKeyring, nil},
		{"auto never falls back to the file silently", "", down, "", ErrNoSecretStore},
		{"auto without keyring", "", nil, "", ErrNoSecretStore},
		{"explicit file", BackendFile, down, BackendFile, nil},
		{"explicit keyring that is down", BackendKeyring, down, "", ErrKeyringUnavailable},
		{"unknown", "vault", up, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := ChooseVault(ctx, c.choice, c.kr, fv)
			if c.want == "" {
				if err == nil || (c.err != nil && !errors.Is(err, c.err)) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil || v.Backend() != c.want {
				t.Fatalf("%v %v", v, err)
			}
		})
	}
	t.Run("auto explains why the keyring is unusable", func(t *testing.T) {
		_, err := ChooseVault(ctx, "", down, fv)
		if !errors.Is(err, ErrKeyringUnavailable) || !strings.Contains(err.Error(), "DBUS_SESSION_BUS_ADDRESS") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestHomeDir(t *testing.T) {
	cfg, err := os.UserConfigDir()
	if err != nil {
		t.Skip(err)
	}
	cases := []struct {
		name, override, env, want string
	}{
		{"flag wins", "/flag", "/env", "/flag"},
		{"env next", "", "/env", "/env"},
		{"config dir by default", "", "", filepath.Join(cfg, "pitboss")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := HomeDir(c.override, func(k string) string {
				if k == EnvHome {
					return c.env
				}
				return ""
			})
			if err != nil || got != c.want {
				t.Fatalf("%q %v", got, err)
			}
		})
	}
	l := Layout{Home: "/h"}
	if l.KeystoreDir() != "/h/keystore" || l.StoreFile() != "/h/secrets.enc" || l.KeyringLockFile() != "/h/keyring.lock" {
		t.Fatal(l)
	}
}

func ExampleResolver_Wallet() {
	env := map[string]string{"BOT_KEY": testKeyHex}
	r := NewResolver(WithEnv(func(k string) string { return env[k] }))
	k, err := r.Wallet(context.Background(), MustParseRef("env:BOT_KEY"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close() // zeroes the private key
	fmt.Println(ChecksumAddress(k.Address()))
	fmt.Println(k) // never the key
	// Output:
	// 0x2c7536E3605D9C16a7a3D7b1898e529396a65c23
	// wallet 0x2c7536e3605d9c16a7a3d7b1898e529396a65c23 (env:BOT_KEY)
}

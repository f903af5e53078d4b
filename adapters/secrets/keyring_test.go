package secrets

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/secrets/secretstest"
)

func TestKeyringVaultContractInMemory(t *testing.T) {
	testVaultContract(t, func(t *testing.T) Vault {
		return newMemKeyringVault(newMemKeyring(), WithKeyringLockFile(filepath.Join(t.TempDir(), "keyring.lock")))
	})
}

// TestKeyringVaultRealSecretService runs the Vault contract against gnome-keyring on
// a private session bus, and reads back with secret-tool (libsecret) to prove the
// items really are in the Secret Service, filed as documented.
func TestKeyringVaultRealSecretService(t *testing.T) {
	secretstest.StartSecretService(t)
	n := 0
	testVaultContract(t, func(t *testing.T) Vault {
		n++ // a fresh service name per subtest: an empty vault each time
		return NewKeyring(WithKeyringService("pitboss-test-"+string(rune('a'+n))), WithKeyringLockFile(filepath.Join(t.TempDir(), "keyring.lock")))
	})

	t.Run("items are Secret Service items", func(t *testing.T) {
		ctx := context.Background()
		v := NewKeyring()
		if err := v.Probe(ctx); err != nil {
			t.Fatal(err)
		}
		if err := v.Put(ctx, Entry{Name: WalletItem("main"), Address: testAddr(t)}, SecretString(testKeyHex)); err != nil {
			t.Fatal(err)
		}
		tool, err := exec.LookPath("secret-tool")
		if err != nil {
			t.Skip("secret-tool (libsecret-tools) not installed")
		}
		out, err := exec.Command(tool, "lookup", "service", DefaultKeyringService, "username", "wallet/main").Output()
		if err != nil || string(out) != testKeyHex {
			t.Fatalf("secret-tool lookup: %v (%d bytes)", err, len(out))
		}
		idx, err := exec.Command(tool, "lookup", "service", DefaultKeyringService, "username", ".index").Output()
		if err != nil || !strings.Contains(string(idx), testKeyAddr) || strings.Contains(string(idx), testKeyHex) {
			t.Fatalf("index: %v", err)
		}
	})
	t.Run("a timeout bounds every call", func(t *testing.T) {
		v := NewKeyring(WithKeyringTimeout(time.Nanosecond))
		err := v.Probe(context.Background())
		if !errors.Is(err, ErrKeyringTimeout) {
			t.Skipf("the keyring answered within 1ns (%v)", err)
		}
		if err := v.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestKeyringVaultUnavailableWithoutSessionBus(t *testing.T) {
	m := newMemKeyring()
	v := NewKeyring(WithKeyringEnv(func(string) string { return "" }))
	v.api = m
	ctx := context.Background()
	calls := []struct {
		name string
		fn   func() error
	}{
		{"Probe", func() error { return v.Probe(ctx) }},
		{"Put", func() error { return v.Put(ctx, Entry{Name: WalletItem("a")}, SecretString("x")) }},
		{"Get", func() error { _, err := v.Get(ctx, WalletItem("a")); return err }},
		{"List", func() error { _, err := v.List(ctx, ""); return err }},
		{"Delete", func() error { return v.Delete(ctx, WalletItem("a")) }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.fn(); !errors.Is(err, ErrKeyringUnavailable) {
				t.Fatalf("err %v", err)
			}
		})
	}
	if m.calls.Load() != 0 {
		t.Fatal("go-keyring was called without a session bus (it would start a stray dbus-daemon)")
	}
	if err := v.Available(); err == nil || !strings.Contains(err.Error(), "DBUS_SESSION_BUS_ADDRESS") {
		t.Fatalf("Available: %v", err)
	}
}

// TestKeyringVaultLockedKeyring simulates a keyring whose calls never return (a
// locked collection waiting for a prompt): calls time out, the queue stays one deep,
// and Close reports the stuck call until it returns.
func TestKeyringVaultLockedKeyring(t *testing.T) {
	checkGoroutines(t)
	m := newMemKeyring()
	m.block = make(chan struct{})
	core, logs := observer.New(zapcore.DebugLevel)
	v := newMemKeyringVault(m, WithKeyringTimeout(30*time.Millisecond), WithKeyringLogger(zap.New(core)))
	ctx := context.Background()

	if _, err := v.Get(ctx, WalletItem("a")); !errors.Is(err, ErrKeyringTimeout) {
		t.Fatalf("first call: %v", err)
	}
	if _, err := v.Get(ctx, WalletItem("a")); !errors.Is(err, ErrKeyringTimeout) {
		t.Fatalf("second call: %v", err)
	}
	if n := m.calls.Load(); n != 1 {
		t.Fatalf("%d calls reached the keyring while one was stuck, want 1", n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := v.Get(cctx, WalletItem("a")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel2()
	if err := v.Close(short); err == nil {
		t.Fatal("Close returned while a call is stuck")
	}
	close(m.block) // the keyring unlocks
	if err := v.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Get(ctx, WalletItem("a")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after unlock: %v", err)
	}
	if logs.FilterMessage("keyring call timed out").Len() == 0 {
		t.Fatal("timeout not logged")
	}
}

func TestKeyringErrorClassification(t *testing.T) {
	cases := []struct {
		name string
		in   error
		want error
	}{
		{"not found", errors.New("x"), nil},
		{"no secret service", errors.New("The name org.freedesktop.secrets was not provided by any .service files"), ErrKeyringUnavailable},
		{"no dbus-launch", &exec.Error{Name: "dbus-launch", Err: exec.ErrNotFound}, ErrKeyringUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMemKeyring()
			m.fail = c.in
			v := newMemKeyringVault(m)
			_, err := v.Get(context.Background(), WalletItem("a"))
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestKeyringIndexHoldsNoSecret(t *testing.T) {
	m := newMemKeyring()
	v := newMemKeyringVault(m)
	ctx := context.Background()
	if err := v.Put(ctx, Entry{Name: WalletItem("a"), Address: testAddr(t)}, SecretString(testKeyHex)); err != nil {
		t.Fatal(err)
	}
	s, err := v.get(ctx, indexUser)
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, "index", string(s.Reveal()), []byte(testKeyHex))
	if !strings.Contains(string(s.Reveal()), testKeyAddr) {
		t.Fatal("index lacks the address")
	}
	if !strings.Contains(m.dump(), testKeyHex) {
		t.Fatal("the key itself was not stored")
	}
}

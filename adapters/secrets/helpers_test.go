package secrets

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/pitbossdev/pitboss/market"
)

// A well-known test key (web3.js documentation) and its address. Never a real wallet.
const (
	testKeyHex  = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	testKeyAddr = "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23"
)

func testAddr(t testing.TB) market.Address {
	t.Helper()
	a, err := market.ParseAddress(testKeyAddr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func testKey(t testing.TB) *Key {
	t.Helper()
	k, err := KeyFromHex([]byte(testKeyHex), Ref{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// secretForms returns the renderings under which a secret could leak: raw, hex
// (both cases), base64 (std and URL), and a 0x-prefixed hex for keys.
func secretForms(secrets ...[]byte) []string {
	var out []string
	for _, s := range secrets {
		if len(s) == 0 {
			continue
		}
		out = append(out, string(s), hex.EncodeToString(s), strings.ToUpper(hex.EncodeToString(s)),
			base64.StdEncoding.EncodeToString(s), base64.RawURLEncoding.EncodeToString(s))
	}
	return out
}

// assertNoSecret fails if text contains any rendering of any secret.
func assertNoSecret(t testing.TB, where, text string, secrets ...[]byte) {
	t.Helper()
	for _, f := range secretForms(secrets...) {
		if len(f) >= 6 && strings.Contains(text, f) {
			t.Fatalf("%s reveals a secret (%d-byte form found)", where, len(f))
		}
	}
}

// fixedPassphrase answers every request with pass and counts the requests.
type fixedPassphrase struct {
	pass  string
	calls atomic.Int32
	mu    sync.Mutex
	reqs  []PassphraseRequest
}

func (f *fixedPassphrase) fn(ctx context.Context, req PassphraseRequest) (Secret, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return SecretString(f.pass), nil
}

// memKeyring is an in-memory keyringAPI for unit tests of KeyringVault. block, when
// not nil, makes every call wait until it is closed (a locked keyring).
type memKeyring struct {
	mu    sync.Mutex
	items map[string]string
	block chan struct{}
	fail  error
	calls atomic.Int32
}

func newMemKeyring() *memKeyring { return &memKeyring{items: map[string]string{}} }

func (m *memKeyring) wait() error {
	m.calls.Add(1)
	if m.block != nil {
		<-m.block
	}
	return m.fail
}

func (m *memKeyring) Get(service, user string) (string, error) {
	if err := m.wait(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.items[service+"\x00"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (m *memKeyring) Set(service, user, pass string) error {
	if err := m.wait(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items[service+"\x00"+user] = pass
	return nil
}

func (m *memKeyring) Delete(service, user string) error {
	if err := m.wait(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.items[service+"\x00"+user]; !ok {
		return keyring.ErrNotFound
	}
	delete(m.items, service+"\x00"+user)
	return nil
}

// dump returns every stored value, for scanning.
func (m *memKeyring) dump() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for k, v := range m.items {
		b.WriteString(k + "=" + v + "\n")
	}
	return b.String()
}

// newMemKeyringVault returns a KeyringVault over m, available (a fake bus address).
func newMemKeyringVault(m *memKeyring, opts ...KeyringOption) *KeyringVault {
	v := NewKeyring(append([]KeyringOption{WithKeyringEnv(func(k string) string {
		if k == "DBUS_SESSION_BUS_ADDRESS" {
			return "unix:path=/nonexistent/fake-bus"
		}
		return ""
	})}, opts...)...)
	v.api = m
	return v
}

// copyPrivate copies a testdata file into dir with mode 0600.
func copyPrivate(t testing.TB, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// checkGoroutines fails the test if, once its other cleanups have run, more
// goroutines are alive than when it started (polling: exiting goroutines need a
// moment). Register it first so that it runs last.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Fatalf("%d goroutines leaked:\n%s", runtime.NumGoroutine()-before, buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

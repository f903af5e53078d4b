package server

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/host/hosttest"
)

// TestAPISecretsAreSealedAtRest: with a secret key, no API secret or passphrase is
// in the journal or the snapshots; a restart with the key authenticates the same
// credentials; without it, or with another key, the store does not open (ErrSealed).
// A store written in clear before the key was configured loads with it, and its next
// snapshot is sealed (version 2).
func TestAPISecretsAreSealedAtRest(t *testing.T) {
	key := bytes.Repeat([]byte{7}, SecretKeyLen)
	dir := t.TempDir()
	store := func(_ *Config, h *host.Config) { h.Dir, h.SnapshotEvery = dir, -1 }

	// Written in clear first (no key): one key.
	e := newEnv(t, store)
	clear := e.register(newWallet(t, "clear"))
	e.close()
	if !containsFile(t, dir, clear.creds.Secret) {
		t.Fatal("without a key the secret is not in the store: the test cannot tell")
	}

	// With the key: the clear key still works, a new one is sealed.
	otherRand := func(c *Config, _ *host.Config) { c.Rand = seeded(2) } // new key ids
	e = newEnvState(t, StateConfig{SecretKey: key}, store, otherRand)
	e.clock.advance(2_000_000) // past the first run's signatures
	sealed := e.register(newWallet(t, "sealed"))
	e.mustJSON(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), sealed, nil)
	balanceOf(e, clear)
	e.close() // the final snapshot is sealed
	for _, s := range []string{sealed.creds.Secret, sealed.creds.Passphrase} {
		if containsSegmentsOrSnapshots(t, dir, s, true) {
			t.Fatal("a sealed key's secret or passphrase is in the journal or a snapshot")
		}
	}
	for _, s := range []string{clear.creds.Secret, clear.creds.Passphrase} {
		if containsSegmentsOrSnapshots(t, dir, s, false) {
			t.Fatal("the newest snapshot holds a secret in clear")
		}
	}

	e = newEnvState(t, StateConfig{SecretKey: key}, store)
	e.clock.advance(4_000_000)
	if got := balanceOf(e, sealed); got != "1000" {
		t.Fatalf("after a restart with the key: balance %s", got)
	}
	balanceOf(e, clear)
	e.close()

	for name, k := range map[string][]byte{"no key": nil, "another key": bytes.Repeat([]byte{8}, SecretKeyLen)} {
		st := NewState(StateConfig{SecretKey: k})
		h, err := host.Open(context.Background(), host.Config{Dir: dir, Extensions: []host.Extension{st.Extension()},
			Genesis: catalog.Genesis(testCatalog(t), 0)})
		if err == nil {
			h.Close(context.Background())
			t.Fatalf("%s: the store opened", name)
		}
		if !errors.Is(err, ErrSealed) {
			t.Fatalf("%s: %v, want ErrSealed", name, err)
		}
	}
}

// containsFile reports whether any file under dir contains s.
func containsFile(t *testing.T, dir, s string) bool {
	for _, b := range hosttest.Files(t, dir) {
		if strings.Contains(b, s) {
			return true
		}
	}
	return false
}

// containsSegmentsOrSnapshots reports whether the journal's segments (when
// segments) or the newest snapshot (otherwise) contain s.
func containsSegmentsOrSnapshots(t *testing.T, dir, s string, segments bool) bool {
	newest := ""
	files := hosttest.Files(t, dir)
	for name := range files {
		if strings.HasSuffix(name, ".snap") && name > newest {
			newest = name
		}
	}
	for name, b := range files {
		isSnap := strings.HasSuffix(name, ".snap")
		if (segments && !isSnap || !segments && name == newest) && strings.Contains(b, s) {
			return true
		}
	}
	return false
}

//go:build unix

package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/agents"
)

// TestFileStoreWalletRunsAnAgentEndToEnd follows the headless-server path the
// tool prints: `pitboss wallet new --file bot` says "wallet: file:bot"; an agent
// file with that line passes `pitboss check`, paper-trades in a dry run without
// the store's passphrase, and trades live on the local exchange with the store
// unlocked from the environment; `pitboss doctor` resolves the same wallet. No
// output, and no line of the venue's log, holds the wallet's key, the store's
// passphrase or an API secret.
func TestFileStoreWalletRunsAnAgentEndToEnd(t *testing.T) {
	lv := startLocalVenue(t, venueOpt{"--sim", "--rate-limit", "-1"})
	c := newVenueCLI(t, lv)
	c.env["XDG_RUNTIME_DIR"] = t.TempDir()
	c.env[secrets.EnvSecretStore] = "file" // where the agent stores the API key it creates

	out := c.must("wallet", "new", "--file", "bot")
	ref := refFrom(t, out)
	if ref != "file:bot" {
		t.Fatalf("wallet new --file printed the reference %q", ref)
	}
	m := regexp.MustCompile(`(?m)^address\s+(0x[0-9A-Fa-f]{40})$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no address in:\n%s", out)
	}
	addr := m[1]

	// The live tests' agent file (their strategy, market and guards) on this venue,
	// naming the wallet by the reference wallet new printed.
	x := &exchangeProcess{clob: lv.clobURL, cat: lv.catalogueURL, data: lv.dataURL, bridge: lv.bridgeURL}
	agentFile := func(dryRun bool) string {
		path := liveAgentFile(t, x, "filebot", !dryRun)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		src = []byte(strings.Replace(string(src), "wallet: env:PITBOSS_TEST_WALLET\n", "wallet: "+ref+"\n", 1))
		if !strings.Contains(string(src), "wallet: "+ref+"\n") {
			t.Fatal("the live tests' agent file names its wallet differently now")
		}
		if err := os.WriteFile(path, src, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	t.Run("pitboss check accepts the printed reference", func(t *testing.T) {
		path := agentFile(true)
		c.must("check", path)
	})

	t.Run("a dry run needs no passphrase: it trades the paper address of the reference", func(t *testing.T) {
		path := agentFile(true)
		pass := c.env[secrets.EnvStorePassphrase]
		delete(c.env, secrets.EnvStorePassphrase)
		defer func() { c.env[secrets.EnvStorePassphrase] = pass }()
		out := c.must("run", "--duration", "2s", "--state-dir", t.TempDir(), path)
		for _, want := range []string{"DRY RUN on the remote venue's market data", "(paper address of file:bot)"} {
			if !strings.Contains(out, want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(strings.ToLower(out), strings.ToLower(addr)) {
			t.Errorf("a dry run shows the real address %s:\n%s", addr, out)
		}
	})

	t.Run("pitboss run --live unlocks the file store and trades as the wallet", func(t *testing.T) {
		path := agentFile(false)
		out := c.must("run", "--live", "--duration", "6s", "--state-dir", t.TempDir(), path)
		for _, want := range []string{"*** LIVE ***", "fill    ", "REAL ORDERS from wallet " + strings.ToLower(addr), "wallet file:bot, API credentials: created or derived", "order   "} {
			if !strings.Contains(out, want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
		keys := c.must("keys", "list", "--wallet", ref)
		if !strings.Contains(keys, addr) {
			t.Errorf("the API key the agent created is not the wallet's:\n%s", keys)
		}
	})

	t.Run("pitboss doctor resolves the wallet of the agent file", func(t *testing.T) {
		path := agentFile(false)
		out := c.must("doctor", path)
		expectCheck(t, out, "agent file", checkOK)
		expectCheck(t, out, "wallet", checkOK, "file:bot is "+addr)
		expectCheck(t, out, "credentials", checkOK, "accepted by the venue")
	})

	t.Run("without the passphrase a live start fails and says how to unlock", func(t *testing.T) {
		path := agentFile(false)
		pass := c.env[secrets.EnvStorePassphrase]
		delete(c.env, secrets.EnvStorePassphrase)
		defer func() { c.env[secrets.EnvStorePassphrase] = pass }()
		code, out, errOut := c.run("", "run", "--live", "--duration", "2s", "--state-dir", t.TempDir(), path)
		if code == 0 || !strings.Contains(errOut, "wallet file:bot") || strings.Contains(out, "order   ") {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
		}
	})

	// The wallet's key is made by `wallet new`, so it is not among the fixed test
	// secrets: read it back from the store and sweep for it as well.
	key := storedWalletKey(t, c.home(), "bot")
	c.sweep()
	c.mu.Lock()
	texts := append(append([]string{}, c.transcript...), lv.logs())
	c.mu.Unlock()
	for i, text := range texts {
		lower := strings.ToLower(text)
		if strings.Contains(lower, key) {
			t.Errorf("the wallet's key appears in output %d", i)
		}
		noSecrets(t, "the transcript", text)
	}
}

// storedWalletKey returns the lower-case hex key of the file store's wallet name.
func storedWalletKey(t *testing.T, home, name string) string {
	t.Helper()
	fv := secrets.NewFileVault(secrets.Layout{Home: home}.StoreFile(),
		secrets.PassphraseFromEnv(secrets.EnvStorePassphrase, func(string) string { return storePass }), secrets.WithFileKDF(*kdfForTests))
	defer fv.Close()
	s, err := fv.Get(context.Background(), secrets.WalletItem(name))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	k := strings.TrimPrefix(strings.ToLower(string(s.Reveal())), "0x")
	if len(k) != 64 {
		t.Fatalf("the stored item is not a hex key (%d characters)", len(k))
	}
	return k
}

// TestAgentWalletRefsAreTheSecretStoresRefs: a wallet reference an agent file
// accepts is one the secret stores resolve, and the other way round, so that
// `pitboss check` passing means the reference can go live.
func TestAgentWalletRefsAreTheSecretStoresRefs(t *testing.T) {
	for _, s := range []string{
		"keyring:main", "file:main", "file:a.b_c-d", "keystore:/k/UTC--x", "env:PITBOSS_KEY", "env:_x1",
		"file:" + strings.Repeat("z", 64), "file:" + strings.Repeat("z", 65), "keyring:me@host", "file:", "file:-x",
		"file:a/b", "keyring:.x", "env:1X", "vault:x", "main", "keystore:", "file:0x" + testKeyHex,
	} {
		t.Run(strings.ReplaceAll(s, testKeyHex, "KEY"), func(t *testing.T) {
			_, aerr := agents.ParseWalletRef(s)
			_, serr := secrets.ParseRef(s)
			if (aerr == nil) != (serr == nil) {
				t.Fatalf("agent file: %v; secret stores: %v", aerr, serr)
			}
		})
	}
}

// TestDoctorPointsAKeyringWalletWithoutAKeyringAtTheFileStore: on a host without a
// Secret Service a keyring: wallet does not resolve (there is no fallback), and the
// fix names the file store and the line to write.
func TestDoctorPointsAKeyringWalletWithoutAKeyringAtTheFileStore(t *testing.T) {
	c := newCLI(t) // no D-Bus session: no keyring
	code, out, _ := c.run("", "doctor", "--wallet", "keyring:bot", "--clob-url", "http://127.0.0.1:1")
	if code == 0 {
		t.Fatalf("exit 0:\n%s", out)
	}
	expectCheck(t, out, "wallet", checkFail, "keyring:bot does not resolve", "OS keyring unavailable",
		"pitboss wallet new --file bot", "wallet: file:bot")
}

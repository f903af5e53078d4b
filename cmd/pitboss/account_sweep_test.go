package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/secrets"
)

// TestNoSecretReachesOutputsOrLogs is the final sweep: one account's whole life on
// the command line — wallet import, list and address; keys create, derive, list and
// delete; the waitlist; doctor (text and JSON); the funding reads and previews; agent
// new — every command with debug logging, and the credentials also given to CI
// commands through the environment. Every output and the venue's own debug log are
// scanned for the wallet key (hex, both cases, 0x), the keystore and store
// passphrases, and every API secret and passphrase the venue issued.
func TestNoSecretReachesOutputsOrLogs(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	dbg := []string{"--log-level", "debug"}
	with := func(args ...string) []string { return append(args, dbg...) }

	// A wallet in the file store, its key typed on a descriptor.
	c.must("wallet", "import", "--key-fd", pipeFD(t, testKeyHex+"\n"), "--file", "bot")
	c.must("wallet", "list")
	c.must("wallet", "address", "file:bot")
	ks := refFrom(t, c.must("wallet", "new", "--light-kdf", "--keystore", filepath.Join(t.TempDir(), "ks"), "--passphrase-fd", pipeFD(t, ksPass+"\n")))

	c.must(with("keys", "create", "--wallet", "file:bot", "--store", "file")...)
	c.must(with("keys", "derive", "--wallet", "file:bot", "--store", "file")...)
	c.must(with("keys", "create", "--wallet", ks, "--store", "file", "--passphrase-fd", pipeFD(t, ksPass+"\n"))...)
	c.must(with("keys", "list", "--wallet", "file:bot")...)
	c.must(with("keys", "list", "--json")...)
	c.must(with("waitlist", "join", "ada@example.com")...)
	c.must(with("doctor", "--wallet", "file:bot")...)
	c.must(with("doctor", "--wallet", "file:bot", "--json")...)
	c.must(with("wallet", "deposit-address", "--wallet", "file:bot")...)
	c.must(with("wallet", "status", "--wallet", "file:bot")...)
	c.must(with("wallet", "withdraw", "--wallet", "file:bot", "--to", recipient, "--amount", "1", "--preview")...)
	c.must(with("wallet", "swap-bnb", "--wallet", "file:bot", "--bnb", "0.1", "--preview")...)
	c.must("agent", "new", "bot", "--template", "quoter", "--wallet", "keyring:bot", "--dir", filepath.Join(t.TempDir(), "bot"))

	// Failures print errors: they must not carry secrets either.
	c.fails(1, "already has an API key", with("keys", "create", "--wallet", "file:bot", "--store", "file")...)
	c.fails(1, "needs a person at a terminal", with("wallet", "withdraw", "--wallet", "file:bot", "--to", recipient, "--amount", "1")...)

	// CI: the credentials in the environment, as docs/wallets.md says.
	cr := storedCredentials(t, c, lv.name())
	c.env[secrets.EnvCredentials] = cr.Key + ":" + string(cr.Secret.Reveal()) + ":" + string(cr.Passphrase.Reveal())
	delete(c.env, secrets.EnvStorePassphrase)
	if out := c.must(with("doctor", "--wallet", "env:BOT_KEY")...); !strings.Contains(out, "from env:"+secrets.EnvCredentials) {
		t.Fatalf("the environment's credentials were not used:\n%s", out)
	}
	c.must(with("wallet", "status", "--wallet", "env:BOT_KEY")...)
	c.must(with("keys", "list", "--wallet", "env:BOT_KEY")...)
	c.env["CI_CREDS"] = c.env[secrets.EnvCredentials]
	delete(c.env, secrets.EnvCredentials)
	c.must(with("keys", "list", "--wallet", "env:BOT_KEY", "--credentials", "env:CI_CREDS")...)
	c.must(with("keys", "delete", "--wallet", "env:BOT_KEY", "--credentials", "env:CI_CREDS")...)

	if n := len(lv.issuedSecrets()); n < 4 {
		t.Fatalf("the venue issued %d secrets; the sweep would prove little", n)
	}
	if !strings.Contains(lv.logs(), "DEBUG") {
		t.Fatal("the venue logged nothing at debug level; the sweep would prove little")
	}
	c.sweep()
}

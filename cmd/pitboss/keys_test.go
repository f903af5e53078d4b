package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/adapters/secrets/secretstest"
	"github.com/pitbossdev/pitboss/market"
)

var apiKeyRE = regexp.MustCompile(`(?m)^api key\s+(\S+)$`)

// apiKeyOf returns the API key id keys create/derive printed.
func apiKeyOf(t *testing.T, out string) string {
	t.Helper()
	m := apiKeyRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no 'api key' line in %q", out)
	}
	return m[1]
}

// storedCredentials reads what the file store holds for the test wallet on lv.
func storedCredentials(t *testing.T, c *venueCLI, venue string) secrets.Credentials {
	t.Helper()
	fv := secrets.NewFileVault(filepath.Join(c.home(), "secrets.enc"), secrets.PassphraseFromEnv("P", func(string) string { return storePass }))
	defer fv.Close()
	addr, _ := market.ParseAddress(testAddress)
	cr, err := secrets.NewCredentialStore(fv).Get(context.Background(), venue, addr)
	if err != nil {
		t.Fatalf("stored credentials: %v", err)
	}
	t.Cleanup(cr.Destroy)
	return cr
}

// TestKeysLifecycleInTheFileStore: create, derive, a second nonce, list (the local
// store joined with the venue's list), delete one key, delete the stored one, forget;
// every output is swept for the secrets the venue issued.
func TestKeysLifecycleInTheFileStore(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	wallet := []string{"--wallet", "env:BOT_KEY"}

	out := c.must(append([]string{"keys", "create", "--store", "file"}, wallet...)...)
	first := apiKeyOf(t, out)
	for _, want := range []string{testAddress, lv.name(), "encrypted file store " + filepath.Join(c.home(), "secrets.enc"), "were stored, not shown"} {
		if !strings.Contains(out, want) {
			t.Errorf("create output lacks %q:\n%s", want, out)
		}
	}
	t.Run("stored at once, in a private file, as the venue issued them", func(t *testing.T) {
		fi, err := os.Stat(filepath.Join(c.home(), "secrets.enc"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("store file: %v %v", fi, err)
		}
		cr := storedCredentials(t, c, lv.name())
		issued := lv.issuedSecrets()
		if cr.Key != first || len(issued) != 2 || string(cr.Secret.Reveal()) != issued[0] || string(cr.Passphrase.Reveal()) != issued[1] {
			t.Fatalf("stored %s, printed %s; issued %d secrets", cr.Key, first, len(issued))
		}
		raw, _ := os.ReadFile(filepath.Join(c.home(), "secrets.enc"))
		for _, s := range issued {
			if strings.Contains(string(raw), s) {
				t.Fatal("the store file holds a secret in clear")
			}
		}
	})
	t.Run("a second create for the same nonce says to derive", func(t *testing.T) {
		c.fails(1, "keys derive --wallet env:BOT_KEY --nonce 0", append([]string{"keys", "create", "--store", "file"}, wallet...)...)
	})
	t.Run("derive stores the same credentials", func(t *testing.T) {
		out := c.must(append([]string{"keys", "derive", "--store", "file"}, wallet...)...)
		if apiKeyOf(t, out) != first || strings.Contains(out, "replaced") {
			t.Fatalf("%s", out)
		}
	})
	t.Run("derive of a nonce without a key says to create", func(t *testing.T) {
		c.fails(1, "keys create --wallet env:BOT_KEY --nonce 7", append([]string{"keys", "derive", "--store", "file", "--nonce", "7"}, wallet...)...)
	})
	var second string
	t.Run("a second nonce replaces the stored credentials and says so", func(t *testing.T) {
		out := c.must(append([]string{"keys", "create", "--store", "file", "--nonce", "1"}, wallet...)...)
		second = apiKeyOf(t, out)
		if second == first || !strings.Contains(out, "replaced") || !strings.Contains(out, first) {
			t.Fatalf("%s", out)
		}
	})
	t.Run("list joins the store with the venue's keys", func(t *testing.T) {
		out := c.must(append([]string{"keys", "list"}, wallet...)...)
		for _, want := range []string{second + "  stored in file, in use", first + "  not stored here", lv.name()} {
			if !strings.Contains(out, want) {
				t.Errorf("list lacks %q:\n%s", want, out)
			}
		}
		var res keysListResult
		if err := json.Unmarshal([]byte(c.must(append([]string{"keys", "list", "--json"}, wallet...)...)), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Stored) != 1 || res.Stored[0].APIKey != second || res.Stored[0].OnVenue == nil || !*res.Stored[0].OnVenue ||
			res.Venue == nil || len(res.Venue.Keys) != 2 {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("list without a wallet shows the stores only", func(t *testing.T) {
		out := c.must("keys", "list")
		if !strings.Contains(out, second) || strings.Contains(out, "keys of") {
			t.Fatalf("%s", out)
		}
	})
	t.Run("delete another key leaves the stored one", func(t *testing.T) {
		out := c.must(append([]string{"keys", "delete", "--api-key", first}, wallet...)...)
		if !strings.Contains(out, "deleted api key "+first) || !strings.Contains(out, "unchanged") {
			t.Fatalf("%s", out)
		}
		// The same delete signed in the same second would be a replay (409,
		// docs/design/0131): sign it in the next one.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		c.fails(1, "has no api key", append([]string{"keys", "delete", "--api-key", first}, wallet...)...)
	})
	t.Run("delete the stored key on the venue and in the store", func(t *testing.T) {
		out := c.must(append([]string{"keys", "delete"}, wallet...)...)
		if !strings.Contains(out, "deleted api key "+second) || !strings.Contains(out, "removed stored credentials") {
			t.Fatalf("%s", out)
		}
		if out := c.must("keys", "list"); !strings.Contains(out, "no stored API credentials") {
			t.Fatalf("%s", out)
		}
		c.fails(1, "Create them with 'pitboss keys create'", append([]string{"keys", "delete"}, wallet...)...)
		c.fails(1, "no stored credentials", append([]string{"keys", "delete", "--forget"}, wallet...)...)
	})
	t.Run("a deleted key's stored copy is stale: refused, then forgotten", func(t *testing.T) {
		c.fails(1, "no API key for nonce 0", append([]string{"keys", "derive", "--store", "file"}, wallet...)...)
		c.must(append([]string{"keys", "create", "--store", "file", "--nonce", "3"}, wallet...)...)
		// Another machine of the same wallet derives the key and deletes it.
		other := newVenueCLI(t, lv)
		other.must(append([]string{"keys", "derive", "--store", "file", "--nonce", "3"}, wallet...)...)
		other.must(append([]string{"keys", "delete"}, wallet...)...)
		other.sweep()
		c.fails(1, "'pitboss keys derive' fetches working ones", append([]string{"keys", "list"}, wallet...)...)
		c.fails(1, "'pitboss keys delete --forget' removes the stored copy", append([]string{"keys", "delete"}, wallet...)...)
		out := c.must(append([]string{"keys", "delete", "--forget"}, wallet...)...)
		if !strings.Contains(out, "forgot") || !strings.Contains(out, "the venue was not asked") {
			t.Fatalf("%s", out)
		}
		c.fails(2, "--forget removes the stored credentials only", append([]string{"keys", "delete", "--forget", "--api-key", "x"}, wallet...)...)
	})
	c.sweep()
}

// TestKeysStoreIsChosenBeforeTheVenueCreatesAnything: when the credentials could not
// be kept, no key is created on the venue.
func TestKeysStoreIsChosenBeforeTheVenueCreatesAnything(t *testing.T) {
	cases := []struct {
		name  string
		setup func(c *venueCLI)
		args  []string
		want  string
	}{
		{"no keyring and no choice: never falls back to the file store silently", nil, nil, "--store file"},
		{"the keyring chosen where there is none", nil, []string{"--store", "keyring"}, "DBUS_SESSION_BUS_ADDRESS"},
		{"a new file store without a passphrase", func(c *venueCLI) { delete(c.env, secrets.EnvStorePassphrase) }, []string{"--store", "file"}, "no passphrase for a new one"},
		{"an existing file store with the wrong passphrase", func(c *venueCLI) {
			c.must("wallet", "import", "--key-fd", "0", "--file", "w") // stdin is empty: fails, creates nothing
		}, nil, ""},
		{"an unknown store", nil, []string{"--store", "vault"}, `unknown secret store "vault"`},
	}
	for _, tc := range cases {
		if tc.want == "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			lv := startLocalVenue(t)
			c := newVenueCLI(t, lv)
			if tc.setup != nil {
				tc.setup(c)
			}
			c.fails(1, tc.want, append([]string{"keys", "create", "--wallet", "env:BOT_KEY"}, tc.args...)...)
			if n := len(lv.issuedSecrets()); n != 0 {
				t.Fatalf("the venue issued %d credentials that were not stored", n/2)
			}
		})
	}
	t.Run("an existing file store with the wrong passphrase", func(t *testing.T) {
		lv := startLocalVenue(t)
		c := newVenueCLI(t, lv)
		c.must("keys", "create", "--wallet", "env:BOT_KEY", "--store", "file")
		c.env[secrets.EnvStorePassphrase] = "not-the-passphrase"
		c.fails(1, "wrong passphrase", "keys", "create", "--wallet", "env:BOT_KEY", "--store", "file", "--nonce", "1")
		if n := len(lv.issuedSecrets()); n != 2 {
			t.Fatalf("the venue issued %d credentials, want only the first", n/2)
		}
		c.sweep()
	})
	t.Run("PITBOSS_SECRET_STORE=file chooses the file store", func(t *testing.T) {
		lv := startLocalVenue(t)
		c := newVenueCLI(t, lv)
		c.env[secrets.EnvSecretStore] = "file"
		if out := c.must("keys", "create", "--wallet", "env:BOT_KEY"); !strings.Contains(out, "encrypted file store") {
			t.Fatalf("%s", out)
		}
	})
}

// TestKeysInvitationFlow: a venue in invitation mode refuses the first key without
// a code and says how to get one; the waitlist, the approval and the code then work,
// once.
func TestKeysInvitationFlow(t *testing.T) {
	lv := startLocalVenue(t, withInvitations())
	c := newVenueCLI(t, lv)
	create := []string{"keys", "create", "--wallet", "env:BOT_KEY", "--store", "file"}

	errOut := c.fails(1, "invitation mode", create...)
	if !strings.Contains(errOut, "pitboss waitlist join EMAIL") || !strings.Contains(errOut, "--invitation-code XXXX-XXXX") {
		t.Fatalf("no guidance: %s", errOut)
	}
	if out := c.must("waitlist", "join", "ada@example.com"); !strings.Contains(out, "is pending") || !strings.Contains(out, "--invitation-code") {
		t.Fatalf("%s", out)
	}
	c.fails(1, "the invitation code was refused", append(create, "--invitation-code", "ABCD-EFGH")...)
	c.fails(2, "XXXX-XXXX", append(create, "--invitation-code", "not-a-code")...)
	code := lv.approve("ada@example.com")
	if out := c.must("waitlist", "join", "ada@example.com"); !strings.Contains(out, "is approved") {
		t.Fatalf("%s", out)
	}
	out := c.must(append(create, "--invitation-code", strings.ToLower(code))...)
	apiKeyOf(t, out)

	t.Run("a code works once", func(t *testing.T) {
		c.env["OTHER_KEY"] = strings.Repeat("1", 64)
		c.fails(1, "already used", "keys", "create", "--wallet", "env:OTHER_KEY", "--store", "file", "--invitation-code", code)
	})
	t.Run("a registered wallet needs no code for its next key", func(t *testing.T) {
		c.must(append(create, "--nonce", "1")...)
	})
	t.Run("waitlist join wants an email", func(t *testing.T) {
		c.fails(2, "not an email address", "waitlist", "join", "ada")
		c.fails(2, "one email address", "waitlist", "join")
	})
	t.Run("waitlist json", func(t *testing.T) {
		var ans waitlistAnswer
		if err := json.Unmarshal([]byte(c.must("waitlist", "join", "--json", "bob@example.com")), &ans); err != nil || ans.Status != "pending" {
			t.Fatalf("%+v %v", ans, err)
		}
	})
	c.sweep()
}

// TestKeysCreateIntoTheRealKeyring stores credentials in gnome-keyring on a private
// session bus (secretstest) and reads them back through pitboss and secret-tool.
func TestKeysCreateIntoTheRealKeyring(t *testing.T) {
	secretstest.StartSecretService(t)
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	c.realKeyring = true
	out := c.must("keys", "create", "--wallet", "env:BOT_KEY")
	id := apiKeyOf(t, out)
	if !strings.Contains(out, "stored    Secret Service") {
		t.Fatalf("not stored in the keyring:\n%s", out)
	}
	item := secrets.CredentialItem(lv.name(), mustAddress(t, testAddress))
	if tool, err := exec.LookPath("secret-tool"); err == nil {
		got, err := exec.Command(tool, "lookup", "service", secrets.DefaultKeyringService, "username", item).Output()
		if err != nil || !strings.Contains(string(got), `"key":"`+id+`"`) {
			t.Fatalf("secret-tool lookup %s: %v", item, err)
		}
		issued := lv.issuedSecrets()
		if len(issued) != 2 || !strings.Contains(string(got), issued[0]) {
			t.Fatal("the keyring does not hold the issued secret")
		}
	}
	if out := c.must("keys", "list", "--wallet", "env:BOT_KEY"); !strings.Contains(out, id+"  stored in keyring, in use") {
		t.Fatalf("%s", out)
	}
	if out := c.must("doctor", "--wallet", "env:BOT_KEY"); !strings.Contains(out, "api key "+id+" from keyring") {
		t.Fatalf("%s", out)
	}
	if out := c.must("keys", "delete", "--wallet", "env:BOT_KEY"); !strings.Contains(out, "removed stored credentials from Secret Service") {
		t.Fatalf("%s", out)
	}
	if out := c.must("keys", "list"); !strings.Contains(out, "no stored API credentials") {
		t.Fatalf("%s", out)
	}
	c.sweep()
}

func mustAddress(t testing.TB, s string) market.Address {
	t.Helper()
	a, err := market.ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// remoteAgent writes an agent file (from the quoter example, through agent new)
// whose venue is lv and whose wallet is env:BOT_KEY.
func remoteAgent(t *testing.T, c *venueCLI, lv *localVenue, dryRun bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bot")
	c.must("agent", "new", "remote-bot", "--template", "quoter", "--wallet", "env:BOT_KEY", "--dir", dir)
	path := filepath.Join(dir, "agent.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	venue := "venue:\n  kind: remote\n  clob: " + lv.clobURL + "\n  catalogue: " + lv.catalogueURL + "\n  data: " + lv.dataURL + "\n  bridge: " + lv.bridgeURL + "\n"
	s := strings.Replace(string(src), "venue: embedded\n", venue, 1)
	if !dryRun {
		s = strings.Replace(s, "dry_run: true", "dry_run: false", 1)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestVenueSelection: flags, an agent file's venue section, the environment and
// the defaults, in that order; the checks on URLs and names.
func TestVenueSelection(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	agent := remoteAgent(t, c, lv, true)
	for k := range lv.env() {
		delete(c.env, k) // only the agent file names the venue
	}
	t.Run("an agent file gives the venue and the wallet", func(t *testing.T) {
		out := c.must("keys", "create", "--agent", agent, "--store", "file")
		if !strings.Contains(out, lv.name()+" ("+lv.clobURL+")") || !strings.Contains(out, testAddress) {
			t.Fatalf("%s", out)
		}
	})
	t.Run("flags override the agent file", func(t *testing.T) {
		c.fails(1, "CLOB service unreachable at http://127.0.0.1:1", "keys", "derive", "--agent", agent, "--store", "file", "--clob-url", "http://127.0.0.1:1")
	})
	t.Run("an embedded agent has no venue", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "emb")
		c.must("agent", "new", "emb", "--template", "arb", "--wallet", "env:BOT_KEY", "--dir", dir)
		c.fails(1, "embedded exchange", "keys", "create", "--agent", filepath.Join(dir, "agent.yaml"), "--store", "file")
	})
	t.Run("an agent file with problems", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "agent.yaml")
		if err := os.WriteFile(bad, []byte("name: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c.fails(1, "pitboss check "+bad, "keys", "create", "--agent", bad, "--store", "file")
	})
	t.Run("the environment, when no flag or agent names the venue", func(t *testing.T) {
		c.env[envCLOBURL] = lv.clobURL
		defer delete(c.env, envCLOBURL)
		if out := c.must("keys", "derive", "--wallet", "env:BOT_KEY", "--store", "file"); !strings.Contains(out, lv.name()) {
			t.Fatalf("%s", out)
		}
	})
	t.Run("the local exchange's default", func(t *testing.T) {
		v, err := (&venueFlags{chainID: 56, timeout: 1, logLevel: "warn"}).resolve(stdio{stderr: discard, getenv: func(string) string { return "" }})
		if err != nil || v.urls != [numServices]string{defaultCLOBURL, defaultCatalogueURL, defaultDataURL, defaultBridgeURL} || v.name != "127.0.0.1-8080" {
			t.Fatalf("%+v %v", v, err)
		}
	})
	t.Run("a venue name of one's own", func(t *testing.T) {
		out := c.must("keys", "derive", "--wallet", "env:BOT_KEY", "--store", "file", "--clob-url", lv.clobURL, "--venue", "paper")
		if !strings.Contains(out, "venue     paper (") {
			t.Fatalf("%s", out)
		}
		if out := c.must("keys", "list"); !strings.Contains(out, "paper ") {
			t.Fatalf("%s", out)
		}
		c.fails(2, "invalid venue name", "keys", "list", "--venue", "a/b")
	})
	t.Run("the Polymarket header dialect", func(t *testing.T) {
		c.must("keys", "derive", "--wallet", "env:BOT_KEY", "--store", "file", "--clob-url", lv.clobURL, "--header-prefix", "POLY_")
		c.fails(2, "--header-prefix", "keys", "list", "--header-prefix", "poly")
	})
	t.Run("URLs", func(t *testing.T) {
		for url, want := range map[string]string{
			"http://10.1.2.3:8080":          "plain http is only allowed on a loopback address",
			"ftp://127.0.0.1":               "the scheme must be https",
			"https://user:pw@clob.example":  "credentials do not belong in a URL",
			"clob.example.com":              "not an absolute URL",
			"https://clob.example.com/?a=b": "no query",
		} {
			c.fails(2, want, "keys", "list", "--clob-url", url)
		}
	})
	c.sweep()
}

// TestKeysRefuseSecretsOnTheCommandLine: a key pasted anywhere on a keys, waitlist,
// doctor, funding or agent-new command line is refused without being echoed.
func TestKeysRefuseSecretsOnTheCommandLine(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	for i, args := range [][]string{
		{"keys", testKeyHex},
		{"keys", "create", "--wallet", testKeyHex},
		{"keys", "create", "--wallet", "keystore:" + testKeyHex},
		{"keys", "list", "--venue=" + testKeyHex},
		{"waitlist", "join", "0x" + testKeyHex},
		{"doctor", "--wallet", testKeyHex},
		{"wallet", "withdraw", "--to", "0x" + testKeyHex, "--amount", "1"},
		{"wallet", "status", "--address", testKeyHex},
		{"agent", "new", "x", "--template", "arb", "--wallet", "env:" + testKeyHex},
		{"agent", "new", "x", "--template", "arb", "--wallet", testKeyHex},
	} {
		t.Run(fmt.Sprintf("%d %s", i, args[0]), func(t *testing.T) {
			code, _, errOut := c.run("", args...)
			if code == 0 || !strings.Contains(errOut, "private key") {
				t.Fatalf("exit %d: %s", code, errOut)
			}
		})
	}
	c.sweep()
}

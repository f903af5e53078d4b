package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/secrets"
)

// skewedClock is the system clock off by d: a computer whose clock is wrong.
type skewedClock struct{ d time.Duration }

func (s skewedClock) Now() time.Time { return time.Now().Add(s.d) }
func (s skewedClock) Sleep(ctx context.Context, d time.Duration) error {
	return clob.SystemClock().Sleep(ctx, d)
}

// withClock makes the account commands use clk for the rest of the test.
func withClock(t *testing.T, clk clob.Clock) {
	clockForTests = clk
	t.Cleanup(func() { clockForTests = nil })
}

// checkLine returns the status and text of one check of a doctor report.
func checkLine(t *testing.T, out, check string) (status, text string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(OK|WARN|FAIL|SKIP)\s+` + regexp.QuoteMeta(check) + `\s+(.*)$`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q check in:\n%s", check, out)
	}
	return m[1], m[2]
}

// expectCheck fails unless check has status and its line (with the fix line after
// it) contains every want.
func expectCheck(t *testing.T, out, check, status string, want ...string) {
	t.Helper()
	got, text := checkLine(t, out, check)
	if got != status {
		t.Errorf("%s: %s %s, want %s\n%s", check, got, text, status, out)
	}
	i := strings.Index(out, text)
	block := out[i:]
	if j := strings.Index(block[len(text):], "\n") + len(text); j > 0 && j < len(block) {
		rest := block[j+1:]
		if strings.HasPrefix(strings.TrimLeft(rest, " "), "fix:") {
			k := strings.Index(rest, "\n")
			block = text + "\n" + rest[:k]
		} else {
			block = text
		}
	}
	for _, w := range want {
		if !strings.Contains(block, w) {
			t.Errorf("%s: %q lacks %q", check, block, w)
		}
	}
}

func TestDoctorAllGood(t *testing.T) {
	_, c := fundedWallet(t)
	out := c.must("doctor", "--wallet", "env:BOT_KEY")
	for _, check := range []string{"CLOB service", "catalogue service", "data service", "bridge service", "venue", "clock", "geoblock", "wallet", "credentials", "balance", "account mode"} {
		expectCheck(t, out, check, checkOK)
	}
	expectCheck(t, out, "balance", checkOK, "1000 on the ledger")
	expectCheck(t, out, "credentials", checkOK, "from file (", "accepted by the venue")
	if !strings.Contains(out, "everything checked is ready") {
		t.Fatalf("%s", out)
	}
	t.Run("json", func(t *testing.T) {
		var r doctorReport
		if err := json.Unmarshal([]byte(c.must("doctor", "--wallet", "env:BOT_KEY", "--json")), &r); err != nil || r.Failed != 0 || len(r.Checks) != 11 || r.Address != testAddress {
			t.Fatalf("%+v %v", r, err)
		}
	})
	c.sweep()
}

// caseWallet gives c a wallet of its own for one test case (env:BOT_KEY) and
// returns its address, so that cases can share one venue.
func caseWallet(t *testing.T, c *venueCLI, name string) string {
	t.Helper()
	seed := sha256.Sum256([]byte("pitboss-doctor-test:" + name))
	key := hex.EncodeToString(seed[:])
	s, err := auth.NewKeySignerFromHex(key)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c.env["BOT_KEY"] = key
	return checksum(s.Address())
}

// TestDoctorFindsWhatBreaksALiveStart: each case breaks one thing and checks the
// status, the words of the report and its fix, and the exit status. The cases share
// one venue, each with a wallet of its own.
func TestDoctorFindsWhatBreaksALiveStart(t *testing.T) {
	type env struct {
		lv   *localVenue
		c    *venueCLI
		addr string
	}
	cases := []struct {
		name   string
		keys   bool                               // create credentials first
		setup  func(t *testing.T, e env) []string // extra doctor arguments
		check  string
		status string
		want   []string
		code   int
	}{
		{name: "a clock ten minutes fast", keys: true, setup: func(t *testing.T, _ env) []string {
			withClock(t, skewedClock{10 * time.Minute})
			return nil
		}, check: "clock", status: checkFail, want: []string{"10m0s ahead of the venue's", "fix: synchronise this computer's clock"}, code: 1},
		{name: "a clock twenty seconds slow", keys: true, setup: func(t *testing.T, _ env) []string {
			withClock(t, skewedClock{-20 * time.Second})
			return nil
		}, check: "clock", status: checkWarn, want: []string{"behind the venue's", "NTP"}},
		{name: "no credentials", check: "credentials", status: checkFail,
			want: []string{"looked in env:PITBOSS_API_CREDENTIALS", "fix: pitboss keys create --wallet env:BOT_KEY"}, code: 1},
		{name: "credentials the venue no longer has", keys: true, setup: func(t *testing.T, e env) []string {
			other := newVenueCLI(t, e.lv)
			other.env["BOT_KEY"] = e.c.env["BOT_KEY"]
			other.must("keys", "derive", "--wallet", "env:BOT_KEY", "--store", "file")
			other.must("keys", "delete", "--wallet", "env:BOT_KEY")
			return nil
		}, check: "credentials", status: checkFail, want: []string{"refused by the venue", "fix: pitboss keys derive --wallet env:BOT_KEY"}, code: 1},
		{name: "a locked file store", keys: true, setup: func(t *testing.T, e env) []string {
			delete(e.c.env, "PITBOSS_STORE_PASSPHRASE")
			return nil
		}, check: "credentials", status: checkFail, want: []string{"the encrypted file store is locked", "PITBOSS_STORE_PASSPHRASE"}, code: 1},
		{name: "a blocked country", keys: true, setup: func(t *testing.T, e env) []string {
			return []string{"--clob-url", countryProxy(t, e.lv.clobURL, "US"), "--venue", e.lv.name()}
		}, check: "geoblock", status: checkFail, want: []string{"refuses every order from here (country US, IP 203.0.113.7)", "fix:"}, code: 1},
		{name: "a close-only country", keys: true, setup: func(t *testing.T, e env) []string {
			return []string{"--clob-url", countryProxy(t, e.lv.clobURL, "PL"), "--venue", e.lv.name()}
		}, check: "geoblock", status: checkWarn, want: []string{"close-only from here (country PL"}},
		{name: "a close-only account", keys: true, setup: func(t *testing.T, e env) []string {
			e.lv.setMode(e.addr, "close-only")
			return nil
		}, check: "account mode", status: checkWarn, want: []string{"close-only: the venue accepts only orders that reduce positions", "fix:"}},
		{name: "a banned account", keys: true, setup: func(t *testing.T, e env) []string {
			e.lv.setMode(e.addr, "banned")
			return nil
		}, check: "account mode", status: checkFail, want: []string{"banned"}, code: 1},
		{name: "a data service that does not answer", keys: true, setup: func(t *testing.T, _ env) []string {
			return []string{"--data-url", "http://127.0.0.1:1"}
		}, check: "data service", status: checkFail, want: []string{"http://127.0.0.1:1 unreachable", "fix: start the venue", "--data-url"}, code: 1},
		{name: "another chain", keys: true, setup: func(t *testing.T, _ env) []string {
			return []string{"--chain-id", "97"}
		}, check: "venue", status: checkFail, want: []string{"the venue signs for chain 56, pitboss for chain 97", "fix: give --chain-id 56"}, code: 1},
		{name: "a wallet that does not resolve", setup: func(t *testing.T, _ env) []string {
			return []string{"--wallet", "env:NO_SUCH_KEY"}
		}, check: "wallet", status: checkFail, want: []string{"env:NO_SUCH_KEY does not resolve", "fix: set the environment variable NO_SUCH_KEY"}, code: 1},
	}
	lv := startLocalVenue(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newVenueCLI(t, lv)
			e := env{lv: lv, c: c, addr: caseWallet(t, c, tc.name)}
			if tc.keys {
				c.must("keys", "create", "--wallet", "env:BOT_KEY", "--store", "file")
			}
			args := []string{"doctor", "--wallet", "env:BOT_KEY"}
			if tc.setup != nil {
				args = append(args, tc.setup(t, e)...)
			}
			code, out, errOut := c.run("", args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			expectCheck(t, out, tc.check, tc.status, tc.want...)
			if testing.Verbose() {
				t.Logf("%s", out)
			}
			c.sweep(c.env["BOT_KEY"])
		})
	}
}

// TestDoctorEmptyLedger: a wallet with nothing on the ledger is a warning in dry
// run (and a failure for a live agent: TestDoctorReadsTheAgentFile).
func TestDoctorEmptyLedger(t *testing.T) {
	lv := startLocalVenue(t, withPaperBalance("0"))
	c := newVenueCLI(t, lv)
	c.must("keys", "create", "--wallet", "env:BOT_KEY", "--store", "file")
	out := c.must("doctor", "--wallet", "env:BOT_KEY")
	expectCheck(t, out, "balance", checkWarn, "the ledger balance is 0", "fix: fund it: pitboss wallet deposit-address --wallet env:BOT_KEY")
	c.sweep()
}

func TestDoctorSkipsWhatDependsOnAFailure(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	t.Run("the CLOB service down", func(t *testing.T) {
		code, out, _ := c.run("", "doctor", "--wallet", "env:BOT_KEY", "--clob-url", "http://127.0.0.1:1")
		if code != 1 {
			t.Fatalf("exit %d", code)
		}
		expectCheck(t, out, "CLOB service", checkFail, "unreachable")
		for _, check := range []string{"venue", "clock", "geoblock", "credentials"} {
			expectCheck(t, out, check, checkSkip, "the CLOB service did not answer")
		}
		expectCheck(t, out, "wallet", checkOK, testAddress)
	})
	t.Run("no wallet", func(t *testing.T) {
		out := c.must("doctor")
		expectCheck(t, out, "wallet", checkSkip, "no wallet given", "fix: give --wallet REF")
		expectCheck(t, out, "credentials", checkSkip, "no wallet address")
	})
	c.sweep()
}

func TestDoctorReadsTheAgentFile(t *testing.T) {
	lv := startLocalVenue(t, withPaperBalance("0"))
	c := newVenueCLI(t, lv)
	for k := range lv.env() {
		delete(c.env, k)
	}
	t.Run("a live agent on a remote venue with an empty ledger", func(t *testing.T) {
		agent := remoteAgent(t, c, lv, false)
		c.must("keys", "create", "--agent", agent, "--store", "file")
		code, out, _ := c.run("", "doctor", agent)
		if code != 1 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		expectCheck(t, out, "agent file", checkOK, "agent remote-bot: live on the remote venue")
		expectCheck(t, out, "CLOB service", checkOK, lv.clobURL)
		expectCheck(t, out, "balance", checkFail, "a live agent cannot buy", "fix: fund it: pitboss wallet deposit-address --agent "+agent)
	})
	t.Run("an embedded agent: nothing to reach", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "emb")
		c.must("agent", "new", "emb", "--template", "meanrev", "--wallet", "env:BOT_KEY", "--dir", dir)
		out := c.must("doctor", filepath.Join(dir, "agent.yaml"))
		expectCheck(t, out, "agent file", checkOK, "dry-run on the embedded venue")
		expectCheck(t, out, "services", checkSkip, "embedded exchange")
		expectCheck(t, out, "wallet", checkOK, "env:BOT_KEY is a label on the embedded venue", "no key is used")
	})
	// issue 15, item 10: the README's dry-run example passes on a host without a
	// keyring (its keyring wallet is never opened), and a file store without its
	// passphrase names the store's own flag and variable.
	t.Run("the dry-run example on a host without a keyring", func(t *testing.T) {
		code, out, errOut := c.run("", "doctor", quoterAgent)
		if code != 0 || strings.Contains(out, "FAIL") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		expectCheck(t, out, "wallet", checkOK, "keyring:pitboss-quoter is a label on the embedded venue")
	})
	t.Run("a locked file store", func(t *testing.T) {
		home, pass := c.env[secrets.EnvHome], c.env[secrets.EnvStorePassphrase]
		defer func() { c.env[secrets.EnvHome], c.env[secrets.EnvStorePassphrase] = home, pass }()
		c.env[secrets.EnvHome], c.env[secrets.EnvStorePassphrase] = t.TempDir(), "doctor"
		c.must("wallet", "new", "--file", "locked")
		delete(c.env, secrets.EnvStorePassphrase)
		code, out, _ := c.run("", "doctor", "--wallet", "file:locked")
		if code != 1 || strings.Contains(out, "--passphrase-fd") || strings.Contains(out, "documented environment variable") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		expectCheck(t, out, "wallet", checkFail, "the encrypted file store is locked", "--store-passphrase-fd N", "$"+secrets.EnvStorePassphrase)
	})
	t.Run("an agent file with problems", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "agent.yaml")
		if err := os.WriteFile(bad, []byte("name: x\nwallet: keyring:x\nfoo: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, _ := c.run("", "doctor", bad)
		if code != 1 {
			t.Fatalf("exit %d", code)
		}
		expectCheck(t, out, "agent file", checkFail, "problems in "+bad, "fix: pitboss check "+bad)
	})
	t.Run("usage", func(t *testing.T) {
		c.fails(2, "one agent file at a time", "doctor", "a.yaml", "b.yaml")
		c.fails(2, "as the argument or as --agent", "doctor", "--agent", "a.yaml", "b.yaml")
	})
	c.sweep()
}

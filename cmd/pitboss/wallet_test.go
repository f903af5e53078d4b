package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/adapters/secrets/secretstest"
)

// Test secrets. Every command run by these tests is checked to print none of them.
const (
	testKeyHex  = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	testAddress = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
	ksPass      = "keystore-pass-Q7"
	storePass   = "store-pass-Z9"
)

var testSecrets = []string{testKeyHex, strings.ToUpper(testKeyHex), ksPass, storePass}

// cli runs pitboss in-process with an environment and stdin of the test's choosing,
// and fails the test if anything it printed contains a test secret.
type cli struct {
	t   *testing.T
	env map[string]string
	// realKeyring lets commands see the private session bus secretstest started;
	// otherwise they never see a bus, so no test touches the developer's keyring.
	realKeyring bool
}

func newCLI(t *testing.T) *cli {
	// Scrypt under -race is 10× slower; the KDF's cost is not what these tests check
	// (the pty tests run the real binary with --light-kdf).
	insecure := secrets.KDFInsecureTest
	kdfForTests = &insecure
	t.Cleanup(func() { kdfForTests = nil })
	return &cli{t: t, env: map[string]string{secrets.EnvHome: filepath.Join(t.TempDir(), "home")}}
}

func (c *cli) home() string { return c.env[secrets.EnvHome] }

func (c *cli) run(stdin string, args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if v, ok := c.env[k]; ok {
			return v
		}
		if k == "DBUS_SESSION_BUS_ADDRESS" && c.realKeyring {
			return os.Getenv(k) // the private bus secretstest set for this test
		}
		return ""
	}
	code = runMain(context.Background(), args, stdio{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: getenv})
	noSecrets(c.t, strings.Join(args, " "), out.String()+errb.String())
	return code, out.String(), errb.String()
}

// mustRun runs a command that must succeed.
func (c *cli) mustRun(stdin string, args ...string) string {
	c.t.Helper()
	code, out, errOut := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("pitboss %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func noSecrets(t testing.TB, where, text string) {
	t.Helper()
	for _, s := range testSecrets {
		if strings.Contains(text, s) {
			t.Fatalf("%s: output reveals a secret", where)
		}
	}
}

// pipeFD returns the number of a descriptor from which content can be read; it is
// closed at the end of the test.
func pipeFD(t *testing.T, content string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(content); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { r.Close() })
	return fmt.Sprint(r.Fd())
}

func refFrom(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "wallet: "); ok {
			return v
		}
	}
	t.Fatalf("no 'wallet: REF' line in %q", out)
	return ""
}

func TestWalletSubcommandTable(t *testing.T) {
	t.Run("another file can add a subcommand", func(t *testing.T) {
		registerWalletSub(subcommand{name: "zz-test", summary: "test only", run: func(_ context.Context, args []string, io stdio) error {
			fmt.Fprintln(io.stdout, "ran with", args)
			return nil
		}})
		defer func() {
			walletSubs = slices.DeleteFunc(walletSubs, func(s subcommand) bool { return s.name == "zz-test" })
		}()
		c := newCLI(t)
		if out := c.mustRun("", "wallet", "zz-test", "a"); out != "ran with [a]\n" {
			t.Fatalf("%q", out)
		}
		if out := c.mustRun("", "wallet", "-h"); !strings.Contains(out, "zz-test") || !strings.Contains(out, "new") {
			t.Fatalf("usage lacks subcommands: %q", out)
		}
	})
	t.Run("registering twice panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		registerWalletSub(subcommand{name: "new"})
	})
	t.Run("usage errors", func(t *testing.T) {
		c := newCLI(t)
		if code, _, errOut := c.run("", "wallet"); code != 2 || !strings.Contains(errOut, "Subcommands:") {
			t.Fatalf("%d %q", code, errOut)
		}
		if code, _, errOut := c.run("", "wallet", "nope"); code != 2 || !strings.Contains(errOut, `unknown wallet subcommand "nope"`) {
			t.Fatalf("%d %q", code, errOut)
		}
	})
}

func TestWalletNewKeystore(t *testing.T) {
	c := newCLI(t)
	out := c.mustRun(ksPass+"\n", "wallet", "new", "--light-kdf", "--passphrase-fd", "0")
	ref := refFrom(t, out)
	r, err := secrets.ParseRef(ref)
	if err != nil || r.Scheme != secrets.SchemeKeystore || filepath.Dir(r.Name) != filepath.Join(c.home(), "keystore") {
		t.Fatalf("ref %q: %v", ref, err)
	}
	t.Run("file is private and decrypts with the passphrase", func(t *testing.T) {
		fi, err := os.Stat(r.Name)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%v %v", fi, err)
		}
		k, err := secrets.OpenKeystore(r.Name, secrets.SecretString(ksPass))
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		if !strings.Contains(out, secrets.ChecksumAddress(k.Address())) {
			t.Fatal("printed address differs from the key's")
		}
	})
	t.Run("address without a passphrase", func(t *testing.T) {
		addr := strings.TrimSpace(c.mustRun("", "wallet", "address", ref))
		if !strings.Contains(out, addr) {
			t.Fatalf("address %q not in %q", addr, out)
		}
	})
	t.Run("listed", func(t *testing.T) {
		if l := c.mustRun("", "wallet", "list"); !strings.Contains(l, ref) {
			t.Fatalf("%q", l)
		}
	})
	t.Run("json", func(t *testing.T) {
		var rows []walletResult
		if err := json.Unmarshal([]byte(c.mustRun("", "wallet", "list", "--json")), &rows); err != nil || len(rows) != 1 || rows[0].Ref != ref || rows[0].Backend != "keystore" {
			t.Fatalf("%+v %v", rows, err)
		}
	})
	t.Run("no passphrase source", func(t *testing.T) {
		code, _, errOut := c.run("", "wallet", "new", "--light-kdf")
		if code != 1 || !strings.Contains(errOut, "no passphrase") || !strings.Contains(errOut, secrets.EnvKeystorePassphrase) {
			t.Fatalf("%d %q", code, errOut)
		}
	})
	t.Run("passphrase from the environment", func(t *testing.T) {
		c.env[secrets.EnvKeystorePassphrase] = ksPass
		defer delete(c.env, secrets.EnvKeystorePassphrase)
		dir := filepath.Join(t.TempDir(), "ks")
		var res walletResult
		if err := json.Unmarshal([]byte(c.mustRun("", "wallet", "new", "--light-kdf", "--keystore", dir, "--json")), &res); err != nil || filepath.Dir(res.Location) != dir {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

func TestWalletImportHexIntoFileStore(t *testing.T) {
	c := newCLI(t)
	keyFD := pipeFD(t, "0x"+testKeyHex+"\n")
	passFD := pipeFD(t, storePass+"\n")
	out := c.mustRun("", "wallet", "import", "--light-kdf", "--key-fd", keyFD, "--file", "bot", "--store-passphrase-fd", passFD)
	if refFrom(t, out) != "file:bot" || !strings.Contains(out, testAddress) {
		t.Fatalf("%q", out)
	}
	store := filepath.Join(c.home(), "secrets.enc")
	fi, err := os.Stat(store)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	data, _ := os.ReadFile(store)
	noSecrets(t, "store file", string(data))

	t.Run("list needs the passphrase and says so", func(t *testing.T) {
		code, l, errOut := c.run("", "wallet", "list")
		if code != 0 || strings.Contains(l, "file:bot") || !strings.Contains(errOut, "locked") {
			t.Fatalf("%d %q %q", code, l, errOut)
		}
	})
	c.env[secrets.EnvStorePassphrase] = storePass
	t.Run("list with the passphrase", func(t *testing.T) {
		if l := c.mustRun("", "wallet", "list"); !strings.Contains(l, "file:bot") || !strings.Contains(l, testAddress) {
			t.Fatalf("%q", l)
		}
	})
	t.Run("address", func(t *testing.T) {
		if a := c.mustRun("", "wallet", "address", "file:bot"); strings.TrimSpace(a) != testAddress {
			t.Fatalf("%q", a)
		}
	})
	t.Run("a name is never overwritten", func(t *testing.T) {
		code, _, errOut := c.run(testKeyHex+"\n", "wallet", "import", "--key-fd", "0", "--file", "bot")
		if code != 1 || !strings.Contains(errOut, "already exists") {
			t.Fatalf("%d %q", code, errOut)
		}
	})
	t.Run("wrong store passphrase", func(t *testing.T) {
		c.env[secrets.EnvStorePassphrase] = "not-it"
		defer func() { c.env[secrets.EnvStorePassphrase] = storePass }()
		code, _, errOut := c.run("", "wallet", "address", "file:bot")
		if code != 1 || !strings.Contains(errOut, "wrong passphrase") {
			t.Fatalf("%d %q", code, errOut)
		}
	})
	t.Run("bad key", func(t *testing.T) {
		code, _, errOut := c.run(testKeyHex[:63]+"x\n", "wallet", "import", "--key-fd", "0", "--file", "other")
		if code != 1 || !strings.Contains(errOut, "invalid private key") || strings.Contains(errOut, testKeyHex[:40]) {
			t.Fatalf("%d %q", code, errOut)
		}
	})
}

func TestWalletImportFromKeystore(t *testing.T) {
	c := newCLI(t)
	// One keystore to import from, written by `wallet new` into another directory.
	src := refFrom(t, c.mustRun(ksPass+"\n", "wallet", "new", "--light-kdf", "--passphrase-fd", "0", "--keystore", t.TempDir()))
	srcPath := strings.TrimPrefix(src, "keystore:")
	addr := strings.TrimSpace(c.mustRun("", "wallet", "address", src))

	t.Run("into the keystore directory, unchanged", func(t *testing.T) {
		out := c.mustRun(ksPass+"\n", "wallet", "import", "--from-keystore", srcPath, "--passphrase-fd", "0")
		dst := strings.TrimPrefix(refFrom(t, out), "keystore:")
		a, _ := os.ReadFile(srcPath)
		b, _ := os.ReadFile(dst)
		if !bytes.Equal(a, b) || filepath.Dir(dst) != filepath.Join(c.home(), "keystore") {
			t.Fatalf("not copied unchanged to the keystore dir: %s", dst)
		}
	})
	t.Run("into the file store", func(t *testing.T) {
		c.env[secrets.EnvStorePassphrase] = storePass
		out := c.mustRun(ksPass+"\n", "wallet", "import", "--light-kdf", "--from-keystore", srcPath, "--passphrase-fd", "0", "--file", "imported")
		if refFrom(t, out) != "file:imported" || !strings.Contains(out, addr) {
			t.Fatalf("%q", out)
		}
	})
	t.Run("wrong passphrase", func(t *testing.T) {
		code, _, errOut := c.run("nope\n", "wallet", "import", "--from-keystore", srcPath, "--passphrase-fd", "0")
		if code != 1 || !strings.Contains(errOut, "wrong passphrase") {
			t.Fatalf("%d %q", code, errOut)
		}
	})
	t.Run("a world-readable source is refused", func(t *testing.T) {
		if err := os.Chmod(srcPath, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(srcPath, 0o600)
		code, _, errOut := c.run(ksPass+"\n", "wallet", "import", "--from-keystore", srcPath, "--passphrase-fd", "0")
		if code != 1 || !strings.Contains(errOut, "chmod 600") {
			t.Fatalf("%d %q", code, errOut)
		}
	})
}

func TestWalletAddressFromEnv(t *testing.T) {
	c := newCLI(t)
	c.env["BOT_KEY"] = testKeyHex
	if a := c.mustRun("", "wallet", "address", "env:BOT_KEY"); strings.TrimSpace(a) != testAddress {
		t.Fatalf("%q", a)
	}
	var r walletResult
	if err := json.Unmarshal([]byte(c.mustRun("", "wallet", "address", "--json", "env:BOT_KEY")), &r); err != nil || r.Backend != "env" || r.Ref != "env:BOT_KEY" {
		t.Fatalf("%+v %v", r, err)
	}
	for _, bad := range []string{"env:UNSET", "keystore:/nonexistent", "vault:x"} {
		t.Run(bad, func(t *testing.T) {
			if code, _, _ := c.run("", "wallet", "address", bad); code == 0 {
				t.Fatal("succeeded")
			}
		})
	}
}

func TestWalletKeyringUnavailable(t *testing.T) {
	c := newCLI(t)
	code, _, errOut := c.run("", "wallet", "new", "--keyring", "main")
	if code != 1 || !strings.Contains(errOut, "DBUS_SESSION_BUS_ADDRESS") || !strings.Contains(errOut, "--file NAME") {
		t.Fatalf("%d %q", code, errOut)
	}
	if code, _, errOut := c.run("", "wallet", "list"); code != 0 || !strings.Contains(errOut, "OS keyring not consulted") {
		t.Fatalf("%d %q", code, errOut)
	}
}

// TestWalletRealKeyring stores wallets in gnome-keyring on a private bus and reads
// them back through pitboss and through secret-tool.
func TestWalletRealKeyring(t *testing.T) {
	secretstest.StartSecretService(t)
	c := newCLI(t)
	c.realKeyring = true
	out := c.mustRun("", "wallet", "new", "--keyring", "main")
	if refFrom(t, out) != "keyring:main" || !strings.Contains(out, "Secret Service") {
		t.Fatalf("%q", out)
	}
	addr := strings.TrimSpace(c.mustRun("", "wallet", "address", "keyring:main"))
	if !strings.Contains(out, addr) {
		t.Fatalf("address %q not in %q", addr, out)
	}
	c.mustRun(testKeyHex+"\n", "wallet", "import", "--key-fd", "0", "--keyring", "imported")
	l := c.mustRun("", "wallet", "list")
	if !strings.Contains(l, "keyring:main") || !strings.Contains(l, "keyring:imported") || !strings.Contains(l, testAddress) {
		t.Fatalf("%q", l)
	}
	if code, _, errOut := c.run("", "wallet", "new", "--keyring", "main"); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("%d %q", code, errOut)
	}
	if tool, err := exec.LookPath("secret-tool"); err == nil {
		got, err := exec.Command(tool, "lookup", "service", secrets.DefaultKeyringService, "username", "wallet/imported").Output()
		if err != nil || string(got) != testKeyHex {
			t.Fatalf("secret-tool: %v", err)
		}
	}
	t.Run("keystore into the keyring", func(t *testing.T) {
		src := strings.TrimPrefix(refFrom(t, c.mustRun(ksPass+"\n", "wallet", "new", "--light-kdf", "--passphrase-fd", "0", "--keystore", t.TempDir())), "keystore:")
		out := c.mustRun(ksPass+"\n", "wallet", "import", "--from-keystore", src, "--passphrase-fd", "0", "--keyring", "from-ks")
		if refFrom(t, out) != "keyring:from-ks" {
			t.Fatalf("%q", out)
		}
	})
}

// TestWalletRefusesSecretsOnTheCommandLine: nothing that could be a key or passphrase
// is accepted as an argument, and refusing never repeats it.
func TestWalletRefusesSecretsOnTheCommandLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"key as subcommand", []string{"wallet", testKeyHex}},
		{"key as import argument", []string{"wallet", "import", "0x" + testKeyHex}},
		{"key as a made-up flag", []string{"wallet", "import", "--key=" + testKeyHex}},
		{"key as a flag value", []string{"wallet", "new", "--keyring", testKeyHex}},
		{"key as an address reference", []string{"wallet", "address", testKeyHex}},
		{"key after a scheme", []string{"wallet", "address", "keystore:" + testKeyHex}},
		{"passphrase flag does not exist", []string{"wallet", "new", "--passphrase", ksPass}},
		{"passphrase where a descriptor belongs", []string{"wallet", "new", "--passphrase-fd", ksPass}},
		{"store passphrase where a descriptor belongs", []string{"wallet", "list", "--store-passphrase-fd=" + storePass}},
		{"import argument", []string{"wallet", "import", ksPass}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			code, _, _ := c.run("", tc.args...) // c.run fails the test if a secret is printed
			if code == 0 {
				t.Fatal("accepted")
			}
		})
	}
}

func TestSecretEnvChoosesTheStore(t *testing.T) {
	cases := []struct {
		name   string
		choice string
		env    string
		want   secrets.Backend
		err    error
	}{
		{"no keyring and no choice: refuse to fall back silently", "", "", "", secrets.ErrNoSecretStore},
		{"file chosen by the environment", "", "file", secrets.BackendFile, nil},
		{"file chosen by flag", "file", "", secrets.BackendFile, nil},
		{"keyring chosen but unavailable", "keyring", "", "", secrets.ErrKeyringUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{secrets.EnvHome: t.TempDir(), secrets.EnvSecretStore: tc.env}
			e, err := newSecretEnv(stdio{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return env[k] }}, &secretFlags{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			v, err := e.vault(context.Background(), tc.choice)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || v.Backend() != tc.want {
				t.Fatalf("%v %v", v, err)
			}
		})
	}
}

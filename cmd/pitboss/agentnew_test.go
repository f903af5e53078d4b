package main

import (
	"bytes"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
)

// examplesDir is where the embedded templates come from.
const examplesDir = "../../agents/examples"

// TestAgentNewFromEveryTemplate scaffolds an agent from each example and checks
// the result: named, dry run, a wallet reference, the example's strategy, passing
// `pitboss check`.
func TestAgentNewFromEveryTemplate(t *testing.T) {
	c := newCLI(t)
	c.env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent" // a host with a keyring (nothing calls it)
	for _, tmpl := range templateNames() {
		t.Run(tmpl, func(t *testing.T) {
			name := "my-" + tmpl
			dir := filepath.Join(t.TempDir(), "agents", name)
			out := c.mustRun("", "agent", "new", name, "--template", tmpl, "--dir", dir)
			for _, want := range []string{"created  " + filepath.Join(dir, "agent.yaml"), "wallet   keyring:pitboss-" + name, "dry run  yes", "check    ok",
				"pitboss wallet new --keyring pitboss-" + name} {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q:\n%s", want, out)
				}
			}
			spec, err := agents.Options{Getenv: func(string) string { return "" }}.Load(filepath.Join(dir, "agent.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if spec.Name != name || !spec.DryRun() || spec.Wallet.String() != "keyring:pitboss-"+name {
				t.Fatalf("name %s, %s, wallet %s", spec.Name, spec.Execution, spec.Wallet)
			}
			want, _ := os.ReadFile(filepath.Join(examplesDir, tmpl, "strategy.yaml"))
			if got, _ := os.ReadFile(filepath.Join(dir, "strategy.yaml")); !bytes.Equal(got, want) {
				t.Error("strategy.yaml is not the example's")
			}
			if out := c.mustRun("", "check", filepath.Join(dir, "agent.yaml")); !strings.Contains(out, ": ok (agent "+name) {
				t.Fatalf("check: %s", out)
			}
			// Only the header, name and wallet lines differ from the example.
			ex, _ := os.ReadFile(filepath.Join(examplesDir, tmpl, "agent.yaml"))
			got, _ := os.ReadFile(filepath.Join(dir, "agent.yaml"))
			exLines, gotLines := strings.Split(string(ex), "\n"), strings.Split(string(got), "\n")[1:]
			if len(exLines) != len(gotLines) {
				t.Fatalf("%d lines, the example has %d", len(gotLines), len(exLines))
			}
			for i := range exLines {
				if exLines[i] != gotLines[i] && !strings.HasPrefix(gotLines[i], "name: ") && !strings.HasPrefix(gotLines[i], "wallet: ") &&
					!strings.Contains(gotLines[i], filepath.ToSlash(filepath.Join(dir, "agent.yaml"))) {
					t.Errorf("line %d changed: %q → %q", i+1, exLines[i], gotLines[i])
				}
			}
			if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("directory mode %v %v", fi, err)
			}
		})
	}
}

func TestAgentNewOptionsAndRefusals(t *testing.T) {
	c := newCLI(t)
	root := t.TempDir()
	t.Run("flags before the name, a keystore path made absolute", func(t *testing.T) {
		wd, _ := os.Getwd()
		dir := filepath.Join(root, "ks")
		c.mustRun("", "agent", "new", "--template", "momentum", "--wallet", "keystore:keys/bot.json", "--dir", dir, "ks-bot")
		spec, err := agents.Options{Getenv: func(string) string { return "" }}.Load(filepath.Join(dir, "agent.yaml"))
		if err != nil || spec.Wallet.Value != filepath.Join(wd, "keys/bot.json") {
			t.Fatalf("%v %v", spec.Wallet, err)
		}
	})
	t.Run("an env wallet and a name that YAML would read as a number", func(t *testing.T) {
		dir := filepath.Join(root, "n")
		c.mustRun("", "agent", "new", "2024", "--template", "arb", "--wallet", "env:BOT_KEY", "--dir", dir)
		spec, err := agents.Options{Getenv: func(string) string { return "" }}.Load(filepath.Join(dir, "agent.yaml"))
		if err != nil || spec.Name != "2024" || spec.Wallet.String() != "env:BOT_KEY" {
			t.Fatalf("%v %v", spec, err)
		}
	})
	t.Run("a file-store wallet, with the hint to create it", func(t *testing.T) {
		dir := filepath.Join(root, "f")
		out := c.mustRun("", "agent", "new", "fbot", "--template", "quoter", "--wallet", "file:bot", "--dir", dir)
		if !strings.Contains(out, "wallet   file:bot") || !strings.Contains(out, "pitboss wallet new --file bot") {
			t.Fatalf("output:\n%s", out)
		}
	})
	t.Run("an empty directory is used", func(t *testing.T) {
		dir := filepath.Join(root, "empty")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		c.mustRun("", "agent", "new", "e", "--template", "quoter", "--dir", dir)
	})
	t.Run("the default directory is ./NAME", func(t *testing.T) {
		t.Chdir(root)
		c.mustRun("", "agent", "new", "here", "--template", "quoter")
		if _, err := os.Stat(filepath.Join(root, "here", "agent.yaml")); err != nil {
			t.Fatal(err)
		}
	})
	refusals := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an existing agent is never overwritten", []string{"agent", "new", "x", "--template", "quoter", "--dir", filepath.Join(root, "empty")}, 1, "not empty"},
		{"a file in the way", []string{"agent", "new", "x", "--template", "quoter", "--dir", filepath.Join(root, "empty", "agent.yaml")}, 1, "not a directory"},
		{"a name outside the agent-id alphabet", []string{"agent", "new", "a.b", "--template", "quoter"}, 2, market.ErrBadAgentID.Error()},
		{"a name starting with a dash", []string{"agent", "new", "--template", "quoter", "--", "-x"}, 2, "invalid agent id"},
		{"no template", []string{"agent", "new", "x"}, 2, "choose a template with --template: arb, eventarb, meanrev, momentum, quoter, underlying"},
		{"an unknown template", []string{"agent", "new", "x", "--template", "grid"}, 2, `unknown template "grid"`},
		{"a wallet scheme agent files do not know", []string{"agent", "new", "x", "--template", "arb", "--wallet", "vault:x"}, 2, "unknown scheme"},
		{"a key as the wallet", []string{"agent", "new", "x", "--template", "arb", "--wallet", "keyring:" + testKeyHex}, 2, "private key"},
		{"no name", []string{"agent", "new", "--template", "arb"}, 2, "the agent's name"},
		{"an unknown subcommand", []string{"agent", "old"}, 2, `unknown agent subcommand "old"`},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := c.run("", tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d (want %d): %s", code, tc.code, errOut)
			}
		})
	}
	t.Run("nothing is left behind by a refusal", func(t *testing.T) {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left %s", e.Name())
			}
		}
	})
}

// TestRewriteAgent edits only the name, wallet and dry_run lines and keeps
// comments, quoting and layout.
func TestRewriteAgent(t *testing.T) {
	src := "# try: pitboss run agents/examples/t/agent.yaml\nname: 'old'   # the name\ndescription: d\nwallet: \"keyring:old\"\nvenue: embedded\ndry_run: false # live!\nmarkets: [1]\n"
	got, err := rewriteAgent([]byte(src), "t", "new-1", "env:K", "out")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Created by `pitboss agent new new-1 --template t` from the t example.\n# try: pitboss run out/agent.yaml\nname: new-1   # the name\ndescription: d\nwallet: env:K\nvenue: embedded\ndry_run: true # live!\nmarkets: [1]\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	t.Run("dry_run added when absent", func(t *testing.T) {
		got, err := rewriteAgent([]byte("name: a\nwallet: env:K\nmarkets: [1]\n"), "t", "b", "env:K", "o")
		if err != nil || !strings.Contains(string(got), "wallet: env:K\ndry_run: true") {
			t.Fatalf("%s %v", got, err)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		for _, src := range []string{"- a\n", "name: [a]\nwallet: x\n", "wallet: x\n", ":"} {
			if _, err := rewriteAgent([]byte(src), "t", "b", "env:K", "o"); err == nil {
				t.Errorf("%q accepted", src)
			}
		}
	})
}

// FuzzRewriteAgent: for any valid name and wallet reference the rewritten file
// reads back with exactly those values and dry_run: true.
func FuzzRewriteAgent(f *testing.F) {
	tmpl, _ := iofs.ReadFile(agentTemplates, "quoter/agent.yaml")
	f.Add("mm-1", "keyring:pitboss-mm-1")
	f.Add("2024", "keystore:/a b/#c: d.json")
	f.Add("true", "env:NULL")
	f.Add("A_b-9", "keystore:'quoted'\"path\"")
	f.Fuzz(func(t *testing.T, name, wallet string) {
		if !market.ValidAgentID(name) {
			return
		}
		ref, err := agents.ParseWalletRef(wallet)
		if err != nil || !utf8.ValidString(wallet) || strings.ContainsAny(wallet, "\n\r\t") || strings.TrimSpace(ref.Value) != ref.Value {
			return
		}
		out, err := rewriteAgent(tmpl, "quoter", name, wallet, "d")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Name   string `yaml:"name"`
			Wallet string `yaml:"wallet"`
			DryRun *bool  `yaml:"dry_run"`
		}
		if err := yaml.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%q %q: %v\n%s", name, wallet, err, out)
		}
		if doc.Name != name || doc.Wallet != wallet || doc.DryRun == nil || !*doc.DryRun {
			t.Fatalf("%q %q read back as %+v", name, wallet, doc)
		}
	})
}

// TestAgentNewHintsWork (issue 15, item 4): on a host without an OS keyring (a fresh
// HOME, no D-Bus session) the new agent's wallet is in the file store, and every
// "pitboss …" line agent new prints under Next and Before going live runs as
// printed (run bounded with --clock sim --duration, the file store's passphrase in
// the environment as the hint says).
func TestAgentNewHintsWork(t *testing.T) {
	c := newCLI(t)
	c.env["HOME"] = t.TempDir()
	c.env["XDG_RUNTIME_DIR"] = t.TempDir()
	c.env[secrets.EnvStorePassphrase] = "hints"
	dir := filepath.Join(t.TempDir(), "bot")
	out := c.mustRun("", "agent", "new", "bot", "--template", "quoter", "--dir", dir)
	if !strings.Contains(out, "wallet   file:pitboss-bot") {
		t.Fatalf("without a keyring the wallet is not in the file store:\n%s", out)
	}
	var ran []string
	for _, line := range strings.Split(out, "\n") {
		cmd, ok := strings.CutPrefix(line, "  pitboss ")
		if !ok {
			continue
		}
		args := strings.Fields(stripComment(cmd))
		if args[0] == "run" {
			args = append([]string{"run", "--clock", "sim", "--duration", "10m"}, args[1:]...)
		}
		if code, stdout, stderr := c.run("", args...); code != 0 {
			t.Fatalf("the hint 'pitboss %s' fails: exit %d\n%s%s", cmd, code, stdout, stderr)
		}
		ran = append(ran, args[0])
	}
	if strings.Join(ran, ",") != "run,backtest,wallet" {
		t.Fatalf("ran the hints %v; want run, backtest and wallet new:\n%s", ran, out)
	}
}

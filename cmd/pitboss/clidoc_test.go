package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The command reference, docs/cli.md, is the help of every command and subcommand
// as their own flag sets print it (`pitboss X -h`), so it cannot drift from the
// code: TestCLIReferenceIsCurrent fails when the file differs from what the
// commands print, and rewrites it when asked to.
const (
	cliDocPath      = "../../docs/cli.md"
	cliDocUpdateEnv = "PITBOSS_UPDATE_CLI_DOC"
)

// cliGroups names the subcommands of the commands that have them. The test reads
// the tables of the commands that keep one (keys, wallet, order, markets); for the
// others it names them here and checks them against the group's own help.
func cliGroups() map[string][]string {
	groups := map[string][]string{
		"agent":    {"new"},
		"backtest": {"compare"},
		"waitlist": {"join"},
		"bridge":   {"deposit", "status"},
		// ctl parses one set of command flags for all its commands.
		"ctl": {"list"},
	}
	for _, s := range keysSubs {
		groups["keys"] = append(groups["keys"], s.name)
	}
	for _, s := range walletSubs {
		groups["wallet"] = append(groups["wallet"], s.name)
	}
	sort.Strings(groups["wallet"])
	for _, s := range orderSubs {
		groups["order"] = append(groups["order"], s.name)
	}
	for _, s := range marketsSubs {
		groups["markets"] = append(groups["markets"], s.name)
	}
	for _, s := range tapeSubs {
		groups["tape"] = append(groups["tape"], s.name)
	}
	for name, subs := range map[string][]subcommand{"question": questionSubs, "bond": bondSubs, "ctf": ctfSubs, "rfq": rfqSubs} {
		for _, s := range subs {
			groups[name] = append(groups[name], s.name)
		}
	}
	return groups
}

// helpOf runs `pitboss args... -h` in-process with an empty environment and returns
// what it printed (on stdout; stderr is kept so that a stray line shows).
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runMain(context.Background(), append(append([]string{}, args...), "-h"),
		stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }})
	if code != 0 {
		t.Fatalf("pitboss %s -h: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return strings.TrimRight(out.String()+errOut.String(), "\n")
}

// listedSubcommands returns the names a group's help lists under "Subcommands:".
func listedSubcommands(help string) []string {
	var names []string
	in := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.TrimSpace(line) == "Subcommands:":
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in && strings.HasPrefix(line, "  "):
			names = append(names, strings.Fields(line)[0])
		}
	}
	return names
}

// hasFlagLines reports whether help lists flags (PrintDefaults' "  -name" lines).
func hasFlagLines(help string) bool {
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, "  -") {
			return true
		}
	}
	return false
}

// cliReference renders docs/cli.md from the commands' own help.
func cliReference(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# pitboss command reference\n\n")
	b.WriteString("Every command and subcommand of the `pitboss` binary with its synopsis and flags, exactly as\n")
	b.WriteString("`pitboss help <command>` (or `pitboss <command> -h`) prints them. This file is generated from the commands' own flag sets\n")
	fmt.Fprintf(&b, "by `TestCLIReferenceIsCurrent` (cmd/pitboss/clidoc_test.go), which fails when it is stale;\n")
	fmt.Fprintf(&b, "regenerate it with `%s=1 go test ./cmd/pitboss -run TestCLIReferenceIsCurrent`.\n\n", cliDocUpdateEnv)
	b.WriteString("Venue flags (`--clob-url`, `--agent`, `--header-prefix`, …) and wallet flags (`--wallet`,\n")
	b.WriteString("`--credentials`, `--passphrase-fd`, `--home`, …) mean the same in every command that takes them;\n")
	b.WriteString("guides: [wallets.md](wallets.md) (wallets, keys, venues), [exchange.md](exchange.md),\n")
	b.WriteString("[running.md](running.md), [backtests.md](backtests.md), [fleet.md](fleet.md).\n\n")

	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	b.WriteString("## Commands\n\n")
	for _, n := range names {
		fmt.Fprintf(&b, "- [`pitboss %s`](#pitboss-%s) — %s\n", n, n, commands[n].summary)
	}
	groups := cliGroups()
	for _, n := range names {
		help := helpOf(t, n)
		subs, isGroup := groups[n]
		if listed := listedSubcommands(help); len(listed) > 0 {
			got, want := slices.Sorted(slices.Values(listed)), slices.Sorted(slices.Values(subs))
			if !slices.Equal(got, want) {
				t.Errorf("pitboss %s -h lists subcommands %v; the reference knows %v: update cliGroups", n, got, want)
			}
		}
		if !isGroup && !hasFlagLines(help) {
			t.Errorf("pitboss %s -h shows no flags and the reference knows no subcommands of it: add them to cliGroups", n)
		}
		fmt.Fprintf(&b, "\n## pitboss %s\n\n%s\n\n```\n%s\n```\n", n, commands[n].summary, help)
		for _, s := range subs {
			fmt.Fprintf(&b, "\n### pitboss %s %s\n\n```\n%s\n```\n", n, s, helpOf(t, n, s))
		}
	}
	return b.String()
}

// TestCLIReferenceIsCurrent: docs/cli.md is what the commands print.
func TestCLIReferenceIsCurrent(t *testing.T) {
	want := cliReference(t)
	for _, leak := range []string{os.Getenv("HOME"), os.Getenv("USER")} {
		if len(leak) > 3 && strings.Contains(want, leak) {
			t.Fatalf("the reference depends on this machine (it contains %q): a flag default must not", leak)
		}
	}
	path := filepath.FromSlash(cliDocPath)
	if os.Getenv(cliDocUpdateEnv) != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; generate it with %s=1 go test ./cmd/pitboss -run TestCLIReferenceIsCurrent", err, cliDocUpdateEnv)
	}
	if string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		at := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end of file)"
		}
		t.Fatalf("docs/cli.md is stale (first difference at line %d:\n  file:     %q\n  commands: %q)\n"+
			"regenerate it with %s=1 go test ./cmd/pitboss -run TestCLIReferenceIsCurrent", i+1, at(gl), at(wl), cliDocUpdateEnv)
	}
}

// TestFlagPlaceholdersAreOneWord: a flag's help line is "-name" and at most one
// placeholder. The flag package takes the first `quoted` word of a usage text as
// the placeholder, so "for `pitboss worker` processes" once printed
// "-nats pitboss worker" where the reader expects "-nats URL".
func TestFlagPlaceholdersAreOneWord(t *testing.T) {
	ref := cliReference(t)
	lines := 0
	for _, line := range strings.Split(ref, "\n") {
		if !strings.HasPrefix(line, "  -") || strings.Contains(line, "\t") {
			continue // not a flag's first line, or a short flag with its usage after a tab
		}
		lines++
		if f := strings.Fields(line); len(f) > 2 {
			t.Errorf("flag line %q: more than one placeholder word (a `quoted` phrase in its usage?)", line)
		}
	}
	if lines < 100 {
		t.Fatalf("only %d flag lines in the reference: the check would be vacuous", lines)
	}
	for _, cmd := range []string{"backtest", "worker"} {
		if help := helpOf(t, cmd); !strings.Contains(help, "  -nats URL\n") || !strings.Contains(help, "  -nats-creds FILE\n") {
			t.Errorf("pitboss %s -h does not show -nats URL and -nats-creds FILE, as docs/backtests.md names them:\n%s", cmd, help)
		}
	}
}

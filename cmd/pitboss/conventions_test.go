package main

import (
	"slices"
	"strings"
	"testing"
)

// tableNames lists the command table (the same as commandNames; kept apart so these
// tests also run against a tree that predates it).
func tableNames() []string {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// The command line behaves like the tools people know (git, go, kubectl): help that
// is asked for goes to stdout and exits 0, a mistake is a line or two on stderr
// with a suggestion and exits 2. Every test here walks the command table, so a
// command added later is held to the same conventions.

// TestHelpGoesToStdout: `pitboss CMD -h` prints on stdout (so `| grep` works),
// nothing on stderr, exit 0; `pitboss help CMD` prints the same.
func TestHelpGoesToStdout(t *testing.T) {
	for _, name := range tableNames() {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, name, "-h")
			if code != 0 || errOut != "" || !strings.Contains(out, "pitboss "+name) {
				t.Fatalf("pitboss %s -h: exit %d, stdout %d bytes, stderr %q", name, code, len(out), errOut)
			}
			code, viaHelp, errOut := runCLI(t, "help", name)
			if code != 0 || errOut != "" || viaHelp != out {
				t.Fatalf("pitboss help %s: exit %d, stderr %q, stdout differs from -h:\n%s", name, code, errOut, viaHelp)
			}
		})
	}
	// the README's own example
	if _, out, _ := runCLI(t, "backtest", "-h"); !strings.Contains(out, "-sweep") {
		t.Fatalf("pitboss backtest -h | grep sweep finds nothing:\n%s", out)
	}
	// a subcommand's help through help
	code, out, _ := runCLI(t, "help", "order", "place")
	if code != 0 || !strings.Contains(out, "Usage: pitboss order place") {
		t.Fatalf("pitboss help order place: exit %d\n%s", code, out)
	}
}

// TestMistakesAreShortAndSuggest: an unknown flag of any command is one line on
// stderr (no 60 lines of usage), exit 2; a close one is suggested.
func TestMistakesAreShortAndSuggest(t *testing.T) {
	for _, name := range tableNames() {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, name, "--no-such-flag-at-all")
			if code != 2 || out != "" || strings.Count(errOut, "\n") > 2 || strings.Contains(errOut, "Usage:") {
				t.Fatalf("pitboss %s --no-such-flag-at-all: exit %d, stdout %q, stderr:\n%s", name, code, out, errOut)
			}
		})
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rn"}, `pitboss: unknown command "rn"; did you mean run?`},
		{[]string{"bakctest"}, `did you mean backtest?`},
		{[]string{"run", "--duraton", "3s", "x.yaml"}, "pitboss run: unknown flag --duraton; did you mean --duration? (see pitboss run -h)"},
		{[]string{"backtest", "--sweeep", "a=1:2:1", "x.yaml"}, "did you mean --sweep?"},
		{[]string{"order", "plac"}, `unknown order subcommand "plac"; did you mean place?`},
		{[]string{"order", "place", "--prise", "0.4"}, "pitboss order place: unknown flag --prise; did you mean --price? (see pitboss order place -h)"},
		{[]string{"agent", "nwe"}, `did you mean new?`},
		{[]string{"run", "--duration", "soon", "x.yaml"}, `invalid value "soon" for --duration`},
		{[]string{"backtest", "--data", "../../agents/examples/testdata/sample.tape", "--sweep", "half_sprad=0.01:0.02:0.01",
			"../../agents/examples/quoter/agent.yaml"}, `strategy quoter has no parameter "half_sprad" (did you mean "half_spread"?)`},
	} {
		code, _, errOut := runCLI(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") > 2 {
			t.Errorf("pitboss %s: exit %d, stderr:\n%s\nwant exit 2 and %q", strings.Join(tt.args, " "), code, errOut, tt.want)
		}
	}
}

// TestVersionFlag: --version is `pitboss version`, not an unknown command.
func TestVersionFlag(t *testing.T) {
	_, want, _ := runCLI(t, "version")
	for _, arg := range []string{"--version", "-version"} {
		code, out, errOut := runCLI(t, arg)
		if code != 0 || out != want || errOut != "" {
			t.Errorf("pitboss %s: exit %d, stdout %q (want %q), stderr %q", arg, code, out, want, errOut)
		}
	}
}

// TestErrorsCarryNoPackagePrefixes: what a user reads names the file and the
// problem, not the Go packages the error passed through.
func TestErrorsCarryNoPackagePrefixes(t *testing.T) {
	code, _, errOut := runCLI(t, "run", "nosuch.yaml")
	if code != 1 || errOut != "pitboss run: open nosuch.yaml: no such file or directory\n" {
		t.Errorf("pitboss run nosuch.yaml: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "backtest", "--data", "nosuch.tape", "../../agents/examples/quoter/agent.yaml")
	if code != 1 || !strings.HasPrefix(errOut, "pitboss backtest: open nosuch.tape: ") {
		t.Errorf("pitboss backtest --data nosuch.tape: exit %d, stderr %q", code, errOut)
	}
}

package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// funding is the package that submits withdrawals and executes BNB swaps.
const funding = Module + "/adapters/clob/funding"

// goListDeps runs `go list -e -deps` over patterns (relative to the module root)
// and returns every package in the dependency closure. -e keeps a package that does
// not build yet (another engineer's work in progress) from hiding the others.
func goListDeps(t *testing.T, patterns ...string) map[string]bool {
	t.Helper()
	args := append([]string{"list", "-e", "-deps", "-f", "{{.ImportPath}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatal(err)
	}
	got := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		got[strings.TrimSpace(sc.Text())] = true
	}
	return got
}

// TestAgentCodeNeverLinksFunding checks the real dependency closure (`go list
// -deps`) of every package an agent or the supervisor is built from: none contains
// adapters/clob/funding or anything under cmd/. The same command over cmd/pitboss
// does contain it, so the check is not vacuous.
func TestAgentCodeNeverLinksFunding(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	agentSide := goListDeps(t, "./runtime/...", "./agents/...", "./strategy/...", "./policies/...", "./sandbox/exprenv/...")
	for _, must := range []string{Module + "/market", Module + "/agents", Module + "/runtime/agent"} {
		if !agentSide[must] {
			t.Fatalf("go list -deps did not list %s: the check would be vacuous", must)
		}
	}
	for pkg := range agentSide {
		if pkg == funding || strings.HasPrefix(pkg, Module+"/cmd/") || pkg == Module+"/cmd" {
			t.Errorf("agent-side code links %s", pkg)
		}
	}
	if !goListDeps(t, "./cmd/pitboss")[funding] {
		t.Fatal("go list -deps ./cmd/pitboss does not list the funding package: the check would be vacuous")
	}
}

// TestRule6CatchesIndirectViolations feeds the checker graphs where agent-side
// packages reach the funding package or the command through an intermediate, and
// graphs where only allowed packages do.
func TestRule6CatchesIndirectViolations(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	tests := []struct {
		name string
		pkg  Package
		bad  []string
	}{
		{"the agent loop through a helper", Package{Path: m("runtime/agent"), Imports: []string{m("runtime/helper")},
			Deps: []string{m("runtime/helper"), m("adapters/clob"), funding}}, []string{funding}},
		{"a future supervisor importing the command", Package{Path: m("runtime/supervisor"), Imports: []string{m("cmd/pitboss")},
			Deps: []string{m("cmd/pitboss"), funding}}, []string{funding, m("cmd/pitboss")}}, // sorted
		{"an agents subpackage", Package{Path: m("agents/loader"), Deps: []string{funding}}, []string{funding}},
		{"a policy", Package{Path: m("policies"), Deps: []string{m("adapters/clob/funding/internal")}}, []string{m("adapters/clob/funding/internal")}},
		{"the expression sandbox", Package{Path: m("sandbox/exprenv"), Deps: []string{funding}}, []string{funding}},
		{"the command itself is allowed", Package{Path: m("cmd/pitboss"), Imports: []string{funding}, Deps: []string{funding}}, nil},
		{"the clob client is allowed to agents' wiring", Package{Path: m("runtime/wire"), Deps: []string{m("adapters/clob")}}, nil},
	}
	var rule6 []Rule
	for _, r := range Rules {
		if strings.HasPrefix(r.Name, "6:") {
			rule6 = append(rule6, r)
		}
	}
	if len(rule6) != 1 {
		t.Fatalf("%d rules named 6", len(rule6))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range Check([]Package{tt.pkg}, rule6) {
				got = append(got, v.Import)
			}
			if strings.Join(got, ",") != strings.Join(tt.bad, ",") {
				t.Fatalf("violations %v, want %v", got, tt.bad)
			}
		})
	}
}

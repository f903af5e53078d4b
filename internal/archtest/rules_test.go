package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules runs the rules over the real module.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .Deps \",\"}}", Module+"/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []Package
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		if len(parts) != 3 {
			t.Fatalf("unexpected go list line %q", sc.Text())
		}
		pkgs = append(pkgs, Package{Path: parts[0], Imports: split(parts[1]), Deps: split(parts[2])})
	}
	if len(pkgs) < 2 {
		t.Fatalf("go list found %d packages; the check would be vacuous", len(pkgs))
	}
	for _, v := range Check(pkgs, Rules) {
		t.Error(v)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// TestRulesCatchViolations feeds the checker a graph with one breach of each rule and
// a few allowed edges, so that a rule that silently stops matching fails here.
func TestRulesCatchViolations(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	pkgs := []Package{
		{Path: m("market"), Imports: []string{"fmt", "github.com/shopspring/decimal", "go.uber.org/zap"}},
		{Path: m("runtime/agent"), Imports: []string{m("market")}, Deps: []string{m("market"), m("adapters/clob"), "github.com/expr-lang/expr"}},
		{Path: m("strategy"), Imports: []string{m("adapters/clob"), "github.com/expr-lang/expr"}},
		{Path: m("sandbox/server"), Imports: []string{m("adapters/auth"), m("adapters/clob"), "github.com/coder/websocket"}},
		{Path: m("runtime/supervisor"), Imports: []string{m("adapters/natsbus"), "github.com/nats-io/nats.go"}},
		{Path: m("adapters/wsfeed"), Imports: []string{m("adapters/auth")}, Deps: []string{m("policies")}},
		{Path: m("sandbox/exchange"), Imports: []string{"time", "sort", m("market"), m("sandbox/server")}},
		{Path: m("policies"), Imports: []string{"github.com/ethereum/go-ethereum/common", "github.com/zalando/go-keyring"}},
		{Path: m("runtime/wire"), Imports: []string{m("adapters/clob"), "github.com/coder/websocket"}, Deps: []string{m("adapters/clob/funding")}},
		{Path: m("cmd/pitboss"), Imports: []string{m("adapters/clob/funding")}},
		{Path: m("runtime/alert"), Imports: []string{"net/http", "go.uber.org/zap", m("market")}, Deps: []string{"net/http", m("market"), m("adapters/secrets"), "github.com/nats-io/nats.go"}},
		{Path: "example.com/other", Imports: []string{"github.com/ethereum/go-ethereum"}},
	}
	want := map[string]bool{
		m("market") + " go.uber.org/zap":                          true,
		m("runtime/agent") + " " + m("adapters/clob"):             true,
		m("runtime/agent") + " github.com/expr-lang/expr":         true,
		m("strategy") + " " + m("adapters/clob"):                  true,
		m("sandbox/server") + " " + m("adapters/clob"):            true,
		m("adapters/wsfeed") + " " + m("policies"):                true,
		m("sandbox/exchange") + " time":                           true,
		m("sandbox/exchange") + " " + m("sandbox/server"):         true,
		m("policies") + " github.com/ethereum/go-ethereum/common": true,
		m("policies") + " github.com/zalando/go-keyring":          true,
		m("runtime/wire") + " github.com/coder/websocket":         true,
		m("runtime/wire") + " " + m("adapters/clob/funding"):      true,
		m("runtime/alert") + " " + m("adapters/secrets"):          true,
		m("runtime/alert") + " github.com/nats-io/nats.go":        true,
	}
	got := map[string]bool{}
	for _, v := range Check(pkgs, Rules) {
		got[v.Package+" "+v.Import] = true
	}
	for k := range want {
		if !got[k] {
			t.Errorf("violation not caught: %s", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("allowed import reported: %s", k)
		}
	}
}

package archtest

import (
	"fmt"
	"sort"
	"strings"
)

// Module is the module path every rule is relative to.
const Module = "github.com/pitbossdev/pitboss"

// Package is one node of the import graph: its path, its direct imports and all of
// its transitive dependencies (as `go list` reports them; test files excluded).
type Package struct {
	Path    string
	Imports []string
	Deps    []string
}

// Rule forbids some imports to some packages.
type Rule struct {
	Name string
	// Applies reports whether the rule constrains package p (module-relative path,
	// e.g. "runtime/agent").
	Applies func(p string) bool
	// Transitive checks every dependency, not only direct imports.
	Transitive bool
	// Forbidden reports whether importing path imp (full import path) breaks the rule.
	Forbidden func(p, imp string) bool
}

func rel(path string) (string, bool) {
	if path == Module {
		return "", true
	}
	if strings.HasPrefix(path, Module+"/") {
		return path[len(Module)+1:], true
	}
	return "", false
}

func under(p string, prefixes ...string) bool {
	for _, pre := range prefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

func isStdlib(imp string) bool {
	first := imp
	if i := strings.IndexByte(imp, '/'); i >= 0 {
		first = imp[:i]
	}
	return !strings.Contains(first, ".")
}

func external(imp string, prefixes ...string) bool { return under(imp, prefixes...) }

func internalUnder(imp string, prefixes ...string) bool {
	r, ok := rel(imp)
	return ok && under(r, prefixes...)
}

var (
	ethereum  = "github.com/ethereum/go-ethereum"
	nats      = []string{"github.com/nats-io/nats.go", "github.com/nats-io/nats-server", "github.com/nats-io/jwt", "github.com/nats-io/nkeys"}
	exprLang  = "github.com/expr-lang/expr"
	websocket = "github.com/coder/websocket"
	keyring   = "github.com/zalando/go-keyring"
)

// Rules are the import rules of the architecture, numbered as in
// docs/design/architecture.md.
var Rules = []Rule{
	{
		Name:    "1: market imports only the standard library and shopspring/decimal",
		Applies: func(p string) bool { return p == "market" },
		Forbidden: func(_, imp string) bool {
			return !isStdlib(imp) && !external(imp, "github.com/shopspring/decimal")
		},
	},
	{
		Name:       "2: runtime/agent imports no adapter, sandbox, expr, go-ethereum, NATS, websocket or keyring (it is tested with fakes)",
		Applies:    func(p string) bool { return under(p, "runtime/agent") },
		Transitive: true,
		Forbidden: func(_, imp string) bool {
			return internalUnder(imp, "adapters", "sandbox", "strategy") ||
				external(imp, ethereum, exprLang, websocket, keyring) || external(imp, nats...)
		},
	},
	{
		Name: "3a: only runtime/wire and cmd/ import adapters/* (exceptions: adapters among themselves, sandbox/server → adapters/auth, runtime/supervisor → adapters/natsbus)",
		Applies: func(p string) bool {
			return !under(p, "runtime/wire", "cmd", "adapters", "internal/archtest")
		},
		Forbidden: func(p, imp string) bool {
			if !internalUnder(imp, "adapters") {
				return false
			}
			switch {
			case under(p, "sandbox/server") && internalUnder(imp, "adapters/auth"):
				return false
			case under(p, "runtime/supervisor") && internalUnder(imp, "adapters/natsbus"):
				return false
			}
			return true
		},
	},
	{
		Name:       "3b: adapters never import strategy or policies",
		Applies:    func(p string) bool { return under(p, "adapters") },
		Transitive: true,
		Forbidden: func(_, imp string) bool {
			return internalUnder(imp, "strategy", "policies")
		},
	},
	{
		Name:    "4: sandbox/exchange reads no clock, no network, no files, no global randomness: it imports only market and pure standard packages",
		Applies: func(p string) bool { return under(p, "sandbox/exchange") },
		Forbidden: func(_, imp string) bool {
			if r, ok := rel(imp); ok {
				return !under(r, "market", "sandbox/exchange")
			}
			if !isStdlib(imp) {
				return !external(imp, "github.com/shopspring/decimal")
			}
			return under(imp, "time", "os", "net", "io/fs", "io/ioutil", "syscall", "math/rand", "crypto/rand", "path/filepath", "log", "runtime", "unsafe", "sync")
		},
	},
	{
		Name:    "5a: go-ethereum lives in adapters/auth and adapters/secrets (keystore) only",
		Applies: func(p string) bool { return !under(p, "adapters/auth", "adapters/secrets") },
		Forbidden: func(_, imp string) bool {
			return external(imp, ethereum)
		},
	},
	{
		Name:      "5b: NATS lives in adapters/natsbus and runtime/supervisor only",
		Applies:   func(p string) bool { return !under(p, "adapters/natsbus", "runtime/supervisor") },
		Forbidden: func(_, imp string) bool { return external(imp, nats...) },
	},
	{
		Name:      "5c: expr lives in strategy and sandbox/exprenv only",
		Applies:   func(p string) bool { return !under(p, "strategy", "sandbox/exprenv") },
		Forbidden: func(_, imp string) bool { return external(imp, exprLang) },
	},
	{
		Name:      "5d: coder/websocket lives in adapters/wsfeed and sandbox/server only",
		Applies:   func(p string) bool { return !under(p, "adapters/wsfeed", "sandbox/server") },
		Forbidden: func(_, imp string) bool { return external(imp, websocket) },
	},
	{
		Name:      "5e: go-keyring lives in adapters/secrets only",
		Applies:   func(p string) bool { return !under(p, "adapters/secrets") },
		Forbidden: func(_, imp string) bool { return external(imp, keyring) },
	},
	{
		Name:       "6: no agent, strategy, guard or supervisor code can reach withdrawal or BNB swap execution (adapters/clob/funding)",
		Applies:    func(p string) bool { return under(p, "runtime", "agents", "strategy", "policies", "sandbox/exprenv") },
		Transitive: true,
		Forbidden: func(_, imp string) bool {
			return internalUnder(imp, "adapters/clob/funding", "cmd")
		},
	},
	{
		Name:       "8: runtime/alert is a leaf the supervisor and a standalone agent's wiring share: the standard library, zap, YAML, market and the shared YAML walker only (no adapter, NATS, other runtime package or secret store: secrets come through Options.Resolve)",
		Applies:    func(p string) bool { return under(p, "runtime/alert") },
		Transitive: true,
		Forbidden: func(_, imp string) bool {
			if r, ok := rel(imp); ok {
				return !under(r, "market", "runtime/alert", "internal/yamlmap", "internal/suggest")
			}
			return !isStdlib(imp) && !external(imp, "go.uber.org/zap", "go.uber.org/multierr", "go.yaml.in/yaml/v3", "github.com/shopspring/decimal")
		},
	},
}

// Violation is one forbidden import.
type Violation struct {
	Rule    string
	Package string
	Import  string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s, breaking rule %s", v.Package, v.Import, v.Rule)
}

// Check returns every violation of rules in pkgs, sorted. Packages outside the
// module are ignored.
func Check(pkgs []Package, rules []Rule) []Violation {
	var out []Violation
	for _, pkg := range pkgs {
		p, ok := rel(pkg.Path)
		if !ok {
			continue
		}
		for _, r := range rules {
			if !r.Applies(p) {
				continue
			}
			list := pkg.Imports
			if r.Transitive {
				list = pkg.Deps
			}
			for _, imp := range list {
				if imp == pkg.Path {
					continue
				}
				if r.Forbidden(p, imp) {
					out = append(out, Violation{Rule: r.Name, Package: pkg.Path, Import: imp})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].Import < out[j].Import
	})
	return out
}

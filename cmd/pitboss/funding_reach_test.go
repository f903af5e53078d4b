package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const fundingPkg = "github.com/pitbossdev/pitboss/adapters/clob/funding"

// pkgSource is this package's non-test source, parsed.
type pkgSource struct {
	files map[string]*ast.File // base name → file
	// decls maps each package-level function, method ("T.m") and variable to the
	// file declaring it.
	decls map[string]string
	// refs maps each package-level declaration to the package-level names it
	// mentions (an over-approximation: any identifier with that name counts).
	refs map[string]map[string]bool
}

// parsePackage parses the package's non-test files plus extra (name → source),
// which tests use to plant a violation.
func parsePackage(t *testing.T, extra map[string]string) *pkgSource {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	p := &pkgSource{files: map[string]*ast.File{}, decls: map[string]string{}, refs: map[string]map[string]bool{}}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, n, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "main" {
			continue // a file of another build context
		}
		p.files[n] = f
	}
	for n, src := range extra {
		f, err := parser.ParseFile(fset, n, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		p.files[n] = f
	}
	// Two passes: names first, then what each declaration mentions. An init is
	// named after its file and its rank there.
	inits := map[string]int{}
	declName := func(d ast.Decl, file string) []string {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = recvType(d.Recv.List[0].Type) + "." + name
			}
			if name == "init" {
				inits[file]++
				name = "init@" + file + "#" + strconv.Itoa(inits[file])
			}
			return []string{name}
		case *ast.GenDecl:
			var out []string
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for _, id := range vs.Names {
						out = append(out, id.Name)
					}
				}
			}
			return out
		}
		return nil
	}
	for n, f := range p.files {
		for _, d := range f.Decls {
			for _, name := range declName(d, n) {
				p.decls[name] = n
			}
		}
	}
	inits = map[string]int{}
	for n, f := range p.files {
		for _, d := range f.Decls {
			for _, name := range declName(d, n) {
				m := map[string]bool{}
				ast.Inspect(d, func(x ast.Node) bool {
					switch x := x.(type) {
					case *ast.Ident:
						if _, ok := p.decls[x.Name]; ok && x.Name != name {
							m[x.Name] = true
						}
					case *ast.SelectorExpr:
						if id, ok := x.X.(*ast.Ident); ok && id.Name == "funding" {
							m["funding."+x.Sel.Name] = true
						}
						for decl := range p.decls {
							if strings.HasSuffix(decl, "."+x.Sel.Name) {
								m[decl] = true // a method call: every method of that name
							}
						}
					}
					return true
				})
				p.refs[name] = m
			}
		}
	}
	return p
}

func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return recvType(e.X)
	}
	return "?"
}

// referrers returns the declarations that mention name.
func (p *pkgSource) referrers(name string) []string {
	var out []string
	for d, m := range p.refs {
		if m[name] {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// TestFundingIsReachableOnlyFromTheWalletCommand proves from the source that the
// binary reaches withdrawal submission and swap execution only through the command
// line `pitboss wallet withdraw|swap-bnb`:
//
//   - only wallet_funding.go imports adapters/clob/funding;
//   - the functions that use it are mentioned only by each other and by that
//     file's init, which puts them in the wallet command's table;
//   - that table (walletSubs) is read only by runWallet, runWallet is mentioned only
//     by wallet.go's init (the command table), and the command table (commands) is
//     read only by runMain, which only main calls (and by commandNames, which
//     returns the names alone, for help and suggestions).
//
// So `pitboss run` (and the supervisor's children, `pitboss run --supervised`)
// cannot get there: nothing they execute dispatches on the command table.
func TestFundingIsReachableOnlyFromTheWalletCommand(t *testing.T) {
	p := parsePackage(t, nil)
	if len(p.files) < 5 {
		t.Fatalf("parsed %d files; the check would be vacuous", len(p.files))
	}
	for _, problem := range fundingReach(p) {
		t.Error(problem)
	}
}

// TestFundingReachCatchesAViolation plants code that would let another command
// reach the funding subcommands, and expects the check to name each path.
func TestFundingReachCatchesAViolation(t *testing.T) {
	planted := map[string]string{
		"zz_planted.go": "package main\n\nimport \"" + fundingPkg + "\"\n\nfunc planted() { _ = runWalletWithdraw; _ = walletSubs; _ = commands; runMain(nil, nil, stdio{}); _ = funding.ErrChanged }\n",
	}
	got := strings.Join(fundingReach(parsePackage(t, planted)), "\n")
	for _, want := range []string{
		"zz_planted.go imports " + fundingPkg,
		"funding is used by [planted runWalletSwapBNB runWalletWithdraw]",
		"walletSubs is mentioned by planted",
		"commands is mentioned by planted",
		"runMain is mentioned by planted",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check missed %q; it said:\n%s", want, got)
		}
	}
}

// fundingReach returns every way the package's source breaks the rule of
// TestFundingIsReachableOnlyFromTheWalletCommand.
func fundingReach(p *pkgSource) []string {
	var problems []string
	for n, f := range p.files {
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == fundingPkg && n != "wallet_funding.go" {
				problems = append(problems, n+" imports "+fundingPkg+": only wallet_funding.go may")
			}
		}
	}
	// The declarations that use the funding package directly.
	var users []string
	for d, m := range p.refs {
		for r := range m {
			if strings.HasPrefix(r, "funding.") {
				users = append(users, d)
				break
			}
		}
	}
	sort.Strings(users)
	if strings.Join(users, ",") != "runWalletSwapBNB,runWalletWithdraw" {
		problems = append(problems, fmt.Sprintf("funding is used by %v; want exactly the withdraw and swap-bnb subcommands", users))
	}
	isUser := map[string]bool{"runWalletSwapBNB": true, "runWalletWithdraw": true}
	for u := range isUser {
		for _, r := range p.referrers(u) {
			if !isUser[r] && !strings.HasPrefix(r, "init@wallet_funding.go#") {
				problems = append(problems, fmt.Sprintf("%s is mentioned by %s (%s): only wallet_funding.go's init may register it", u, r, p.decls[r]))
			}
		}
	}
	only := func(name string, allowed ...string) {
		ok := map[string]bool{}
		for _, a := range allowed {
			ok[a] = true
		}
		refs := p.referrers(name)
		if len(refs) == 0 {
			problems = append(problems, "nothing mentions "+name+": the check no longer matches the code")
		}
		for _, r := range refs {
			if !ok[r] && !ok[strings.SplitN(r, "#", 2)[0]] {
				problems = append(problems, fmt.Sprintf("%s is mentioned by %s (%s); allowed: %v", name, r, p.decls[r], allowed))
			}
		}
	}
	only("walletSubs", "runWallet", "printWalletUsage", "registerWalletSub")
	only("runWallet", "init@wallet.go")
	// commandNames returns the names only (for help and suggestions): nothing to run.
	only("commands", "runMain", "printUsage", "register", "commandNames")
	only("runMain", "main")
	sort.Strings(problems)
	return problems
}

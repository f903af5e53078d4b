package exprenv

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// Namespace is a name whose members stand for fields of the environment: in an
// expression, NAME.MEMBER (or NAME["MEMBER"]) is replaced by the member's target
// path before the expression is type-checked, so it reads like any field (typed,
// on the fast path). Strategies use them for names the file declares — another
// market slot (markets.hedge), a feed (feeds.btc), a signal (signals.model) — which
// a Go struct cannot spell. docs/design/0133-strategy-inputs.md.
type Namespace struct {
	// Members map a member name to a dotted path of the environment (as an alias
	// target: "@x.m1"). A member that is not an identifier is read as NAME["a-b"].
	Members map[string]string
	// Open leaves unknown members as written (the namespace is also a field of the
	// environment, e.g. event, whose other fields stay readable). If false, an
	// unknown member and the bare name are errors.
	Open bool
	// What names a member in errors ("market slot", "feed", "signal").
	What string
	// Declare says how a file declares members, for errors ("markets: [NAME, …]").
	Declare string
	// Methods, if set, resolves a call MEMBER.name(args) of one of this namespace's
	// members: target is the member's target path and args are the call's
	// arguments, each a number (a duration literal is its milliseconds). It returns
	// the path of the field that holds the call's value (the caller computes it for
	// every evaluation), or an error shown at the call.
	Methods func(target, name string, args []float64) (string, error)
}

// durationUnits are the units of duration literals, in milliseconds.
var durationUnits = map[string]int64{"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}

// MaxDuration bounds a duration literal: a year.
const MaxDuration = 365 * 86_400_000

// scanDurations finds duration literals in src (outside strings): a number directly
// followed by a unit (30s, 1.5m, 500ms, 1h30m), not preceded by a letter, digit, '_'
// or '.', and not followed by one. It returns src with each literal replaced by "0"
// and spaces (so every other token keeps its position), and the literals' values in
// milliseconds by rune offset. A literal that is not a whole number of milliseconds
// from 1 ms to MaxDuration is reported as an error at its offset.
func scanDurations(src string) (string, map[int]int64, int, error) {
	rs := []rune(src)
	var out []rune
	var found map[int]int64
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == '"' || r == '\'' || r == '`' {
			j := i + 1
			for j < len(rs) && rs[j] != r {
				if rs[j] == '\\' && r != '`' {
					j++
				}
				j++
			}
			i = j
			continue
		}
		if r < '0' || r > '9' || i > 0 && (isWordRune(rs[i-1]) || rs[i-1] == '.') {
			continue
		}
		// A run of number-unit parts.
		j, ms, parts := i, 0.0, 0
		for {
			k := j
			for k < len(rs) && rs[k] >= '0' && rs[k] <= '9' {
				k++
			}
			if k == j {
				break
			}
			if k+1 < len(rs) && rs[k] == '.' && rs[k+1] >= '0' && rs[k+1] <= '9' {
				k++
				for k < len(rs) && rs[k] >= '0' && rs[k] <= '9' {
					k++
				}
			}
			u := k
			for u < len(rs) && (rs[u] == 'm' || rs[u] == 's' || rs[u] == 'h' || rs[u] == 'd') && u-k < 2 {
				u++
			}
			unit, ok := durationUnits[string(rs[k:u])]
			if !ok {
				break
			}
			v, err := strconv.ParseFloat(string(rs[j:k]), 64)
			if err != nil {
				break
			}
			ms += v * float64(unit)
			j, parts = u, parts+1
		}
		if parts == 0 || j < len(rs) && (isWordRune(rs[j]) || rs[j] == '.') {
			// a plain number (or something the lexer will refuse); skip its digits
			for i+1 < len(rs) && isWordRune(rs[i+1]) {
				i++
			}
			continue
		}
		ms = float64(int64(ms*1e6+0.5)) / 1e6 // 1.1s is 1100 ms, not 1100.0000000000002
		if ms != float64(int64(ms)) || ms < 1 || ms > MaxDuration {
			return "", nil, i, fmt.Errorf("duration %s must be a whole number of milliseconds from 1ms to 365d", string(rs[i:j]))
		}
		if out == nil {
			out = append([]rune(nil), rs...)
			found = map[int]int64{}
		}
		out[i] = '0'
		for k := i + 1; k < j; k++ {
			out[k] = ' '
		}
		found[i] = int64(ms)
		i = j - 1
	}
	if out == nil {
		return src, nil, 0, nil
	}
	return string(out), found, 0, nil
}

func isWordRune(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// checkNamespaces validates cfg.Namespaces against the environment type and the
// other names; it returns the namespaces' names for suggestions.
func (e *Env) checkNamespaces(top map[string]bool) error {
	for name, ns := range e.cfg.Namespaces {
		if !isIdent(name) {
			return fmt.Errorf("exprenv: namespace name %q is not an identifier", name)
		}
		if _, c := e.cfg.Consts[name]; c {
			return fmt.Errorf("exprenv: %q is both a constant and a namespace", name)
		}
		if _, a := e.cfg.Aliases[name]; a {
			return fmt.Errorf("exprenv: %q is both an alias and a namespace", name)
		}
		if top[name] != ns.Open {
			if ns.Open {
				return fmt.Errorf("exprenv: open namespace %q is not a field of %s", name, e.envType)
			}
			return fmt.Errorf("exprenv: namespace %q clashes with a built-in name", name)
		}
		for m, target := range ns.Members {
			if m == "" || strings.ContainsAny(m, ". ") {
				return fmt.Errorf("exprenv: member %q of namespace %q is not a name", m, name)
			}
			if !hasPath(e.envType, target) {
				return fmt.Errorf("exprenv: member %s.%s names no field %q of %s", name, m, target, e.envType)
			}
			e.hidden[strings.SplitN(target, ".", 2)[0]] = true
			if ns.Methods != nil {
				if e.methods == nil {
					e.methods = map[string]func(string, string, []float64) (string, error){}
				}
				e.methods[target] = ns.Methods
			}
		}
	}
	return nil
}

// memberNames returns a namespace's members, sorted.
func (ns Namespace) memberNames() []string {
	out := make([]string, 0, len(ns.Members))
	for m := range ns.Members {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// unknownMember is the error for NAME.member when member is not one of ns's.
func unknownMember(name string, ns Namespace, member string) string {
	what := ns.What
	if what == "" {
		what = "member"
	}
	if len(ns.Members) == 0 {
		msg := fmt.Sprintf("%s.%s: no %s is declared", name, member, what)
		if ns.Declare != "" {
			msg += " (declare it: " + ns.Declare + ")"
		}
		return msg
	}
	return fmt.Sprintf("%s.%s: unknown %s %s%s", name, member, what, member, suggestIn(member, ns.memberNames(), what+"s"))
}

func suggestIn(word string, list []string, what string) string {
	if s := Suggest(word, list); s != "" {
		return " (did you mean " + s + "?)"
	}
	return " (" + what + ": " + strings.Join(list, ", ") + ")"
}

// patchNamespace replaces NAME.MEMBER; it reports whether node was such a member
// access (patched or refused).
func (p *patcher) patchNamespace(node *ast.Node, n *ast.MemberNode) bool {
	id, ok := n.Node.(*ast.IdentifierNode)
	if !ok {
		return false
	}
	ns, ok := p.env.cfg.Namespaces[id.Value]
	if !ok {
		return false
	}
	prop, ok := n.Property.(*ast.StringNode)
	if !ok {
		if !ns.Open {
			p.fail(n, fmt.Sprintf("%s[…] needs a constant name: write %s.NAME", id.Value, id.Value))
		}
		return true
	}
	target, ok := ns.Members[prop.Value]
	if !ok {
		if !ns.Open {
			p.fail(n, unknownMember(id.Value, ns, prop.Value))
		}
		return true
	}
	ast.Patch(node, pathNode(target))
	return true
}

// patchMethod replaces a call MEMBER.name(args) of a namespace member that has
// methods; it reports whether node was such a call.
func (p *patcher) patchMethod(node *ast.Node, n *ast.CallNode) bool {
	m, ok := n.Callee.(*ast.MemberNode)
	if !ok || len(p.env.methods) == 0 {
		return false
	}
	name, ok := m.Property.(*ast.StringNode)
	if !ok {
		return false
	}
	target, ok := nodePath(m.Node)
	if !ok {
		return false
	}
	resolve := p.env.methods[target]
	if resolve == nil {
		return false
	}
	args := make([]float64, len(n.Arguments))
	for i, a := range n.Arguments {
		switch v := a.(type) {
		case *ast.IntegerNode:
			args[i] = float64(v.Value)
		case *ast.FloatNode:
			args[i] = v.Value
		default:
			p.fail(a, fmt.Sprintf("%s(…): arguments must be constants (a number or a duration such as 60s)", name.Value))
			return true
		}
	}
	path, err := resolve(target, name.Value, args)
	if err != nil {
		p.fail(n, err.Error())
		return true
	}
	if !hasPath(p.env.envType, path) {
		p.fail(n, fmt.Sprintf("%s(…) is not available here", name.Value))
		return true
	}
	ast.Patch(node, pathNode(path))
	return true
}

// nodePath returns the dotted path a chain of member accesses spells ("@x.f0"), if
// it is one.
func nodePath(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.IdentifierNode:
		return v.Value, true
	case *ast.MemberNode:
		s, ok := v.Property.(*ast.StringNode)
		if !ok {
			return "", false
		}
		head, ok := nodePath(v.Node)
		if !ok {
			return "", false
		}
		return head + "." + s.Value, true
	}
	return "", false
}

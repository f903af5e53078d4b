package strategy

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/sandbox/exprenv"
	yaml "go.yaml.in/yaml/v3"
)

// ParamType is the type of a strategy parameter.
type ParamType uint8

// Parameter types. A parameter's type is declared with `type:` or inferred from its
// default: true/false is Bool, a duration literal (30s) is Duration, anything else
// Number.
const (
	Number   ParamType = iota // float64 in expressions
	Int                       // integer; int in expressions
	Bool                      // bool in expressions
	Duration                  // written 500ms, 30s, 5m, 1h, 1d; milliseconds (int) in expressions
)

var paramTypeNames = [...]string{"number", "int", "bool", "duration"}

// String returns "number", "int", "bool" or "duration".
func (t ParamType) String() string {
	if int(t) < len(paramTypeNames) {
		return paramTypeNames[t]
	}
	return "unknown"
}

// Param describes one declared parameter and its current value, as text in the
// file's notation.
type Param struct {
	Name    string
	Type    ParamType
	Value   string // current value (the default unless overridden)
	Default string
	Min     string // "" when unbounded below
	Max     string // "" when unbounded above
	Doc     string
}

// pval is a parameter value: numbers, ints and durations (ms) in f, bools in b.
type pval struct {
	f float64
	b bool
}

type paramSpec struct {
	name     string
	key      *yaml.Node
	typ      ParamType
	def      pval
	min, max *pval
	doc      string
}

var paramFields = []string{"default", "min", "max", "type", "doc"}

var reNumber = regexp.MustCompile(`^[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

func (p *parser) params(n *yaml.Node) {
	for _, kv := range p.pairs(n, "params") {
		name := kv[0].Value
		what := "param " + name
		if !reIdent.MatchString(name) {
			p.node(kv[0], "param name %q must be an identifier (letters, digits and _)", name)
			continue
		}
		ps := &paramSpec{name: name, key: kv[0]}
		var defNode, minNode, maxNode, typNode *yaml.Node
		switch kv[1].Kind {
		case yaml.ScalarNode:
			defNode = kv[1]
		case yaml.MappingNode:
			fs := p.fields(kv[1], what, paramFields)
			defNode, minNode, maxNode, typNode = fs["default"], fs["min"], fs["max"], fs["type"]
			if d := fs["doc"]; d != nil {
				ps.doc, _ = p.scalar(d, what+" doc")
			}
			if defNode == nil {
				p.node(kv[0], "%s: default is required", what)
				continue
			}
		default:
			p.node(kv[1], "%s must be a value (the default) or a mapping with default, min, max, type, doc", what)
			continue
		}
		if defNode.Kind != yaml.ScalarNode {
			p.node(defNode, "%s: default must be a single value", what)
			continue
		}
		// type: declared, or inferred from the default
		switch {
		case typNode != nil:
			i := indexOf(paramTypeNames[:], typNode.Value)
			if i < 0 {
				p.node(typNode, "%s: type must be number, int, bool or duration", what)
				continue
			}
			ps.typ = ParamType(i)
		case defNode.Value == "true" || defNode.Value == "false":
			ps.typ = Bool
		case reDuration.MatchString(defNode.Value):
			ps.typ = Duration
		default:
			ps.typ = Number
		}
		v, msg := parseValue(ps.typ, defNode.Value)
		if msg != "" {
			p.node(defNode, "%s: default %s", what, msg)
			continue
		}
		ps.def = v
		good := true
		for _, b := range []struct {
			n   *yaml.Node
			dst **pval
		}{{minNode, &ps.min}, {maxNode, &ps.max}} {
			if b.n == nil {
				continue
			}
			if ps.typ == Bool {
				p.node(b.n, "%s: a bool parameter has no range", what)
				good = false
				continue
			}
			bv, msg := parseValue(ps.typ, b.n.Value)
			if msg != "" {
				p.node(b.n, "%s: %s %s", what, b.n.Value, msg)
				good = false
				continue
			}
			*b.dst = &bv
		}
		if !good {
			continue
		}
		if ps.min != nil && ps.max != nil && ps.min.f > ps.max.f {
			p.node(maxNode, "%s: max is below min", what)
			continue
		}
		if msg := ps.check(ps.def); msg != "" {
			p.node(defNode, "%s: default %s", what, msg)
			continue
		}
		p.s.params = append(p.s.params, ps)
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// parseValue parses text as a value of type t; msg says what is wrong, if anything.
func parseValue(t ParamType, text string) (pval, string) {
	text = strings.TrimSpace(text)
	switch t {
	case Bool:
		switch text {
		case "true":
			return pval{b: true}, ""
		case "false":
			return pval{}, ""
		}
		return pval{}, "must be true or false"
	case Duration:
		ms, ok := parseDuration(text)
		if !ok {
			return pval{}, "must be a duration such as 500ms, 30s, 5m, 1h or 1d"
		}
		return pval{f: float64(ms)}, ""
	case Int:
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil || i > 1<<53 || i < -(1<<53) {
			return pval{}, "must be a whole number"
		}
		return pval{f: float64(i)}, ""
	}
	if !reNumber.MatchString(text) {
		return pval{}, "must be a number"
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(v, 0) {
		return pval{}, "must be a finite number"
	}
	return pval{f: v}, ""
}

// check reports why v is outside the declared range, or "".
func (ps *paramSpec) check(v pval) string {
	if ps.min != nil && v.f < ps.min.f {
		return fmt.Sprintf("%s is below the minimum %s", ps.format(v), ps.format(*ps.min))
	}
	if ps.max != nil && v.f > ps.max.f {
		return fmt.Sprintf("%s is above the maximum %s", ps.format(v), ps.format(*ps.max))
	}
	return ""
}

// format renders v in the file's notation.
func (ps *paramSpec) format(v pval) string {
	switch ps.typ {
	case Bool:
		return strconv.FormatBool(v.b)
	case Duration:
		return formatDuration(int64(v.f))
	case Int:
		return strconv.FormatInt(int64(v.f), 10)
	}
	return strconv.FormatFloat(v.f, 'f', -1, 64)
}

// constant is the value expressions see.
func (ps *paramSpec) constant(v pval) any {
	switch ps.typ {
	case Bool:
		return v.b
	case Int, Duration:
		return int(v.f)
	}
	return v.f
}

// Params returns the declared parameters in file order, with their current values.
func (s *Strategy) Params() []Param {
	out := make([]Param, len(s.spec.params))
	for i, ps := range s.spec.params {
		p := Param{Name: ps.name, Type: ps.typ, Value: ps.format(s.values[ps.name]), Default: ps.format(ps.def), Doc: ps.doc}
		if ps.min != nil {
			p.Min = ps.format(*ps.min)
		}
		if ps.max != nil {
			p.Max = ps.format(*ps.max)
		}
		out[i] = p
	}
	return out
}

// Override is one parameter override and, for error messages, where it was written.
type Override struct {
	Name  string
	Value string
	File  string // may be empty (e.g. a command-line flag)
	Line  int    // 1-based; 0 if unknown
	Col   int
}

// WithParams returns a copy of s with parameters overridden (by name, values as text
// in the file's notation: "0.03", "25", "true", "45s"). Every override is checked
// against the parameter's type and declared range; all problems are reported
// together in a *CompileError. The copy is compiled anew, so parameters are constants
// in its expressions — unless the overrides only restate s's values, when the copy
// shares s's compiled expressions (the same compilation; both are immutable). s
// itself is not changed.
func (s *Strategy) WithParams(overrides map[string]string) (*Strategy, error) {
	list := make([]Override, 0, len(overrides))
	for k, v := range overrides {
		list = append(list, Override{Name: k, Value: v})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return s.With(list)
}

// With is WithParams with positions for error messages (an agent file's overrides).
func (s *Strategy) With(overrides []Override) (*Strategy, error) {
	values := make(map[string]pval, len(s.values))
	for k, v := range s.values {
		values[k] = v
	}
	probs := &problems{file: s.spec.file}
	for _, o := range overrides {
		bad := func(format string, args ...any) {
			pr := &Problem{File: o.File, Line: o.Line, Col: o.Col, Message: fmt.Sprintf(format, args...)}
			probs.list = append(probs.list, pr)
		}
		ps := s.spec.param(o.Name)
		if ps == nil {
			bad("%s", s.noParam(o.Name))
			continue
		}
		v, msg := parseValue(ps.typ, o.Value)
		if msg == "" {
			msg = ps.check(v)
		} else {
			msg = o.Value + " " + msg
		}
		if msg != "" {
			bad("param %s: %s", o.Name, msg)
			continue
		}
		values[o.Name] = v
	}
	if err := probs.err(); err != nil {
		return nil, err
	}
	if sameValues(values, s.values) {
		// Compiling is a function of the spec and the values: with the values
		// unchanged (overrides that restate them) it would give s again, which is
		// immutable, so a copy of s is that compilation.
		cp := *s
		cp.values = values
		return &cp, nil
	}
	return compile(s.spec, values)
}

// sameValues reports whether two sets of parameter values are the same, numbers bit
// for bit.
func sameValues(a, b map[string]pval) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.b != w.b || !sameFloat(v.f, w.f) {
			return false
		}
	}
	return true
}

// noParam says that the strategy has no parameter name, with the closest one
// ("did you mean") or, when none is close, the list of its parameters.
func (s *Strategy) noParam(name string) string {
	names := make([]string, len(s.spec.params))
	for i, ps := range s.spec.params {
		names[i] = ps.name
	}
	if sug := exprenv.Suggest(name, names); sug != "" {
		return fmt.Sprintf("strategy %s has no parameter %q (did you mean %q?)", s.Name(), name, sug)
	}
	return fmt.Sprintf("strategy %s has no parameter %q (parameters: %s)", s.Name(), name, strings.Join(names, ", "))
}

func (sp *spec) param(name string) *paramSpec {
	for _, ps := range sp.params {
		if ps.name == name {
			return ps
		}
	}
	return nil
}

// SweepValues expands a sweep argument NAME=FROM:TO:STEP (issue 8's --sweep) into the
// parameter's values, as text: FROM, FROM+STEP, ... up to and including TO, computed
// in exact decimal (durations in milliseconds), and each checked against the
// parameter's range. At most 10,000 values.
func (s *Strategy) SweepValues(arg string) (name string, values []string, err error) {
	name, rng, ok := strings.Cut(arg, "=")
	if !ok {
		return "", nil, fmt.Errorf("sweep %q: want NAME=FROM:TO:STEP", arg)
	}
	ps := s.spec.param(name)
	if ps == nil {
		return "", nil, fmt.Errorf("sweep %q: %s", arg, s.noParam(name))
	}
	if ps.typ == Bool {
		return name, []string{"false", "true"}, nil
	}
	parts := strings.Split(rng, ":")
	if len(parts) != 3 {
		return "", nil, fmt.Errorf("sweep %q: want NAME=FROM:TO:STEP", arg)
	}
	var d [3]decimal.Decimal
	for i, text := range parts {
		v, msg := parseValue(ps.typ, text)
		if msg != "" {
			return "", nil, fmt.Errorf("sweep %q: %s %s", arg, text, msg)
		}
		if ps.typ == Duration || ps.typ == Int {
			d[i] = decimal.NewFromInt(int64(v.f))
		} else {
			d[i] = decimal.RequireFromString(strings.TrimPrefix(strings.TrimSpace(text), "+"))
		}
	}
	from, to, step := d[0], d[1], d[2]
	if !step.IsPositive() || to.LessThan(from) {
		return "", nil, fmt.Errorf("sweep %q: want FROM <= TO and STEP > 0", arg)
	}
	for v := from; !v.GreaterThan(to); v = v.Add(step) {
		if len(values) == 10_000 {
			return "", nil, fmt.Errorf("sweep %q: more than 10000 values", arg)
		}
		var text string
		if ps.typ == Duration {
			text = formatDuration(v.IntPart())
		} else {
			text = v.String()
		}
		pv, _ := parseValue(ps.typ, text)
		if msg := ps.check(pv); msg != "" {
			return "", nil, fmt.Errorf("sweep %q: %s", arg, msg)
		}
		values = append(values, text)
	}
	return name, values, nil
}

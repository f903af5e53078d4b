package exprenv

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// Limits applied when the configuration leaves them zero.
const (
	// DefaultMaxNodes is the node limit of one expression: generous for any formula a
	// person writes, small enough that compile and evaluation stay cheap.
	DefaultMaxNodes = 1000
	// DefaultMemoryBudget bounds what one evaluation may allocate in expr's units
	// (roughly: elements of arrays, maps and ranges it builds).
	DefaultMemoryBudget = 100_000
)

// Builtins are the expr builtins enabled in the sandbox; every other builtin is
// disabled. In particular now, date, timezone and duration (clock and time-zone
// files) are not available: time comes from the environment.
var Builtins = []string{
	"abs", "ceil", "floor", "round", "int", "float", "max", "min", "mean", "median",
	"len", "all", "none", "any", "one", "filter", "map", "find", "findIndex", "findLast",
	"findLastIndex", "count", "sum", "first", "last", "reduce",
}

// disabledHints explain why a well-known builtin is missing.
var disabledHints = map[string]string{
	"now":      "now() is not available: time comes from the event (use the environment's time field)",
	"date":     "date() is not available: time comes from the event (use the environment's time field)",
	"timezone": "timezone() is not available in the sandbox",
	"duration": "duration() is not available: write times as numbers of milliseconds",
}

// Kind is the type of an expression's result.
type Kind uint8

// Kinds. Any (the zero value) means "no expectation" when compiling.
const (
	Any Kind = iota
	Bool
	Float // float64; an int-valued expression compiled as Float is converted
	Int
	String
)

var kindNames = [...]string{"any", "bool", "number", "int", "string"}

// String returns "any", "bool", "number", "int" or "string".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Config describes an environment. Only Env is required.
type Config struct {
	// Env is a value (not a pointer) of the struct type expressions are evaluated
	// against. Fields are visible under their `expr` tag, or their Go name without
	// one; a field tagged `expr:"-"` is hidden. Evaluate with values of this same type.
	Env any
	// Consts are names substituted by constants at compile time. Values must be bool,
	// int, float64 or string. Names must be identifiers and must not clash with a
	// field, a function or an alias.
	Consts map[string]any
	// Aliases map names to fields of Env: a field's expr name, or a dotted path
	// through struct and pointer-to-struct fields ("@s.f3"). Path elements may be
	// hidden names such as "@s" that users cannot type. Names must be identifiers and
	// must not clash with a field, a function or a constant.
	Aliases map[string]string
	// TickField, if set, is the dotted path of the environment field that holds the
	// current tick size (e.g. "market.tick"); round_tick(x), floor_tick(x) and
	// ceil_tick(x) then use it. If empty, those helpers need the tick as a second
	// argument.
	TickField string
	// MaxNodes is the node limit per expression. If zero, DefaultMaxNodes.
	MaxNodes uint
	// Fields, if set, gives the fast path typed reads of the environment's fields,
	// so that it does not read them through reflection (see FieldReader).
	Fields FieldReader
	// Namespaces are names whose members stand for fields (see Namespace):
	// markets.hedge, feeds.btc. A closed namespace's name must not be a field, a
	// function, a constant or an alias; an open one's must be a field of Env.
	Namespaces map[string]Namespace
	// Durations lets expressions write durations: a number directly followed by
	// ms, s, m, h or d (30s, 1.5m, 1h30m) is that many milliseconds, an int.
	Durations bool
	// FieldsNeverPanic promises that no read Fields gives panics for the
	// environments the programs are evaluated with (no nil pointer on a read's way).
	// A fast-path program whose every field read is such a read then runs without
	// recovering from panics, which costs less; its results are the same. Other
	// programs are unaffected. A read that panics anyway propagates the panic to the
	// caller of Evaluator.Float or Bool.
	FieldsNeverPanic bool
}

// FieldReader returns a typed read of the environment field at path — the expr names
// from the environment down, as an expression spells them after aliases are
// resolved ("yes", "bid"; "@s", "f3") — or nil to have it read through reflection.
// A read is a func(env any) float64 (for float32 and float64 fields), func(env any)
// int64 (signed integers), func(env any) bool or func(env any) string; one of another
// type, or not matching the field's kind, is ignored. It is called when expressions
// are compiled; the read is called with a value of the Config.Env type and must
// return exactly that field's value (a nil pointer on the way may panic: the
// evaluation then falls back to expr's VM, which reports it). The reads make the fast
// path cheaper, never different.
type FieldReader func(path []string) any

// Env is a compiled environment description. It is immutable after New and safe for
// concurrent use; compile as many expressions against it as needed.
type Env struct {
	cfg     Config
	envType reflect.Type
	opts    []expr.Option
	names   []string            // every name an expression may use, for suggestions
	fields  map[string][]string // struct type string -> visible field names
	short   map[string]string   // struct type string -> unqualified name
	hidden  map[string]bool     // hidden field names (aliases' targets)
	// methods resolve calls of namespace members with methods, by target path
	methods map[string]func(target, name string, args []float64) (string, error)
}

// New validates cfg and returns an Env.
func New(cfg Config) (*Env, error) {
	if cfg.Env == nil {
		return nil, fmt.Errorf("exprenv: Config.Env is nil")
	}
	t := reflect.TypeOf(cfg.Env)
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("exprenv: Config.Env must be a struct value, not %s", t)
	}
	if cfg.MaxNodes == 0 {
		cfg.MaxNodes = DefaultMaxNodes
	}
	e := &Env{cfg: cfg, envType: t, fields: map[string][]string{}, short: map[string]string{}, hidden: map[string]bool{}}
	e.walkType(t)

	top := map[string]bool{}
	for _, n := range e.fields[t.String()] {
		top[n] = true
	}
	for _, f := range helpers {
		top[f.name] = true
	}
	for _, b := range Builtins {
		top[b] = true
	}
	for name, v := range cfg.Consts {
		if !isIdent(name) {
			return nil, fmt.Errorf("exprenv: constant name %q is not an identifier", name)
		}
		if top[name] {
			return nil, fmt.Errorf("exprenv: constant %q clashes with a built-in name", name)
		}
		if _, ok := constNode(v); !ok {
			return nil, fmt.Errorf("exprenv: constant %q has unsupported type %T", name, v)
		}
	}
	for name, target := range cfg.Aliases {
		if !isIdent(name) {
			return nil, fmt.Errorf("exprenv: alias name %q is not an identifier", name)
		}
		if top[name] {
			return nil, fmt.Errorf("exprenv: alias %q clashes with a built-in name", name)
		}
		if _, dup := cfg.Consts[name]; dup {
			return nil, fmt.Errorf("exprenv: %q is both a constant and an alias", name)
		}
		if !hasPath(t, target) {
			return nil, fmt.Errorf("exprenv: alias %q names no field %q of %s", name, target, t)
		}
		e.hidden[strings.SplitN(target, ".", 2)[0]] = true
	}
	if err := e.checkNamespaces(top); err != nil {
		return nil, err
	}
	for n := range top {
		e.names = append(e.names, n)
	}
	for n, ns := range cfg.Namespaces {
		if !ns.Open {
			e.names = append(e.names, n)
		}
	}
	for n := range cfg.Consts {
		e.names = append(e.names, n)
	}
	for n := range cfg.Aliases {
		e.names = append(e.names, n)
	}
	sort.Strings(e.names)

	// Every builtin but Builtins disabled: what DisableAllBuiltins followed by
	// EnableBuiltin of each of Builtins leaves in Config.Disabled, made once for
	// the Env rather than for every compilation (expr only reads the map).
	disabled := make(map[string]bool, len(builtin.Builtins))
	for _, f := range builtin.Builtins {
		disabled[f.Name] = true
	}
	for _, b := range Builtins {
		delete(disabled, b)
	}
	e.opts = []expr.Option{expr.Env(cfg.Env), func(c *conf.Config) { c.Disabled = disabled }, expr.MaxNodes(cfg.MaxNodes)}
	for _, f := range helpers {
		e.opts = append(e.opts, expr.Function(f.name, f.fn, f.types...))
	}
	return e, nil
}

// walkType records the visible field names of every struct type reachable from t.
func (e *Env) walkType(t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	key := t.String()
	if _, seen := e.fields[key]; seen {
		return
	}
	e.short[key] = t.Name()
	var names []string
	e.fields[key] = names
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		n := exprName(f)
		if n == "-" || !isIdent(n) {
			continue
		}
		names = append(names, n)
		e.walkType(f.Type)
	}
	e.fields[key] = names
}

// hasPath reports whether the dotted path of expr names leads from struct type t to a
// field, through structs and pointers to structs.
func hasPath(t reflect.Type, path string) bool {
	for _, part := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		found := false
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && exprName(f) == part {
				t, found = f.Type, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func exprName(f reflect.StructField) string {
	if tag, ok := f.Tag.Lookup("expr"); ok && tag != "" {
		if i := strings.IndexByte(tag, ','); i >= 0 {
			tag = tag[:i]
		}
		return tag
	}
	return f.Name
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// Program is one compiled expression. It is immutable and safe for concurrent use.
type Program struct {
	prog    *vm.Program
	src     string
	origin  Origin
	kind    Kind
	names   []string
	alias   string // the alias the whole expression is, if it is one
	isConst bool   // the expression folded to a constant
	value   any    // its value
	envType reflect.Type
	fnum    fastNum  // the fast path of a Float program, if it has one
	fbool   fastBool // the fast path of a Bool program, if it has one
	// unchecked: the fast path reads only through Config.Fields, which never
	// panics (Config.FieldsNeverPanic), so it runs without a recover
	unchecked bool
}

// Source returns the expression's text.
func (p *Program) Source() string { return p.src }

// Origin returns where the expression came from.
func (p *Program) Origin() Origin { return p.origin }

// Kind returns the type of the result: the expected kind given to Compile, or the
// inferred one when Any was expected (Any if it cannot be known statically).
func (p *Program) Kind() Kind { return p.kind }

// Names returns, sorted and without duplicates, the names the expression reads: every
// top-level identifier as written (constants and aliases included) and every
// "name.field" selection of one. The caller can use it to order dependencies or to
// skip computing fields no expression reads.
func (p *Program) Names() []string { return p.names }

// Uses reports whether the expression reads name (see Names).
func (p *Program) Uses(name string) bool {
	i := sort.SearchStrings(p.names, name)
	return i < len(p.names) && p.names[i] == name
}

// Compile compiles src against the environment, expecting a result of kind want (Any
// for no expectation). Errors are *Error, positioned in at's file.
func (e *Env) Compile(src string, at Origin, want Kind) (*Program, error) {
	if strings.TrimSpace(src) == "" {
		return nil, newError(at, src, 1, 0, "empty expression")
	}
	rec := recorder{}
	pt := &patcher{env: e}
	parsed := src
	if e.cfg.Durations {
		var off int
		var err error
		if parsed, pt.durations, off, err = scanDurations(src); err != nil {
			line, col := lineCol(src, off)
			return nil, newError(at, src, line, col, err.Error())
		}
	}
	opts := make([]expr.Option, 0, len(e.opts)+1)
	opts = append(opts, e.opts...)
	switch want {
	case Bool:
		opts = append(opts, expr.AsBool())
	case Float:
		opts = append(opts, expr.AsFloat64())
	case Int:
		opts = append(opts, expr.AsInt())
	case String:
		opts = append(opts, expr.AsKind(reflect.String))
	}
	prog, err := compileSafe(parsed, opts, rec, pt)
	if pt.err != nil {
		line, col := lineCol(src, pt.errOff)
		return nil, newError(at, src, line, col, pt.err.Error())
	}
	if err != nil {
		ee := fromExpr(at, src, err, false)
		ee.Message = e.explain(ee.Message)
		if strings.HasPrefix(ee.Message, "compilation failed: expression exceeds maximum allowed nodes") {
			ee = newError(at, src, 1, 0, fmt.Sprintf("expression too large (more than %d nodes)", e.cfg.MaxNodes))
			ee.Err = ErrNodeLimit
		}
		return nil, ee
	}
	kind := want
	if kind == Any {
		kind = kindOf(prog.Node().Type())
	}
	names := make([]string, 0, len(rec))
	for n := range rec {
		names = append(names, n)
	}
	sort.Strings(names)
	p := &Program{prog: prog, src: src, origin: at, kind: kind, names: names, envType: e.envType}
	if name := strings.TrimSpace(src); e.cfg.Aliases[name] != "" {
		p.alias = name
	}
	switch prog.Node().(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.StringNode, *ast.ConstantNode, *ast.NilNode:
		// folded to a constant: evaluate it once now (it reads nothing from the env)
		var m vm.VM
		if v, err := m.Run(prog, e.cfg.Env); err == nil {
			p.isConst, p.value = true, v
		}
	}
	if !p.isConst {
		fb := fastBuilder{envType: e.envType, fields: e.cfg.Fields}
		switch kind {
		case Float:
			p.fnum, _ = fb.num(prog.Node())
		case Bool:
			p.fbool, _ = fb.boolean(prog.Node())
		}
		p.unchecked = e.cfg.FieldsNeverPanic && !fb.reflects
	}
	return p, nil
}

// Unchecked returns the program's fast path as a plain function when it runs
// without a recover (Config.FieldsNeverPanic, and every field read is a typed read):
// num for a Float program, boolean for a Bool one, the other nil. Called with a value
// of the Config.Env type, it returns exactly what Evaluator.Float or Bool returns (they
// cannot fail for such a program), without their checks: the caller guarantees the
// type. Both are nil for any other program.
func (p *Program) Unchecked() (num func(env any) float64, boolean func(env any) bool) {
	if !p.unchecked {
		return nil, nil
	}
	return p.fnum, p.fbool
}

// Fast reports whether the program runs on the fast path (Go closures over float64
// and bool) rather than on expr's VM. See the package documentation.
func (p *Program) Fast() bool { return p.fnum != nil || p.fbool != nil }

// Constant returns the expression's value when it folded to a constant at compile
// time (literals and constants only); evaluating such a program costs nothing.
func (p *Program) Constant() (any, bool) { return p.value, p.isConst }

// Alias returns the alias name when the whole expression is one alias (e.g. a
// strategy var), so that the caller may read the aliased value directly; "" otherwise.
func (p *Program) Alias() string { return p.alias }

// compileSafe is expr.Compile with our visitors run on the parsed tree before any
// type check (so that substituted names are typed like the fields they stand for),
// and with a panic inside expr (a bug there, triggered by odd input) turned into an
// error.
func compileSafe(src string, opts []expr.Option, visitors ...ast.Visitor) (p *vm.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("cannot compile expression: %v", r)
		}
	}()
	config := conf.CreateNew()
	for _, op := range opts {
		op(config)
	}
	for name := range config.Disabled {
		delete(config.Builtins, name)
	}
	config.Check()
	tree, err := parser.ParseWithConfig(src, config)
	if err != nil {
		return nil, err
	}
	for _, v := range visitors {
		ast.Walk(&tree.Node, v)
	}
	if _, err := checker.Check(tree, config); err != nil {
		return nil, err
	}
	if config.Optimize {
		if err := optimizer.Optimize(&tree.Node, config); err != nil {
			var fe *file.Error
			if errors.As(err, &fe) {
				return nil, fe.Bind(tree.Source)
			}
			return nil, err
		}
	}
	return compiler.Compile(tree, config)
}

func kindOf(t reflect.Type) Kind {
	if t == nil {
		return Any
	}
	switch t.Kind() {
	case reflect.Bool:
		return Bool
	case reflect.Float32, reflect.Float64:
		return Float
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Int
	case reflect.String:
		return String
	}
	return Any
}

// recorder records the names an expression reads, before any substitution: every
// identifier and every chain of constant member accesses from one
// ("markets.hedge.yes.bid" records markets.hedge, markets.hedge.yes and the whole).
type recorder map[string]bool

// Visit implements ast.Visitor.
func (r recorder) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.MemberNode:
		if path, ok := nodePath(n); ok && !strings.HasPrefix(path, "@") {
			r[path] = true
		}
	case *ast.IdentifierNode:
		if !strings.HasPrefix(n.Value, "@") {
			r[n.Value] = true
		}
	}
}

// patcher substitutes constants and aliases, completes the one-argument tick helpers
// and refuses `let` bindings that shadow user names.
type patcher struct {
	env       *Env
	durations map[int]int64 // duration literals' values by rune offset (scanDurations)
	err       error
	errOff    int // rune offset of the offending node
}

func (p *patcher) fail(n ast.Node, msg string) {
	if p.err != nil {
		return
	}
	p.err = fmt.Errorf("%s", msg)
	p.errOff = n.Location().From
}

// Visit implements ast.Visitor. Walk is post-order: children before parents.
func (p *patcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.VariableDeclaratorNode:
		if _, c := p.env.cfg.Consts[n.Name]; c {
			p.fail(n, fmt.Sprintf("let %s: %s is already a parameter or variable name", n.Name, n.Name))
		}
		if _, a := p.env.cfg.Aliases[n.Name]; a {
			p.fail(n, fmt.Sprintf("let %s: %s is already a parameter or variable name", n.Name, n.Name))
		}
		if _, ns := p.env.cfg.Namespaces[n.Name]; ns {
			p.fail(n, fmt.Sprintf("let %s: %s is a built-in name", n.Name, n.Name))
		}
	case *ast.IntegerNode:
		if ms, ok := p.durations[n.Location().From]; ok {
			ast.Patch(node, &ast.IntegerNode{Value: int(ms)})
			delete(p.durations, n.Location().From) // visitors may run more than once
		}
	case *ast.MemberNode:
		p.patchNamespace(node, n)
	case *ast.IdentifierNode:
		name := n.Value
		if p.env.hidden[name] {
			return // an alias already substituted (visitors may run more than once)
		}
		if v, ok := p.env.cfg.Consts[name]; ok {
			c, _ := constNode(v)
			ast.Patch(node, c)
			return
		}
		if target, ok := p.env.cfg.Aliases[name]; ok {
			ast.Patch(node, pathNode(target))
		}
	case *ast.CallNode:
		if p.patchMethod(node, n) {
			return
		}
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok || len(n.Arguments) != 1 {
			return
		}
		switch id.Value {
		case "round_tick", "floor_tick", "ceil_tick":
			if p.env.cfg.TickField == "" {
				p.fail(n, id.Value+" needs the tick size as its second argument")
				return
			}
			tick := pathNode(p.env.cfg.TickField)
			tick.SetLocation(n.Location())
			n.Arguments = append(n.Arguments, tick)
		}
	}
}

// pathNode builds the AST of a dotted field path.
func pathNode(path string) ast.Node {
	parts := strings.Split(path, ".")
	var n ast.Node = &ast.IdentifierNode{Value: parts[0]}
	for _, p := range parts[1:] {
		n = &ast.MemberNode{Node: n, Property: &ast.StringNode{Value: p}}
	}
	return n
}

func constNode(v any) (ast.Node, bool) {
	switch x := v.(type) {
	case bool:
		return &ast.BoolNode{Value: x}, true
	case int:
		return &ast.IntegerNode{Value: x}, true
	case int64:
		return &ast.IntegerNode{Value: int(x)}, true
	case float64:
		return &ast.FloatNode{Value: x}, true
	case string:
		return &ast.StringNode{Value: x}, true
	}
	return nil, false
}

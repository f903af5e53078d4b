package exprenv

import (
	"math"
	"reflect"

	"github.com/expr-lang/expr/ast"
)

// The fast path: expressions made only of numbers, bools, field reads, arithmetic,
// comparisons, logic, the ternary and the numeric builtins and helpers are compiled
// a second time, from expr's type-checked and optimized tree, into Go closures over
// float64 and bool. They then run without expr's VM: no boxing of intermediate
// results, no allocation, and no reflection beyond reading fields — none at all for
// the fields Config.Fields gives typed reads of. Anything else (strings
// beyond == and !=, collections, predicates, let, %, ??, methods) leaves the program
// on expr's VM. Both paths give the same results (a test compares them on generated
// expressions); integers are carried as float64, which is exact below 2^53.

type (
	fastNum  func(env any) float64
	fastBool func(env any) bool
	fastStr  func(env any) string
)

// step is one move along a field path: an optional pointer dereference, then a
// struct field (index >= 0) or an array element (elem).
type step struct {
	deref bool
	index int
	elem  int
}

// fastBuilder compiles nodes against the environment type.
type fastBuilder struct {
	envType  reflect.Type
	fields   FieldReader // typed reads of fields, if the configuration gives them
	reflects bool        // some field is read through reflection (which may panic)
}

func isNumKind(k reflect.Kind) bool {
	switch k {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func isIntKind(k reflect.Kind) bool {
	return isNumKind(k) && k != reflect.Float32 && k != reflect.Float64
}

func nodeKind(n ast.Node) reflect.Kind {
	t := n.Type()
	if t == nil {
		return reflect.Invalid
	}
	return t.Kind()
}

// path resolves a field-read node (an identifier of the environment, a member chain,
// a constant array index) to its steps and the type it reads.
func (b *fastBuilder) path(n ast.Node) ([]step, reflect.Type, bool) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return fieldStep(nil, b.envType, n.Value)
	case *ast.MemberNode:
		if n.Optional || n.Method {
			return nil, nil, false
		}
		steps, t, ok := b.path(n.Node)
		if !ok {
			return nil, nil, false
		}
		switch p := n.Property.(type) {
		case *ast.StringNode:
			return fieldStep(steps, t, p.Value)
		case *ast.IntegerNode:
			deref := false
			if t.Kind() == reflect.Pointer {
				t, deref = t.Elem(), true
			}
			if t.Kind() != reflect.Array || p.Value < 0 || p.Value >= t.Len() {
				return nil, nil, false
			}
			return append(steps, step{deref: deref, index: -1, elem: p.Value}), t.Elem(), true
		}
	}
	return nil, nil, false
}

// fieldStep appends the step to field name (by expr name) of struct type t (or a
// pointer to one).
func fieldStep(steps []step, t reflect.Type, name string) ([]step, reflect.Type, bool) {
	deref := false
	if t.Kind() == reflect.Pointer {
		t, deref = t.Elem(), true
	}
	if t.Kind() != reflect.Struct {
		return nil, nil, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.IsExported() && exprName(f) == name {
			out := append(append([]step(nil), steps...), step{deref: deref, index: i})
			return out, f.Type, true
		}
	}
	return nil, nil, false
}

// read returns the configuration's typed read of the field node n reads (of type
// t), or nil when there is none or it does not give t's kind: a func(any) float64
// for float32 and float64 fields, func(any) int64 for signed integers, func(any) bool
// and func(any) string.
func (b *fastBuilder) read(n ast.Node, t reflect.Type) any {
	if b.fields == nil {
		return nil
	}
	names, ok := fieldNames(n)
	if !ok {
		return nil
	}
	r := b.fields(names)
	switch r.(type) {
	case func(any) float64:
		if t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32 {
			return r
		}
	case func(any) int64:
		if t.Kind() == reflect.Int64 || t.Kind() == reflect.Int || t.Kind() == reflect.Int32 ||
			t.Kind() == reflect.Int16 || t.Kind() == reflect.Int8 {
			return r
		}
	case func(any) bool:
		if t.Kind() == reflect.Bool {
			return r
		}
	case func(any) string:
		if t.Kind() == reflect.String {
			return r
		}
	}
	return nil
}

// fieldNames returns the expr names along a chain of field reads from the
// environment ("yes", "bid"); ok is false for anything else (an array element).
func fieldNames(n ast.Node) ([]string, bool) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return []string{n.Value}, true
	case *ast.MemberNode:
		p, ok := n.Property.(*ast.StringNode)
		if !ok || n.Optional || n.Method {
			return nil, false
		}
		names, ok := fieldNames(n.Node)
		if !ok {
			return nil, false
		}
		return append(names, p.Value), true
	}
	return nil, false
}

// walk follows steps from v. A nil pointer on the way panics; the evaluator recovers
// and falls back to expr's VM, which reports the error.
func walk(v reflect.Value, steps []step) reflect.Value {
	for i := range steps {
		s := &steps[i]
		if s.deref {
			v = v.Elem()
		}
		if s.index >= 0 {
			v = v.Field(s.index)
		} else {
			v = v.Index(s.elem)
		}
	}
	return v
}

func (b *fastBuilder) num(n ast.Node) (fastNum, bool) {
	if !isNumKind(nodeKind(n)) {
		// a ternary whose branches are an int and a float is typed interface{};
		// its value is one of the two numbers either way
		if c, ok := n.(*ast.ConditionalNode); ok && nodeKind(n) == reflect.Interface &&
			isNumKind(nodeKind(c.Exp1)) && isNumKind(nodeKind(c.Exp2)) {
			return b.ternary(c)
		}
		return nil, false
	}
	switch n := n.(type) {
	case *ast.FloatNode:
		c := n.Value
		return func(any) float64 { return c }, true
	case *ast.IntegerNode:
		c := float64(n.Value)
		return func(any) float64 { return c }, true
	case *ast.ConstantNode:
		c, err := num(n.Value)
		if err != nil {
			return nil, false
		}
		return func(any) float64 { return c }, true
	case *ast.IdentifierNode, *ast.MemberNode:
		steps, t, ok := b.path(n)
		if !ok {
			return nil, false
		}
		switch r := b.read(n, t).(type) {
		case func(any) float64:
			return r, true
		case func(any) int64:
			return func(v any) float64 { return float64(r(v)) }, true
		}
		b.reflects = true
		switch t.Kind() {
		case reflect.Float32, reflect.Float64:
			if len(steps) == 1 && !steps[0].deref && steps[0].index >= 0 {
				i := steps[0].index
				return func(v any) float64 { return reflect.ValueOf(v).Field(i).Float() }, true
			}
			if len(steps) == 2 && !steps[0].deref && steps[0].index >= 0 && steps[1].deref && steps[1].index >= 0 {
				i, j := steps[0].index, steps[1].index
				return func(v any) float64 { return reflect.ValueOf(v).Field(i).Elem().Field(j).Float() }, true
			}
			return func(v any) float64 { return walk(reflect.ValueOf(v), steps).Float() }, true
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return func(v any) float64 { return float64(walk(reflect.ValueOf(v), steps).Int()) }, true
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return func(v any) float64 { return float64(walk(reflect.ValueOf(v), steps).Uint()) }, true
		}
		return nil, false
	case *ast.UnaryNode:
		x, ok := b.num(n.Node)
		if !ok {
			return nil, false
		}
		switch n.Operator {
		case "-":
			return func(v any) float64 { return -x(v) }, true
		case "+":
			return x, true
		}
		return nil, false
	case *ast.BinaryNode:
		l, ok1 := b.num(n.Left)
		r, ok2 := b.num(n.Right)
		if !ok1 || !ok2 {
			return nil, false
		}
		if f, ok := arithConst(n.Operator, n.Left, n.Right, l, r); ok {
			return f, true
		}
		switch n.Operator {
		case "+":
			return func(v any) float64 { return l(v) + r(v) }, true
		case "-":
			return func(v any) float64 { return l(v) - r(v) }, true
		case "*":
			return func(v any) float64 { return l(v) * r(v) }, true
		case "/":
			return func(v any) float64 { return l(v) / r(v) }, true
		case "**", "^":
			return func(v any) float64 { return math.Pow(l(v), r(v)) }, true
		}
		return nil, false
	case *ast.ConditionalNode:
		return b.ternary(n)
	case *ast.BuiltinNode:
		return b.builtin(n)
	case *ast.CallNode:
		return b.call(n)
	}
	return nil, false
}

func (b *fastBuilder) ternary(n *ast.ConditionalNode) (fastNum, bool) {
	c, ok := b.boolean(n.Cond)
	x, ok1 := b.num(n.Exp1)
	y, ok2 := b.num(n.Exp2)
	if !ok || !ok1 || !ok2 {
		return nil, false
	}
	return func(v any) float64 {
		if c(v) {
			return x(v)
		}
		return y(v)
	}, true
}

func (b *fastBuilder) args(nodes []ast.Node) ([]fastNum, bool) {
	out := make([]fastNum, len(nodes))
	for i, a := range nodes {
		f, ok := b.num(a)
		if !ok {
			return nil, false
		}
		out[i] = f
	}
	return out, true
}

func (b *fastBuilder) builtin(n *ast.BuiltinNode) (fastNum, bool) {
	if n.Map != nil || n.Threshold != nil {
		return nil, false
	}
	a, ok := b.args(n.Arguments)
	if !ok || len(a) == 0 {
		return nil, false
	}
	unary := func(f func(float64) float64) (fastNum, bool) {
		if len(a) != 1 {
			return nil, false
		}
		x := a[0]
		return func(v any) float64 { return f(x(v)) }, true
	}
	switch n.Name {
	case "abs":
		return unary(func(x float64) float64 {
			if x < 0 { // as expr: NaN and −0 are returned as they are
				return -x
			}
			return x
		})
	case "floor":
		return unary(math.Floor)
	case "ceil":
		return unary(math.Ceil)
	case "round":
		return unary(math.Round)
	case "min", "max":
		// expr types min/max by its arguments; with ints and floats mixed its VM
		// may fail, so leave such calls to it
		if isIntKind(nodeKind(n)) {
			for _, arg := range n.Arguments {
				if !isIntKind(nodeKind(arg)) {
					return nil, false
				}
			}
		}
		// as expr: the first argument, replaced by each later one that is smaller
		// (min) or larger (max); NaN comparisons are false, so a NaN is kept only
		// where expr keeps it
		isMin := n.Name == "min"
		if len(a) == 2 {
			x, y := a[0], a[1]
			if c, ok := constNum(n.Arguments[0]); ok {
				if isMin {
					return func(v any) float64 {
						m, o := c, y(v)
						if m > o {
							m = o
						}
						return m
					}, true
				}
				return func(v any) float64 {
					m, o := c, y(v)
					if m < o {
						m = o
					}
					return m
				}, true
			}
			if c, ok := constNum(n.Arguments[1]); ok {
				if isMin {
					return func(v any) float64 {
						m, o := x(v), c
						if m > o {
							m = o
						}
						return m
					}, true
				}
				return func(v any) float64 {
					m, o := x(v), c
					if m < o {
						m = o
					}
					return m
				}, true
			}
			if isMin {
				return func(v any) float64 {
					m, o := x(v), y(v)
					if m > o {
						m = o
					}
					return m
				}, true
			}
			return func(v any) float64 {
				m, o := x(v), y(v)
				if m < o {
					m = o
				}
				return m
			}, true
		}
		return func(v any) float64 {
			m := a[0](v)
			for _, f := range a[1:] {
				o := f(v)
				if isMin && m > o || !isMin && m < o {
					m = o
				}
			}
			return m
		}, true
	}
	return nil, false
}

func (b *fastBuilder) call(n *ast.CallNode) (fastNum, bool) {
	id, ok := n.Callee.(*ast.IdentifierNode)
	if !ok {
		return nil, false
	}
	a, ok := b.args(n.Arguments)
	if !ok {
		return nil, false
	}
	switch {
	case id.Value == "clamp" && len(a) == 3:
		x, lo, hi := a[0], a[1], a[2]
		return func(v any) float64 { return Clamp(x(v), lo(v), hi(v)) }, true
	case id.Value == "nz" && len(a) == 2:
		x, d := a[0], a[1]
		if c, ok := constNum(n.Arguments[1]); ok {
			return func(v any) float64 {
				if r := x(v); !math.IsNaN(r) && !math.IsInf(r, 0) {
					return r
				}
				return c
			}, true
		}
		return func(v any) float64 {
			if r := x(v); !math.IsNaN(r) && !math.IsInf(r, 0) {
				return r
			}
			return d(v)
		}, true
	case len(a) == 2 && (id.Value == "round_tick" || id.Value == "floor_tick" || id.Value == "ceil_tick"):
		round := map[string]func(float64) float64{"round_tick": math.Round, "floor_tick": math.Floor, "ceil_tick": math.Ceil}[id.Value]
		x, t := a[0], a[1]
		return func(v any) float64 { return RoundTick(x(v), t(v), round) }, true
	case len(a) == 1 && (id.Value == "sqrt" || id.Value == "log" || id.Value == "exp"):
		f := map[string]func(float64) float64{"sqrt": math.Sqrt, "log": math.Log, "exp": math.Exp}[id.Value]
		x := a[0]
		return func(v any) float64 { return f(x(v)) }, true
	}
	return nil, false
}

func (b *fastBuilder) boolean(n ast.Node) (fastBool, bool) {
	if nodeKind(n) != reflect.Bool {
		return nil, false
	}
	switch n := n.(type) {
	case *ast.BoolNode:
		c := n.Value
		return func(any) bool { return c }, true
	case *ast.ConstantNode:
		c, ok := n.Value.(bool)
		if !ok {
			return nil, false
		}
		return func(any) bool { return c }, true
	case *ast.IdentifierNode, *ast.MemberNode:
		steps, t, ok := b.path(n)
		if !ok || t.Kind() != reflect.Bool {
			return nil, false
		}
		if r, ok := b.read(n, t).(func(any) bool); ok {
			return r, true
		}
		b.reflects = true
		return func(v any) bool { return walk(reflect.ValueOf(v), steps).Bool() }, true
	case *ast.UnaryNode:
		x, ok := b.boolean(n.Node)
		if !ok || n.Operator != "!" && n.Operator != "not" {
			return nil, false
		}
		return func(v any) bool { return !x(v) }, true
	case *ast.ConditionalNode:
		c, ok := b.boolean(n.Cond)
		x, ok1 := b.boolean(n.Exp1)
		y, ok2 := b.boolean(n.Exp2)
		if !ok || !ok1 || !ok2 {
			return nil, false
		}
		return func(v any) bool {
			if c(v) {
				return x(v)
			}
			return y(v)
		}, true
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok || id.Value != "ok" {
			return nil, false
		}
		a, ok := b.args(n.Arguments)
		if !ok {
			return nil, false
		}
		return func(v any) bool {
			for _, f := range a {
				if x := f(v); math.IsNaN(x) || math.IsInf(x, 0) {
					return false
				}
			}
			return true
		}, true
	case *ast.BinaryNode:
		return b.binaryBool(n)
	}
	return nil, false
}

func (b *fastBuilder) binaryBool(n *ast.BinaryNode) (fastBool, bool) {
	switch n.Operator {
	case "&&", "and", "||", "or":
		l, ok1 := b.boolean(n.Left)
		r, ok2 := b.boolean(n.Right)
		if !ok1 || !ok2 {
			return nil, false
		}
		if n.Operator == "&&" || n.Operator == "and" {
			return func(v any) bool { return l(v) && r(v) }, true
		}
		return func(v any) bool { return l(v) || r(v) }, true
	case "<", ">", "<=", ">=", "==", "!=":
	default:
		return nil, false
	}
	lk, rk := nodeKind(n.Left), nodeKind(n.Right)
	switch {
	case isNumKind(lk) && isNumKind(rk):
		l, ok1 := b.num(n.Left)
		r, ok2 := b.num(n.Right)
		if !ok1 || !ok2 {
			return nil, false
		}
		if f, ok := compareConst(n.Operator, n.Left, n.Right, l, r); ok {
			return f, true
		}
		switch n.Operator {
		case "<":
			return func(v any) bool { return l(v) < r(v) }, true
		case ">":
			return func(v any) bool { return l(v) > r(v) }, true
		case "<=":
			return func(v any) bool { return l(v) <= r(v) }, true
		case ">=":
			return func(v any) bool { return l(v) >= r(v) }, true
		case "==":
			return func(v any) bool { return l(v) == r(v) }, true
		default:
			return func(v any) bool { return l(v) != r(v) }, true
		}
	case lk == reflect.Bool && rk == reflect.Bool && (n.Operator == "==" || n.Operator == "!="):
		l, ok1 := b.boolean(n.Left)
		r, ok2 := b.boolean(n.Right)
		if !ok1 || !ok2 {
			return nil, false
		}
		if n.Operator == "==" {
			return func(v any) bool { return l(v) == r(v) }, true
		}
		return func(v any) bool { return l(v) != r(v) }, true
	case lk == reflect.String && rk == reflect.String && (n.Operator == "==" || n.Operator == "!="):
		l, ok1 := b.str(n.Left)
		r, ok2 := b.str(n.Right)
		if !ok1 || !ok2 {
			return nil, false
		}
		if n.Operator == "==" {
			return func(v any) bool { return l(v) == r(v) }, true
		}
		return func(v any) bool { return l(v) != r(v) }, true
	}
	return nil, false
}

func (b *fastBuilder) str(n ast.Node) (fastStr, bool) {
	if nodeKind(n) != reflect.String {
		return nil, false
	}
	switch n := n.(type) {
	case *ast.StringNode:
		c := n.Value
		return func(any) string { return c }, true
	case *ast.IdentifierNode, *ast.MemberNode:
		steps, t, ok := b.path(n)
		if !ok || t.Kind() != reflect.String {
			return nil, false
		}
		if r, ok := b.read(n, t).(func(any) string); ok {
			return r, true
		}
		b.reflects = true
		return func(v any) string { return walk(reflect.ValueOf(v), steps).String() }, true
	}
	return nil, false
}

// Operations with one constant operand (a literal, or a constant such as a
// strategy's parameter) read it from the closure instead of calling the constant's
// own closure: the same operation on the same operands in the same order, one call
// fewer.

// constNum returns the value of a numeric literal or constant node, exactly as num
// compiles it.
func constNum(n ast.Node) (float64, bool) {
	if !isNumKind(nodeKind(n)) {
		return 0, false
	}
	switch n := n.(type) {
	case *ast.FloatNode:
		return n.Value, true
	case *ast.IntegerNode:
		return float64(n.Value), true
	case *ast.ConstantNode:
		c, err := num(n.Value)
		return c, err == nil
	}
	return 0, false
}

// arithConst compiles l op r (+, -, *, /) when exactly one side is constant.
func arithConst(op string, ln, rn ast.Node, l, r fastNum) (fastNum, bool) {
	lc, lok := constNum(ln)
	rc, rok := constNum(rn)
	switch {
	case rok && !lok:
		switch op {
		case "+":
			return func(v any) float64 { return l(v) + rc }, true
		case "-":
			return func(v any) float64 { return l(v) - rc }, true
		case "*":
			return func(v any) float64 { return l(v) * rc }, true
		case "/":
			return func(v any) float64 { return l(v) / rc }, true
		}
	case lok && !rok:
		switch op {
		case "+":
			return func(v any) float64 { return lc + r(v) }, true
		case "-":
			return func(v any) float64 { return lc - r(v) }, true
		case "*":
			return func(v any) float64 { return lc * r(v) }, true
		case "/":
			return func(v any) float64 { return lc / r(v) }, true
		}
	}
	return nil, false
}

// compareConst compiles the comparison l op r when exactly one side is constant.
func compareConst(op string, ln, rn ast.Node, l, r fastNum) (fastBool, bool) {
	lc, lok := constNum(ln)
	rc, rok := constNum(rn)
	switch {
	case rok && !lok:
		switch op {
		case "<":
			return func(v any) bool { return l(v) < rc }, true
		case ">":
			return func(v any) bool { return l(v) > rc }, true
		case "<=":
			return func(v any) bool { return l(v) <= rc }, true
		case ">=":
			return func(v any) bool { return l(v) >= rc }, true
		case "==":
			return func(v any) bool { return l(v) == rc }, true
		case "!=":
			return func(v any) bool { return l(v) != rc }, true
		}
	case lok && !rok:
		switch op {
		case "<":
			return func(v any) bool { return lc < r(v) }, true
		case ">":
			return func(v any) bool { return lc > r(v) }, true
		case "<=":
			return func(v any) bool { return lc <= r(v) }, true
		case ">=":
			return func(v any) bool { return lc >= r(v) }, true
		case "==":
			return func(v any) bool { return lc == r(v) }, true
		case "!=":
			return func(v any) bool { return lc != r(v) }, true
		}
	}
	return nil, false
}

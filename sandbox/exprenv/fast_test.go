package exprenv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// exprGen writes random expressions in (and slightly beyond) the fast path's subset.
type exprGen struct {
	r *rand.Rand
	b strings.Builder
}

func (g *exprGen) pick(opts ...string) string { return opts[g.r.IntN(len(opts))] }

func (g *exprGen) num(depth int) {
	if depth <= 0 || g.r.IntN(3) == 0 {
		g.b.WriteString(g.pick("yes.bid", "yes.ask", "yes.depth[0]", "yes.depth[2]", "no.bid", "inventory", "skew",
			"time", "size", "spread", "market.tick", "0", "1", "2.5", "-3", "0.1", "1e300", "7"))
		return
	}
	switch g.r.IntN(8) {
	case 0:
		g.b.WriteString("-(")
		g.num(depth - 1)
		g.b.WriteString(")")
	case 1, 2:
		g.b.WriteString("(")
		g.num(depth - 1)
		g.b.WriteString(g.pick(" + ", " - ", " * ", " / ", " ** "))
		g.num(depth - 1)
		g.b.WriteString(")")
	case 3:
		g.b.WriteString("(")
		g.boolean(depth - 1)
		g.b.WriteString(" ? ")
		g.num(depth - 1)
		g.b.WriteString(" : ")
		g.num(depth - 1)
		g.b.WriteString(")")
	case 4:
		g.b.WriteString(g.pick("abs", "floor", "ceil", "round", "sqrt", "log", "exp", "floor_tick", "ceil_tick", "round_tick"))
		g.b.WriteString("(")
		g.num(depth - 1)
		g.b.WriteString(")")
	case 5:
		g.b.WriteString(g.pick("min", "max"))
		g.b.WriteString("(")
		n := 1 + g.r.IntN(3)
		for i := 0; i < n; i++ {
			if i > 0 {
				g.b.WriteString(", ")
			}
			g.num(depth - 1)
		}
		g.b.WriteString(")")
	case 6:
		g.b.WriteString(g.pick("clamp(", "nz(", "round_tick("))
		g.num(depth - 1)
		g.b.WriteString(", ")
		g.num(depth - 1)
		if strings.HasSuffix(g.b.String()[:strings.LastIndex(g.b.String(), "(")+1], "clamp(") {
			g.b.WriteString(", ")
			g.num(depth - 1)
		}
		g.b.WriteString(")")
	default:
		g.b.WriteString("(size % 3)") // outside the subset: the VM runs the whole program
	}
}

func (g *exprGen) boolean(depth int) {
	if depth <= 0 || g.r.IntN(4) == 0 {
		g.b.WriteString(g.pick("wide", "live", "true", `kind == "book"`, `kind != label`))
		return
	}
	switch g.r.IntN(5) {
	case 0, 1:
		g.num(depth - 1)
		g.b.WriteString(g.pick(" < ", " > ", " <= ", " >= ", " == ", " != "))
		g.num(depth - 1)
	case 2:
		g.b.WriteString("(")
		g.boolean(depth - 1)
		g.b.WriteString(g.pick(" && ", " || ", " and ", " or ", " == ", " != "))
		g.boolean(depth - 1)
		g.b.WriteString(")")
	case 3:
		g.b.WriteString("!(")
		g.boolean(depth - 1)
		g.b.WriteString(")")
	default:
		g.b.WriteString("ok(")
		g.num(depth - 1)
		g.b.WriteString(")")
	}
}

func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

func envVariants() []testEnv {
	base := sampleEnv()
	odd := base
	odd.Yes.Bid, odd.Yes.Ask, odd.S0 = math.NaN(), math.Inf(1), math.Copysign(0, -1)
	odd.C = &testCommon{Inventory: math.Inf(-1), No: &testToken{Bid: -0.5, Ask: math.NaN()}}
	zero := base
	zero.Yes, zero.Market.Tick, zero.S0 = testToken{}, 0, 0
	zero.C = &testCommon{No: &testToken{}}
	return []testEnv{base, odd, zero}
}

// checkSamePaths compiles src and compares the fast path with expr's VM.
func checkSamePaths(t *testing.T, env *Env, src string) (fast bool) {
	t.Helper()
	for _, kind := range []Kind{Float, Bool} {
		p, err := env.Compile(src, Origin{}, kind)
		if err != nil {
			continue
		}
		if !p.Fast() {
			continue
		}
		fast = true
		var ev Evaluator
		for i, e := range envVariants() {
			slow, verr := ev.Run(p, e)
			switch kind {
			case Float:
				got, err := ev.Float(p, e)
				want, _ := slow.(float64)
				if verr != nil || err != nil || !sameFloat(got, want) {
					t.Fatalf("%s (env %d): fast %v (%v), VM %v (%v)", src, i, got, err, slow, verr)
				}
			case Bool:
				got, err := ev.Bool(p, e)
				if verr != nil || err != nil || got != slow {
					t.Fatalf("%s (env %d): fast %v (%v), VM %v (%v)", src, i, got, err, slow, verr)
				}
			}
		}
	}
	return fast
}

// TestFastPathMatchesVM checks on generated expressions that the fast path gives
// exactly what expr's VM gives, NaN, ±Inf and −0 included.
func TestFastPathMatchesVM(t *testing.T) {
	env := newTestEnv(t)
	r := rand.New(rand.NewPCG(1, 2))
	fast := 0
	const n = 3000
	for i := 0; i < n; i++ {
		g := &exprGen{r: r}
		if i%2 == 0 {
			g.num(4)
		} else {
			g.boolean(4)
		}
		if checkSamePaths(t, env, g.b.String()) {
			fast++
		}
	}
	if fast < n/3 {
		t.Fatalf("only %d of %d generated expressions took the fast path", fast, n)
	}
}

func TestFastPathCoverage(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		src  string
		kind Kind
		fast bool
	}{
		{"min(yes.bid - spread - skew, yes.ask - market.tick)", Float, true},
		{"yes.depth[1] / (yes.depth[1] + no.depth[1])", Float, true},
		{`kind == "book" && wide && inventory < size`, Bool, true},
		{"clamp(inventory * 0.01, -0.05, 0.05)", Float, true},
		{"floor_tick(yes.bid)", Float, true},
		{"ok(yes.bid, yes.ask) ? yes.ask - yes.bid : 0", Float, true},
		{"time - 1000 > 0", Bool, true},
		{"size % 3", Float, false},
		{"count(list, .bid > 0)", Float, false},
		{"len(label)", Float, false},
		{"yes?.bid ?? 0", Float, false},
		{"let x = yes.bid; x * 2", Float, false},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := env.Compile(tt.src, Origin{}, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			if p.Fast() != tt.fast {
				t.Fatalf("Fast() = %v, want %v", p.Fast(), tt.fast)
			}
			checkSamePaths(t, env, tt.src)
		})
	}
}

func TestFastPathFallsBackOnANilPointer(t *testing.T) {
	env := newTestEnv(t)
	p, err := env.Compile("inventory + 1", Origin{File: "f", Line: 2, Col: 3}, Float)
	if err != nil || !p.Fast() {
		t.Fatal(err, p.Fast())
	}
	e := sampleEnv()
	e.C = nil
	var ev Evaluator
	if _, err := ev.Float(p, e); err == nil || !err.(*Error).Runtime {
		t.Fatalf("err = %v, want the VM's runtime error", err)
	}
}

// FuzzFastPath compares the fast path with the VM on arbitrary expressions.
func FuzzFastPath(f *testing.F) {
	for _, s := range []string{"yes.bid - skew", "min(yes.bid, no.bid, 0.5)", "abs(-0) + skew", "wide ? 1 : yes.ask",
		"nz(yes.bid / 0, 3)", "round_tick(yes.bid * 3, 0.001)", "yes.depth[2] ** 0.5", `kind != "x" || live`} {
		f.Add(s)
	}
	env := newTestEnv(f)
	f.Fuzz(func(t *testing.T, src string) {
		checkSamePaths(t, env, src)
	})
}

func BenchmarkEvalFloatFast(b *testing.B) {
	env := newTestEnv(b)
	p, _ := env.Compile("min(yes.bid - spread - skew, yes.ask - market.tick) + inventory * 0.001", Origin{}, Float)
	if !p.Fast() {
		b.Fatal("not fast")
	}
	var ev Evaluator
	var e any = sampleEnv()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ev.Float(p, e)
	}
}

func ExampleProgram_Fast() {
	env, _ := New(Config{Env: struct {
		Bid float64 `expr:"bid"`
	}{}})
	for _, src := range []string{"bid * 2 - 0.01", "int(bid * 100) % 7"} {
		p, _ := env.Compile(src, Origin{}, Float)
		fmt.Println(src, p.Fast())
	}
	// Output:
	// bid * 2 - 0.01 true
	// int(bid * 100) % 7 false
}

// BenchmarkEvalVM is an expression outside the fast path, for comparison.
func BenchmarkEvalVM(b *testing.B) {
	env := newTestEnv(b)
	p, _ := env.Compile("count(list, .bid > 0.2) + int(yes.bid * 100) % 7", Origin{}, Float)
	if p.Fast() {
		b.Fatal("fast")
	}
	var ev Evaluator
	var e any = sampleEnv()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ev.Float(p, e)
	}
}

package exprenv

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// testFields gives typed reads of testEnv's fields and counts the reads made.
type testFields struct {
	asked map[string]bool // paths asked for and given a read
	reads int
}

func (f *testFields) reader(path []string) any {
	var r any
	p := strings.Join(path, ".")
	switch {
	case p == "time":
		r = func(e any) int64 { f.reads++; return e.(testEnv).Time }
	case p == "kind":
		r = func(e any) string { f.reads++; return e.(testEnv).Kind }
	case p == "market.tick":
		r = func(e any) float64 { f.reads++; return e.(testEnv).Market.Tick }
	case p == "@0":
		r = func(e any) float64 { f.reads++; return e.(testEnv).S0 }
	case p == "@1":
		r = func(e any) bool { f.reads++; return e.(testEnv).B0 }
	case p == "@c.inventory":
		r = func(e any) float64 { f.reads++; return e.(testEnv).C.Inventory }
	case p == "yes.bid":
		r = func(e any) float64 { f.reads++; return e.(testEnv).Yes.Bid }
	case p == "yes.ask":
		r = func(e any) float64 { f.reads++; return e.(testEnv).Yes.Ask }
	case p == "@c.no.bid":
		r = func(e any) float64 { f.reads++; return e.(testEnv).C.No.Bid }
	case p == "list":
		r = func(e any) float64 { return 0 } // not a number field: ignored
	}
	if r != nil {
		f.asked[p] = true
	}
	return r
}

func newFieldsEnv(t testing.TB) (*Env, *testFields) {
	t.Helper()
	return newFieldsEnvWith(t, false)
}

// newFieldsEnvWith is newFieldsEnv with Config.FieldsNeverPanic set to neverPanic.
func newFieldsEnvWith(t testing.TB, neverPanic bool) (*Env, *testFields) {
	t.Helper()
	f := &testFields{asked: map[string]bool{}}
	env, err := New(Config{
		Env:              testEnv{},
		Consts:           map[string]any{"spread": 0.02, "size": 10, "live": true, "label": "x"},
		Aliases:          map[string]string{"skew": "@0", "wide": "@1", "inventory": "@c.inventory", "no": "@c.no"},
		TickField:        "market.tick",
		Fields:           f.reader,
		FieldsNeverPanic: neverPanic,
	})
	if err != nil {
		t.Fatal(err)
	}
	return env, f
}

// TestFieldReadsGiveWhatReflectionGives runs generated expressions on the fast path
// with typed field reads and checks them against expr's VM (NaN, ±Inf, −0, a nil
// pointer on the way included), and that the reads were used for every kind of field
// and alias.
func TestFieldReadsGiveWhatReflectionGives(t *testing.T) {
	env, f := newFieldsEnv(t)
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		g := &exprGen{r: r}
		if i%2 == 0 {
			g.num(4)
		} else {
			g.boolean(4)
		}
		checkSamePaths(t, env, g.b.String())
	}
	for _, p := range []string{"time", "kind", "market.tick", "@0", "@1", "@c.inventory", "yes.bid", "yes.ask", "@c.no.bid"} {
		if !f.asked[p] {
			t.Errorf("no typed read was asked for %s", p)
		}
	}
	if f.reads == 0 {
		t.Fatal("the fast path made no typed read")
	}
}

// TestAFieldReadOfTheWrongTypeIsIgnored checks that a read whose type does not match
// the field leaves the field to reflection.
func TestAFieldReadOfTheWrongTypeIsIgnored(t *testing.T) {
	env, err := New(Config{Env: testEnv{}, Fields: func(path []string) any {
		return func(any) string { return "wrong" } // for every field: only right for kind
	}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := env.Compile(`yes.bid + time > 1 && kind == "wrong"`, Origin{}, Bool)
	if err != nil || !p.Fast() {
		t.Fatal(err)
	}
	var ev Evaluator
	// yes.bid and time through reflection, kind through the (string) read
	if got, err := ev.Bool(p, sampleEnv()); err != nil || !got {
		t.Fatalf("got %v, %v; want true", got, err)
	}
}

func BenchmarkEvalFloatFastFields(b *testing.B) {
	env, _ := newFieldsEnv(b)
	p, _ := env.Compile("min(yes.bid - spread - skew, yes.ask - market.tick) + inventory * 0.001", Origin{}, Float)
	var ev Evaluator
	var e any = sampleEnv() // boxed once, as a caller keeps it
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ev.Float(p, e); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUncheckedReadsGiveWhatReflectionGives repeats the comparison with the VM for
// an environment whose typed reads never panic (Config.FieldsNeverPanic): programs
// reading only through them run without a recover and still give the VM's results;
// a program with a read through reflection keeps its recover, so a nil pointer on
// its way is still reported as an error, not a panic.
func TestUncheckedReadsGiveWhatReflectionGives(t *testing.T) {
	env, _ := newFieldsEnvWith(t, true)
	r := rand.New(rand.NewPCG(5, 6))
	unchecked, checked := 0, 0
	for i := 0; i < 2000; i++ {
		g := &exprGen{r: r}
		if i%2 == 0 {
			g.num(4)
		} else {
			g.boolean(4)
		}
		src := g.b.String()
		if !checkSamePaths(t, env, src) {
			continue
		}
		for _, kind := range []Kind{Float, Bool} {
			if p, err := env.Compile(src, Origin{}, kind); err == nil && p.Fast() {
				num, boolean := p.Unchecked()
				if p.unchecked != (num != nil || boolean != nil) {
					t.Fatalf("%s: unchecked %v, Unchecked gives %v %v", src, p.unchecked, num != nil, boolean != nil)
				}
				if p.unchecked {
					unchecked++
					var ev Evaluator
					for i, e := range envVariants() {
						if num != nil {
							want, _ := ev.Float(p, e)
							if got := num(e); !sameFloat(got, want) {
								t.Fatalf("%s (env %d): Unchecked %v, Float %v", src, i, got, want)
							}
						} else if want, _ := ev.Bool(p, e); boolean(e) != want {
							t.Fatalf("%s (env %d): Unchecked %v, Bool %v", src, i, !want, want)
						}
					}
				} else {
					checked++
				}
			}
		}
	}
	if unchecked == 0 || checked == 0 {
		t.Fatalf("%d unchecked and %d checked fast programs: both kinds must be exercised", unchecked, checked)
	}
	p, err := env.Compile("no.ask + 1", Origin{}, Float) // no typed read: reflection
	if err != nil || !p.Fast() || p.unchecked {
		t.Fatalf("no.ask + 1: %v, fast %v, unchecked %v", err, p.Fast(), p.unchecked)
	}
	e := sampleEnv()
	e.C = nil
	var ev Evaluator
	if _, err := ev.Float(p, e); err == nil {
		t.Fatal("a nil pointer on a reflected read's way gave no error")
	}
}

package exprenv

import (
	"errors"
	"math"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

type testToken struct {
	Bid   float64    `expr:"bid"`
	Ask   float64    `expr:"ask"`
	Depth [3]float64 `expr:"depth"`
}

type testMarket struct {
	Tick float64 `expr:"tick"`
}

type testEnv struct {
	Yes    testToken   `expr:"yes"`
	Market testMarket  `expr:"market"`
	Time   int64       `expr:"time"`
	Kind   string      `expr:"kind"`
	List   []testToken `expr:"list"`
	S0     float64     `expr:"@0"`
	B0     bool        `expr:"@1"`
	C      *testCommon `expr:"@c"`
}

type testCommon struct {
	Inventory float64    `expr:"inventory"`
	No        *testToken `expr:"no"`
}

func newTestEnv(t testing.TB) *Env {
	t.Helper()
	env, err := New(Config{
		Env:       testEnv{},
		Consts:    map[string]any{"spread": 0.02, "size": 10, "live": true, "label": "x"},
		Aliases:   map[string]string{"skew": "@0", "wide": "@1", "inventory": "@c.inventory", "no": "@c.no"},
		TickField: "market.tick",
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func sampleEnv() testEnv {
	return testEnv{
		Yes:    testToken{Bid: 0.44, Ask: 0.46, Depth: [3]float64{10, 25, 40}},
		Market: testMarket{Tick: 0.01},
		Time:   1_700_000_000_000,
		Kind:   "book",
		List:   []testToken{{Bid: 0.1}, {Bid: 0.3}},
		S0:     0.005,
		B0:     true,
		C:      &testCommon{Inventory: -3, No: &testToken{Bid: 0.54, Ask: 0.56}},
	}
}

func TestEvaluateGivesTheFormulaResult(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		name string
		src  string
		kind Kind
		want any
	}{
		{"arithmetic on fields", "(yes.bid + yes.ask) / 2", Float, 0.45},
		{"constants are substituted", "yes.bid - spread", Float, 0.42},
		{"int constant converts", "size * 2", Float, 20.0},
		{"aliases read hidden fields", "yes.bid - skew", Float, 0.435},
		{"bool alias", "wide && live", Bool, true},
		{"dotted alias through a pointer", "inventory * 2", Float, -6.0},
		{"alias to a pointer struct", "no.bid + yes.ask", Float, 1.0},
		{"string constant", `label == "x" && kind == "book"`, Bool, true},
		{"clamp", "clamp(yes.bid * 10, 0, 1)", Float, 1.0},
		{"floor_tick uses the market tick", "floor_tick(0.3 - 0.1)", Float, 0.2},
		{"ceil_tick", "ceil_tick(0.451)", Float, 0.46},
		{"round_tick with explicit tick", "round_tick(0.4449, 0.001)", Float, 0.445},
		{"nz replaces NaN", "nz(sqrt(-1), 7)", Float, 7.0},
		{"ok detects NaN", "ok(yes.bid, sqrt(-1))", Bool, false},
		{"array index", "yes.depth[1]", Float, 25.0},
		{"predicates over lists", "count(list, .bid > 0.2)", Int, 1},
		{"int time arithmetic", "time / 1000 > 1.6e9", Bool, true},
		{"inferred kind", "yes.bid > 0.4", Any, true},
	}
	var ev Evaluator
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.Compile(tt.src, Origin{}, tt.kind)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			got, err := ev.Run(p, sampleEnv())
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if got != tt.want {
				t.Fatalf("%s = %v (%T), want %v (%T)", tt.src, got, got, tt.want, tt.want)
			}
		})
	}
}

func TestProgramReportsKindAndNames(t *testing.T) {
	env := newTestEnv(t)
	p, err := env.Compile("yes.bid - skew > spread && market.tick > no.ask", Origin{}, Any)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind() != Bool {
		t.Fatalf("kind %v, want bool", p.Kind())
	}
	for _, n := range []string{"yes", "yes.bid", "skew", "spread", "market", "market.tick", "no", "no.ask"} {
		if !p.Uses(n) {
			t.Errorf("Uses(%q) = false; names %v", n, p.Names())
		}
	}
	if p.Uses("yes.ask") {
		t.Error("Uses(yes.ask) = true")
	}
}

func TestConstantsAndAliasesAreRecognized(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		src     string
		isConst bool
		value   any
		alias   string
	}{
		{"spread * 2 + size", true, 10.04, ""},
		{"live && !false", true, true, ""},
		{" skew ", false, nil, "skew"},
		{"skew + 0", false, nil, ""},
		{"yes.bid", false, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := env.Compile(tt.src, Origin{}, Any)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := p.Constant()
			if ok != tt.isConst || ok && v != tt.value || p.Alias() != tt.alias {
				t.Fatalf("Constant() = %v, %v; Alias() = %q", v, ok, p.Alias())
			}
			var ev Evaluator
			got, err := ev.Run(p, sampleEnv())
			if err != nil || ok && got != v {
				t.Fatalf("Run = %v, %v", got, err)
			}
		})
	}
}

func TestCompileErrorsArePositionedAndHelpful(t *testing.T) {
	env := newTestEnv(t)
	at := Origin{File: "s.yaml", Line: 10, Col: 12, Indent: 5}
	tests := []struct {
		name     string
		src      string
		kind     Kind
		line     int
		col      int
		contains string
		is       error
	}{
		{"unknown name suggests", "yes.bid - skwe", Float, 10, 22, "unknown name skwe (did you mean skew?)", nil},
		{"unknown field suggests", "yes.bidd", Float, 10, 16, "has no field bidd (did you mean bid?)", nil},
		{"type names are unqualified", "yes.bidd", Float, 10, 16, "type testToken", nil},
		{"fields behind pointers suggest", "no.bidd", Float, 10, 15, "type testToken has no field bidd (did you mean bid?)", nil},
		{"second line maps to indent", "yes.bid +\n  nope", Float, 11, 7, "unknown name nope", nil},
		{"now is disabled", "now()", Any, 10, 12, "time comes from the event", nil},
		{"date is disabled", `date("2024-01-01")`, Any, 10, 12, "time comes from the event", nil},
		{"syntax error", "yes.bid +", Float, 10, 20, "unexpected token", nil},
		{"wrong result kind", "yes.bid", Bool, 10, 12, "expected bool", nil},
		{"let may not shadow a user name", "let skew = 1; skew", Any, 10, 16, "already a parameter or variable", nil},
		{"empty", "  ", Float, 10, 12, "empty expression", nil},
		{"node limit", strings.Repeat("1+", 1200) + "1", Float, 10, 12, "expression too large", ErrNodeLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.Compile(tt.src, at, tt.kind)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if !strings.Contains(e.Error(), tt.contains) {
				t.Fatalf("error %q does not contain %q", e.Error(), tt.contains)
			}
			if e.File != "s.yaml" || e.Line != tt.line || e.Col != tt.col {
				t.Fatalf("at %s, want s.yaml:%d:%d\n%s", e.Position(), tt.line, tt.col, e)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tt.is)
			}
			if e.Runtime {
				t.Fatal("compile error marked Runtime")
			}
		})
	}
}

func TestTickHelpersNeedATickWithoutTickField(t *testing.T) {
	env, err := New(Config{Env: testEnv{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Compile("round_tick(0.5)", Origin{}, Float); err == nil || !strings.Contains(err.Error(), "second argument") {
		t.Fatalf("err = %v", err)
	}
	if _, err := env.Compile("round_tick(0.5, 0.01)", Origin{}, Float); err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeFailuresBecomeErrors(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		name     string
		src      string
		contains string
		is       error
	}{
		{"index out of range", "list[5].bid", "index out of range", nil},
		{"integer division by zero", "int(yes.bid) % int(yes.bid)", "divide by zero", nil},
		{"memory budget", "len(map(1..1000000, # * 2))", "memory budget exceeded", ErrMemoryBudget},
	}
	ev := Evaluator{MemoryBudget: 1000}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.Compile(tt.src, Origin{File: "f", Line: 3, Col: 9}, Any)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			_, err = ev.Run(p, sampleEnv())
			var e *Error
			if !errors.As(err, &e) || !e.Runtime {
				t.Fatalf("error %v, want a runtime *Error", err)
			}
			if !strings.Contains(e.Message, tt.contains) || e.Line != 3 || e.Col < 9 {
				t.Fatalf("error %q at %s", e.Message, e.Position())
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("not %v", tt.is)
			}
		})
	}
	// the evaluator stays usable after a failure
	p, _ := env.Compile("yes.bid", Origin{}, Float)
	if v, err := ev.Float(p, sampleEnv()); err != nil || v != 0.44 {
		t.Fatalf("after failure: %v, %v", v, err)
	}
}

func TestEvaluatingWithTheWrongEnvTypeIsAnError(t *testing.T) {
	env := newTestEnv(t)
	p, _ := env.Compile("yes.bid", Origin{}, Float)
	var ev Evaluator
	if _, err := ev.Float(p, struct{ X int }{}); err == nil {
		t.Fatal("no error")
	}
}

func TestNewRejectsClashes(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"nil env", Config{}},
		{"pointer env", Config{Env: &testEnv{}}},
		{"constant clashes with a field", Config{Env: testEnv{}, Consts: map[string]any{"yes": 1.0}}},
		{"constant clashes with a helper", Config{Env: testEnv{}, Consts: map[string]any{"clamp": 1.0}}},
		{"constant of a bad type", Config{Env: testEnv{}, Consts: map[string]any{"x": []int{1}}}},
		{"alias to a missing field", Config{Env: testEnv{}, Aliases: map[string]string{"x": "@9"}}},
		{"alias to a missing nested field", Config{Env: testEnv{}, Aliases: map[string]string{"x": "@c.nope"}}},
		{"alias and constant", Config{Env: testEnv{}, Consts: map[string]any{"x": 1.0}, Aliases: map[string]string{"x": "@0"}}},
		{"not an identifier", Config{Env: testEnv{}, Consts: map[string]any{"a-b": 1.0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestRoundTickNeverCrossesOnFloatNoise(t *testing.T) {
	tests := []struct {
		x, tick float64
		round   func(float64) float64
		want    float64
	}{
		{0.3 - 0.1, 0.01, math.Floor, 0.2},
		{0.45, 0.01, math.Floor, 0.45},
		{0.45, 0.01, math.Ceil, 0.45},
		{0.451, 0.01, math.Floor, 0.45},
		{0.451, 0.01, math.Ceil, 0.46},
		{0.455, 0.01, math.Round, 0.46},
		{0.4549, 0.01, math.Round, 0.45},
		{-0.015, 0.01, math.Floor, -0.02},
		{-0.015, 0.01, math.Ceil, -0.01},
		{-0.015, 0.01, math.Round, -0.02},
		{0.12345, 0.0001, math.Floor, 0.1234},
		{1.0000000001, 0.1, math.Ceil, 1},
	}
	for _, tt := range tests {
		if got := RoundTick(tt.x, tt.tick, tt.round); got != tt.want {
			t.Errorf("RoundTick(%v, %v) = %v, want %v", tt.x, tt.tick, got, tt.want)
		}
	}
	for _, bad := range [][2]float64{{math.NaN(), 0.01}, {math.Inf(1), 0.01}, {0.5, 0}, {0.5, -0.01}, {1e30, 0.01}} {
		if got := RoundTick(bad[0], bad[1], math.Floor); !math.IsNaN(got) {
			t.Errorf("RoundTick(%v, %v) = %v, want NaN", bad[0], bad[1], got)
		}
	}
}

func TestSuggestFindsPlausibleTypos(t *testing.T) {
	cands := []string{"bid", "ask", "microprice", "spread", "imbalance"}
	tests := map[string]string{
		"bidd": "bid", "asks": "ask", "Spread": "spread", "microprcie": "microprice",
		"imbalence": "imbalance", "zzz": "", "volume": "",
	}
	for in, want := range tests {
		if got := Suggest(in, cands); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOriginOfMapsYAMLScalars(t *testing.T) {
	src := []byte("a: yes.bid + nope\n" +
		"b: \"yes.bid + nope\"\n" +
		"c: |\n" +
		"    yes.bid +\n" +
		"      nope\n" +
		"d: >\n" +
		"    yes.bid +\n" +
		"      nope\n")
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{"a": {1, 14}, "b": {2, 15}, "c": {5, 7}, "d": {8, 7}}
	env := newTestEnv(t)
	m := doc.Content[0]
	for i := 0; i < len(m.Content); i += 2 {
		key, val := m.Content[i].Value, m.Content[i+1]
		text, at := OriginOf("s.yaml", val, src)
		_, err := env.Compile(text, at, Float)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v", key, err)
		}
		if got := [2]int{e.Line, e.Col}; got != want[key] {
			t.Errorf("%s: at %d:%d, want %d:%d\n%s", key, got[0], got[1], want[key][0], want[key][1], e)
		}
	}
}

func TestEvaluatorBoolDoesNotAllocate(t *testing.T) {
	env := newTestEnv(t)
	p, err := env.Compile("yes.bid > 0.3 && yes.ask < 0.9 && wide", Origin{}, Bool)
	if err != nil {
		t.Fatal(err)
	}
	var ev Evaluator
	var e any = sampleEnv()
	n := testing.AllocsPerRun(200, func() {
		if ok, err := ev.Bool(p, e); err != nil || !ok {
			t.Fatal(ok, err)
		}
	})
	if n != 0 {
		t.Fatalf("Bool allocates %v times", n)
	}
}

// FuzzCompile checks that no source text makes Compile or Run panic, and that every
// compile error is positioned inside the file region the expression occupies.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"yes.bid - spread", "clamp(yes.bid, 0, 1)", "floor_tick(0.3-0.1)", "let x = 1; x + skew",
		"now()", "yes.", "((", "list[9].bid", "count(list, .bid > 0)", "1..100", `"a" + kind`,
		"yes.depth[-1]", "size % 0", "map(1..10, #)", "[1,2,3][1:]", "{a: 1}.a", "yes?.bid ?? 0",
		"x\n  + y", "if wide { 1 } else { 2 }", "\x00", "日本",
	} {
		f.Add(s)
	}
	env := newTestEnv(f)
	f.Fuzz(func(t *testing.T, src string) {
		at := Origin{File: "f.yaml", Line: 7, Col: 5, Indent: 3}
		p, err := env.Compile(src, at, Any)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("compile error %T, want *Error: %v", err, err)
			}
			if e.Line < 7 || e.Col < 1 || e.File != "f.yaml" {
				t.Fatalf("badly positioned error %s: %v", e.Position(), e)
			}
			return
		}
		ev := Evaluator{MemoryBudget: 10_000}
		if _, err := ev.Run(p, sampleEnv()); err != nil {
			var e *Error
			if !errors.As(err, &e) || !e.Runtime {
				t.Fatalf("runtime error %T, want runtime *Error: %v", err, err)
			}
		}
	})
}

func BenchmarkEvalBool(b *testing.B) {
	env := newTestEnv(b)
	p, err := env.Compile("yes.bid > 0.3 && yes.ask < 0.9 && wide", Origin{}, Bool)
	if err != nil {
		b.Fatal(err)
	}
	var ev Evaluator
	var e any = sampleEnv()
	if got, err := ev.Bool(p, e); err != nil || !got {
		b.Fatalf("Bool = %v, %v; want true (the benchmark would time another path)", got, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ev.Bool(p, e)
	}
}

func BenchmarkEvalFloat(b *testing.B) {
	env := newTestEnv(b)
	p, err := env.Compile("floor_tick((yes.bid + yes.ask) / 2 - spread / 2 - skew)", Origin{}, Float)
	if err != nil {
		b.Fatal(err)
	}
	var ev Evaluator
	var e any = sampleEnv()
	if got, err := ev.Float(p, e); err != nil || got != 0.43 {
		b.Fatalf("Float = %v, %v; want 0.43 (the benchmark would time another path)", got, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ev.Float(p, e)
	}
}

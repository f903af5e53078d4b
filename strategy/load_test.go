package strategy

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob("../agents/examples/*/strategy.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			s, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Quotes())+len(s.Rules()) == 0 {
				t.Fatal("example does nothing")
			}
		})
	}
}

// problemsOf parses src and returns its problems as "line:col: message" strings.
func problemsOf(t *testing.T, src string) []string {
	t.Helper()
	_, err := Parse("s.yaml", []byte(src))
	if err == nil {
		return nil
	}
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T, want *CompileError: %v", err, err)
	}
	var out []string
	for _, p := range ce.Problems {
		if p.File != "s.yaml" {
			t.Errorf("problem without file: %v", p)
		}
		out = append(out, fmt.Sprintf("%d:%d: %s", p.Line, p.Col, p.Message))
	}
	return out
}

const okQuote = `
quotes:
  bid: {side: BUY, price: yes.bid, size: 10}
`

func TestLoadReportsEveryProblemWithPosition(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // substrings of the problems, in order, each with its position
	}{
		{"unknown top-level field suggests", "qoutes: {}\n" + okQuote, []string{`1:1: unknown field "qoutes" in strategy file (did you mean "quotes"?)`}},
		{"unknown quote field suggests", "quotes:\n  bid: {side: BUY, price: yes.bid, size: 10, post_onyl: true}\n",
			[]string{`2:46: unknown field "post_onyl" in quote bid (did you mean "post_only"?)`}},
		{"several problems at once", `
params:
  a: {default: 5, min: 10}
  b: {default: nope}
indicators:
  f: emma(mid, 20)
  g: ema(mdi, 20)
vars:
  x: yes.bidd
quotes:
  q: {side: BYU, price: 1, size: 1}
  r: {side: BUY, price: x +, size: 1}
`, []string{
			`3:16: param a: default 5 is below the minimum 10`,
			`4:16: param b: default must be a number`,
			`6:6: indicator f: unknown function emma (did you mean ema?)`,
			`7:10: indicator g: unknown series mdi (did you mean mid?)`,
			`9:10: type Token has no field bidd (did you mean bid?)`,
			`11:13: quote q: side must be BUY or SELL`,
			`12:27: unexpected token EOF`,
		}},
		{"var used before it is defined", "vars:\n  a: b * 2\n  b: 1\n" + okQuote,
			[]string{"2:6: var a uses b, which is defined later (line 3)"}},
		{"names share one namespace", "params:\n  x: 1\nvars:\n  x: 2\n" + okQuote, []string{"4:3: var x: the name is already used by param at line 2"}},
		{"built-in names are reserved", "params:\n  mid: 1\n  time: 2\n" + okQuote, []string{"3:3: param time: time is a built-in name"}},
		{"block scalar expressions are positioned", "quotes:\n  bid:\n    side: BUY\n    price: |\n      yes.bid -\n        nope\n    size: 1\n",
			[]string{"6:9: unknown name nope"}},
		{"now is disabled", "quotes:\n  bid: {side: BUY, price: now(), size: 1}\n", []string{"time comes from the event"}},
		{"quote needs side, price, size", "quotes:\n  bid: {when: true}\n", []string{"2:3: quote bid: side is required", "2:3: quote bid: price is required", "2:3: quote bid: size is required"}},
		{"rule needs an action", "rules:\n  r: {when: true}\n", []string{"2:3: rule r: needs an action"}},
		{"do take is explained", "rules:\n  r: {when: true, do: take}\n", []string{"under take: instead of do: take"}},
		{"do typo suggests", "rules:\n  r: {when: true, do: flaten}\n", []string{"(did you mean flatten?)"}},
		{"unknown event in on", "rules:\n  r: {when: true, do: pause, on: [fils]}\n", []string{`unknown event "fils" in on (did you mean fill?)`}},
		{"GTD needs ttl", "quotes:\n  bid: {side: BUY, price: 0.4, size: 5, type: GTD}\n", []string{"a GTD quote needs ttl"}},
		{"takes are not quotes", "quotes:\n  bid: {side: BUY, price: 0.4, size: 5, type: FOK}\n", []string{"use a rule with take:"}},
		{"unknown market slot", "markets: [main]\nquotes:\n  bid: {market: mian, side: BUY, price: 0.4, size: 5}\n", []string{`3:17: market "mian" is not a declared slot (did you mean main?)`}},
		{"window parameter must be whole", "params:\n  w: 2.5\nindicators:\n  e: sma(mid, w)\n" + okQuote, []string{"4:15: indicator e: window w = 2.5 must be a whole number"}},
		{"a var must be a number or bool", "vars:\n  s: market.name\n" + okQuote, []string{"var s must be a number or a bool, not string"}},
		{"yaml syntax errors are positioned", "quotes:\n  bid: [\n", []string{"2:1: did not find expected node content"}},
		{"empty file", "", []string{"1:1: empty strategy file"}},
		{"a file that does nothing", "name: x\n", []string{"neither quotes nor rules"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, tt.src)
			if len(got) < len(tt.want) {
				t.Fatalf("got %d problems, want at least %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q\nall:\n%s", i, got[i], w, strings.Join(got, "\n"))
				}
			}
		})
	}
}

func TestLoadDocSnippets(t *testing.T) {
	for _, f := range []string{"testdata/strategies/docs_first.yaml", "testdata/strategies/docs_vars.yaml", "testdata/strategies/edge.yaml"} {
		if _, err := Load(f); err != nil {
			t.Error(err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := map[string]int64{"500ms": 500, "90s": 90_000, "1m30s": 90_000, "1.5h": 5_400_000, "2d": 172_800_000, "1.1s": 1100,
		"0s": 0, "1.0005s": 0, "-1s": 0, "10": 0, "1y": 0, "400d": 0, "s": 0, "1m 30s": 0}
	for in, want := range tests {
		got, ok := parseDuration(in)
		if ok != (want != 0) || got != want {
			t.Errorf("parseDuration(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
}

// TestWithRestatedValuesIsTheSameCompilation checks that overrides restating the
// values a strategy already has give what compiling anew gives (With then returns a
// copy without compiling), and that an override that changes a value compiles anew.
func TestWithRestatedValuesIsTheSameCompilation(t *testing.T) {
	for _, name := range []string{"quoter", "meanrev", "momentum", "arb"} {
		t.Run(name, func(t *testing.T) {
			s, err := Load("../agents/examples/" + name + "/strategy.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var restate []Override
			for _, p := range s.Params() {
				restate = append(restate, Override{Name: p.Name, Value: p.Value})
			}
			same, err := s.With(restate)
			if err != nil {
				t.Fatal(err)
			}
			if &same.vars[0] != &s.vars[0] {
				t.Error("restating the values compiled anew")
			}
			fresh, err := compile(s.spec, same.values)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(same.Params(), fresh.Params()) {
				t.Fatalf("params %v, compiled anew %v", same.Params(), fresh.Params())
			}
			evs := randomStream(9, 1500)
			ra, rb := newRun(t, same), newRun(t, fresh)
			for i := range evs {
				if a, b := ra.decide(t, &evs[i]), rb.decide(t, &evs[i]); !reflect.DeepEqual(a, b) {
					t.Fatalf("event %d: restated %v, compiled anew %v", i, a, b)
				}
			}
			changed, err := s.With([]Override{{Name: s.Params()[0].Name, Value: s.Params()[0].Max}})
			if err != nil {
				t.Fatal(err)
			}
			if &changed.vars[0] == &s.vars[0] {
				t.Error("a changed value was not compiled anew")
			}
		})
	}
}

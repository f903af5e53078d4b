package strategy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// FuzzParse checks that no strategy file makes Parse or Decide panic, that problems
// are always positioned, and that a file that compiles can be run.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../agents/examples/*/strategy.yaml")
	more, _ := filepath.Glob("testdata/strategies/*.yaml")
	for _, p := range append(files, more...) {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range []string{
		"", "quotes:", "quotes: []", "rules:\n  r: {when: x, take: []}\n", "params:\n  p: {default: 1, min: 2, max: 0}\n",
		"indicators:\n  e: ema(no.mid, 0)\n", "indicators:\n  e: sma(mid, 99999999)\n", "vars:\n  a: b\n  b: a\n",
		"quotes:\n  q: {side: BUY, price: |\n    1 +\n      2, size: 1}\n", "&a [*a]", "quotes: {q: {<<: {side: BUY}}}",
		"markets: [a, a]\nquotes:\n  q: {market: b, side: SELL, price: 0.5, size: 5}\n",
		"rules:\n  r: {when: 'event.kind == \"fill\"', on: [fill, bogus], take: {side: BUY, price: yes.ask, size: 5, type: GTC}}\n",
		"vars:\n  a: orders[3].price\nquotes:\n  q: {side: BUY, price: a, size: 5}\n", // fails on every event
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("f.yaml", src)
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("error %T without problems: %v", err, err)
			}
			for _, p := range ce.Problems {
				if p.Line < 1 || p.Col < 1 || p.File != "f.yaml" || p.Message == "" {
					t.Fatalf("badly positioned problem %q at %s", p.Message, p.Position())
				}
			}
			return
		}
		var bs []Binding
		if slots := s.Markets(); len(slots) > 0 {
			for i, name := range slots {
				bs = append(bs, Binding{Name: name, Market: market.ConditionID(rune('a' + i))})
			}
		} else {
			bs = []Binding{{Name: "m", Market: benchCond}}
		}
		var inputs Sources
		for _, f := range s.Feeds() {
			inputs.Feeds = append(inputs.Feeds, FeedBinding{Name: f, Symbol: "crypto:" + f, Stale: 5000})
		}
		for _, g := range s.Signals() {
			inputs.Signals = append(inputs.Signals, SignalBinding{Name: g, Stale: 5000})
		}
		in, err := s.NewInstanceWith(bs, inputs)
		if err != nil {
			t.Fatalf("a strategy that compiled cannot be bound: %v", err)
		}
		st := newTestState()
		for _, ev := range randomStream(1, 30) {
			st.Apply(&ev)
			// A failing expression stops the evaluation with a positioned
			// *exprenv.Error and nothing appended (Decide's contract).
			out, err := in.Decide(&ev, st, nil)
			var ee *exprenv.Error
			if err != nil && (!errors.As(err, &ee) || len(out) != 0) {
				t.Fatalf("Decide failed with %T (%v) and %d intents", err, err, len(out))
			}
		}
	})
}

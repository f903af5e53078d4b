package strategy

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

func mustParse(t testing.TB, src string) *Strategy {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func book(t int64, bid, ask market.Micros) market.Event {
	return market.Event{Kind: market.EventBook, Time: t, Market: benchCond, Token: benchYes,
		Bids: []market.Level{{Price: bid, Size: 100 * market.One}}, Asks: []market.Level{{Price: ask, Size: 100 * market.One}}}
}

func TestToPriceNeverCrossesTheFormula(t *testing.T) {
	tests := []struct {
		name string
		x    float64
		side market.Side
		want market.Micros
		ok   bool
	}{
		{"buy rounds down", 0.4567, market.Buy, 450_000, true},
		{"sell rounds up", 0.4501, market.Sell, 460_000, true},
		{"float noise does not cost a tick", 0.3 - 0.1, market.Buy, 200_000, true},
		{"float noise does not cost a tick on a sell", 0.47 - 0.02, market.Sell, 450_000, true},
		{"on the tick stays", 0.45, market.Sell, 450_000, true},
		{"below one tick is no price", 0.009, market.Buy, 0, false},
		{"one or more is no price", 0.991, market.Sell, 0, false},
		{"NaN", math.NaN(), market.Buy, 0, false},
		{"negative", -0.2, market.Buy, 0, false},
		{"infinite", math.Inf(1), market.Sell, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := toPrice(tt.x, 10_000, tt.side)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("toPrice(%v) = %d, %v; want %d, %v", tt.x, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestToSizeRoundsDownToTheLot(t *testing.T) {
	tests := []struct {
		x    float64
		want market.Micros
		ok   bool
	}{
		{10, 10 * market.One, true}, {7.239, 7_230_000, true}, {5.0000001, 5 * market.One, true},
		{4.999, 0, false}, {0, 0, false}, {-3, 0, false}, {math.NaN(), 0, false}, {1e20, 0, false},
	}
	for _, tt := range tests {
		got, ok := toSize(tt.x, 5*market.One)
		if got != tt.want || ok != tt.ok {
			t.Errorf("toSize(%v) = %d, %v; want %d, %v", tt.x, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDecideFailureAppendsNothingAndIsPositioned(t *testing.T) {
	s := mustParse(t, "quotes:\n  q:\n    side: BUY\n    size: 5\n    price: orders[3].price\n")
	in, err := s.NewInstance([]Binding{{Name: "m", Market: benchCond}})
	if err != nil {
		t.Fatal(err)
	}
	st := newTestState()
	ev := book(1, 400_000, 450_000)
	st.Apply(&ev)
	prior := []market.Intent{{Kind: market.IntentPause}}
	out, err := in.Decide(&ev, st, prior)
	var e *exprenv.Error
	if !errors.As(err, &e) || !e.Runtime || e.Line != 5 || e.File != "t.yaml" {
		t.Fatalf("err = %v, want a runtime error at t.yaml:5", err)
	}
	if len(out) != 1 {
		t.Fatalf("out has %d intents after a failure, want the 1 it came with", len(out))
	}
}

func TestDecideIgnoresOtherMarketsAndNeedsMetadata(t *testing.T) {
	s, _ := Load("../agents/examples/quoter/strategy.yaml")
	in, _ := s.NewInstance([]Binding{{Name: "m", Market: benchCond}})
	st := newTestState()
	other := market.Event{Kind: market.EventBook, Time: 1, Market: "0xother", Token: "9"}
	if out, err := in.Decide(&other, st, nil); err != nil || len(out) != 0 {
		t.Fatalf("event of an unbound market: %v, %v", out, err)
	}
	delete(st.Markets, benchCond)
	ev := book(1, 400_000, 450_000)
	if out, err := in.Decide(&ev, st, nil); err != nil || len(out) != 0 {
		t.Fatalf("market without metadata: %v, %v", out, err)
	}
}

func TestNamedSlotsPinQuotesAndRules(t *testing.T) {
	s := mustParse(t, `
markets: [a, b]
quotes:
  qa: {market: a, side: BUY, price: 0.4, size: 5}
  both: {side: BUY, price: 0.3, size: 5}
rules:
  rb: {market: b, when: "true", do: pause}
`)
	for _, bad := range [][]Binding{
		{{Name: "a", Market: "0x1"}},
		{{Name: "a", Market: "0x1"}, {Name: "c", Market: "0x2"}},
		{{Name: "a", Market: "0x1"}, {Name: "a", Market: "0x2"}},
		{{Name: "a", Market: "0x1"}, {Name: "b", Market: "0x1"}},
		{{Name: "", Market: "0x1"}},
		nil,
	} {
		if _, err := s.NewInstance(bad); err == nil {
			t.Errorf("NewInstance(%v) accepted", bad)
		}
	}
	in, err := s.NewInstance([]Binding{{Name: "a", Market: "0xa"}, {Name: "b", Market: "0xb"}})
	if err != nil {
		t.Fatal(err)
	}
	var st market.State
	st.Init()
	for _, c := range []market.ConditionID{"0xa", "0xb"} {
		st.Markets[c] = &market.Info{Condition: c, Tokens: [2]market.TokenID{market.TokenID(c) + "y", market.TokenID(c) + "n"},
			TickSize: 10_000, MinSize: 5 * market.One, Active: true, AcceptingOrders: true}
	}
	out, err := in.Decide(&market.Event{Kind: market.EventTimer, Time: 5}, &st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range out {
		keys = append(keys, it.Kind.String()+" "+it.Key)
	}
	// market b's pause suppresses b's quotes
	if want := "quote a/qa,quote a/both,pause b/rb"; strings.Join(keys, ",") != want {
		t.Fatalf("intents %v, want %s", keys, want)
	}
}

func TestWithParams(t *testing.T) {
	s, err := Load("../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  map[string]string
		err  string
	}{
		{"in range", map[string]string{"half_spread": "0.03", "smooth": "20"}, ""},
		{"unknown name suggests", map[string]string{"half_sprad": "0.03"}, `no parameter "half_sprad" (did you mean "half_spread"?)`},
		{"below the minimum", map[string]string{"half_spread": "0.001"}, "0.001 is below the minimum 0.005"},
		{"not a whole number", map[string]string{"smooth": "2.5"}, "2.5 must be a whole number"},
		{"not a number", map[string]string{"size": "ten"}, "ten must be a number"},
		{"every problem at once", map[string]string{"size": "ten", "skew": "1"}, "skew: 1 is above the maximum 0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s2, err := s.WithParams(tt.set)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range s2.Params() {
					if v, ok := tt.set[p.Name]; ok && p.Value != v {
						t.Errorf("%s = %s, want %s", p.Name, p.Value, v)
					}
				}
				if s.Params()[0].Value != "0.02" {
					t.Error("WithParams changed the original")
				}
				return
			}
			var ce *CompileError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want one containing %q", err, tt.err)
			}
		})
	}
	_, err = s.With([]Override{{Name: "size", Value: "0", File: "agent.yaml", Line: 9, Col: 11}})
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Problems[0].Position() != "agent.yaml:9:11" {
		t.Fatalf("positioned override error: %v", err)
	}
}

func TestParametersAreConstantsOfTheirStrategy(t *testing.T) {
	s := mustParse(t, "params:\n  p: 0.4\nquotes:\n  q: {side: BUY, price: p, size: 5}\n")
	s2, err := s.WithParams(map[string]string{"p": "0.3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    *Strategy
		want market.Micros
	}{{s, 400_000}, {s2, 300_000}} {
		in, _ := tc.s.NewInstance([]Binding{{Name: "m", Market: benchCond}})
		out, err := in.Decide(&market.Event{Kind: market.EventTimer, Time: 1}, newTestState(), nil)
		if err != nil || len(out) != 1 || out[0].Price != tc.want {
			t.Fatalf("out %+v, err %v; want price %d", out, err, tc.want)
		}
	}
}

func TestSweepValues(t *testing.T) {
	s := mustParse(t, "params:\n  a: {default: 0.02, min: 0.01, max: 0.05}\n  w: 30s\n  n: {default: 5, type: int}\n  b: true\nquotes:\n  q: {side: BUY, price: 0.4, size: 5}\n")
	tests := []struct {
		arg  string
		want []string
		err  string
	}{
		{"a=0.01:0.05:0.01", []string{"0.01", "0.02", "0.03", "0.04", "0.05"}, ""},
		{"w=10s:30s:10s", []string{"10s", "20s", "30s"}, ""},
		{"n=1:7:3", []string{"1", "4", "7"}, ""},
		{"b=x", []string{"false", "true"}, ""},
		{"a=0.01:0.06:0.01", nil, "above the maximum"},
		{"a=0.05:0.01:0.01", nil, "FROM <= TO"},
		{"zz=1:2:1", nil, `no parameter "zz" (parameters: a, w, n, b)`},
		{"nn=1:2:1", nil, `no parameter "nn" (did you mean "n"?)`},
		{"a=0.01", nil, "NAME=FROM:TO:STEP"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			_, got, err := s.SweepValues(tt.arg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// randomStream is a deterministic mix of book, trade, fill and timer events.
func randomStream(seed uint64, n int) []market.Event {
	r := rand.New(rand.NewPCG(seed, 1))
	var evs []market.Event
	t := int64(1_700_000_000_000)
	mid := market.Micros(500_000)
	for i := 0; i < n; i++ {
		t += int64(r.IntN(3000))
		mid += market.Micros(r.IntN(5)-2) * 10_000
		mid = max(50_000, min(950_000, mid))
		switch r.IntN(6) {
		case 0:
			evs = append(evs, market.Event{Kind: market.EventLastTrade, Time: t, Market: benchCond, Token: benchYes,
				Price: mid, Size: market.Micros(1+r.IntN(50)) * market.One, Side: market.Side(1 + r.IntN(2))})
		case 1:
			evs = append(evs, market.Event{Kind: market.EventFill, Time: t, Fill: market.Fill{Market: benchCond, Token: benchYes,
				Side: market.Side(1 + r.IntN(2)), Price: mid, Size: 5 * market.One}})
		case 2:
			evs = append(evs, market.Event{Kind: market.EventTimer, Time: t})
		default:
			ev := book(t, mid-10_000, mid+10_000)
			ev.Bids = append(ev.Bids, market.Level{Price: mid - 20_000, Size: market.Micros(1+r.IntN(300)) * market.One})
			evs = append(evs, ev)
		}
	}
	return evs
}

func runStream(t testing.TB, path string, evs []market.Event) []market.Intent {
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.NewInstance([]Binding{{Name: "main", Market: benchCond}})
	if err != nil {
		t.Fatal(err)
	}
	st := newTestState()
	var all, out []market.Intent
	for i := range evs {
		st.Apply(&evs[i])
		if out, err = in.Decide(&evs[i], st, out[:0]); err != nil {
			t.Fatal(err)
		}
		all = append(all, out...)
	}
	return all
}

// TestDecideIsDeterministic runs every example twice over the same random stream.
func TestDecideIsDeterministic(t *testing.T) {
	for _, name := range []string{"quoter", "meanrev", "momentum", "arb"} {
		t.Run(name, func(t *testing.T) {
			path := "../agents/examples/" + name + "/strategy.yaml"
			evs := randomStream(42, 2000)
			a, b := runStream(t, path, evs), runStream(t, path, evs)
			if !reflect.DeepEqual(a, b) {
				t.Fatal("same events, different intents")
			}
		})
	}
}

// TestExamplesRunOnTheFastPath keeps the examples off expr's VM (see exprenv): every
// expression they contain compiles to the allocation-free fast path.
func TestExamplesRunOnTheFastPath(t *testing.T) {
	for _, name := range []string{"quoter", "meanrev", "momentum", "arb"} {
		s, err := Load("../agents/examples/" + name + "/strategy.yaml")
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, p *exprenv.Program) {
			if p == nil {
				return
			}
			if _, c := p.Constant(); !c && !p.Fast() {
				t.Errorf("%s: %s: %q runs on the VM", name, what, p.Source())
			}
		}
		for _, v := range s.vars {
			check("var "+v.name, v.prog)
		}
		for _, q := range s.quotes {
			check("quote "+q.id, q.price.p)
			check("quote "+q.id, q.size.p)
			check("quote "+q.id, q.when.p)
		}
		for _, r := range s.rules {
			check("rule "+r.id, r.when.p)
			for _, tk := range r.takes {
				check("rule "+r.id, tk.price.p)
				check("rule "+r.id, tk.size.p)
			}
		}
	}
}

func TestDecideDoesNotAllocate(t *testing.T) {
	s, _ := Load("../agents/examples/quoter/strategy.yaml")
	in, _ := s.NewInstance([]Binding{{Name: "main", Market: benchCond}})
	st := newTestState()
	ev := book(1_700_000_000_000, 450_000, 480_000)
	st.Apply(&ev)
	out := make([]market.Intent, 0, 8)
	out, _ = in.Decide(&ev, st, out[:0])
	change := market.Event{Kind: market.EventPriceChange, Market: benchCond, Changes: []market.LevelChange{{Token: benchYes, Side: market.Buy, Price: 450_000}}}
	i := 0
	n := testing.AllocsPerRun(500, func() {
		i++
		change.Time = ev.Time + int64(i)*100
		change.Changes[0].Size = market.Micros(1+i%50) * market.One
		st.Apply(&change)
		out, _ = in.Decide(&change, st, out[:0])
	})
	if n != 0 {
		t.Fatalf("Decide allocates %v times per book event", n)
	}
}

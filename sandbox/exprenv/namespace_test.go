package exprenv

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// nsEnv is an environment with namespaces: two "other markets", a feed with a
// method, an open namespace over a real field.
type nsEnv struct {
	Yes  testToken `expr:"yes"`
	Ev   nsEvent   `expr:"event"`
	Time int64     `expr:"time"`
	X    *nsHidden `expr:"@x"`
}

type nsEvent struct {
	Kind   string  `expr:"kind"`
	YesSum float64 `expr:"@yes_sum"`
}

type nsHidden struct {
	M0 *testToken `expr:"m0"`
	M1 *testToken `expr:"m1"`
	F0 nsFeed     `expr:"f0"`
	C0 float64    `expr:"c0"`
	C1 float64    `expr:"c1"`
}

type nsFeed struct {
	Price float64 `expr:"price"`
	Time  int64   `expr:"time"`
}

func newNSEnv(t testing.TB, calls *[]string) *Env {
	t.Helper()
	slot := 0
	env, err := New(Config{
		Env:       nsEnv{},
		Consts:    map[string]any{"edge": 0.01},
		Durations: true,
		Namespaces: map[string]Namespace{
			"markets": {Members: map[string]string{"main": "@x.m0", "hedge": "@x.m1"}, What: "market slot", Declare: "markets: [NAME, …]"},
			"feeds": {Members: map[string]string{"btc": "@x.f0"}, What: "feed", Declare: "feeds: [NAME, …]",
				Methods: func(target, name string, args []float64) (string, error) {
					if name != "change" || len(args) != 1 {
						return "", fmt.Errorf("feeds have no method %s with %d arguments", name, len(args))
					}
					*calls = append(*calls, fmt.Sprintf("%s.%s(%g)", target, name, args[0]))
					p := fmt.Sprintf("@x.c%d", slot)
					slot++
					return p, nil
				}},
			"signals": {What: "signal", Declare: "signals: [NAME, …]"},
			"event":   {Members: map[string]string{"yes_sum": "event.@yes_sum"}, Open: true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func nsSample() nsEnv {
	return nsEnv{Yes: testToken{Bid: 0.4, Ask: 0.42}, Ev: nsEvent{Kind: "book", YesSum: 1.03}, Time: 90_000,
		X: &nsHidden{M0: &testToken{Bid: 0.3, Ask: 0.35}, M1: &testToken{Bid: 0.6, Ask: math.NaN()},
			F0: nsFeed{Price: 101_000, Time: 89_000}, C0: -250, C1: 7}}
}

func TestNamespacesReadTheirMembersOnBothPaths(t *testing.T) {
	var calls []string
	env := newNSEnv(t, &calls)
	e := nsSample()
	tests := []struct {
		src  string
		kind Kind
		want any
	}{
		{"markets.hedge.bid - markets.main.ask", Float, 0.25},
		{`markets["hedge"].bid`, Float, 0.6},
		{"markets.hedge.ask > 0", Bool, false}, // NaN: every comparison false
		{"event.yes_sum - 1", Float, 0.030000000000000027},
		{`event.kind == "book"`, Bool, true},
		{"feeds.btc.price / 1000", Float, 101.0},
		{"time - feeds.btc.time > 500ms", Bool, true},
		{"time - feeds.btc.time < 1m", Bool, true},
		{"feeds.btc.change(1m) < 0", Bool, true},
		{"feeds.btc.change(1h30m) + 1", Float, 8.0},
		{"1.5s + 250ms", Float, 1750.0},
		{`"30s" == "30s"`, Bool, true}, // not a duration inside a string
	}
	var ev Evaluator
	for _, tt := range tests {
		p, err := env.Compile(tt.src, Origin{File: "s.yaml", Line: 1, Col: 1}, tt.kind)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		if _, c := p.Constant(); !c && !p.Fast() {
			t.Errorf("%s: not on the fast path", tt.src)
		}
		var got any
		if tt.kind == Float {
			got, err = ev.Float(p, e)
		} else {
			got, err = ev.Bool(p, e)
		}
		if err != nil || got != tt.want {
			t.Errorf("%s = %v, %v; want %v", tt.src, got, err, tt.want)
		}
	}
	if want := []string{"@x.f0.change(60000)", "@x.f0.change(5.4e+06)"}; strings.Join(calls, " ") != strings.Join(want, " ") {
		t.Errorf("method calls %v, want %v", calls, want)
	}
}

func TestNamespaceNamesAreRecorded(t *testing.T) {
	var calls []string
	p, err := newNSEnv(t, &calls).Compile("markets.hedge.bid + feeds.btc.change(60s) + event.yes_sum", Origin{}, Float)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"markets", "markets.hedge", "markets.hedge.bid", "feeds.btc", "event.yes_sum"} {
		if !p.Uses(n) {
			t.Errorf("Names() = %v: no %s", p.Names(), n)
		}
	}
}

func TestNamespaceErrorsArePositionedAndHelpful(t *testing.T) {
	var calls []string
	env := newNSEnv(t, &calls)
	tests := []struct{ src, want string }{
		{"markets.hegde.bid", "markets.hegde: unknown market slot hegde (did you mean hedge?)"},
		{"markets.zzzzzz.bid", "unknown market slot zzzzzz (market slots: hedge, main)"},
		{"signals.model > 0.5", "signals.model: no signal is declared (declare it: signals: [NAME, …])"},
		{"markets > 0", "markets is read by name: markets.NAME, NAME a market slot (hedge, main)"},
		{"feeds.btc.ema(60s)", "feeds have no method ema with 1 arguments"},
		{"feeds.btc.change(yes.bid)", "change(…): arguments must be constants"},
		{"time > 1.0001ms", "duration 1.0001ms must be a whole number of milliseconds"},
		{"time > 400d", "duration 400d must be a whole number of milliseconds from 1ms to 365d"},
		{"let markets = 1; markets", "let markets: markets is a built-in name"},
	}
	for _, tt := range tests {
		_, err := env.Compile(tt.src, Origin{File: "s.yaml", Line: 3, Col: 10}, Any)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v\nwant %q", tt.src, err, tt.want)
		}
	}
	// the caret of an unknown member points at it
	_, err := env.Compile("yes.bid + markets.hegde.bid", Origin{File: "s.yaml", Line: 3, Col: 10}, Float)
	var e *Error
	if !asError(err, &e) || e.Line != 3 || e.Col != 28 {
		t.Errorf("position: %v", err)
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}

func TestDurationLiteralsKeepEveryOtherPosition(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want map[int]int64
		out  string
	}{
		{"a > 30s", map[int]int64{4: 30_000}, "a > 0  "},
		{"x1s + 2ms*f3s", map[int]int64{6: 2}, "x1s + 0  *f3s"},
		{"1h30m-1.5m", map[int]int64{0: 5_400_000, 6: 90_000}, "0    -0   "},
		{"'5s' + 5s", map[int]int64{7: 5000}, "'5s' + 0 "},
		{"0x1f + 1.5 + .5s", nil, "0x1f + 1.5 + .5s"},
		{"é > 5s", map[int]int64{4: 5000}, "é > 0 "},
	} {
		out, found, _, err := scanDurations(tt.src)
		if err != nil || out != tt.out || fmt.Sprint(found) != fmt.Sprint(tt.want) {
			t.Errorf("scanDurations(%q) = %q %v %v; want %q %v", tt.src, out, found, err, tt.out, tt.want)
		}
	}
}

func TestNamespacesAreValidated(t *testing.T) {
	for name, cfg := range map[string]Config{
		"member path":        {Env: nsEnv{}, Namespaces: map[string]Namespace{"markets": {Members: map[string]string{"a": "@x.m9"}}}},
		"clash with a field": {Env: nsEnv{}, Namespaces: map[string]Namespace{"yes": {}}},
		"open, not a field":  {Env: nsEnv{}, Namespaces: map[string]Namespace{"feeds": {Open: true}}},
		"member name":        {Env: nsEnv{}, Namespaces: map[string]Namespace{"m": {Members: map[string]string{"a.b": "@x.m0"}}}},
		"const clash":        {Env: nsEnv{}, Consts: map[string]any{"m": 1}, Namespaces: map[string]Namespace{"m": {}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzDurations(f *testing.F) {
	for _, s := range []string{"30s", "1h30m", "'5s'", "0x1f", "1.5ms", "x1s", "é5s", "`a\\`5s", "\"\\\"5s\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out, found, _, err := scanDurations(src)
		if err != nil {
			return
		}
		if len([]rune(out)) != len([]rune(src)) {
			t.Fatalf("%q became %q: positions moved", src, out)
		}
		for off, ms := range found {
			if ms < 1 || ms > MaxDuration || []rune(out)[off] != '0' {
				t.Fatalf("%q: literal at %d = %d", src, off, ms)
			}
		}
	})
}

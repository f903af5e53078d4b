package strategy

import (
	"math"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// TestReusedQuotesEqualAFullEvaluation runs every example over random streams twice,
// reusing and never reusing, and compares every evaluation's intents: a reuse must
// give exactly what a full evaluation gives (docs/design/0106).
func TestReusedQuotesEqualAFullEvaluation(t *testing.T) {
	for _, name := range []string{"quoter", "meanrev", "momentum", "arb"} {
		t.Run(name, func(t *testing.T) {
			path := "../agents/examples/" + name + "/strategy.yaml"
			reusing, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reusing.reuse {
				t.Fatal("the example does not reuse")
			}
			full, _ := Load(path)
			full.reuse = false
			for seed := uint64(1); seed <= 3; seed++ {
				evs := randomStream(seed, 3000)
				// Trade prints repeated with nothing else between them: inputs
				// unchanged, so reused.
				for i := 0; i < len(evs); i += 7 {
					if evs[i].Kind == market.EventLastTrade {
						dup := evs[i]
						evs = append(evs[:i+1], append([]market.Event{dup, dup}, evs[i+1:]...)...)
					}
				}
				ra, rb := newRun(t, reusing), newRun(t, full)
				for i := range evs {
					a, b := ra.decide(t, &evs[i]), rb.decide(t, &evs[i])
					if !reflect.DeepEqual(a, b) {
						t.Fatalf("seed %d event %d (%s): reused %v, full %v", seed, i, evs[i].Kind, a, b)
					}
				}
				if ra.in.ms[0].snap.reused == 0 {
					t.Fatal("nothing was ever reused")
				}
				t.Logf("seed %d: %d of %d evaluations reused", seed, ra.in.ms[0].snap.reused, len(evs))
			}
		})
	}
}

type streamRun struct {
	in  *Instance
	st  *market.State
	out []market.Intent
}

func newRun(t *testing.T, s *Strategy) *streamRun {
	in, err := s.NewInstance([]Binding{{Name: "main", Market: benchCond}})
	if err != nil {
		t.Fatal(err)
	}
	return &streamRun{in: in, st: newTestState()}
}

func (r *streamRun) decide(t *testing.T, ev *market.Event) []market.Intent {
	r.st.Apply(ev)
	var err error
	if r.out, err = r.in.Decide(ev, r.st, r.out[:0]); err != nil {
		t.Fatal(err)
	}
	return append([]market.Intent(nil), r.out...)
}

// TestReuseReadsRulesOutOfEveryName checks which expressions keep a strategy from
// reusing: reads of time, orders, the event or market.ends_in, and GTD quotes.
func TestReuseReadsRulesOutOfEveryName(t *testing.T) {
	base, err := Load("../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var progs = []string{"yes.bid + 0.01", "time > 0", "len(orders) > 0", "event.kind == 'book'",
		"market.ends_in > 60", "yes.last > 0.5"}
	want := []struct{ ok, last bool }{{true, false}, {false, false}, {false, false}, {false, false}, {false, false}, {true, true}}
	for i, src := range progs {
		p, err := base.env.Compile(src, base.vars[0].prog.Origin(), 0)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		ok, last := reusable(append(progsOf(base), p), base.quotes)
		if ok != want[i].ok || last != want[i].last {
			t.Errorf("%s: reuse=%v readsLast=%v, want %v %v", src, ok, last, want[i].ok, want[i].last)
		}
	}
	gtd := append([]compiledQuote(nil), base.quotes...)
	gtd[0].typ = market.GTD
	if ok, _ := reusable(progsOf(base), gtd); ok {
		t.Error("a GTD quote reuses")
	}
}

func progsOf(s *Strategy) (ps []*exprenv.Program) {
	for _, v := range s.vars {
		ps = append(ps, v.prog)
	}
	for _, q := range s.quotes {
		ps = append(ps, q.price.p, q.size.p, q.when.p)
	}
	return ps
}

// TestSameComparesEveryField changes each field of the environment's structs in
// turn and checks that the comparison sees it (a field added later and forgotten in
// sameToken, sameMarket or sameAccount fails here).
func TestSameComparesEveryField(t *testing.T) {
	skip := map[string]bool{"EndsIn": true, "Time": true, "Orders": true}
	lastFields := map[string]bool{"Last": true, "LastSize": true, "LastSide": true, "LastTime": true}
	check := func(name string, zero any, same func(a, b reflect.Value) bool) {
		typ := reflect.TypeOf(zero)
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if skip[f.Name] {
				continue
			}
			a, b := reflect.New(typ).Elem(), reflect.New(typ).Elem()
			fv := b.Field(i)
			switch fv.Kind() {
			case reflect.Float64:
				fv.SetFloat(1)
			case reflect.Bool:
				fv.SetBool(true)
			case reflect.String:
				fv.SetString("x")
			case reflect.Int64:
				fv.SetInt(1)
			case reflect.Array:
				fv.Index(fv.Len() - 1).SetFloat(1)
			default:
				t.Fatalf("%s.%s: kind %s not covered by this test", name, f.Name, fv.Kind())
			}
			if same(a, b) {
				t.Errorf("%s.%s: a change is not seen", name, f.Name)
			}
		}
	}
	check("Token", Token{}, func(a, b reflect.Value) bool {
		x, y := a.Addr().Interface().(*Token), b.Addr().Interface().(*Token)
		return sameToken(x, y, true, true)
	})
	check("MarketInfo", MarketInfo{}, func(a, b reflect.Value) bool {
		return sameMarket(a.Addr().Interface().(*MarketInfo), b.Addr().Interface().(*MarketInfo))
	})
	check("Account", Account{}, func(a, b reflect.Value) bool {
		return sameAccount(a.Addr().Interface().(*Account), b.Addr().Interface().(*Account))
	})
	// Without last-trade reads, only the last-trade fields are ignored.
	for f := range lastFields {
		var a, b Token
		reflect.ValueOf(&b).Elem().FieldByName(f).Set(reflect.ValueOf(&a).Elem().FieldByName(f))
		if !sameToken(&a, &b, false, true) {
			t.Errorf("%s: equal tokens differ", f)
		}
	}
	if nan := math.NaN(); !sameFloat(nan, nan) || sameFloat(nan, 0) || sameFloat(0, math.Copysign(0, -1)) {
		t.Error("NaN or signed zero handling")
	}
}

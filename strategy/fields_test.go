package strategy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/sandbox/exprenv/exprenvtest"
)

// TestEveryFieldHasATypedRead checks, for every field of the environment an
// expression may name (arrays and orders aside), that envField gives a read of the
// right type returning exactly that field: each field is set to a value no other
// field has, through reflection, and read back.
func TestEveryFieldHasATypedRead(t *testing.T) {
	var yes, no Token
	var mkt MarketInfo
	var evi EventInfo
	var acct Account
	var slots Slots
	var agg EventAgg
	var x Inputs
	var others [MaxCrossSlots]Other
	var otherParts [MaxCrossSlots]struct {
		yes, no Token
		mkt     MarketInfo
	}
	var feeds [MaxFeeds]Feed
	var op []*Other
	var fp []*Feed
	for i := range others {
		others[i] = Other{Yes: &otherParts[i].yes, No: &otherParts[i].no, Market: &otherParts[i].mkt}
		op = append(op, &others[i])
	}
	for i := range feeds {
		fp = append(fp, &feeds[i])
	}
	x.setPointers(op, fp)
	env := Env{Yes: &yes, No: &no, Market: &mkt, Event: &evi, Account: &acct, Slots: &slots, Inputs: &x, Agg: &agg}
	var boxed any = env
	n := 0
	// walk checks every scalar field below v (a struct) at path.
	var walk func(v reflect.Value, path []string)
	walk = func(v reflect.Value, path []string) {
		for j := 0; j < v.NumField(); j++ {
			f := v.Type().Field(j)
			if !f.IsExported() {
				continue
			}
			fv := v.Field(j)
			p := append(append([]string(nil), path...), f.Tag.Get("expr"))
			if fv.Kind() == reflect.Pointer {
				walk(fv.Elem(), p)
				continue
			}
			t.Run(strings.Join(p, "."), func(t *testing.T) {
				n++
				r := envField(p)
				if !exprenvtest.CheckRead(t, fv, r, boxed, n) && r != nil {
					t.Fatalf("a read for a %s field", fv.Kind())
				}
			})
		}
	}
	walk(reflect.ValueOf(env), nil)
	if n < 150+MaxCrossSlots*(2*25+12)+MaxFeeds*2+MaxSignals+MaxFeedCalls {
		t.Fatalf("only %d fields checked", n)
	}
}

// TestExamplesReadFieldsWithoutReflection checks that every field the examples'
// expressions read on the fast path has a typed read.
func TestExamplesReadFieldsWithoutReflection(t *testing.T) {
	var missing []string
	asked := 0
	fieldReader = func(path []string) any {
		asked++
		r := envField(path)
		if r == nil {
			missing = append(missing, strings.Join(path, "."))
		}
		return r
	}
	defer func() { fieldReader = envField }()
	for _, ex := range []string{"quoter", "arb", "momentum", "meanrev"} {
		if _, err := Load("../agents/examples/" + ex + "/strategy.yaml"); err != nil {
			t.Fatal(err)
		}
	}
	if asked == 0 || len(missing) > 0 {
		t.Fatalf("%d fields asked for; read through reflection: %v", asked, missing)
	}
}

// TestTypedReadsOfAnythingButAnEnvPanic checks that a typed read given something
// other than an Env panics, as the type assertion it replaces (envp) did, rather
// than reading memory that is not an Env.
func TestTypedReadsOfAnythingButAnEnvPanic(t *testing.T) {
	var tok Token
	for _, v := range []any{nil, 1.5, &Env{Yes: &tok}, Other{Yes: &tok}, struct{ Yes *Token }{&tok}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("reading yes.bid of a %T did not panic", v)
				}
			}()
			envField([]string{"yes", "bid"}).(func(any) float64)(v)
		}()
	}
	env := Env{Yes: &tok}
	tok.Bid = 0.42
	if got := envp(env).Yes.Bid; got != 0.42 || envp(env).Yes != &tok {
		t.Errorf("envp of an Env reads %v", got)
	}
}

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
	env := Env{Yes: &yes, No: &no, Market: &mkt, Event: &evi, Account: &acct, Slots: &slots}
	var boxed any = env
	n := 0
	envT := reflect.TypeOf(env)
	for i := 0; i < envT.NumField(); i++ {
		top := envT.Field(i)
		sv := reflect.ValueOf(env).Field(i).Elem()
		for j := 0; j < sv.NumField(); j++ {
			f := sv.Type().Field(j)
			if !f.IsExported() {
				continue
			}
			path := []string{top.Tag.Get("expr"), f.Tag.Get("expr")}
			t.Run(path[0]+"."+path[1], func(t *testing.T) {
				n++
				fv := sv.Field(j)
				r := envField(path)
				if !exprenvtest.CheckRead(t, fv, r, boxed, n) && r != nil {
					t.Fatalf("a read for a %s field", fv.Kind())
				}
			})
		}
	}
	if n < 150 {
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

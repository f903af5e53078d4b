package policies

import (
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/sandbox/exprenv/exprenvtest"
)

// TestEveryGuardFieldHasATypedRead sets each field of Env, through reflection, to a
// value no other field has and checks that guardField's read gives it back, with
// the type exprenv expects for the field's kind.
func TestEveryGuardFieldHasATypedRead(t *testing.T) {
	var env Env
	var boxed any = envBox{E: &env}
	ev := reflect.ValueOf(&env).Elem()
	for i := 0; i < ev.NumField(); i++ {
		f := ev.Type().Field(i)
		name := f.Tag.Get("expr")
		t.Run(name, func(t *testing.T) {
			fv := ev.Field(i)
			r := guardField([]string{"@e", name})
			if !exprenvtest.CheckRead(t, fv, r, boxed, i) {
				t.Fatalf("a %s field: give it a read", fv.Kind())
			}
		})
	}
	if guardField([]string{"@e", "nope"}) != nil || guardField([]string{"price"}) != nil {
		t.Fatal("a read for a path that is no field")
	}
}

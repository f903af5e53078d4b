package policies

import (
	"reflect"
	"strconv"
	"testing"
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
			var got, want any
			switch fv.Kind() {
			case reflect.Float64:
				fv.SetFloat(float64(i) + 0.25)
				want = fv.Float()
				if g, ok := r.(func(any) float64); ok {
					got = g(boxed)
				}
			case reflect.Int64, reflect.Int:
				fv.SetInt(int64(i) + 1000)
				want = fv.Int()
				if g, ok := r.(func(any) int64); ok {
					got = g(boxed)
				}
			case reflect.String:
				fv.SetString("v" + strconv.Itoa(i))
				want = fv.String()
				if g, ok := r.(func(any) string); ok {
					got = g(boxed)
				}
			case reflect.Bool:
				fv.SetBool(true)
				want = true
				if g, ok := r.(func(any) bool); ok {
					got = g(boxed)
				}
				fv.SetBool(false)
				if g, ok := r.(func(any) bool); ok && g(boxed) {
					got = "true after false"
				}
			default:
				t.Fatalf("a %s field: give it a read", fv.Kind())
			}
			if got != want {
				t.Fatalf("read gives %v (%T), want %v", got, r, want)
			}
		})
	}
	if guardField([]string{"@e", "nope"}) != nil || guardField([]string{"price"}) != nil {
		t.Fatal("a read for a path that is no field")
	}
}

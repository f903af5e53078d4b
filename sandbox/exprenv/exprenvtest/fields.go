// Package exprenvtest helps test exprenv.FieldReader implementations: that the
// typed read a reader gives for a field returns exactly that field.
package exprenvtest

import (
	"reflect"
	"strconv"
	"testing"
)

// CheckRead sets fv — a settable field of the environment that boxed holds (or
// points into) — to a value derived from n that no other field of a check has,
// then reads it back through r, the read function a FieldReader gave for the field
// (func(any) float64, int64, string or bool, by the field's kind), and fails t
// unless it gives exactly that value. A bool is checked both ways. For a kind
// with no typed read it changes nothing and returns false.
func CheckRead(t testing.TB, fv reflect.Value, r any, boxed any, n int) bool {
	t.Helper()
	var got, want any
	switch fv.Kind() {
	case reflect.Float64:
		fv.SetFloat(float64(n) + 0.25)
		want = fv.Float()
		if g, ok := r.(func(any) float64); ok {
			got = g(boxed)
		}
	case reflect.Int64, reflect.Int:
		fv.SetInt(int64(n) + 1000)
		want = fv.Int()
		if g, ok := r.(func(any) int64); ok {
			got = g(boxed)
		}
	case reflect.String:
		fv.SetString("v" + strconv.Itoa(n))
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
		return false
	}
	if got != want {
		t.Fatalf("read gives %v (%T), want %v", got, r, want)
	}
	return true
}

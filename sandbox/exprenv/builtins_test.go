package exprenv

import (
	"reflect"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/conf"
)

// TestDisabledBuiltinsAreAllButBuiltins checks that an Env's options leave expr's
// configuration with exactly the builtins disabled that DisableAllBuiltins followed
// by EnableBuiltin of each of Builtins leaves, and with the same builtins available.
func TestDisabledBuiltinsAreAllButBuiltins(t *testing.T) {
	want := conf.CreateNew()
	expr.DisableAllBuiltins()(want)
	for _, b := range Builtins {
		expr.EnableBuiltin(b)(want)
	}
	got := conf.CreateNew()
	for _, o := range newTestEnv(t).opts {
		o(got)
	}
	if !reflect.DeepEqual(got.Disabled, want.Disabled) {
		t.Fatalf("disabled %v, want %v", got.Disabled, want.Disabled)
	}
	if len(got.Disabled) == 0 || got.Disabled["now"] != true || got.Disabled["abs"] {
		t.Fatalf("disabled %v: now must be, abs must not", got.Disabled)
	}
}

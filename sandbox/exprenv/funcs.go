package exprenv

import (
	"fmt"
	"math"
)

// helper is one function added to the sandbox.
type helper struct {
	name  string
	fn    func(args ...any) (any, error)
	types []any
}

var helpers = []helper{
	{"clamp", clamp, []any{new(func(float64, float64, float64) float64)}},
	{"round_tick", tickFn(math.Round), []any{new(func(float64, float64) float64)}},
	{"floor_tick", tickFn(math.Floor), []any{new(func(float64, float64) float64)}},
	{"ceil_tick", tickFn(math.Ceil), []any{new(func(float64, float64) float64)}},
	{"nz", nz, []any{new(func(float64, float64) float64)}},
	{"ok", okFn, []any{new(func(...float64) bool)}},
	{"sqrt", unary(math.Sqrt), []any{new(func(float64) float64)}},
	{"log", unary(math.Log), []any{new(func(float64) float64)}},
	{"exp", unary(math.Exp), []any{new(func(float64) float64)}},
}

// Helpers returns the names of the helper functions the sandbox adds to expr's
// builtins, in documentation order.
func Helpers() []string {
	out := make([]string, len(helpers))
	for i, h := range helpers {
		out[i] = h.name
	}
	return out
}

// num converts an argument to float64. The checker guarantees numeric arguments; the
// error is for the impossible case, and becomes a positioned runtime error.
func num(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case float32:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	}
	return 0, fmt.Errorf("not a number: %T", v)
}

func nums(args []any, n int) ([3]float64, error) {
	var out [3]float64
	if len(args) != n {
		return out, fmt.Errorf("want %d arguments, got %d", n, len(args))
	}
	for i, a := range args {
		v, err := num(a)
		if err != nil {
			return out, err
		}
		out[i] = v
	}
	return out, nil
}

// clamp(x, lo, hi) limits x to [lo, hi]; NaN stays NaN.
func clamp(args ...any) (any, error) {
	v, err := nums(args, 3)
	if err != nil {
		return nil, err
	}
	return Clamp(v[0], v[1], v[2]), nil
}

// Clamp limits x to [lo, hi] (lo wins if lo > hi); NaN stays NaN.
func Clamp(x, lo, hi float64) float64 {
	if x > hi {
		x = hi
	}
	if x < lo {
		x = lo
	}
	return x
}

// SnapMicros converts x to a whole number of millionths, rounding to the nearest (half
// away from zero). This removes binary floating-point noise (0.3−0.1 is
// 0.19999999999999998, which snaps to 199999.99999999997 → 200000) before any
// directional rounding. It reports false for NaN, ±Inf and magnitudes of 2^53
// millionths or more.
func SnapMicros(x float64) (int64, bool) {
	m := math.Round(x * 1e6)
	if math.IsNaN(m) || math.Abs(m) >= 1<<53 {
		return 0, false
	}
	return int64(m), true
}

// RoundTick rounds x to a multiple of tick with round (math.Round, math.Floor or
// math.Ceil). Both are first snapped to whole millionths (see SnapMicros) and the
// rounding is done in exact integer arithmetic, so 0.45 floor-rounded to 0.01 is 0.45,
// never 0.44. NaN, ±Inf, a tick that is not positive or a result out of range give NaN.
func RoundTick(x, tick float64, round func(float64) float64) float64 {
	xm, ok1 := SnapMicros(x)
	tm, ok2 := SnapMicros(tick)
	if !ok1 || !ok2 || tm <= 0 {
		return math.NaN()
	}
	q, r := xm/tm, xm%tm // Go truncates toward zero
	if r != 0 {
		// the exact quotient is q+f with f = r/tm in (−1, 1) \ {0}; rounding f gives
		// the step (floor, ceil or half away from zero, whatever the sign)
		q += int64(round(float64(r) / float64(tm)))
	}
	return float64(q*tm) / 1e6
}

func tickFn(round func(float64) float64) func(args ...any) (any, error) {
	return func(args ...any) (any, error) {
		v, err := nums(args, 2)
		if err != nil {
			return nil, err
		}
		return RoundTick(v[0], v[1], round), nil
	}
}

// nz(x, d) is x unless x is NaN or ±Inf, then d (Pine Script's nz).
func nz(args ...any) (any, error) {
	v, err := nums(args, 2)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(v[0]) || math.IsInf(v[0], 0) {
		return v[1], nil
	}
	return v[0], nil
}

// ok(x, ...) reports whether every argument is a finite number.
func okFn(args ...any) (any, error) {
	for _, a := range args {
		v, err := num(a)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false, nil
		}
	}
	return true, nil
}

func unary(f func(float64) float64) func(args ...any) (any, error) {
	return func(args ...any) (any, error) {
		v, err := nums(args, 1)
		if err != nil {
			return nil, err
		}
		return f(v[0]), nil
	}
}

package exprenv

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr/vm"
)

// Evaluator runs programs with one reusable VM, so that evaluation does not allocate
// a VM per call. The zero value is ready to use. An Evaluator is not safe for
// concurrent use: give each goroutine (each agent loop) its own.
type Evaluator struct {
	// MemoryBudget bounds each evaluation (see DefaultMemoryBudget, used if zero).
	MemoryBudget uint
	vm           vm.VM
}

// Run evaluates p against env, which must be a value of the Config.Env type (pass the
// struct by value: a pointer is slower). A panic during evaluation or an error of a
// helper is returned as an *Error with Runtime set; it never propagates.
func (e *Evaluator) Run(p *Program, env any) (out any, err error) {
	if p.isConst {
		return p.value, nil
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, p.runtimeError(fmt.Errorf("%v", r))
		}
	}()
	e.vm.MemoryBudget = e.MemoryBudget
	if e.vm.MemoryBudget == 0 {
		e.vm.MemoryBudget = DefaultMemoryBudget
	}
	out, err = e.vm.Run(p.prog, env)
	if err != nil {
		return nil, p.runtimeError(err)
	}
	return out, nil
}

// Bool evaluates a program compiled with Bool.
func (e *Evaluator) Bool(p *Program, env any) (bool, error) {
	if p.fbool != nil && reflect.TypeOf(env) == p.envType {
		if p.unchecked {
			return p.fbool(env), nil
		}
		if b, ok := fastBoolRun(p.fbool, env); ok {
			return b, nil
		}
	}
	out, err := e.Run(p, env)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, p.runtimeError(fmt.Errorf("expression gives %T, not a bool", out))
	}
	return b, nil
}

// Float evaluates a program compiled with Float (or one whose result is a number).
// NaN and ±Inf are returned as they are; deciding what they mean is the caller's job.
func (e *Evaluator) Float(p *Program, env any) (float64, error) {
	if p.fnum != nil && reflect.TypeOf(env) == p.envType {
		if p.unchecked {
			return p.fnum(env), nil
		}
		if x, ok := fastNumRun(p.fnum, env); ok {
			return x, nil
		}
	}
	out, err := e.Run(p, env)
	if err != nil {
		return 0, err
	}
	f, err := num(out)
	if err != nil {
		return 0, p.runtimeError(fmt.Errorf("expression gives %T, not a number", out))
	}
	return f, nil
}

// runtimeError positions err (usually expr's *file.Error with the failing
// instruction's location) in the program's file.
func (p *Program) runtimeError(err error) *Error {
	e := fromExpr(p.origin, p.src, err, true)
	if strings.Contains(e.Message, "memory budget exceeded") {
		e.Message = "memory budget exceeded"
		e.Err = ErrMemoryBudget
	}
	return e
}

// fastNumRun runs a fast-path program; ok is false if it panicked (a nil pointer on a
// field path, an environment of another type), in which case the caller runs the VM,
// which reports the problem as a positioned error.
func fastNumRun(f fastNum, env any) (x float64, ok bool) {
	defer func() {
		if recover() != nil {
			x, ok = 0, false
		}
	}()
	return f(env), true
}

func fastBoolRun(f fastBool, env any) (b bool, ok bool) {
	defer func() {
		if recover() != nil {
			b, ok = false, false
		}
	}()
	return f(env), true
}

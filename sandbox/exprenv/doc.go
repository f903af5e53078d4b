// Package exprenv is the restricted expression environment that strategy files and
// custom guards run in. It wraps github.com/expr-lang/expr with the project's sandbox
// rules, so that every expression in pitboss is compiled and evaluated the same way.
//
// # Using it
//
// A caller describes its environment once with a typed Go struct and builds an [Env]:
//
//	type GuardEnv struct {
//		Price float64 `expr:"price"`
//		Size  float64 `expr:"size"`
//	}
//	env, err := exprenv.New(exprenv.Config{Env: GuardEnv{}, Consts: map[string]any{"max_size": 50.0}})
//	prog, err := env.Compile("size > max_size", exprenv.Origin{File: "agent.yaml", Line: 12, Col: 14}, exprenv.Bool)
//	var ev exprenv.Evaluator                              // one per goroutine; reuse it
//	deny, err := ev.Bool(prog, GuardEnv{Price: .4, Size: 80}) // pass the struct by value
//
// Compile once at load, evaluate many times. A [*Program] is immutable and safe for
// concurrent use; an [Evaluator] holds a reusable VM and is not (one per goroutine,
// e.g. one per agent loop).
//
// # Two evaluation paths
//
// expr checks and optimizes every expression. A Float or Bool program made only of
// numbers, bools, field reads (through structs, pointers and constant array indexes),
// arithmetic, comparisons (strings: == and != only), logic, the ternary, abs, floor,
// ceil, round, min, max and the helpers below is then compiled once more into Go
// closures over float64 and bool ([Program.Fast]): it runs without expr's VM, without
// boxing and without allocating (≈10–70 ns). Everything else runs on expr's VM
// (≈60–200 ns, a few small allocations per arithmetic operation). The two paths give
// identical results, NaN, ±Inf and −0 included; a generated-expression test and a fuzz
// test compare them. Integers on the fast path are carried as float64, exact below
// 2^53. If the fast path meets a nil pointer it defers to the VM, which reports the
// error.
//
// # Sandbox rules
//
//   - Typed: the environment is the struct given in [Config.Env]; unknown names and
//     fields are compile errors, with a "did you mean …?" suggestion.
//   - No clock, no randomness, no I/O: every builtin that reads the clock or the
//     filesystem (now, date, timezone, duration) is disabled, as are the string and
//     JSON/base64 builtins strategies have no use for. Time comes from the event,
//     through a field of the environment. See [Builtins] for what is enabled.
//   - Bounded: a node limit at compile time ([Config.MaxNodes], default
//     [DefaultMaxNodes]) and a memory budget per evaluation ([Evaluator.MemoryBudget],
//     default [DefaultMemoryBudget]).
//   - Never crashes the caller: a panic during evaluation (a type assertion, an index
//     out of range, a helper's error) is recovered and returned as an [*Error].
//
// # Names
//
// [Config.Consts] substitutes constants at compile time (strategy parameters: they are
// folded by expr's optimizer). [Config.Aliases] maps user-chosen names to fields of the
// environment struct, typically hidden fields whose expr tag is not a valid identifier
// (e.g. `expr:"@3"`), so that user-defined variables are read as fast as built-in
// fields. A `let` binding may not reuse one of these names.
//
// # Helpers
//
// clamp(x, lo, hi); round_tick/floor_tick/ceil_tick(x, tick) (with [Config.TickField]
// set, the one-argument form uses that field as the tick); nz(x, d) (x unless NaN or
// ±Inf, then d); ok(x, ...) (all arguments finite); sqrt, log, exp; plus the enabled
// expr builtins (abs, min, max, floor, ceil, round, len, count, filter, ...).
//
// # Errors and positions
//
// Compile and runtime errors are [*Error] values carrying the position in the file the
// expression came from: an [Origin] says where the expression's first character is
// (and, for YAML block scalars, the indentation of later lines); [OriginOf] computes it
// for a go.yaml.in/yaml/v3 node. Error() renders "file:line:col: message" followed by
// the offending line and a caret.
package exprenv

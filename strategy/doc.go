// Package strategy loads strategy files (YAML; the format is documented for users in
// docs/strategies.md), compiles their expressions once with sandbox/exprenv, and
// evaluates them per event into intents (market.Intent).
//
// # Loading
//
//	s, err := strategy.Load("agents/examples/quoter/strategy.yaml")
//	// err, when the file has problems, is a *CompileError listing every problem
//	// with file:line:col and a caret snippet (Problems []*Problem).
//	s2, err := s.WithParams(map[string]string{"half_spread": "0.03"}) // agent overrides, sweeps
//	name, values, err := s.SweepValues("half_spread=0.01:0.05:0.01")  // --sweep
//
// A *Strategy is immutable and shared; parameters are compile-time constants of its
// expressions, so each set of values is its own Strategy (WithParams, With).
//
// # Running
//
//	in, err := s.NewInstance([]strategy.Binding{{Name: "main", Market: cond}})
//	st.Apply(ev)                          // market.State first (market/state_apply.go)
//	out, err = in.Decide(ev, st, out[:0]) // appends intents; no allocation for them
//
// Decide has the shape the agent loop's Decider interface expects:
//
//	Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error)
//
// An Instance holds the per-agent state (indicators, rule cooldowns, one reusable
// expression VM) and is driven by a single goroutine. Output is deterministic: the
// same file, parameters and event stream give byte-identical intents; nothing reads
// the clock or global randomness.
//
// # Markets
//
// Everything a strategy does happens per bound market: the agent binds one or more
// markets (Binding), and for each event the market it concerns is evaluated with
// yes/no/market bound to that market. A file may declare named slots
// (markets: [main, hedge]) and pin quotes and rules to a slot with market: main.
// Quote keys are "<binding name>/<quote id>", unique per agent.
//
// # Numbers
//
// Inside expressions prices, sizes and amounts are float64 (see
// docs/design/0030-strategy-numbers.md); everything stored stays exact micro-units.
// A quote's price is snapped to the micro-unit and rounded to the tick away from the
// market (BUY down, SELL up), its size down to the lot; a quote whose price or size
// is not valid after rounding is withdrawn.
//
// # Golden tests
//
// testdata/golden/*.txt hold `input ---- expected` cases run by the strategytest
// package: a strategy file plus an event stream, then the intents expected after each
// event. The format reserves `guard ...` input lines and `  guard: ...` expected lines
// for the policies' walker (see package strategytest).
package strategy

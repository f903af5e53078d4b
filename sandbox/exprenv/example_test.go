package exprenv_test

import (
	"fmt"

	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// GuardEnv is what a custom guard's deny_if expression sees.
type GuardEnv struct {
	Price float64 `expr:"price"`
	Size  float64 `expr:"size"`
	Side  string  `expr:"side"`
}

func Example() {
	env, err := exprenv.New(exprenv.Config{
		Env:    GuardEnv{},
		Consts: map[string]any{"max_notional": 25.0},
	})
	if err != nil {
		panic(err)
	}
	deny, err := env.Compile(`side == "BUY" && price * size > max_notional`,
		exprenv.Origin{File: "agent.yaml", Line: 14, Col: 14}, exprenv.Bool)
	if err != nil {
		panic(err)
	}
	var ev exprenv.Evaluator // one per goroutine, reused
	for _, in := range []GuardEnv{{0.40, 50, "BUY"}, {0.60, 50, "BUY"}, {0.60, 50, "SELL"}} {
		d, err := ev.Bool(deny, in)
		fmt.Println(in.Side, in.Price, in.Size, "deny:", d, err)
	}

	// a typo is reported where it is, with a suggestion
	_, err = env.Compile("price * szie > max_notional", exprenv.Origin{File: "agent.yaml", Line: 14, Col: 14}, exprenv.Bool)
	fmt.Println(err)
	// Output:
	// BUY 0.4 50 deny: false <nil>
	// BUY 0.6 50 deny: true <nil>
	// SELL 0.6 50 deny: false <nil>
	// agent.yaml:14:22: unknown name szie (did you mean size?)
	//  | price * szie > max_notional
	//  | ........^
}

package strategy_test

import (
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/strategy"
	"github.com/pitbossdev/pitboss/strategy/strategytest"
)

// An agent loop in miniature: load, bind, then for each event apply it to the state
// and decide.
func Example() {
	s, err := strategy.Load("../agents/examples/quoter/strategy.yaml")
	if err != nil {
		panic(err)
	}
	s, err = s.WithParams(map[string]string{"half_spread": "0.03"})
	if err != nil {
		panic(err)
	}
	cond := market.ConditionID("0xc1")
	in, err := s.NewInstance([]strategy.Binding{{Name: "main", Market: cond}})
	if err != nil {
		panic(err)
	}
	var st market.State
	st.Init()
	st.Markets[cond] = &market.Info{Condition: cond, Tokens: [2]market.TokenID{"101", "102"},
		TickSize: 10_000, MinSize: 5 * market.One, Active: true, AcceptingOrders: true}

	ev := market.Event{Kind: market.EventBook, Time: 1_700_000_000_000, Market: cond, Token: "101",
		Bids: []market.Level{{Price: 450_000, Size: 100 * market.One}},
		Asks: []market.Level{{Price: 490_000, Size: 100 * market.One}}}
	var out []market.Intent
	st.Apply(&ev)
	if out, err = in.Decide(&ev, &st, out[:0]); err != nil {
		panic(err)
	}
	for i := range out {
		fmt.Println(strategytest.FormatIntent(&out[i]))
	}
	// Output:
	// quote main/bid YES BUY 0.44 x10 GTC post_only
	// cancel main/ask YES SELL
	// quote main/ask_no NO BUY 0.5 x10 GTC post_only
}

// Every problem of a file is reported, each with its position.
func ExampleParse() {
	_, err := strategy.Parse("s.yaml", []byte(`
quotes:
  bid:
    side: BUY
    price: yes.bidd - 0.01
    size: 10
    post_onyl: true
`))
	var ce *strategy.CompileError
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Printf("%s: %s\n", p.Position(), p.Message)
		}
	}
	// Output:
	// s.yaml:5:16: type Token has no field bidd (did you mean bid?)
	// s.yaml:7:5: unknown field "post_onyl" in quote bid (did you mean "post_only"?)
}

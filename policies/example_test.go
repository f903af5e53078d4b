package policies_test

import (
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
)

// An agent builds one chain from its file's guards section, sets the geoblock status
// and evaluates every intent against its state; every decision is audited.
func ExampleChain() {
	sink := policies.SinkFunc(func(r policies.Record) { fmt.Println("audit:", r) })
	chain, err := policies.New(policies.Config{MaxOrderNotional: 5 * market.One},
		policies.WithAgent("quoter"), policies.WithSink(sink),
		policies.WithGeoblock(policies.Geoblock{Status: policies.GeoAllowed}))
	if err != nil {
		panic(err)
	}

	st := &market.State{Time: 1_767_225_600_000, Balance: 100 * market.One}
	st.Init()
	st.Markets["0xc1"] = &market.Info{Condition: "0xc1", Tokens: [2]market.TokenID{"11", "12"},
		TickSize: 10_000, MinSize: 5 * market.One, Active: true, AcceptingOrders: true}
	st.Books["11"] = &market.Book{}
	st.Books["11"].Reset([]market.Level{{Price: 440_000, Size: market.One}}, []market.Level{{Price: 460_000, Size: market.One}})

	bid := market.Intent{Kind: market.IntentQuote, Key: "bid", Token: "11", Side: market.Buy, Price: 450_000, Size: 10 * market.One}
	if d := chain.Evaluate(st, &bid); d.Allowed {
		fmt.Println("placed")
	}
	bid.Price = 455_000 // off the 0.01 tick: denied with the venue's own error
	d := chain.Evaluate(st, &bid)
	fmt.Println(errors.Is(d.Err(), market.ErrTickSize))
	// Output:
	// audit: allow quote bid 11 BUY 10@0.45
	// placed
	// audit: deny quote bid 11 BUY 10@0.455 by preflight: order bid is invalid. Price (0.455) breaks minimum tick size rule: 0.01
	// true
}

package backtest_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/runtime/backtest"
)

// Backtest an example agent on the bundled sample recording.
func Example() {
	spec, err := agents.Load("../../agents/examples/quoter/agent.yaml")
	if err != nil {
		log.Fatal(err)
	}
	src, err := backtest.OpenTape(filepath.Join("..", "..", backtest.SamplePath))
	if err != nil {
		log.Fatal(err)
	}
	res, err := backtest.Run(context.Background(), backtest.Config{Spec: spec, Source: src})
	if err != nil {
		log.Fatal(err)
	}
	r := res.Report
	fmt.Println(r.Title)
	fmt.Println("markets:", len(r.Markets), "fills recorded:", len(r.Fills) == r.Summary.Fills)
	fmt.Println("pnl = end − start equity:", r.Summary.PnL == r.Summary.EndEquity-r.Summary.StartEquity)
	// Output:
	// quoter on ../../agents/examples/testdata/sample.tape
	// markets: 1 fills recorded: true
	// pnl = end − start equity: true
}

package wire_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// A dry run of the example quoter on the embedded venue, as `pitboss run --clock sim
// --duration 1h` does it: build, run, read the final status. (The same seed gives
// the same orders and fills every time; their numbers depend on the sim's model.)
func ExampleBuild() {
	spec, err := agents.Load("../../agents/examples/quoter/agent.yaml")
	if err != nil {
		log.Fatal(err)
	}
	state, _ := os.MkdirTemp("", "pitboss-example-state")
	locks, _ := os.MkdirTemp("", "pitboss-example-locks")
	defer os.RemoveAll(state)
	defer os.RemoveAll(locks)

	r, err := wire.Build(spec, wire.Options{Clock: wire.ClockSim, Seed: 1, Duration: time.Hour,
		StateDir: state, RuntimeDir: locks})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	if err := r.Agent.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
	s := r.Agent.Status()
	fmt.Println("dry run:", r.DryRun, "market:", r.Bindings[0].Name)
	fmt.Println("state:", s.State, "open orders:", s.OpenOrders)
	fmt.Println("traded:", s.Counts.Orders > 0 && s.Counts.Fills > 0)
	fmt.Println("pnl is equity minus the start:", s.PnL == s.Equity-wire.DefaultBalance)
	// Output:
	// dry run: true market: synthetic-market-1
	// state: stopped open orders: 0
	// traded: true
	// pnl is equity minus the start: true
}

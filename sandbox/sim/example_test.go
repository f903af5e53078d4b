package sim_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// The embedded venue: one in-process engine for the sim's flow (and the agent's own
// orders). Before handling anything at time now, bring the sim up to now.
func ExampleSim_AdvanceTo() {
	const start = 1_700_000_000_000
	e := exchange.New(exchange.Config{})
	for _, c := range sim.SyntheticMarkets(2, 0) {
		c.Time = start
		if _, err := e.Apply(&c); err != nil {
			log.Fatal(err)
		}
	}
	s := sim.New(sim.Config{Start: start}, 42)
	trades := 0
	for now := int64(start); now <= start+5*60_000; now += 100 { // the venue's clock
		s.AdvanceTo(now, e, func(c *exchange.Command, evs []exchange.Event) {
			for _, ev := range evs {
				if ev.Kind == exchange.TradeExecuted {
					trades++
				}
			}
		})
	}
	yes := sim.SyntheticMarkets(1, 0)[0].Spec.Tokens[market.Yes]
	bid, _ := e.BestBid(yes)
	ask, _ := e.BestAsk(yes)
	fmt.Println("trades in five minutes:", trades > 100)
	fmt.Println("spread in ticks:", int64((ask.Price-bid.Price)/10_000))
	fmt.Println("invariants:", e.Check())
	// Output:
	// trades in five minutes: true
	// spread in ticks: 2
	// invariants: <nil>
}

// A synthetic tape for a backtest: the public market events of an hour of flow.
func ExampleTape() {
	evs, sum, err := sim.Tape(context.Background(), sim.TapeConfig{Seed: 7, Duration: time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	kinds := map[market.EventKind]int{}
	for _, ev := range evs {
		kinds[ev.Kind]++
	}
	fmt.Println("first event:", evs[0].Kind)
	fmt.Println("markets:", len(sum.Markets), "books:", kinds[market.EventBook])
	fmt.Println("prints and price changes:", kinds[market.EventLastTrade] > 1000, kinds[market.EventPriceChange] > 1000)
	// Output:
	// first event: book
	// markets: 4 books: 8
	// prints and price changes: true true
}

func ExampleParseConfig() {
	cfg, err := sim.ParseConfig([]byte(`
defaults:
  noise_every: 5s
  maker_spread: 1
markets:
  - market: synthetic-market-1
    fair: 0.62
    resolve_at_end: true
`))
	if err != nil {
		log.Fatal(err)
	}
	m := cfg.Markets[0]
	fmt.Println(cfg.Defaults.NoiseEvery, cfg.Defaults.MakerSpread, m.Market, m.Fair, m.ResolveAtEnd)
	// Output:
	// 5s 1 synthetic-market-1 0.62 true
}

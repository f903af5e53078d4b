package host_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// An ephemeral host: create a market at genesis, deposit, place an order, read the book.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, host.Config{Genesis: genesis, Clock: func() int64 { return 1_700_000_000_000 }})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()

	if _, err := h.Submit(ctx, exchange.Command{Kind: exchange.Deposit, Owner: alice, Amount: 100 * market.One}); err != nil {
		log.Fatal(err)
	}
	res, err := h.Submit(ctx, exchange.Command{Kind: exchange.Place, Order: "0x01", Owner: alice, Token: yes,
		Side: market.Buy, Type: market.GTC, Price: 450_000, Size: 20 * market.One})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rejected:", res.Err != nil)
	_ = h.Read(ctx, func(e *exchange.Engine) {
		best, _ := e.BestBid(yes)
		fmt.Println("best bid:", best.Price, "x", best.Size)
	})
	cancel()
	fmt.Println("run:", <-done)
	// Output:
	// rejected: false
	// best bid: 0.45 x 20
	// run: <nil>
}

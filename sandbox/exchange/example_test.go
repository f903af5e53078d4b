package exchange_test

import (
	"fmt"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

func amount(s string) market.Micros {
	m, err := market.ParseMicros(s) // exact: "0.1234567" would be refused, never rounded
	if err != nil {
		panic(err)
	}
	return m
}

// A small session: list a market, fund two accounts, rest a sell and take it with a
// buy whose limit is better than the maker's price (the taker gets the maker's price).
func Example() {
	alice, _ := market.ParseAddress("0x00000000000000000000000000000000000000a1")
	bob, _ := market.ParseAddress("0x00000000000000000000000000000000000000b0")
	e := exchange.New(exchange.Config{})

	apply := func(c exchange.Command) []exchange.Event {
		c.Time = 1_700_000_000_000 // Unix ms, from the caller's clock
		evs, err := e.Apply(&c)
		if err != nil {
			fmt.Println("rejected:", err)
		}
		return evs
	}
	apply(exchange.Command{Kind: exchange.CreateMarket, Market: "0xc0nd", Spec: exchange.MarketSpec{
		Tokens: [2]market.TokenID{"1001", "1002"}, TickSize: amount("0.01"), MinSize: amount("5"),
		Active: true, AcceptingOrders: true,
	}})
	apply(exchange.Command{Kind: exchange.Deposit, Owner: alice, Amount: amount("100")})
	apply(exchange.Command{Kind: exchange.Deposit, Owner: bob, Amount: amount("100")})
	apply(exchange.Command{Kind: exchange.Split, Owner: alice, Market: "0xc0nd", Amount: amount("10")})
	apply(exchange.Command{Kind: exchange.Place, Order: "ask-1", Owner: alice, Token: "1001",
		Side: market.Sell, Price: amount("0.60"), Size: amount("10")})

	for _, ev := range apply(exchange.Command{Kind: exchange.Place, Order: "bid-1", Owner: bob, Token: "1001",
		Side: market.Buy, Price: amount("0.65"), Size: amount("6")}) {
		switch ev.Kind {
		case exchange.OrderAccepted:
			fmt.Printf("%d %s %s %s %s@%s reserved %s\n", ev.Seq, ev.Kind, ev.Order, ev.Side, ev.Size, ev.Price, ev.Amount)
		case exchange.OrderFilled, exchange.TradeExecuted:
			fmt.Printf("%d %s %s %s %s@%s remaining %s %s\n", ev.Seq, ev.Kind, ev.Order, ev.Side, ev.Size, ev.Price, ev.Remaining, ev.Status)
		case exchange.BookChanged:
			fmt.Printf("%d %s %s %s@%s best ask %s\n", ev.Seq, ev.Kind, ev.Side, ev.Size, ev.Price, ev.BestAsk)
		case exchange.BalanceChanged:
			fmt.Printf("%d %s %s token %q available %s reserved %s\n", ev.Seq, ev.Kind, ev.Owner.String()[38:], ev.Token, ev.Available, ev.Reserved)
		}
	}
	yes, _ := e.BestAsk("1001")
	no, _ := e.BestBid("1002")
	fmt.Printf("YES best ask %s x %s, NO best bid %s x %s\n", yes.Price, yes.Size, no.Price, no.Size)
	// Output:
	// 14 order_accepted bid-1 BUY 6@0.65 reserved 3.9
	// 15 order_filled ask-1 SELL 6@0.6 remaining 4 LIVE
	// 16 trade_executed bid-1 BUY 6@0.6 remaining 0 MATCHED
	// 17 book_changed SELL 4@0.6 best ask 0.6
	// 18 balance_changed 00b0 token "" available 96.4 reserved 0
	// 19 balance_changed 00b0 token "1001" available 6 reserved 0
	// 20 balance_changed 00a1 token "" available 93.6 reserved 0
	// 21 balance_changed 00a1 token "1001" available 0 reserved 4
	// YES best ask 0.6 x 4, NO best bid 0.4 x 4
}

package clob_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// The examples run against the local exchange (`pitboss exchange`) on loopback,
// with the built-in demo markets.

func exampleExchange() (*local, func()) {
	l, stop, err := openLocal(zap.NewNop())
	if err != nil {
		panic(err)
	}
	return l, func() { _ = stop() }
}

// exampleWallet is the upstream clients' test key (Hardhat account #0). Real
// wallets come from adapters/secrets; never put a key in source.
func exampleWallet() *auth.KeySigner {
	s, err := auth.NewKeySignerFromHex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	if err != nil {
		panic(err)
	}
	return s
}

// A client for a wallet gets its API credentials (created on first use, derived
// afterwards) and reads its balance.
func ExampleClient_CreateOrDeriveAPIKey() {
	ex, stop := exampleExchange()
	defer stop()
	ctx := context.Background()
	wallet := exampleWallet()
	defer wallet.Close()

	c, err := clob.New(clob.Config{CLOBURL: ex.clob.URL, Signer: wallet})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	creds, err := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{})
	if err != nil {
		panic(err)
	}
	// Store creds with adapters/secrets; they are never printed in full.
	fmt.Println(creds.Secret != "", fmt.Sprint(creds) != creds.Secret)
	if err := c.SetCredentials(creds); err != nil {
		panic(err)
	}
	bal, err := c.BalanceAllowance(ctx, clob.BalanceParams{})
	if err != nil {
		panic(err)
	}
	fmt.Println("balance", bal.Balance)
	// Output:
	// true true
	// balance 1000
}

// Reading a book: the wire form keeps the service's level order (best last); the
// market form is best-first.
func ExampleClient_MarketBook() {
	ex, stop := exampleExchange()
	defer stop()
	ctx := context.Background()
	c, err := clob.New(clob.Config{CLOBURL: ex.clob.URL})
	if err != nil {
		panic(err)
	}
	m, _, _ := ex.cat.MarketBySlug("fed-cuts-rates-in-june-2026")
	tick, _ := c.TickSize(ctx, m.Tokens[market.Yes])
	book, _ := c.MarketBook(ctx, m.Tokens[market.Yes])
	_, hasBid := book.BestBid()
	fmt.Println("tick", tick, "bids", len(book.Bids), hasBid)
	_, err = c.Book(ctx, "12345")
	fmt.Println(errors.Is(err, market.ErrNoOrderbook))
	// Output:
	// tick 0.01 bids 0 false
	// true
}

// Placing a limit order: the price is rounded to the market's tick and the size to
// 0.01 share; rejections match the shared catalog.
func ExampleClient_PlaceOrder() {
	ex, stop := exampleExchange()
	defer stop()
	ctx := context.Background()
	wallet := exampleWallet()
	defer wallet.Close()
	c, err := clob.New(clob.Config{
		CLOBURL: ex.clob.URL, Signer: wallet,
		Exchange: server.DefaultExchange, NegRiskExchange: server.DefaultNegRiskExchange,
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	creds, _ := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{})
	_ = c.SetCredentials(creds)
	m, _, _ := ex.cat.MarketBySlug("fed-cuts-rates-in-june-2026")
	yes := m.Tokens[market.Yes]

	p, err := c.PlaceOrder(ctx, clob.OrderArgs{
		Token: yes, Side: market.Buy, Price: decimal.RequireFromString("0.404"), Size: decimal.RequireFromString("12.5"),
	})
	if err != nil {
		panic(err)
	}
	rec, _ := c.Order(ctx, p.ID)
	fmt.Println(p.Status, rec.Price, rec.OriginalSize)

	_, err = c.PlaceOrder(ctx, clob.OrderArgs{Token: yes, Side: market.Buy, Price: decimal.RequireFromString("0.40"), Size: decimal.RequireFromString("1")})
	var ae *clob.APIError
	fmt.Println(errors.Is(err, market.ErrMinSize), errors.As(err, &ae) && ae.Status == 400)
	// Output:
	// live 0.4 12.5
	// true true
}

// Iterating over every open order: the iterator fetches page after page as the
// loop consumes it.
func ExampleClient_Orders() {
	ex, stop := exampleExchange()
	defer stop()
	ctx := context.Background()
	wallet := exampleWallet()
	defer wallet.Close()
	c, _ := clob.New(clob.Config{CLOBURL: ex.clob.URL, Signer: wallet, Exchange: server.DefaultExchange})
	defer c.Close()
	creds, _ := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{})
	_ = c.SetCredentials(creds)
	m, _, _ := ex.cat.MarketBySlug("fed-cuts-rates-in-june-2026")
	for _, price := range []string{"0.30", "0.31", "0.32"} {
		_, _ = c.PlaceOrder(ctx, clob.OrderArgs{Token: m.Tokens[market.Yes], Side: market.Buy, Price: decimal.RequireFromString(price), Size: decimal.RequireFromString("5")})
	}
	var total decimal.Decimal
	for o, err := range c.Orders(ctx, clob.OrderFilter{Market: m.Condition}) {
		if err != nil {
			panic(err)
		}
		total = total.Add(o.Price.Micros().Decimal().Mul(o.OriginalSize.Micros().Decimal()))
	}
	fmt.Println("committed", total)
	// Output:
	// committed 4.65
}

// Several clients of one process share one rate budget (the default budget is
// process-wide already; an explicit one sets its own rate).
func ExampleNewBudget() {
	budget := clob.NewBudget(clob.BudgetConfig{Rate: 5, Burst: 5, Reserve: 1})
	a, _ := clob.New(clob.Config{CLOBURL: "http://127.0.0.1:1", Budget: budget})
	b, _ := clob.New(clob.Config{CLOBURL: "http://127.0.0.1:1", Budget: budget})
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// Four ordinary slots are free at once; the fifth is the cancels' reserve.
	for range 4 {
		_ = budget.Acquire(ctx)
	}
	short, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	fmt.Println(errors.Is(budget.Acquire(short), market.ErrRateLimited), budget.AcquireUrgent(ctx) == nil)
	// Output:
	// true true
}

// The data service lists a wallet's positions page by page.
func ExampleData_Positions() {
	ex, stop := exampleExchange()
	defer stop()
	ctx := context.Background()
	wallet := exampleWallet()
	defer wallet.Close()
	c, _ := clob.New(clob.Config{CLOBURL: ex.clob.URL, DataURL: ex.data.URL, Signer: wallet})
	defer c.Close()
	creds, _ := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{})
	_ = c.SetCredentials(creds)
	m, _, _ := ex.cat.MarketBySlug("fed-cuts-rates-in-june-2026")
	if _, err := c.Split(ctx, clob.CTFRequest{ConditionID: m.Condition, Size: decimal.RequireFromString("20")}); err != nil {
		panic(err)
	}
	for p, err := range c.Data().Positions(ctx, api.PositionsQuery{User: c.Address()}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(p.Outcome, p.Size)
	}
	// Unordered output:
	// Yes 20
	// No 20
}

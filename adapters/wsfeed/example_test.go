package wsfeed_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

// A feed on a local hub: an asset's first event is its book snapshot, changes
// follow. (Against `pitboss exchange` the URL is ws://127.0.0.1:8080; here the hub
// runs on a test host.)
func ExampleFeed() {
	h := wstest.OpenHost(1_700_000_000_000)
	defer h.Close()
	m, maker := wstest.NewMarket(1), wstest.Addr(1)
	h.Apply(m.Create(), exchange.Command{Kind: exchange.Deposit, Owner: maker, Amount: 100 * market.One},
		exchange.Command{Kind: exchange.Place, Order: "bid", Owner: maker, Token: m.Yes, Side: market.Buy, Price: 400_000, Size: 10 * market.One})
	h.Flush()
	hub, _ := ws.New(ws.Config{Source: h})
	ctx, cancel := context.WithCancel(context.Background())
	hubDone := make(chan error, 1)
	go func() { hubDone <- hub.Run(ctx) }()
	mux := http.NewServeMux()
	hub.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	events := make(chan string, 16)
	f, _ := wsfeed.New(wsfeed.Config{
		URL:    "ws" + strings.TrimPrefix(srv.URL, "http"),
		Assets: []market.TokenID{m.Yes},
		Handler: func(ev *market.Event) { // on the feed's reader: copy what you keep
			switch ev.Kind {
			case market.EventBook:
				events <- fmt.Sprintf("book: best bid %s x %s", ev.Bids[0].Price, ev.Bids[0].Size)
			case market.EventPriceChange:
				c := ev.Changes[0]
				events <- fmt.Sprintf("change: %s %s -> %s", c.Side, c.Price, c.Size)
			}
		},
		MinBackoff: 10 * time.Millisecond, // the hub answers 503 until it has loaded: retry soon
	})
	feedDone := make(chan error, 1)
	go func() { feedDone <- f.Run(ctx) }()
	fmt.Println(<-events)
	h.Apply(exchange.Command{Kind: exchange.Place, Order: "bid2", Owner: maker, Token: m.Yes, Side: market.Buy, Price: 410_000, Size: 5 * market.One})
	fmt.Println(<-events)
	cancel()
	<-feedDone
	<-hubDone
	// Output:
	// book: best bid 0.4 x 10
	// change: BUY 0.41 -> 5
}

package ws_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

// The hub over an engine host (sandbox/host in `pitboss exchange`; a test host
// here): a market-channel client gets the asset's book, then its changes, each
// with the asset's next sequence number.
func ExampleHub() {
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
	hub.Mount(mux) // /ws/market, /ws/user, /ws/rtds, /ws/sports
	srv := httptest.NewServer(mux)
	defer srv.Close()

	<-hub.Ready() // the handlers answer 503 until the hub has loaded
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/market", nil)
	if err != nil {
		panic(err) // loopback; cannot happen once Ready is closed
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"assets_ids":["`+string(m.Yes)+`"],"type":"market"}`)) //nolint:errcheck // example
	print := func() {
		_, b, _ := c.Read(ctx)
		msgs, _ := api.DecodeWSFrame(b)
		switch x := msgs[0]; {
		case x.Book != nil:
			fmt.Printf("book seq %d: bids %v\n", x.Book.Seq, x.Book.Bids)
		case x.PriceChange != nil:
			for _, e := range x.PriceChange.PriceChanges {
				fmt.Printf("price_change seq %d: %s %s %s -> %s\n", e.Seq, e.AssetID, market.Side(e.Side), e.Price, e.Size)
			}
		}
	}
	print()
	h.Apply(exchange.Command{Kind: exchange.Place, Order: "bid2", Owner: maker, Token: m.Yes, Side: market.Buy, Price: 410_000, Size: 5 * market.One})
	print()
	c.Close(websocket.StatusNormalClosure, "") //nolint:errcheck // example
	cancel()
	<-hubDone // Run returns once every connection is closed
	// Output:
	// book seq 1: bids [{0.4 10}]
	// price_change seq 2: 1002 BUY 0.41 -> 5
	// price_change seq 2: 1003 SELL 0.59 -> 5
}

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// A local exchange over an ephemeral host, and a wallet that creates its API key
// (L1), reads its paper balance and places a signed order (L2): what README.md walks
// through with curl.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cat := catalog.Demo()
	st := server.NewState(server.StateConfig{})
	h, err := host.Open(ctx, host.Config{Genesis: catalog.Genesis(cat, 0), Extensions: []host.Extension{st.Extension()}})
	if err != nil {
		log.Fatal(err)
	}
	go h.Run(ctx)
	srv, err := server.New(h, st, server.Config{Catalog: cat})
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	// The wallet (the dialect's Hardhat test key; never use it for real funds).
	wallet, _ := auth.NewKeySignerFromHex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	now := time.Now().Unix()

	// L1: create the API key.
	l1, _ := auth.SignL1(wallet, server.DefaultChainID, now, api.U256From(0))
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/auth/api-key", nil)
	l1.Apply(req.Header, nil)
	var creds api.APIKeyCreds
	fmt.Println("create key:", do(req, &creds))
	key, _ := auth.NewL2Key(wallet.Address(), auth.Credentials{APIKey: creds.APIKey, Secret: creds.Secret, Passphrase: creds.Passphrase})

	// L2: the paper balance credited at registration.
	req, _ = http.NewRequest(http.MethodGet, ts.URL+"/balance-allowance", nil)
	key.SignHTTP(req, nil, now, nil)
	var bal api.BalanceAllowance
	fmt.Println("balance:", do(req, &bal), bal.Balance)

	// A signed order: BUY 10 YES at 0.42 in the first demo market.
	var m *catalog.Market
	for mk := range cat.Markets() {
		m = mk
		break
	}
	dom := auth.ExchangeDomain(server.DefaultChainID, server.DefaultExchange)
	if m.NegRisk {
		dom = auth.ExchangeDomain(server.DefaultChainID, server.DefaultNegRiskExchange)
	}
	o, _ := auth.BuildOrder(wallet.Address(), auth.OrderArgs{Token: m.Tokens[market.Yes], Side: market.Buy, Type: market.GTC,
		Price: 420_000, Size: 10 * market.One, Tick: m.TickSize, FeeRateBps: m.FeeBps, Salt: api.U256From(1)})
	signed, id, _ := auth.SignOrder(wallet, dom, o)
	body, _ := json.Marshal(api.PostOrderRequest{Order: signed.API(), Owner: creds.APIKey, OrderType: api.OrderType(market.GTC)})
	req, _ = http.NewRequest(http.MethodPost, ts.URL+"/order", bytes.NewReader(body))
	key.SignHTTP(req, body, now, nil)
	var placed api.PostOrderResponse
	fmt.Println("order:", do(req, &placed), placed.Status, placed.OrderID == string(id))
	// Output:
	// create key: 200
	// balance: 200 1000
	// order: 200 live true
}

func do(req *http.Request, out any) int {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 200 {
		json.Unmarshal(b, out)
	} else {
		fmt.Println(string(b))
	}
	return resp.StatusCode
}

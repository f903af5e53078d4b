package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// The dialect's fixture credentials (wire-dialect.md §2.4): the nil UUID, the
// all-zero secret, a passphrase of 64 "a".
var dialectCreds = auth.Credentials{
	APIKey:     "00000000-0000-0000-0000-000000000000",
	Secret:     "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
	Passphrase: strings.Repeat("a", 64),
}

// dialectExample is the §3.9 body, byte for byte (order O-f).
const dialectExample = `{"deferExec":false,"order":{"salt":479249096354,"maker":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","signer":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","taker":"0x0000000000000000000000000000000000000000","tokenId":"1234","makerAmount":"100000000","takerAmount":"50000000","side":"BUY","expiration":"0","nonce":"0","feeRateBps":"100","signatureType":0,"signature":"0xc60dd03cc49104494c2687cc3d5f5aa2c9e58d0716391767fe512103220b286039f3b1dab072342d02968b686b4ce2af33c76cdceb23b2a3c5036669beb538b51b"},"owner":"00000000-0000-0000-0000-000000000000","orderType":"GTC","postOnly":false}`

// dialectSell is vector O-g in the same key order: a SELL of 50 shares of token 1234
// at 0.5, signed with the Hardhat key for chain 56 and exchange 0x…01.
const dialectSell = `{"deferExec":false,"order":{"salt":479249096354,"maker":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","signer":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","taker":"0x0000000000000000000000000000000000000000","tokenId":"1234","makerAmount":"50000000","takerAmount":"25000000","side":"SELL","expiration":"0","nonce":"0","feeRateBps":"0","signatureType":0,"signature":"0xd148a15b4b55fbe0cf46633f1e4aa6057434352e9a58a69bf436b9e9160667850b96a0079e23fbcd209454aef3e4a6220d539e361a3e32142b2800caa8f046961c"},"owner":"00000000-0000-0000-0000-000000000000","orderType":"GTC","postOnly":false}`

func TestDialectPostOrderExample(t *testing.T) {
	e := newEnv(t)
	w := hardhat(t)
	e.importKey(w, dialectCreds)
	if got := w.l2.Sign("1700000000", "POST", "/order", []byte(dialectExample)); got != "ty3GOTOaH7JVMl-Y-ZHv1gZ7lmk2-63-madxCQkstRw=" {
		t.Fatalf("L2-i: %s", got)
	}
	// The request exactly as in §3.9: headers of L2-i at timestamp 1700000000 (the
	// server's clock), the body's bytes.
	hdr := http.Header{
		"SERVICE_ADDRESS":    {"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"},
		"SERVICE_SIGNATURE":  {"ty3GOTOaH7JVMl-Y-ZHv1gZ7lmk2-63-madxCQkstRw="},
		"SERVICE_TIMESTAMP":  {"1700000000"},
		"SERVICE_API_KEY":    {dialectCreds.APIKey},
		"SERVICE_PASSPHRASE": {dialectCreds.Passphrase},
	}
	// Authentication, owner, signer and signature all pass: the server names the
	// expected order id. The example's amounts imply a price of 2 (100 USD for 50
	// shares), which no binary market can trade, so the engine's price rule refuses
	// it — naming the order by the id the dialect expects.
	st, b := e.call(http.MethodPost, "/order", []byte(dialectExample), nil, hdr)
	wantErr(t, st, b, 400, "order 0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a is invalid. Price (2) breaks minimum tick size rule: 0.01")

	// The same shape with vector O-g (a valid SELL at 0.5) is accepted with O-g's
	// digest as its order id.
	e.split(w, e.mkt("rain-in-lisbon-tomorrow"), 50*share)
	var resp api.PostOrderResponse
	e.mustJSON(http.MethodPost, "/order", []byte(dialectSell), w, &resp)
	if !resp.Success || resp.Status != api.PlacementLive || resp.OrderID != "0xb2c685134740d30576459f8eeec91675076fad1088adbde0d0c438e08c19281e" {
		t.Fatalf("O-g: %+v", resp)
	}
	var o api.OpenOrder
	e.mustJSON(http.MethodGet, "/data/order/"+resp.OrderID, nil, w, &o)
	if o.Owner != dialectCreds.APIKey || o.Price.String() != "0.5" || o.OriginalSize.String() != "50" || o.Side != api.Side(market.Sell) {
		t.Fatalf("O-g as an open order: %+v", o)
	}
	// The dialect's cancel body (L2-h shape) cancels it.
	var cr api.CancelResponse
	e.mustJSON(http.MethodDelete, "/order", []byte(`{"orderID":"`+resp.OrderID+`"}`), w, &cr)
	if len(cr.Canceled) != 1 {
		t.Fatalf("cancel %+v", cr)
	}
	raw, _ := json.Marshal(cr)
	if !strings.Contains(string(raw), `"not_canceled":{}`) {
		t.Fatalf("cancel answer %s lacks an empty not_canceled", raw)
	}
}

func TestDialectL1VectorCreatesAKey(t *testing.T) {
	// L1-d: chain 56, timestamp 1700000000, nonce 0, the Hardhat key.
	e := newEnv(t)
	hdr := http.Header{
		"SERVICE_ADDRESS":   {"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"},
		"SERVICE_SIGNATURE": {"0x79b22d527f467338953e7fbb65e97b68824e9bf3bea82e8056d82b81cdca377943ef8802d8e1ae9e287300cd3376e8bb7f2a65a3c42ba64f6abfb4f40320e6121c"},
		"SERVICE_TIMESTAMP": {"1700000000"},
		"SERVICE_NONCE":     {"0"},
	}
	if st, b := e.call(http.MethodPost, "/auth/api-key", nil, nil, hdr); st != 200 {
		t.Fatalf("L1-d: %d %s", st, b)
	}
	if st, b := e.call(http.MethodGet, "/auth/derive-api-key", nil, nil, hdr); st != 200 {
		t.Fatalf("derive with L1-d: %d %s", st, b)
	}
}

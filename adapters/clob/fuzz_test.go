package clob

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// responseSeeds are answers of the services as the local exchange and the
// upstream dialect write them, plus malformed ones.
var responseSeeds = []string{
	`{"market":"0xaabbcc","asset_id":"100","timestamp":"123456789","hash":"0458ea5755c9f73d64a14636fa5c36ed460ec394","bids":[{"price":"0.3","size":"100"},{"price":"0.4","size":"100"}],"asks":[{"price":"0.7","size":"100"},{"price":"0.6","size":"100"}],"min_order_size":"100","tick_size":"0.01","neg_risk":false,"last_trade_price":"0.5"}`,
	`{"success":true,"errorMsg":"","orderID":"0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a","transactionsHashes":[],"status":"live","takingAmount":"","makingAmount":"","tradeIDs":[]}`,
	`[{"success":false,"errorMsg":"not enough balance / allowance"},{"success":true,"orderID":"0x01","status":"matched","takingAmount":"5","makingAmount":"2.5"}]`,
	`{"data":[{"id":"0x01","status":"LIVE","owner":"k","maker_address":"0x0000000000000000000000000000000000000001","market":"0x02","asset_id":"3","side":"BUY","original_size":"10","size_matched":"0","price":"0.45","associate_trades":null,"outcome":"Yes","created_at":1700000000,"expiration":"0","order_type":"GTC"}],"next_cursor":"LTE=","limit":100,"count":1}`,
	`{"canceled":["0x01"],"not_canceled":{"0x02":"the order is already canceled"}}`,
	`{"heartbeat_id":"abc","status":"ok"}`,
	`{"price":"0.5"}`, `{"mid":"0.45"}`, `{"spread":"0.04"}`, `{"spreads":{"1":"0.1"}}`, `{"1":{"BUY":"0.4","SELL":"0.5"}}`,
	`{"minimum_tick_size":0.01}`, `{"neg_risk":true}`, `{"base_fee":100}`, `1764612536`, `"OK"`,
	`{"history":[{"t":1700000000,"p":0.5}]}`, `{"apiKey":"00000000-0000-0000-0000-000000000000","secret":"AAAA","passphrase":"p"}`,
	`{"balance":"1000","allowance":"990","allowances":{"1":"5"}}`,
	`{"markets":[{"conditionId":"0x01","questionText":"Q?","outcomes":[{"tokenId":"1","label":"Yes","price":"0.5"}]}],"total":1}`,
	`{"deposits":[{"fromAmountBaseUnit":"1000000000000000000","createdTimeMs":1}],"withdrawals":[]}`,
	`{"error":"rate limit exceeded"}`, `{"error":"order 0x01 is invalid. Price (0.505) breaks minimum tick size rule: 0.01"}`,
	``, `null`, `[]`, `{}`, `{"price":1e400}`, `{"price":"-0.5"}`, `{"data":null,"next_cursor":""}`, `<html>502 Bad Gateway</html>`,
	`{"bids":[{"price":"2","size":"-1"}]}`, `{"timestamp":"9999999999999999999999"}`, "\xff\xfe",
}

// FuzzResponseDecoding feeds arbitrary bodies to the client's decoder for every
// answer shape it reads, and the conversions it applies after decoding: nothing
// may panic, and a body that decodes must decode the same way twice.
func FuzzResponseDecoding(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add([]byte(s))
	}
	c := &Client{}
	s := &service{name: ServiceCLOB}
	cl := &call{method: "GET", path: "/fuzz"}
	f.Fuzz(func(t *testing.T, body []byte) {
		targets := []func() any{
			func() any { return new(api.OrderBook) }, func() any { return new(api.PostOrderResponse) },
			func() any { return new([]api.PostOrderResponse) }, func() any { return new(api.Page[api.OpenOrder]) },
			func() any { return new(api.Page[api.Trade]) }, func() any { return new(api.CancelResponse) },
			func() any { return new(api.HeartbeatResponse) }, func() any { return new(api.PriceResponse) },
			func() any { return new(api.PricesResponse) }, func() any { return new(api.SpreadsResponse) },
			func() any { return new(api.TickSizeResponse) }, func() any { return new(api.PriceHistory) },
			func() any { return new(api.APIKeyCreds) }, func() any { return new(api.BalanceAllowance) },
			func() any { return new(api.Page[api.Market]) }, func() any { return new(BrowseMarketsPage) },
			func() any { return new(AccountState) }, func() any { return new(api.BridgeStatus) },
			func() any { return new(api.WithdrawPreview) }, func() any { return new(api.SwapQuote) },
			func() any { return new([]api.Position) }, func() any { return new(json.Number) },
		}
		for _, mk := range targets {
			a, b := mk(), mk()
			errA := c.decode(s, cl, body, a)
			errB := c.decode(s, cl, body, b)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("decoding %T is not deterministic: %v vs %v", a, errA, errB)
			}
			if errA != nil && !errors.Is(errA, ErrBadResponse) {
				t.Fatalf("decode error %v does not wrap ErrBadResponse", errA)
			}
			if bk, ok := a.(*api.OrderBook); ok && errA == nil {
				if book, err := bk.Book(); err == nil {
					for i := 1; i < len(book.Bids); i++ {
						if book.Bids[i].Price >= book.Bids[i-1].Price {
							t.Fatalf("bids not best-first: %v", book.Bids)
						}
					}
					for i := 1; i < len(book.Asks); i++ {
						if book.Asks[i].Price <= book.Asks[i-1].Price {
							t.Fatalf("asks not best-first: %v", book.Asks)
						}
					}
				}
			}
		}
	})
}

// FuzzErrorAnswers feeds arbitrary error answers to the catalog mapping: every
// answer becomes an *APIError that unwraps to a catalog error with its own code
// and status; a JSON {"error": m} keeps m verbatim, anything else at most 512 bytes.
func FuzzErrorAnswers(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add(400, []byte(s), "")
	}
	f.Add(429, []byte(`{"error":"rate limit exceeded"}`), "3")
	f.Add(503, []byte(`trading disabled`), "Fri, 02 Jan 2026 03:05:35 GMT")
	f.Add(401, []byte(`{"error":"L2 authentication failure"}`), "")
	f.Add(404, []byte(`{"error":"order not found"}`), "x")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, status int, body []byte, retry string) {
		if status < 100 || status > 999 {
			status = 400 + status&0xff%200
		}
		h := http.Header{}
		h.Set("Retry-After", retry)
		e := newAPIError(ServiceCLOB, "POST", "/order", status, body, h, now)
		var me *market.Error
		if !errors.As(e, &me) || me.Code != e.Code || me.Status != status || !errors.Is(e, market.Errorf(e.Code)) {
			t.Fatalf("%+v does not unwrap to its catalog entry (%+v)", e, me)
		}
		var eb api.ErrorBody
		if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
			if e.Message != eb.Error {
				t.Fatalf("message %q, want %q verbatim", e.Message, eb.Error)
			}
		} else if len(e.Message) > 512 {
			t.Fatalf("message of %d bytes from a non-JSON body", len(e.Message))
		}
		if e.RetryAfter < 0 || e.RetryAfter > 24*time.Hour+time.Hour {
			t.Fatalf("RetryAfter %v from %q", e.RetryAfter, retry)
		}
		if !strings.Contains(e.Error(), "/order") {
			t.Fatalf("Error() %q does not name the request", e.Error())
		}
		be := batchError("POST", "/orders", string(body))
		if !errors.Is(be, market.Errorf(be.Code)) || !be.Batch {
			t.Fatalf("batch error %+v", be)
		}
	})
}

// FuzzCursorPaging drives the cursor iterator with pages whose next cursors come
// from the input: whatever a service answers, the iteration ends, after at most
// one page per distinct cursor (a repeated cursor ends it with ErrPagingLoop).
func FuzzCursorPaging(f *testing.F) {
	f.Add([]byte("ab\x00"), 3)
	f.Add([]byte("aaaa"), 1)
	f.Add([]byte("abcabc"), 0)
	f.Fuzz(func(t *testing.T, script []byte, perPage int) {
		perPage = perPage & 7
		pages := 0
		fetch := func(_ context.Context, cursor string) (*api.Page[int], error) {
			if pages > len(script)+2 {
				t.Fatalf("%d pages for a script of %d cursors", pages, len(script))
			}
			next := api.EndCursor
			if pages < len(script) && script[pages] != 0 {
				next = string(rune('a' + script[pages]%8))
			}
			pages++
			return &api.Page[int]{Data: make([]int, perPage), NextCursor: next}, nil
		}
		n := 0
		for _, err := range cursorSeq(context.Background(), "", fetch) {
			if err != nil && !errors.Is(err, ErrPagingLoop) {
				t.Fatal(err)
			}
			n++
		}
		if n > pages*(perPage+1) {
			t.Fatalf("%d items from %d pages of %d", n, pages, perPage)
		}
	})
}

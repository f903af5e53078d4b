package clob

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// The routes below have no shape in the specification and are not served by the
// local exchange (order scoring). They are tested against a
// loopback server that checks method, path, authentication and body, and answers
// as the upstream service would.

// recordedRequest is what the loopback server saw.
type recordedRequest struct {
	method, path, query, body string
	l2                        bool
}

func rawServer(t *testing.T, answer func(r recordedRequest) (int, string)) (*Client, func() []recordedRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []recordedRequest
	names := auth.NewHeaders("")
	srv := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec := recordedRequest{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, body: string(b),
			l2: names.Get(r.Header, auth.HeaderAPIKey) != "" && names.Get(r.Header, auth.HeaderSignature) != ""}
		mu.Lock()
		seen = append(seen, rec)
		mu.Unlock()
		status, body := answer(rec)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	cfg := testConfig(t, newFakeClock(), srv.URL)
	cfg.Address = market.Address{19: 1}
	cfg.Credentials = auth.Credentials{APIKey: "00000000-0000-4000-8000-000000000000", Secret: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", Passphrase: "p"}
	return mustNew(t, cfg), func() []recordedRequest { mu.Lock(); defer mu.Unlock(); return append([]recordedRequest(nil), seen...) }
}

// TestRawRoutesSendWhatTheyName checks every typed RFQ write's and read's method,
// path, query, authentication and body (the dialect's shapes, api/rfq.go), and the
// order-scoring routes.
func TestRawRoutesSendWhatTheyName(t *testing.T) {
	c, seen := rawServer(t, func(recordedRequest) (int, string) { return 200, `{"request_id":"r1","state":"ACTIVE"}` })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ack := func(a *api.RFQAck, err error) error { return err }
	tests := []struct {
		name string
		call func() error
		want recordedRequest
	}{
		{"CreateRFQRequest", func() error {
			return ack(c.CreateRFQRequest(ctx, RFQAsk{Token: "7", Side: market.Buy, Size: 10 * market.One, Price: 600_000}))
		}, recordedRequest{method: "POST", path: "/rfq/request", body: `{"asset_in":"7","asset_out":"0","amount_in":10000000,"amount_out":6000000,"user_type":0,"expiry":0}`, l2: true}},
		{"CancelRFQRequest", func() error { return ack(c.CancelRFQRequest(ctx, "r1")) },
			recordedRequest{method: "DELETE", path: "/rfq/request", body: `{"request_id":"r1"}`, l2: true}},
		{"CreateRFQQuote", func() error { return ack(c.CreateRFQQuote(ctx, "r1", 550_000, 0)) },
			recordedRequest{method: "POST", path: "/rfq/quote", body: `{"price":"0.55","request_id":"r1"}`, l2: true}},
		{"CancelRFQQuote", func() error { return ack(c.CancelRFQQuote(ctx, "q1")) },
			recordedRequest{method: "DELETE", path: "/rfq/quote", body: `{"quote_id":"q1"}`, l2: true}},
		{"AcceptRFQQuote", func() error { return ack(c.AcceptRFQQuote(ctx, "r1", "")) },
			recordedRequest{method: "POST", path: "/rfq/request/accept", body: `{"quote_id":"","request_id":"r1"}`, l2: true}},
		{"ApproveRFQQuote", func() error { return ack(c.ApproveRFQQuote(ctx, "", "q1")) },
			recordedRequest{method: "POST", path: "/rfq/quote/approve", body: `{"quote_id":"q1","request_id":""}`, l2: true}},
		{"RFQBestQuote", func() error { _, err := c.RFQBestQuote(ctx, "r1"); return err },
			recordedRequest{method: "GET", path: "/rfq/data/best-quote", query: "request_id=r1", l2: true}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); err != nil {
				t.Fatal(err)
			}
			if got := seen()[i]; got != tt.want {
				t.Fatalf("sent %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("order scoring", func(t *testing.T) {
		c, seen := rawServer(t, func(r recordedRequest) (int, string) {
			if r.path == "/order-scoring" {
				return 200, `{"scoring":true}`
			}
			return 200, `{"0x01":true,"0x02":false}`
		})
		ok, err := c.OrderScoring(ctx, "0x01")
		if err != nil || !ok {
			t.Fatalf("OrderScoring = %v, %v", ok, err)
		}
		m, err := c.OrdersScoring(ctx, []market.OrderID{"0x01", "0x02"})
		if err != nil || !m["0x01"] || m["0x02"] {
			t.Fatalf("OrdersScoring = %v, %v", m, err)
		}
		s := seen()
		if s[0].query != "order_id=0x01" || !s[0].l2 || s[1].body != `["0x01","0x02"]` || !s[1].l2 {
			t.Fatalf("sent %+v", s)
		}
	})
}

// TestRFQErrorsMapToTheCatalog checks that the specification's RFQ errors come
// back as their catalog entries.
func TestRFQErrorsMapToTheCatalog(t *testing.T) {
	tests := []struct {
		status int
		msg    string
		code   market.Code
	}{
		{400, "valid rfqId required", market.CodeRFQIDRequired},
		{400, "price required", market.CodeRFQPriceRequired},
		{400, "RFQ not found, expired, or already filled", market.CodeRFQNotOpen},
		{400, "rfqId or quoteId required", market.CodeRFQOrQuoteRequired},
		{400, "RFQ not found or not owned by you", market.CodeRFQNotOwned},
		{404, "no valid quotes available", market.CodeRFQNoValidQuotes},
		{404, "quote not found, expired, or already processed", market.CodeRFQQuoteNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			c, _ := rawServer(t, func(recordedRequest) (int, string) {
				b, _ := json.Marshal(map[string]string{"error": tt.msg})
				return tt.status, string(b)
			})
			_, err := c.AcceptRFQQuote(context.Background(), "x", "")
			var ae *APIError
			if !errors.As(err, &ae) || ae.Code != tt.code || !errors.Is(err, market.Errorf(tt.code)) {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
		})
	}
}

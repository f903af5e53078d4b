package clob_test

import (
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/market"
)

// TestRFQThroughTheClient runs an RFQ through the typed client against the local
// exchange: a request, a quote, the best quote, the listings, accept, approve (the
// tokens move), and a refusal as its catalog error.
func TestRFQThroughTheClient(t *testing.T) {
	l := startLocal(t)
	buyer, quoter := l.client("rfq-buyer"), l.client("rfq-quoter")
	ctx := ctxT(t, 30*time.Second)
	m := l.market(fedSlug)
	yes := m.Tokens[market.Yes]
	if _, err := quoter.Split(ctx, clob.CTFRequest{ConditionID: m.Condition, Size: d("10")}); err != nil {
		t.Fatal(err)
	}
	req, err := buyer.CreateRFQRequest(ctx, clob.RFQAsk{Token: yes, Side: market.Buy, Size: 5 * market.One, Price: 600_000})
	if err != nil || req.State != "ACTIVE" {
		t.Fatalf("request %+v %v", req, err)
	}
	q, err := quoter.CreateRFQQuote(ctx, req.RequestID, 520_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	best, err := buyer.RFQBestQuote(ctx, req.RequestID)
	if err != nil || best.QuoteID != q.QuoteID || best.Price.Micros() != 520_000 {
		t.Fatalf("best %+v %v", best, err)
	}
	n := 0
	for r, err := range quoter.RFQRequests(ctx, clob.RFQFilter{State: "active"}) {
		if err != nil || r.RequestID != req.RequestID {
			t.Fatalf("listing %+v %v", r, err)
		}
		n++
	}
	for qq, err := range buyer.RFQQuotes(ctx, clob.RFQFilter{RequestIDs: []string{req.RequestID}}) {
		if err != nil || qq.QuoteID != q.QuoteID {
			t.Fatalf("quotes %+v %v", qq, err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("listed %d", n)
	}
	if _, err := quoter.AcceptRFQQuote(ctx, req.RequestID, ""); !isCode(err, market.CodeRFQNotOwned) {
		t.Fatalf("a quoter accepting: %v", err)
	}
	if a, err := buyer.AcceptRFQQuote(ctx, req.RequestID, ""); err != nil || a.State != "ACCEPTED" {
		t.Fatalf("accept %+v %v", a, err)
	}
	if a, err := quoter.ApproveRFQQuote(ctx, "", q.QuoteID); err != nil || a.State != "FILLED" {
		t.Fatalf("approve %+v %v", a, err)
	}
	bal, err := buyer.BalanceAllowance(ctx, clob.BalanceParams{AssetType: "CONDITIONAL", TokenID: yes})
	if err != nil || bal.Balance.Micros() != 5*market.One {
		t.Fatalf("buyer's YES %+v %v", bal, err)
	}
}

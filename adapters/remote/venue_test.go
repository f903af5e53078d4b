package remote_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

func request(info market.Info, client uint64, side market.Side, price, size string, typ market.OrderType) agent.OrderRequest {
	return agent.OrderRequest{ClientID: client, Market: info.Condition, Token: info.Tokens[market.Yes], Outcome: market.Yes,
		Side: side, Price: mic(price), Size: mic(size), Type: typ}
}

func TestPrepareSignsDeterministicallyWithoutIO(t *testing.T) {
	l := startLocal(t)
	v, _, _ := l.venue("prepare", fedSlug)
	fed := l.market(fedSlug)
	req := request(fed, 1<<32|1, market.Buy, "0.40", "10", market.GTC)
	before := l.Requests()
	p1, err := v.Prepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := v.Prepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if after := l.Requests(); !maps.Equal(before, after) {
		t.Fatalf("Prepare sent requests: %v, then %v", before, after)
	}
	if p1.ID != p2.ID {
		t.Fatalf("the same request gave ids %s and %s", p1.ID, p2.ID)
	}
	req.ClientID++
	if p3, _ := v.Prepare(context.Background(), req); p3.ID == p1.ID {
		t.Fatal("another client id gave the same order id")
	}
	so := p1.Payload.(*clob.SignedOrder)
	id, err := auth.VerifyOrder(auth.ExchangeDomain(server.DefaultChainID, server.DefaultExchange), &so.SignedOrder)
	if err != nil || id != p1.ID {
		t.Fatalf("signature: id %s, %v; want %s", id, err, p1.ID)
	}

	refusals := []struct {
		name string
		req  agent.OrderRequest
		want error
	}{
		{"price off the tick", request(fed, 9, market.Buy, "0.405", "10", market.GTC), market.ErrTickSize},
		{"size not whole lots", request(fed, 9, market.Buy, "0.40", "10.001", market.GTC), market.Errorf(market.CodeAmountNotExact, "")},
		{"post-only take", func() agent.OrderRequest {
			r := request(fed, 9, market.Buy, "0.40", "10", market.FAK)
			r.PostOnly = true
			return r
		}(), market.ErrInvalidOrderPayload},
		{"unknown market", agent.OrderRequest{ClientID: 9, Token: "12345", Side: market.Buy, Price: mic("0.4"), Size: mic("10")}, market.ErrMarketNotFound},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := v.Prepare(context.Background(), tc.req); !errors.Is(err, tc.want) {
				t.Fatalf("Prepare: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSubmitReportsTheVenuesAnswer(t *testing.T) {
	l := startLocal(t)
	fed := l.market(fedSlug)
	maker, _ := l.client(signer(t, "maker"))
	l.ask(maker, fed, market.Yes, "0.60", "10")
	l.ask(maker, fed, market.Yes, "0.61", "5")
	l.ask(maker, fed, market.Yes, "0.62", "5")
	l.ask(maker, fed, market.Yes, "0.80", "5")
	postOnly := request(fed, 7, market.Buy, "0.80", "5", market.GTC)
	postOnly.PostOnly = true
	tests := []struct {
		name        string
		req         agent.OrderRequest
		wantStatus  market.OrderStatus
		wantMatched string
		wantErr     error
	}{
		{"a resting bid is live", request(fed, 1, market.Buy, "0.40", "10", market.GTC), market.StatusLive, "0", nil},
		{"a crossing bid filled at once is matched", request(fed, 2, market.Buy, "0.60", "8", market.GTC), market.StatusMatched, "8", nil},
		{"a FAK taking what is left is matched", request(fed, 3, market.Buy, "0.60", "2", market.FAK), market.StatusMatched, "2", nil},
		{"a bid filled in part rests the rest", request(fed, 4, market.Buy, "0.61", "8", market.GTC), market.StatusLive, "5", nil},
		{"a FAK filled in part is cancelled", request(fed, 5, market.Buy, "0.62", "7", market.FAK), market.StatusCanceled, "5", nil},
		{"a FOK the book cannot fill is refused", request(fed, 6, market.Buy, "0.80", "50", market.FOK), 0, "", market.ErrFOKNotFilled},
		{"a crossing post-only bid is refused", postOnly, 0, "", market.ErrPostOnlyCrosses},
	}
	v, c, _ := l.venue("taker", fedSlug)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Prepare(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			o, err := v.Submit(ctxT(t, 10*time.Second), &p)
			if tc.wantErr != nil {
				var me *market.Error
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &me) {
					t.Fatalf("Submit: %v, want the catalog's %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.ID != p.ID || o.Status != tc.wantStatus || o.Matched != mic(tc.wantMatched) || o.Owner != v.Address() {
				t.Fatalf("order %+v; want %s matched %s", o, tc.wantStatus, tc.wantMatched)
			}
		})
	}
	// The live orders are visible through the client, under the prepared ids.
	byPrice := map[market.Micros]api.OpenOrder{}
	for _, o := range openOrders(t, c) {
		byPrice[o.Price.Micros()] = o
	}
	if len(byPrice) != 2 || byPrice[mic("0.40")].SizeMatched != 0 || byPrice[mic("0.61")].SizeMatched.Micros() != mic("5") {
		t.Fatalf("open orders on the exchange: %+v", byPrice)
	}
}

func TestSubmitNeverPlacesAnOrderTwice(t *testing.T) {
	l := startLocal(t)
	fed := l.market(fedSlug)
	v, c, _ := l.venue("retry", fedSlug)
	isPost := func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/order" }

	t.Run("the answer is lost: the order is found by id", func(t *testing.T) {
		first := true
		l.lose(func(r *http.Request) bool {
			if isPost(r) && first {
				first = false
				return true
			}
			return false
		})
		defer l.lose(nil)
		p, _ := v.Prepare(context.Background(), request(fed, 10, market.Buy, "0.30", "5", market.GTC))
		o, err := v.Submit(ctxT(t, 10*time.Second), &p)
		if err != nil || o.Status != market.StatusLive || o.ID != p.ID {
			t.Fatalf("Submit: %+v, %v", o, err)
		}
		// Submitting the same prepared order again is the catalog's duplicate.
		if _, err := v.Submit(ctxT(t, 10*time.Second), &p); !errors.Is(err, market.ErrDuplicated) {
			t.Fatalf("second Submit: %v, want duplicated", err)
		}
	})
	t.Run("every answer is lost: outcome unknown, never a catalog error", func(t *testing.T) {
		l.lose(func(r *http.Request) bool { return true })
		p, _ := v.Prepare(context.Background(), request(fed, 11, market.Buy, "0.31", "5", market.GTC))
		_, err := v.Submit(ctxT(t, 5*time.Second), &p)
		l.lose(nil)
		var me *market.Error
		if !errors.Is(err, remote.ErrOutcomeUnknown) || errors.As(err, &me) {
			t.Fatalf("Submit: %v; want ErrOutcomeUnknown without a catalog error", err)
		}
		o, err := v.Order(ctxT(t, 5*time.Second), p.ID)
		if err != nil || o.Status != market.StatusLive {
			t.Fatalf("looked up: %+v, %v", o, err)
		}
	})
	counts := map[market.Micros]int{}
	for _, o := range openOrders(t, c) {
		counts[o.Price.Micros()]++
	}
	if counts[mic("0.30")] != 1 || counts[mic("0.31")] != 1 || len(counts) != 2 {
		t.Fatalf("open orders by price: %v, want one at 0.30 and one at 0.31", counts)
	}
	if l.Lost() == 0 {
		t.Fatal("no answer was lost: the test tested nothing")
	}
}

func TestCancelAndCancelAll(t *testing.T) {
	l := startLocal(t)
	fed := l.market(fedSlug)
	v, c, _ := l.venue("canceller", fedSlug)
	place := func(client uint64, price string) market.OrderID {
		p, _ := v.Prepare(context.Background(), request(fed, client, market.Buy, price, "5", market.GTC))
		if _, err := v.Submit(ctxT(t, 5*time.Second), &p); err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	a, _, _ := place(1, "0.10"), place(2, "0.11"), place(3, "0.12")
	if err := v.Cancel(ctxT(t, 5*time.Second), a); err != nil {
		t.Fatal(err)
	}
	err := v.Cancel(ctxT(t, 5*time.Second), a)
	var me *market.Error
	if err == nil || !errors.As(err, &me) {
		t.Fatalf("second cancel: %v; want the catalog's refusal", err)
	}
	if n := len(openOrders(t, c)); n != 2 {
		t.Fatalf("%d open orders, want 2", n)
	}
	if err := v.CancelAll(ctxT(t, 5*time.Second), fed.Condition); err != nil {
		t.Fatal(err)
	}
	if n := len(openOrders(t, c)); n != 0 {
		t.Fatalf("%d open orders after cancel-all, want 0", n)
	}
}

func TestAccountHasBalancesPositionsAndTheOutcomes(t *testing.T) {
	l := startLocal(t)
	ud := l.market(updown)
	maker, _ := l.client(signer(t, "maker"))
	down := ud.Tokens[market.No]
	l.ask(maker, ud, market.No, "0.50", "20")
	v, _, _ := l.venue("holder", updown)
	buy := agent.OrderRequest{ClientID: 1, Market: ud.Condition, Token: down, Outcome: market.No, Side: market.Buy,
		Price: mic("0.50"), Size: mic("10"), Type: market.FAK}
	p, _ := v.Prepare(context.Background(), buy)
	if o, err := v.Submit(ctxT(t, 5*time.Second), &p); err != nil || o.Status != market.StatusMatched {
		t.Fatalf("buy: %+v, %v", o, err)
	}
	rest := buy
	rest.ClientID, rest.Type, rest.Price, rest.Token, rest.Outcome = 2, market.GTC, mic("0.20"), ud.Tokens[market.Yes], market.Yes
	p, _ = v.Prepare(context.Background(), rest)
	if _, err := v.Submit(ctxT(t, 5*time.Second), &p); err != nil {
		t.Fatal(err)
	}
	acct, err := v.Account(ctxT(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// 1000 paper collateral − 5 spent − the taker fee; 10 × 0.20 reserved by the
	// resting bid.
	want := mic("993") - market.TakerFee(ud.FeeBps, mic("0.50"), mic("10"))
	if acct.Balance != want || acct.Reserved != mic("2") || acct.Mode != market.ModeNormal {
		t.Fatalf("account %+v; want balance %s, reserved 2, normal", acct, want)
	}
	if len(acct.Positions) != 1 || acct.Positions[0].Token != down || acct.Positions[0].Size != mic("10") ||
		acct.Positions[0].Outcome != market.No || acct.Positions[0].Market != ud.Condition {
		t.Fatalf("positions %+v; want 10 of the Down token (outcome No)", acct.Positions)
	}
	open, err := v.OpenOrders(ctxT(t, 5*time.Second))
	if err != nil || len(open) != 1 || open[0].Outcome != market.Yes || open[0].Price != mic("0.20") {
		t.Fatalf("open orders %+v, %v", open, err)
	}
}

func TestHeartbeatsKeepTheChainAndReportALapse(t *testing.T) {
	l := startLocal(t, func(c *server.Config) { c.HeartbeatTimeout = 200 * time.Millisecond })
	fed := l.market(fedSlug)
	v, c, cr := l.venue("beater", fedSlug)
	if err := v.Heartbeat(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := v.Heartbeat(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	// Another process of the wallet starts its own chain: this one's id is stale and
	// is repaired from the venue's current id, without a lapse.
	other, err := clob.New(clob.Config{CLOBURL: l.URL, Address: v.Address(), Credentials: cr, Budget: clob.Unlimited()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Heartbeat(ctxT(t, 5*time.Second), ""); err != nil {
		t.Fatal(err)
	}
	if err := v.Heartbeat(ctxT(t, 5*time.Second)); err != nil {
		t.Fatalf("a stale id was not repaired: %v", err)
	}
	// Silence past the deadline: the venue cancels the wallet's orders and the next
	// beat reports the lapse (and starts a new chain).
	p, _ := v.Prepare(context.Background(), request(fed, 1, market.Buy, "0.20", "5", market.GTC))
	if _, err := v.Submit(ctxT(t, 5*time.Second), &p); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // past the exchange's 200 ms deadline, by its clock
	if err := l.Server.CheckHeartbeats(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := v.Heartbeat(ctxT(t, 5*time.Second)); !errors.Is(err, remote.ErrHeartbeatLapsed) {
		t.Fatalf("heartbeat after the deadline: %v, want a lapse", err)
	}
	if n := len(openOrders(t, c)); n != 0 {
		t.Fatalf("%d open orders after the lapse, want 0", n)
	}
	if err := v.Heartbeat(ctxT(t, 5*time.Second)); err != nil {
		t.Fatalf("the new chain: %v", err)
	}
}

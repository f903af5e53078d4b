package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host/hosttest"
)

// The multi-step handlers of the CLOB server are all or nothing (issue 20, point 5;
// docs/design/0131): a fault injected at any step of a request leaves the journal's
// files byte for byte as they were and the client sees the old state; the request
// then succeeds. Each test runs hosttest.EveryStep over one handler.

// httpErr turns a non-200 answer into an error for hosttest.EveryStep.
func httpErr(st int, body []byte) error {
	if st == 200 {
		return nil
	}
	return fmt.Errorf("%d %s", st, body)
}

func TestKeyCreationIsAllOrNothing(t *testing.T) {
	for _, invited := range []bool{false, true} {
		t.Run(fmt.Sprintf("invitation mode %v", invited), func(t *testing.T) {
			var f hosttest.Faults
			opts := []envOpt{withStore(t), withFaults(&f)}
			if invited {
				opts = append(opts, withInvitations())
			}
			e := newEnv(t, opts...)
			code := ""
			if invited {
				inv, err := e.srv.Approve(context.Background(), "ada@example.com")
				if err != nil {
					t.Fatal(err)
				}
				code = inv.Code
			}
			w := newWallet(t, "atomic")
			var body []byte
			steps := hosttest.EveryStep(t, &f, e.dir, 8, func() error {
				var st int
				st, body = e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 0, code))
				return httpErr(st, body)
			}, func(k int) {
				st, b := e.call(http.MethodGet, "/auth/derive-api-key", nil, nil, e.l1(w, 0, ""))
				wantErr(t, st, b, 404, "no API key found for this address and nonce")
				var n int
				e.h.Read(context.Background(), func(x *exchange.Engine) { n = x.Totals().Accounts })
				if n != 1 { // the fee account only
					t.Fatalf("after a fault at step %d the engine has %d accounts", k, n)
				}
			})
			want := 3 // key, registration, deposit
			if invited {
				want = 4 // and the code's use
			}
			if steps != want {
				t.Fatalf("key creation took %d steps, want %d", steps, want)
			}
			e.useCreds(w, body)
			if got := balanceOf(e, w); got != "1000" {
				t.Fatalf("balance %s after the successful creation, want the paper balance", got)
			}
		})
	}
}

// TestKeyCreationRefusedWhenThePaperDepositCannotFit reproduces attack 5: with the
// venue-wide collateral bound spent, key creation is refused before any step (400
// "invalid amount"), nothing is journaled, the code is not burnt and derive finds no
// key.
func TestKeyCreationRefusedWhenThePaperDepositCannotFit(t *testing.T) {
	e := newEnv(t, withStore(t), withInvitations())
	ctx := context.Background()
	inv, err := e.srv.Approve(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		var room market.Micros
		e.h.Read(ctx, func(x *exchange.Engine) { room = x.DepositRoom() })
		if room < DefaultPaperBalance {
			break
		}
		if _, err := e.h.Submit(ctx, exchange.Command{Kind: exchange.Deposit, Owner: market.Address{9, byte(i)}, Amount: room}); err != nil {
			t.Fatal(err)
		}
	}
	w := newWallet(t, "late")
	before := hosttest.Files(t, e.dir)
	st, b := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 0, inv.Code))
	wantErr(t, st, b, 400, "invalid amount")
	hosttest.SameFiles(t, e.dir, before)
	st, b = e.call(http.MethodGet, "/auth/derive-api-key", nil, nil, e.l1(w, 0, ""))
	wantErr(t, st, b, 404, "no API key found for this address and nonce")
	if rb := e.h.Stats().Rollbacks; rb != 0 {
		t.Fatalf("%d rollbacks: the refusal came after a step", rb)
	}
	e.srv.st.keysMu.RLock()
	used := e.srv.st.codes[inv.Code].used
	e.srv.st.keysMu.RUnlock()
	if used {
		t.Fatal("the invitation code was burnt")
	}
}

func TestWaitlistApprovalIsAllOrNothing(t *testing.T) {
	var f hosttest.Faults
	e := newEnv(t, withStore(t), withFaults(&f), withInvitations())
	steps := hosttest.EveryStep(t, &f, e.dir, 4, func() error {
		st, b := e.callURL(e.int.URL, http.MethodPost, "/internal/waitlist/approve", []byte(`{"email":"bea@example.com"}`), nil, nil)
		return httpErr(st, b)
	}, func(int) {
		e.srv.st.keysMu.RLock()
		n := len(e.srv.st.waitlist)
		e.srv.st.keysMu.RUnlock()
		if n != 0 {
			t.Fatalf("%d waitlist entries after a fault", n)
		}
	})
	if steps != 2 {
		t.Fatalf("approval took %d steps, want 2 (join, approve)", steps)
	}
}

// openOrders is the number of w's open orders, as the client sees them.
func (e *env) openOrders(w *wallet) int {
	e.t.Helper()
	var page api.Page[api.OpenOrder]
	e.mustJSON(http.MethodGet, "/data/orders", nil, w, &page)
	return len(page.Data)
}

func TestOrderBatchIsAllOrNothing(t *testing.T) {
	var f hosttest.Faults
	e := newEnv(t, withStore(t), withFaults(&f))
	rain := e.mkt("rain-in-lisbon-tomorrow")
	w := e.register(newWallet(t, "batch"))
	var orders []json.RawMessage
	for i := range 2 {
		b, _ := e.order(w, rain, rain.Tokens[market.Yes], market.Buy, market.Micros(300_000+10_000*i), 5*share, orderOpts{})
		var req api.PostOrderRequest
		json.Unmarshal(b, &req)
		orders = append(orders, jsonOf(t, req))
	}
	batch := jsonOf(t, orders)
	steps := hosttest.EveryStep(t, &f, e.dir, 8, func() error {
		st, b := e.call(http.MethodPost, "/orders", batch, w, nil)
		return httpErr(st, b)
	}, func(k int) {
		if n := e.openOrders(w); n != 0 {
			t.Fatalf("%d open orders after a fault at step %d", n, k)
		}
		if got := balanceOf(e, w); got != "1000" {
			t.Fatalf("balance %s after a fault", got)
		}
	})
	if steps != 4 || e.openOrders(w) != 2 {
		t.Fatalf("%d steps and %d open orders, want 4 (a record and a placement per order) and 2", steps, e.openOrders(w))
	}
	// Cancelling both (one SubmitBatch) is all or nothing too.
	ids := []string{}
	var page api.Page[api.OpenOrder]
	e.mustJSON(http.MethodGet, "/data/orders", nil, w, &page)
	for _, o := range page.Data {
		ids = append(ids, string(o.ID))
	}
	steps = hosttest.EveryStep(t, &f, e.dir, 4, func() error {
		st, b := e.call(http.MethodDelete, "/orders", jsonOf(t, ids), w, nil)
		return httpErr(st, b)
	}, func(k int) {
		if n := e.openOrders(w); n != 2 {
			t.Fatalf("%d open orders after a fault at step %d of the cancels, want 2", n, k)
		}
	})
	if steps != 2 || e.openOrders(w) != 0 {
		t.Fatalf("%d steps, %d open orders after the cancels", steps, e.openOrders(w))
	}
}

func TestBuilderOrderIsAllOrNothing(t *testing.T) {
	var f hosttest.Faults
	e := newEnv(t, withStore(t), withFaults(&f))
	rain := e.mkt("rain-in-lisbon-tomorrow")
	w := e.register(newWallet(t, "builder-atomic"))
	e.mustJSON(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), w, nil)
	body := []byte(fmt.Sprintf(`{"order":{"tokenId":%q,"side":"BUY","makerAmount":"1500000","takerAmount":"5000000"},"orderType":"GTC"}`, rain.Tokens[market.Yes]))
	hdr := http.Header{hdrName + "BUILDER_ID": {"acme"}}
	steps := hosttest.EveryStep(t, &f, e.dir, 4, func() error {
		st, b := e.call(http.MethodPost, "/builder/order", body, w, hdr)
		return httpErr(st, b)
	}, func(int) {
		if n := e.openOrders(w); n != 0 {
			t.Fatalf("%d open orders after a fault", n)
		}
	})
	if steps != 2 {
		t.Fatalf("a builder order took %d steps, want 2", steps)
	}
}

func TestHeartbeatExpiryIsAllOrNothing(t *testing.T) {
	var f hosttest.Faults
	e := newEnv(t, withStore(t), withFaults(&f))
	rain := e.mkt("rain-in-lisbon-tomorrow")
	w := e.register(newWallet(t, "beat-atomic"))
	for i := range 2 {
		e.place(w, rain, rain.Tokens[market.Yes], market.Buy, market.Micros(300_000+10_000*i), 5*share, orderOpts{})
	}
	e.mustJSON(http.MethodPost, "/v1/heartbeats", nil, w, nil)
	e.clock.advance(DefaultHeartbeatTimeout + time.Second)
	steps := hosttest.EveryStep(t, &f, e.dir, 6, func() error {
		return e.srv.CheckHeartbeats(context.Background())
	}, func(k int) {
		if n := e.openOrders(w); n != 2 {
			t.Fatalf("%d open orders after a fault at step %d, want 2", n, k)
		}
	})
	if steps != 3 || e.openOrders(w) != 0 {
		t.Fatalf("%d steps, %d open orders: want 3 (two cancels, the chain's end) and 0", steps, e.openOrders(w))
	}
	if err := e.srv.CheckHeartbeats(context.Background()); err != nil || errors.Is(err, hosttest.ErrInjected) {
		t.Fatal(err)
	}
}

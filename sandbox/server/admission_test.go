package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// TestDuplicateOrdersAcrossRestarts: a resubmitted order — resting, filled or
// cancelled — is refused with the engine's exact answer (400 "order … is invalid.
// Duplicated.", or the check that comes first, here the nonce), before and after a
// restart from the journal or from a snapshot (the admission set is rebuilt from
// the engine), and also after a restart over a journal written by a host that was
// not admitted, in which the engine itself refused a duplicate (the replay checks
// every id, so the state is the same and the duplicate still refused).
func TestDuplicateOrdersAcrossRestarts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		every    int
		admitted bool // the first run's host
	}{{"journal replay", -1, true}, {"snapshots", 3, true}, {"journal of an engine that checked ids", -1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			admitted := tc.admitted
			opt := func(_ *Config, h *host.Config) { h.Dir, h.SnapshotEvery, h.AdmittedIDs = dir, tc.every, admitted }
			e := newEnv(t, opt)
			rain := e.mkt("rain-in-lisbon-tomorrow")
			yes := rain.Tokens[market.Yes]
			mm := e.register(newWallet(t, "dup-mm"))
			tk := e.register(newWallet(t, "dup-taker"))
			e.split(mm, rain, 50*share)
			resting, restingID := e.order(mm, rain, yes, market.Sell, 600_000, 10*share, orderOpts{})
			filled, filledID := e.order(mm, rain, yes, market.Sell, 500_000, 5*share, orderOpts{})
			cancelled, cancelledID := e.order(mm, rain, yes, market.Sell, 700_000, 5*share, orderOpts{})
			for _, b := range [][]byte{resting, filled, cancelled} {
				e.mustJSON(http.MethodPost, "/order", b, mm, nil)
			}
			take, _ := e.order(tk, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})
			e.mustJSON(http.MethodPost, "/order", take, tk, nil)
			e.mustJSON(http.MethodDelete, "/order", []byte(`{"orderID":"`+string(cancelledID)+`"}`), mm, nil)
			dups := map[market.OrderID][]byte{restingID: resting, filledID: filled, cancelledID: cancelled}
			refused := func(e *env) {
				t.Helper()
				for id, b := range dups {
					st, body := e.call(http.MethodPost, "/order", b, mm, nil)
					wantErr(t, st, body, 400, "order "+string(id)+" is invalid. Duplicated.")
				}
			}
			refused(e)
			if !tc.admitted { // a journal of before 0169: the engine refused a duplicate itself
				c := exchange.Command{Kind: exchange.Place, Order: filledID, Owner: mm.addr, Market: rain.Condition, Token: yes,
					Side: market.Sell, Type: market.GTC, Price: 500_000, Size: 5 * share, FeeRateBps: rain.FeeBps}
				res, err := e.h.Submit(context.Background(), c)
				if err != nil || res.Err == nil || res.Err.Code != market.CodeDuplicated {
					t.Fatalf("a duplicate through a checking engine: %v %v", err, res.Err)
				}
			}
			// the engine's answer, not a blanket "Duplicated": a nonce moved on first
			if res, err := e.h.Submit(context.Background(), exchange.Command{Kind: exchange.IncrementNonce, Owner: tk.addr}); err != nil || res.Err != nil {
				t.Fatalf("nonce: %v %v", err, res.Err)
			}
			st, body := e.call(http.MethodPost, "/order", take, tk, nil)
			wantErr(t, st, body, 400, "invalid nonce")
			wantEng, _ := e.snapshotOf()
			e.close()

			admitted = true
			e2 := newEnv(t, opt)
			e2.clock.ms.Store(e.clock.now())
			gotEng, _ := e2.snapshotOf()
			if !bytes.Equal(gotEng, wantEng) {
				t.Fatal("engine state after restart differs")
			}
			refused(e2)
			var on bool
			if err := e2.h.Read(context.Background(), func(en *exchange.Engine) { on = en.Admitted() }); err != nil || !on {
				t.Fatalf("engine after restart: admitted %v (%v)", on, err)
			}
			fresh := e2.place(mm, rain, yes, market.Sell, 800_000, 5*share, orderOpts{})
			if !fresh.Success {
				t.Fatalf("a new order after restart: %+v", fresh)
			}
			e2.engineCheck()
		})
	}
}

// TestRacingDuplicateOrders: copies of one signed order posted at once, alone or
// inside batches, are decided by the first to reach the admission: exactly one is
// accepted, every other copy is refused as Duplicated, and the journal (replayed by a
// restart) holds the accepted one only. A copy whose first is rejected by the engine
// is not a duplicate: it is evaluated and rejected for the same reason.
func TestRacingDuplicateOrders(t *testing.T) {
	dir := t.TempDir()
	opt := func(_ *Config, h *host.Config) { h.Dir = dir }
	e := newEnv(t, opt)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	w := e.register(newWallet(t, "racer"))
	const copies = 8
	for round := range 4 {
		body, id := e.order(w, rain, yes, market.Buy, market.Micros(100_000+10_000*round), 5*share, orderOpts{})
		batch, err := json.Marshal([]json.RawMessage{body, body})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		accepted, dup := 0, 0
		var wg sync.WaitGroup
		for k := range copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var answers []api.PostOrderResponse
				if k%2 == 0 {
					st, b := e.call(http.MethodPost, "/order", body, w, nil)
					var r api.PostOrderResponse
					if st == 200 {
						_ = json.Unmarshal(b, &r)
					} else {
						r.ErrorMsg = string(b)
					}
					answers = append(answers, r)
				} else {
					st, b := e.call(http.MethodPost, "/orders", batch, w, nil)
					if st != 200 || json.Unmarshal(b, &answers) != nil {
						t.Errorf("batch: %d %s", st, b)
						return
					}
				}
				mu.Lock()
				defer mu.Unlock()
				for _, r := range answers {
					switch {
					case r.Success && r.OrderID == string(id):
						accepted++
					case bytes.Contains([]byte(r.ErrorMsg), []byte("order "+string(id)+" is invalid. Duplicated.")):
						dup++
					default:
						t.Errorf("copy %d: %+v", k, r)
					}
				}
			}()
		}
		wg.Wait()
		if want := copies/2 + 2*copies/2; accepted != 1 || accepted+dup != want {
			t.Fatalf("round %d: %d accepted, %d duplicated of %d copies", round, accepted, dup, want)
		}
	}
	poor, _ := e.order(w, rain, yes, market.Buy, 500_000, 5000*share, orderOpts{})
	var out []api.PostOrderResponse
	e.mustJSON(http.MethodPost, "/orders", jsonOf(t, []json.RawMessage{poor, poor}), w, &out)
	for i, r := range out {
		if r.Success || r.ErrorMsg != "not enough balance / allowance" {
			t.Fatalf("copy %d of an order the engine rejects: %+v", i, r)
		}
	}
	wantEng, _ := e.snapshotOf()
	var open []market.Order
	if err := e.h.Read(context.Background(), func(en *exchange.Engine) { open = en.OpenOrders(nil, exchange.Filter{Owner: w.addr}) }); err != nil {
		t.Fatal(err)
	}
	if len(open) != 4 {
		t.Fatalf("%d open orders, want 4", len(open))
	}
	e.close()
	e2 := newEnv(t, opt)
	if got, _ := e2.snapshotOf(); !bytes.Equal(got, wantEng) {
		t.Fatal("the journal's replay gives another state")
	}
	e2.engineCheck()
}

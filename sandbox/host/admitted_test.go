package host_test

import (
	"context"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// TestAdmittedIDs: on a host with AdmittedIDs, a Place applied with ApplyAdmitted
// skips the engine's check of final ids (its caller vouches for them), while a
// Place from anywhere else (Submit, Tx.Apply) is still refused as Duplicated when
// its id was accepted before, even after the order became final; the engine is
// admitted after Open and the state stays checkable.
func TestAdmittedIDs(t *testing.T) {
	r := start(t, host.Config{Genesis: genesis, AdmittedIDs: true})
	ctx := context.Background()
	mustOK := func(res host.Result, err error) host.Result {
		t.Helper()
		if err != nil || res.Err != nil {
			t.Fatalf("%v %v", err, res.Err)
		}
		return res
	}
	mustOK(r.h.Submit(ctx, deposit(alice, 100*market.One)))
	var res host.Result
	err := r.h.Exec(ctx, func(tx *host.Tx) error {
		res = tx.ApplyAdmitted(place("a1", alice, market.Buy, 500_000, 10*market.One))
		return nil
	})
	mustOK(res, err)
	mustOK(r.h.Submit(ctx, exchange.Command{Kind: exchange.Cancel, Order: "a1", Owner: alice}))
	for _, via := range []string{"Submit", "Tx.Apply"} {
		var res host.Result
		var err error
		if via == "Submit" {
			res, err = r.h.Submit(ctx, place("a1", alice, market.Buy, 500_000, 10*market.One))
		} else {
			err = r.h.Exec(ctx, func(tx *host.Tx) error {
				res = tx.Apply(place("a1", alice, market.Buy, 500_000, 10*market.One))
				return nil
			})
		}
		if err != nil || res.Err == nil || res.Err.Code != market.CodeDuplicated {
			t.Fatalf("%s of a duplicate of a final id: %v %v", via, err, res.Err)
		}
	}
	var admitted bool
	var cerr error
	if err := r.h.Read(ctx, func(e *exchange.Engine) { admitted, cerr = e.Admitted(), e.Check() }); err != nil || !admitted || cerr != nil {
		t.Fatalf("engine admitted %v, Check %v (%v)", admitted, cerr, err)
	}
}

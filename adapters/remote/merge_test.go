package remote_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote/remotetest"
	"github.com/pitbossdev/pitboss/market"
)

// TestVenueMergesCompleteSets: Merge is POST /ctf/merge on the local exchange:
// complete sets split there come back as collateral, and more sets than held are
// refused.
func TestVenueMergesCompleteSets(t *testing.T) {
	l := startLocal(t)
	fed := l.market(remotetest.FedSlug)
	v, c, _ := l.venue("merger", remotetest.FedSlug)
	ctx := ctxT(t, 10*time.Second)
	if _, err := c.Split(ctx, clob.CTFRequest{ConditionID: fed.Condition, Size: decimal.NewFromInt(10)}); err != nil {
		t.Fatal(err)
	}
	before, err := v.Account(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Merge(ctx, fed.Condition, 11*market.One); err == nil {
		t.Fatal("a merge of 11 sets with 10 held was accepted")
	}
	if err := v.Merge(ctx, fed.Condition, 10*market.One); err != nil {
		t.Fatal(err)
	}
	after, err := v.Account(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Balance != before.Balance+10*market.One || len(after.Positions) != 0 {
		t.Fatalf("after the merge: balance %s (was %s), positions %+v", after.Balance, before.Balance, after.Positions)
	}
}

package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// countingVenue counts the order-changing calls that reach it.
type countingVenue struct {
	agent.Venue
	calls int
}

func (v *countingVenue) Submit(context.Context, *agent.PreparedOrder) (market.Order, error) {
	v.calls++
	return market.Order{}, nil
}
func (v *countingVenue) Cancel(context.Context, market.OrderID) error        { v.calls++; return nil }
func (v *countingVenue) CancelAll(context.Context, market.ConditionID) error { v.calls++; return nil }
func (v *countingVenue) Merge(context.Context, market.ConditionID, market.Micros) error {
	v.calls++
	return nil
}
func (v *countingVenue) Redeem(context.Context, market.ConditionID) error { v.calls++; return nil }

// TestFencedVenueRefusesAfterTheFence: before the fence every order- or
// position-changing call (merges and redeems included) reaches the venue and is
// traced; after it none does, each fails with market.ErrLockLost, and nothing more
// is traced. A venue without Merge or Redeem refuses them behind the fence too.
func TestFencedVenueRefusesAfterTheFence(t *testing.T) {
	inner := &countingVenue{}
	var fenced error
	var trace bytes.Buffer
	v, err := fenceVenue(inner, func() error { return fenced }, &orderTrace{w: &trace, agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func() []error {
		_, e1 := v.Submit(ctx, &agent.PreparedOrder{})
		return []error{e1, v.Cancel(ctx, "0x1"), v.CancelAll(ctx, ""), v.(agent.Merger).Merge(ctx, "0x2", market.One),
			v.(agent.Redeemer).Redeem(ctx, "0x2")}
	}
	for _, err := range call() {
		if err != nil {
			t.Fatal(err)
		}
	}
	if inner.calls != 5 {
		t.Fatalf("%d calls reached the venue, want 5", inner.calls)
	}
	lines := bytes.Split(bytes.TrimSpace(trace.Bytes()), []byte("\n"))
	for _, l := range lines {
		var tl OrderTraceLine
		if err := json.Unmarshal(l, &tl); err != nil || tl.Agent != "a" || tl.End < tl.Start || tl.Start == 0 {
			t.Fatalf("trace line %s: %v", l, err)
		}
	}
	if len(lines) != 5 {
		t.Fatalf("%d trace lines, want 5", len(lines))
	}
	fenced = market.Errorf(market.CodeLockLost, "the wallet")
	for _, err := range call() {
		if !errors.Is(err, market.ErrLockLost) {
			t.Fatalf("after the fence: %v", err)
		}
	}
	if inner.calls != 5 || bytes.Count(trace.Bytes(), []byte("\n")) != 5 {
		t.Fatalf("after the fence: %d calls reached the venue, %d traced", inner.calls, bytes.Count(trace.Bytes(), []byte("\n")))
	}
	plain, err := fenceVenue(&plainVenue{}, func() error { return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.(agent.Merger).Merge(ctx, "0x2", market.One) == nil || plain.(agent.Redeemer).Redeem(ctx, "0x2") == nil {
		t.Fatal("a venue without Merge or Redeem merged or redeemed behind the fence")
	}
}

// plainVenue has no Merge or Redeem.
type plainVenue struct{ agent.Venue }

package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// blockingVenue is an asynchronous fakeVenue whose Submit waits until released, and
// which may declare that its Prepare runs on the loop (agent.LocalPreparer).
type blockingVenue struct {
	*fakeVenue
	local    bool
	entered  chan struct{} // one value per Submit that started
	release  chan struct{}
	prepared chan market.OrderID
}

func (v *blockingVenue) PrepareLocally() bool { return v.local }

func (v *blockingVenue) Prepare(ctx context.Context, req agent.OrderRequest) (agent.PreparedOrder, error) {
	p, err := v.fakeVenue.Prepare(ctx, req)
	if err == nil {
		v.prepared <- p.ID
	}
	return p, err
}

func (v *blockingVenue) Submit(ctx context.Context, p *agent.PreparedOrder) (market.Order, error) {
	v.entered <- struct{}{}
	select {
	case <-v.release:
	case <-ctx.Done():
		return market.Order{}, ctx.Err()
	}
	return v.fakeVenue.Submit(ctx, p)
}

// TestLocalPreparerCheckpointsTheIDBeforeTheAnswer: a venue whose Prepare runs on the
// loop has the order's id in the checkpoint, marked in flight, while its Submit is
// still unanswered — what a restart after a crash between the post and its answer
// needs to find the order by id. A venue prepared on an executor has no id to save
// until the answer comes back.
func TestLocalPreparerCheckpointsTheIDBeforeTheAnswer(t *testing.T) {
	for _, local := range []bool{true, false} {
		name := map[bool]string{true: "prepared on the loop: id saved while in flight", false: "prepared on an executor: no id until the answer"}[local]
		t.Run(name, func(t *testing.T) {
			v := &blockingVenue{fakeVenue: newFakeVenue(), local: local, entered: make(chan struct{}, 4),
				release: make(chan struct{}), prepared: make(chan market.OrderID, 4)}
			store := agent.NewMemStore()
			cfg := baseConfig()
			cfg.CheckpointInterval = 5 * time.Millisecond
			more := make(chan market.Event, 4)
			a := newAgent(t, cfg, v, &scriptFeed{more: more}, bidQuoter("10"), &fakeGuards{},
				func(d *agent.Deps) { d.Store = store })
			stop := run(t, a)
			more <- book(1000, "0.45", "0.50")
			var id market.OrderID
			select {
			case id = <-v.prepared:
			case <-time.After(10 * time.Second):
				t.Fatal("the order was never prepared")
			}
			select {
			case <-v.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the order was never submitted")
			}
			// Another event makes the state dirty again, so a checkpoint follows.
			more <- book(2000, "0.45", "0.50")
			inFlight := func() (bool, bool) {
				c, err := store.Load()
				if err != nil || c == nil || c.Time < 2000 {
					return false, false
				}
				for _, o := range c.Orders {
					if o.ID == id {
						return true, o.InFlight
					}
				}
				return true, false
			}
			waitFor(t, "a checkpoint after the placement", func() bool { ok, _ := inFlight(); return ok })
			if _, found := inFlight(); found != local {
				t.Fatalf("order %s in the checkpoint while in flight: %v, want %v", id, found, local)
			}
			close(v.release)
			waitFor(t, "the order to be live", func() bool { return fresh(a).OpenOrders == 1 })
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestThePlaceRecordCarriesTheOrderID: when the order's id is known before it is
// sent (a synchronous venue, or one that prepares on the loop), the "place" audit
// record carries it — the same id as the "placed" record of the venue's answer.
// A venue prepared on an executor has no id to record until the answer.
func TestThePlaceRecordCarriesTheOrderID(t *testing.T) {
	tests := []struct {
		name        string
		sync, local bool
		wantID      bool
	}{
		{name: "synchronous venue", sync: true, wantID: true},
		{name: "prepared on the loop", local: true, wantID: true},
		{name: "prepared on an executor", wantID: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fv := newFakeVenue()
			fv.sync = tt.sync
			var v agent.Venue = fv
			if tt.local {
				v = &localVenue{fakeVenue: fv}
			}
			log := &auditLog{}
			a := newAgent(t, baseConfig(), v, &scriptFeed{events: []market.Event{book(1000, "0.45", "0.50")}},
				bidQuoter("10"), &fakeGuards{}, func(d *agent.Deps) { d.Audit = log })
			if err := a.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			var place, placed *agent.AuditRecord
			log.mu.Lock()
			defer log.mu.Unlock()
			for i := range log.recs {
				switch r := &log.recs[i]; {
				case r.Kind == agent.AuditOrder && r.Op == "place" && place == nil:
					place = r
				case r.Kind == agent.AuditOrder && r.Op == "placed" && placed == nil:
					placed = r
				}
			}
			if place == nil || placed == nil || placed.Order.ID == "" {
				t.Fatalf("records place=%v placed=%v", place, placed)
			}
			if got := place.Order.ID != ""; got != tt.wantID {
				t.Fatalf("place record's order id %q, want one: %v", place.Order.ID, tt.wantID)
			}
			if tt.wantID && place.Order.ID != placed.Order.ID {
				t.Fatalf("place record's id %s, the venue's %s", place.Order.ID, placed.Order.ID)
			}
		})
	}
}

// localVenue is a fakeVenue that prepares on the loop.
type localVenue struct{ *fakeVenue }

func (v *localVenue) PrepareLocally() bool { return true }

package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// fencedVenue passes the agent's order-changing calls (Submit, Cancel, CancelAll)
// and position-changing ones (Merge, Redeem: agent.Merger, agent.Redeemer, which it
// forwards when the venue has them) to the venue only while check allows
// (docs/design/0142: the lease fence); after it, they fail with check's error and
// the venue is not called. Reads, Prepare and Heartbeat pass. Calls that went out
// are written to trace, if set.
type fencedVenue struct {
	agent.Venue
	check func() error
	trace *orderTrace
}

// fenceVenue wraps v. A venue that simulates and persists (the paper venue) keeps
// doing both; one that does only one of them cannot be wrapped faithfully and is
// refused.
func fenceVenue(v agent.Venue, check func() error, trace *orderTrace) (agent.Venue, error) {
	f := &fencedVenue{Venue: v, check: check, trace: trace}
	sim, isSim := v.(agent.Simulator)
	per, isPer := v.(agent.Persistent)
	switch {
	case isSim && isPer:
		return &fencedSim{fencedVenue: f, sim: sim, per: per}, nil
	case isSim || isPer:
		return nil, fmt.Errorf("wire: the venue %T cannot be fenced (it simulates or persists, not both)", v)
	}
	return f, nil
}

// Synchronous forwards agent.Synchronous.
func (v *fencedVenue) Synchronous() bool {
	s, ok := v.Venue.(agent.Synchronous)
	return ok && s.Synchronous()
}

// PrepareLocally forwards agent.LocalPreparer.
func (v *fencedVenue) PrepareLocally() bool {
	p, ok := v.Venue.(agent.LocalPreparer)
	return ok && p.PrepareLocally()
}

// Submit implements agent.Venue behind the fence.
func (v *fencedVenue) Submit(ctx context.Context, p *agent.PreparedOrder) (market.Order, error) {
	if err := v.check(); err != nil {
		return market.Order{}, err
	}
	defer v.trace.call("submit")()
	return v.Venue.Submit(ctx, p)
}

// Cancel implements agent.Venue behind the fence.
func (v *fencedVenue) Cancel(ctx context.Context, id market.OrderID) error {
	if err := v.check(); err != nil {
		return err
	}
	defer v.trace.call("cancel")()
	return v.Venue.Cancel(ctx, id)
}

// CancelAll implements agent.Venue behind the fence.
func (v *fencedVenue) CancelAll(ctx context.Context, m market.ConditionID) error {
	if err := v.check(); err != nil {
		return err
	}
	defer v.trace.call("cancel_all")()
	return v.Venue.CancelAll(ctx, m)
}

// Merge implements agent.Merger behind the fence (the venue's Merge, when it has one).
func (v *fencedVenue) Merge(ctx context.Context, m market.ConditionID, size market.Micros) error {
	mg, ok := v.Venue.(agent.Merger)
	if !ok {
		return fmt.Errorf("wire: the venue %T cannot merge complete sets", v.Venue)
	}
	return v.behind("merge", func() error { return mg.Merge(ctx, m, size) })
}

// Redeem implements agent.Redeemer behind the fence (the venue's Redeem, when it
// has one).
func (v *fencedVenue) Redeem(ctx context.Context, m market.ConditionID) error {
	rd, ok := v.Venue.(agent.Redeemer)
	if !ok {
		return fmt.Errorf("wire: the venue %T cannot redeem resolved tokens", v.Venue)
	}
	return v.behind("redeem", func() error { return rd.Redeem(ctx, m) })
}

// behind makes call, traced as op, while the fence allows; after it, check's error.
func (v *fencedVenue) behind(op string, call func() error) error {
	if err := v.check(); err != nil {
		return err
	}
	defer v.trace.call(op)()
	return call()
}

// fencedSim is a fencedVenue over a simulating, persistent venue.
type fencedSim struct {
	*fencedVenue
	sim agent.Simulator
	per agent.Persistent
}

func (v *fencedSim) Attach(emit func(*market.Event)) { v.sim.Attach(emit) }
func (v *fencedSim) ObserveMarket(ev *market.Event)  { v.sim.ObserveMarket(ev) }
func (v *fencedSim) Snapshot() ([]byte, error)       { return v.per.Snapshot() }
func (v *fencedSim) Restore(data []byte) error       { return v.per.Restore(data) }

// OrderTraceLine is one line of an order trace (Options.OrderTrace): an
// order-changing venue call that went out, with the process and the wall-clock
// times (Unix ns) it started and ended. Tests of a fleet check with it that two
// processes never traded one wallet at the same time.
type OrderTraceLine struct {
	PID    int            `json:"pid"`
	Agent  market.AgentID `json:"agent"`
	Wallet market.Address `json:"wallet"`
	Op     string         `json:"op"`
	Start  int64          `json:"start_ns"`
	End    int64          `json:"end_ns"`
}

// orderTrace writes OrderTraceLines, one write each (an O_APPEND file shared by
// processes keeps lines whole). A nil *orderTrace writes nothing.
type orderTrace struct {
	mu     sync.Mutex
	w      io.Writer
	agent  market.AgentID
	wallet market.Address
}

func (t *orderTrace) call(op string) func() {
	if t == nil {
		return func() {}
	}
	start := time.Now()
	return func() {
		end := time.Now()
		b, _ := json.Marshal(OrderTraceLine{PID: os.Getpid(), Agent: t.agent, Wallet: t.wallet, Op: op, Start: start.UnixNano(), End: end.UnixNano()})
		t.mu.Lock()
		_, _ = t.w.Write(append(b, '\n'))
		t.mu.Unlock()
	}
}

package natsbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// fleetAgent plays an agent process on its own TCP connection with the agent role:
// it answers control requests, beats, and audits every order it "places" through an
// AuditWriter, as runtime/agent will.
type fleetAgent struct {
	id     market.AgentID
	wallet market.Address
	bus    *Bus
	audit  *AuditWriter

	mu     sync.Mutex
	state  AgentState
	placed int
}

func (a *fleetAgent) handle(_ context.Context, req ControlRequest) (AgentState, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch req.Op {
	case OpPause:
		a.state = StatePaused
	case OpResume:
		if a.state != StateKilled {
			a.state = StateRunning
		}
	case OpKill:
		a.state = StateKilled
	}
	rec := AuditRecord{Kind: AuditControl, Control: &ControlRecord{Request: req, OK: true}}
	if err := a.audit.Enqueue(rec); err != nil {
		return a.state, err
	}
	return a.state, nil
}

// place "places" one order if the agent may, and audits it.
func (a *fleetAgent) place(t *testing.T) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state != StateRunning {
		return false
	}
	a.placed++
	o := market.Order{ID: market.OrderID(fmt.Sprintf("%s-o%d", a.id, a.placed)), Token: tokYes, Side: market.Buy, Price: 500_000, Size: market.One}
	if err := a.audit.Enqueue(AuditRecord{Kind: AuditOrder, Order: NewOrderRecord("place", &o)}); err != nil {
		t.Errorf("audit: %v", err)
	}
	return true
}

func (a *fleetAgent) status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Status{Agent: a.id, Wallet: a.wallet, State: a.state, PID: os.Getpid(), Host: "test"}
}

// fleetSupervisor plays a supervisor: its own connection, the wallet and agent locks
// of the agents it runs, and their lifecycle subjects.
type fleetSupervisor struct {
	name   string
	bus    *Bus
	locks  *Locks
	agents map[market.AgentID]*fleetAgent
}

func (s *fleetSupervisor) start(t *testing.T, srv *Server, id market.AgentID, wallet market.Address) error {
	t.Helper()
	ctx := ctxT(t, 5*time.Second)
	h := Holder{Agent: id, Supervisor: s.name, PID: os.Getpid()}
	wl, err := s.locks.Acquire(ctx, WalletLockKey(wallet), h)
	if err != nil {
		return err
	}
	key, _ := AgentLockKey(id)
	al, err := s.locks.Acquire(ctx, key, h)
	if err != nil {
		_ = wl.Release(ctx)
		return err
	}
	for _, l := range []*Lease{wl, al} {
		l := l
		runBG(t, func(ctx context.Context) error {
			if err := l.Run(ctx); err != nil {
				return err
			}
			return l.Release(context.Background())
		})
	}
	// The child: agent role over TCP, credentials from the environment.
	env := map[string]string{}
	for _, kv := range srv.Endpoint(RoleAgent).Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	ep, err := EndpointFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	bus, err := Connect(ctx, ep, ConnectOptions{Name: "agent " + string(id)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	log, err := bus.AuditLog(id, wallet, "")
	if err != nil {
		t.Fatal(err)
	}
	a := &fleetAgent{id: id, wallet: wallet, bus: bus, audit: log.NewWriter(AuditWriterConfig{}), state: StateRunning}
	runBG(t, a.audit.Run)
	ctl, err := bus.ServeAgentControl(id, a.handle)
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, ctl.Run)
	runBG(t, func(ctx context.Context) error { return bus.RunHeartbeat(ctx, 100*time.Millisecond, a.status) })
	life, err := s.bus.ServeLifecycle(id, func(context.Context, ControlRequest) (AgentState, error) { return StateStarting, nil })
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, life.Run)
	s.agents[id] = a
	return nil
}

// TestTwoSupervisorsShareOneFleet runs two supervisors and three agents on one
// embedded server, over TCP with the two roles: a third agent on a wallet the other
// supervisor holds is refused, control reaches exactly its target, a fleet-wide kill
// switch reaches every agent and persists in the desired state, and the audit stream
// holds every order placed.
func TestTwoSupervisorsShareOneFleet(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxT(t, 30*time.Second)
	var sups []*fleetSupervisor
	for _, name := range []string{"sup-1", "sup-2"} {
		bus, err := Connect(ctx, srv.Endpoint(RoleSupervisor), ConnectOptions{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bus.Close)
		if err := bus.EnsureAudit(ctx, AuditConfig{}); err != nil {
			t.Fatal(err)
		}
		locks, err := bus.EnsureLocks(ctx, LockConfig{TTL: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		sups = append(sups, &fleetSupervisor{name: name, bus: bus, locks: locks, agents: map[market.AgentID]*fleetAgent{}})
	}
	ds, err := sups[0].bus.EnsureDesired(ctx, Replicas{})
	if err != nil {
		t.Fatal(err)
	}
	roster, err := sups[1].bus.NewRoster(RosterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, roster.Run)

	w1, w2, w3 := market.Address{1}, market.Address{2}, market.Address{3}
	for _, st := range []struct {
		sup    int
		id     market.AgentID
		wallet market.Address
	}{{0, "a1", w1}, {0, "a2", w2}, {1, "b1", w3}} {
		if err := sups[st.sup].start(t, srv, st.id, st.wallet); err != nil {
			t.Fatalf("start %s: %v", st.id, err)
		}
	}
	// sup-2 tries to run another agent on a1's wallet, and a second a1.
	err = sups[1].start(t, srv, "b2", w1)
	var held *LockHeldError
	if !errors.As(err, &held) || held.Holder.Agent != "a1" || held.Holder.Supervisor != "sup-1" {
		t.Fatalf("second agent on wallet w1: %v", err)
	}
	if err := sups[1].start(t, srv, "a1", market.Address{9}); !errors.Is(err, market.ErrLockHeld) {
		t.Fatalf("second a1: %v", err)
	}

	waitFor(t, 5*time.Second, "three agents alive", func() bool {
		n := 0
		for _, e := range roster.Snapshot() {
			if e.Liveness == LivenessAlive {
				n++
			}
		}
		return n == 3
	})
	all := map[market.AgentID]*fleetAgent{}
	for _, s := range sups {
		for id, a := range s.agents {
			all[id] = a
		}
	}
	placeAll := func() map[market.AgentID]bool {
		out := map[market.AgentID]bool{}
		for id, a := range all {
			out[id] = a.place(t)
		}
		return out
	}
	placeAll()

	// Pause a2 from sup-2 (which does not run it): only a2 stops placing.
	if _, err := sups[1].bus.Control(ctx, ControlRequest{Op: OpPause, Target: "a2", From: "sup-2"}); err != nil {
		t.Fatal(err)
	}
	if got := placeAll(); got["a2"] || !got["a1"] || !got["b1"] {
		t.Fatalf("after pausing a2: %v", got)
	}
	// Restart b1 goes to its supervisor.
	if rep, err := sups[0].bus.Control(ctx, ControlRequest{Op: OpRestart, Target: "b1"}); err != nil || rep.State != StateStarting {
		t.Fatalf("restart b1: %+v %v", rep, err)
	}
	// Kill switch for the fleet: broadcast and record it.
	if err := ds.Set(ctx, "", Desired{State: DesiredKilled, By: "operator", Reason: "drill"}); err != nil {
		t.Fatal(err)
	}
	reps, err := sups[0].bus.ControlAll(ctx, ControlRequest{Op: OpKill, Reason: "drill"}, []market.AgentID{"a1", "a2", "b1"})
	if err != nil || len(reps) != 3 {
		t.Fatalf("kill all: %v %v", reps, err)
	}
	if got := placeAll(); got["a1"] || got["a2"] || got["b1"] {
		t.Fatalf("placed after the kill switch: %v", got)
	}
	agentView, err := all["b1"].bus.OpenDesired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := agentView.EffectiveFor(ctx, "b1"); err != nil || st != DesiredKilled {
		t.Fatalf("b1's effective desired state %v %v", st, err)
	}

	// Every order placed is in the audit trail, once.
	placed := 0
	for _, a := range all {
		if err := a.audit.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		placed += a.placed
	}
	orders := map[market.OrderID]int{}
	if err := sups[1].bus.TailAudit(ctx, AuditFilter{Kinds: []AuditKind{AuditOrder}}, func(e AuditEntry) error {
		orders[e.Record.Order.ID]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(orders) != placed || placed != 5 {
		t.Fatalf("%d orders audited, %d placed", len(orders), placed)
	}
	for id, n := range orders {
		if n != 1 {
			t.Fatalf("order %s audited %d times", id, n)
		}
	}
	controls := 0
	if err := sups[1].bus.TailAudit(ctx, AuditFilter{Agent: "a2", Kinds: []AuditKind{AuditControl}}, func(AuditEntry) error {
		controls++
		return nil
	}); err != nil || controls != 2 {
		t.Fatalf("a2's control records: %d, %v", controls, err)
	}
}

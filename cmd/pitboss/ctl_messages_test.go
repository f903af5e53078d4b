package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// ctlFleet is an embedded server with a stand-in supervisor listing agents a and b
// and agent a answering control requests as an agent whose kill switch is
// tripped; creds is an endpoint file for `ctl --creds`.
func ctlFleet(t *testing.T) (creds string, bus *natsbus.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	bus, err = srv.Connect(ctx, natsbus.RoleSupervisor, natsbus.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	if _, err := bus.EnsureDesired(ctx, natsbus.Replicas{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.EnsureLocks(ctx, natsbus.LockConfig{}); err != nil {
		t.Fatal(err)
	}
	view := supervisor.FleetView{V: 1, Fleet: "f", Supervisor: "s1", Agents: []supervisor.AgentView{
		{ID: "a", Supervisor: "s1", Process: supervisor.ProcRunning}, {ID: "b", Supervisor: "s1", Process: supervisor.ProcRunning}}}
	sub, err := bus.Conn().Subscribe(supervisor.SubjectRoster, func(m *nats.Msg) {
		data, _ := json.Marshal(view)
		_ = m.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	cs, err := bus.ServeAgentControl("a", func(context.Context, natsbus.ControlRequest) (natsbus.AgentState, error) {
		return natsbus.StateKilled, market.Errorf(market.CodeKillSwitchTripped, "a", "drill")
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = cs.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	creds = filepath.Join(t.TempDir(), "ctl.json")
	if err := srv.Endpoint(natsbus.RoleSupervisor).WriteFile(creds); err != nil {
		t.Fatal(err)
	}
	return creds, bus
}

// TestCtlNamesTheCommandThatReArms: a refusal by a tripped kill switch names the
// command that re-arms it (resume-after-kill, not the fleet's internal op
// resume_after_kill), once.
func TestCtlNamesTheCommandThatReArms(t *testing.T) {
	creds, _ := ctlFleet(t)
	code, out, errOut := ctl(t, t.TempDir(), "--creds", creds, "resume", "a")
	all := out + errOut
	if code != 1 || strings.Contains(all, "resume_after_kill") || !strings.Contains(out, "pitboss ctl resume-after-kill a") ||
		strings.Count(all, "kill switch of agent a is tripped") != 1 {
		t.Fatalf("ctl resume of a killed agent: %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// TestCtlNamesTheFleetsAgentsForAnUnknownOne: a command for an agent the fleet does
// not have names the agents it has, and records nothing for it.
func TestCtlNamesTheFleetsAgentsForAnUnknownOne(t *testing.T) {
	creds, bus := ctlFleet(t)
	code, out, errOut := ctl(t, t.TempDir(), "--creds", creds, "pause", "nosuch")
	if code != 1 || !strings.Contains(errOut, "agent nosuch is not running") || !strings.Contains(errOut, "its agents: a, b") {
		t.Fatalf("ctl pause nosuch: %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds, err := bus.OpenDesired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok, err := ds.Get(ctx, "nosuch"); err != nil || ok {
		t.Fatalf("a desired state was recorded for an agent the fleet does not have: %+v %v", d, err)
	}
}

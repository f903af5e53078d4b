package natsbus_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// A supervisor's start-up: embed the server, provision the fleet's streams and
// buckets, take the wallet lock before starting an agent, hand the agent its
// credentials, and control it.
func Example() {
	dir, _ := os.MkdirTemp("", "pitboss-nats-")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	srv, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()
	sup, err := srv.Connect(ctx, natsbus.RoleSupervisor, natsbus.ConnectOptions{Name: "supervisor"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sup.Close()
	if err := sup.EnsureAudit(ctx, natsbus.AuditConfig{}); err != nil {
		fmt.Println(err)
		return
	}
	locks, err := sup.EnsureLocks(ctx, natsbus.LockConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}

	wallet, _ := market.ParseAddress("0x00000000000000000000000000000000000000a1")
	lease, err := locks.Acquire(ctx, natsbus.WalletLockKey(wallet), natsbus.Holder{Agent: "mm-1", Supervisor: "sup-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lease.Release(ctx)
	_, err = locks.Acquire(ctx, natsbus.WalletLockKey(wallet), natsbus.Holder{Agent: "mm-2", Supervisor: "sup-1"})
	fmt.Println(errors.Is(err, market.ErrLockHeld), err)

	// The child gets the agent role's endpoint in its environment (exec.Cmd.Env).
	for _, kv := range srv.Endpoint(natsbus.RoleAgent).Environ() {
		name, _, _ := strings.Cut(kv, "=")
		fmt.Println(name)
	}

	// In the child: connect from the environment and answer control requests.
	env := map[string]string{}
	for _, kv := range srv.Endpoint(natsbus.RoleAgent).Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	ep, _ := natsbus.EndpointFromEnv(func(k string) string { return env[k] })
	agent, err := natsbus.Connect(ctx, ep, natsbus.ConnectOptions{Name: "agent mm-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	ctl, _ := agent.ServeAgentControl("mm-1", func(_ context.Context, req natsbus.ControlRequest) (natsbus.AgentState, error) {
		if req.Op == natsbus.OpPause {
			return natsbus.StatePaused, nil
		}
		return natsbus.StateRunning, nil
	})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ctl.Run(runCtx) }()
	defer func() { stop(); <-done }()

	// Back in the supervisor (or `pitboss ctl`).
	rep, err := sup.Control(ctx, natsbus.ControlRequest{Op: natsbus.OpPause, Target: "mm-1", From: "operator"})
	fmt.Println(rep.Agent, rep.State, err)
	_, err = sup.Control(ctx, natsbus.ControlRequest{Op: natsbus.OpPause, Target: "mm-9"})
	fmt.Println(err)

	// Output:
	// true wallet 0x00000000000000000000000000000000000000a1 is already held by agent mm-1 (supervisor sup-1)
	// PITBOSS_NATS_URL
	// PITBOSS_NATS_USER
	// PITBOSS_NATS_PASSWORD
	// mm-1 paused <nil>
	// natsbus: pause: agent mm-9 is not running
}

// Market data travels between processes as compact binary frames.
func ExampleAppendFrame() {
	ev := market.Event{Kind: market.EventPriceChange, Token: "123", Changes: []market.LevelChange{
		{Token: "123", Side: market.Buy, Price: 480_000, Size: 25 * market.One},
	}}
	frame, _ := natsbus.AppendFrame(nil, natsbus.FrameHeader{Epoch: 1, Seq: 42}, &ev)
	var got market.Event
	h, err := natsbus.DecodeFrame(frame, &got)
	fmt.Println(len(frame), h.Seq, got.Changes[0].Price, got.Changes[0].Size, err)
	// Output: 23 42 0.48 25 <nil>
}

package wire

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// TestFleetStateFollowsTheAgent: a checkpoint saved on one "machine" is what the
// next one's Load returns (its own disk being empty or older), with the
// identity of the other machine's file path dropped; once the successor saved,
// the predecessor's next save is refused by the compare-and-set (lost is
// called) and it writes its disk only from then on.
func TestFleetStateFollowsTheAgent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	bus, err := srv.Connect(ctx, natsbus.RoleSupervisor, natsbus.ConnectOptions{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	kv, err := bus.EnsureState(ctx, natsbus.Replicas{})
	if err != nil {
		t.Fatal(err)
	}
	machine := func() (*fleetStore, *[]error) {
		f, err := agent.NewFileStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		kv, err := bus.OpenState(ctx) // a writer of its own, as each process is
		if err != nil {
			t.Fatal(err)
		}
		var lost []error
		return &fleetStore{file: f, kv: kv, id: "a1", check: func() error { return nil }, log: zap.NewNop(),
			lost: func(err error) { lost = append(lost, err) }}, &lost
	}
	one, lostOne := machine()
	if cp, err := one.Load(); err != nil || cp != nil {
		t.Fatalf("first load: %+v %v", cp, err)
	}
	cp := &agent.Checkpoint{Version: agent.CheckpointVersion, Agent: "a1", Identity: "file:/machine-one/agent.yaml", Runs: 1, Time: 100,
		Kill: []byte(`{"tripped":true}`), Positions: []agent.CheckpointPosition{{Token: "1", Size: agent.Amount(5_000_000)}}}
	if err := one.Save(cp); err != nil {
		t.Fatal(err)
	}

	two, _ := machine()
	got, err := two.Load()
	if err != nil || got == nil || got.Runs != 1 || string(got.Kill) != `{"tripped":true}` || len(got.Positions) != 1 || got.Identity != "" {
		t.Fatalf("the other machine loaded %+v, %v", got, err)
	}
	got.Runs = 2
	if err := two.Save(got); err != nil {
		t.Fatal(err)
	}
	cp.Time = 200
	if err := one.Save(cp); err != nil {
		t.Fatal(err)
	}
	if len(*lostOne) != 1 || !errors.Is((*lostOne)[0], market.ErrLockLost) {
		t.Fatalf("the predecessor's save after its successor's: lost %v", *lostOne)
	}
	if data, _, err := kv.Get(ctx, "a1"); err != nil || !strings.Contains(string(data), `"runs":2`) {
		t.Fatalf("the bucket holds %s (%v), want the successor's", data, err)
	}
	if disk, err := one.file.Load(); err != nil || disk.Time != 200 {
		t.Fatalf("the predecessor's disk: %+v %v", disk, err)
	}
}

package clob_test

import (
	"context"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// The fleet budget of adapters/natsbus plugs into the client as it is.
var _ clob.UrgentLimiter = (*natsbus.Budget)(nil)

// TestFleetBudgetPlugsIn runs a client whose budget is the fleet's (an embedded
// NATS server with a JetStream budget): every request to the CLOB service takes a
// grant, cancels from the urgent reserve, and the other services take none.
func TestFleetBudgetPlugsIn(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	ns, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	defer ns.Shutdown()
	bus, err := ns.Connect(ctx, natsbus.RoleSupervisor, natsbus.ConnectOptions{Name: "clob-test", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	budget, err := bus.EnsureBudget(ctx, natsbus.BudgetConfig{Key: "127.0.0.1", Limit: 100, Reserve: 10, Window: time.Minute, Memory: true})
	if err != nil {
		t.Fatal(err)
	}

	l := startLocal(t)
	maker := l.client("fleet") // credentials, created without the fleet budget
	cfg := l.config(signer(t, "fleet"))
	cfg.Budget = budget
	cfg.Credentials = credsOf(t, maker)
	c, err := clob.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	used := func() int {
		n, err := budget.Used(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := used()
	if _, err := c.ServerTime(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := c.PlaceOrder(ctx, clob.OrderArgs{Token: l.market(fedSlug).Tokens[market.Yes], Side: market.Buy, Price: d("0.2"), Size: d("5")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CancelOrder(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Data().PositionsPage(ctx, api.PositionsQuery{User: c.Address()}); err != nil {
		t.Fatal(err)
	}
	// GET /time, the three market parameters, POST /order, DELETE /order: 6 grants.
	if got := used() - before; got != 6 {
		t.Fatalf("%d grants taken, want 6 (the data service takes none)", got)
	}
	short, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.ServerTime(short); err == nil {
		t.Fatal("a request went without a grant")
	}
}

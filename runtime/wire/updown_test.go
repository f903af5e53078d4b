package wire_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/wire"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// orderAudit keeps the agent's order records.
type orderAudit struct {
	mu  sync.Mutex
	ops []agent.AuditRecord
}

func (a *orderAudit) Audit(r *agent.AuditRecord) {
	if r.Kind == agent.AuditOrder {
		a.mu.Lock()
		a.ops = append(a.ops, *r)
		a.mu.Unlock()
	}
}

// TestUnderlyingTradesTheUpDownMarket: the underlying example, as shipped, dry-runs
// on the embedded venue (sim clock, seed 1, 20 minutes): it binds the BTC up/down
// market of the first 15-minute window, trades it, and the venue resolves it at
// the window's end (the event time the agent sees it at) with the outcome of
// sim.NewPrices(1, start) at the window's two ends; the strategy's collect rule
// redeems exactly the winning shares it held (the paper account's balance is then
// its equity, nothing held); the next window's market is listed by then, and the
// engine's ledger invariants hold.
func TestUnderlyingTradesTheUpDownMarket(t *testing.T) {
	spec, err := agents.Options{Getenv: func(string) string { return "" }}.Load("../../agents/examples/underlying/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	audit := &orderAudit{}
	r, err := wire.Build(spec, wire.Options{Clock: wire.ClockSim, Seed: 1, Duration: 20 * time.Minute,
		StateDir: t.TempDir(), RuntimeDir: t.TempDir(), Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := wire.SimEpoch
	u, _ := sim.NewUpDown(1, start, market.FeedSymbol{}, 0)
	w0 := u.Market(0)
	if len(r.Bindings) != 1 || r.Bindings[0].Name != w0.Spec.Slug || w0.Spec.Slug != "btc-updown-15m-1735689600" {
		t.Fatalf("bound %+v, want the first window's market %s", r.Bindings, w0.Spec.Slug)
	}
	if err := r.Agent.Run(context.Background()); err != nil {
		t.Fatal(err)
	}

	ref := sim.NewPrices(1, start, []market.FeedSymbol{sim.DefaultUpDownSymbol})
	px := map[int64]float64{}
	for ref.Next() <= start+15*60_000 {
		ev := ref.Step(nil)[0]
		px[ev.Time] = ev.Value
	}
	want := market.No
	if px[start+15*60_000] >= px[start] {
		want = market.Yes
	}
	var info, next market.Info
	r.Exchange.Read(func(e *exchange.Engine) {
		info, _ = e.Market(w0.Market)
		next, _ = e.Market(u.Market(1).Market)
		if err := e.Check(); err != nil {
			t.Error(err)
		}
	})
	if !info.Resolved || info.Winner != want || next.Slug != "btc-updown-15m-1735690500" || !next.Tradable() {
		t.Fatalf("window 0 resolved %v to %v, want %v (%v → %v); window 1 %+v", info.Resolved, info.Winner, want,
			px[start], px[start+15*60_000], next)
	}

	var redeems, fills int
	for _, op := range audit.ops {
		if op.Op == "redeem" {
			redeems++
			if op.Time != start+15*60_000 || op.Order.Market != w0.Market || op.Err != "" || op.Order.Size <= 0 {
				t.Fatalf("redeem %+v, want one of the first window's market at its end", op)
			}
		}
	}
	s := r.Agent.Status()
	fills = int(s.Counts.Fills)
	if redeems != 1 || fills == 0 {
		t.Fatalf("%d redeems and %d fills, want one redeem after trading", redeems, fills)
	}
	for _, p := range s.Positions {
		if p.Size != 0 {
			t.Fatalf("position %+v left after the redeem", p)
		}
	}
	if s.Balance != s.Equity {
		t.Fatalf("balance %s, equity %s: something left unredeemed", s.Balance, s.Equity)
	}
	t.Logf("window 0 %v (%.2f → %.2f); %d fills, pnl %s", want, px[start], px[start+15*60_000], fills, s.PnL)
}

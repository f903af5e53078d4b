package dashboard

import (
	"context"
	"sync"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// fixtureEpoch is the fixed clock of the deterministic fleet (2026-03-02 14:30 UTC).
var fixtureEpoch = time.Date(2026, 3, 2, 14, 30, 0, 0, time.UTC)

// clock is a settable clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixtureSource is a deterministic fleet of two supervisors: an active one with
// three agents (a quoter with orders and a position, a paused one, one whose feed
// stalled) and a standby whose agent is refused (its lock is held by the active
// one) while its desired state is running. Its PnLs move with the clock (step
// counts Fleet calls), so the history has shape.
type fixtureSource struct {
	clk    *clock
	mu     sync.Mutex
	step   int
	frozen bool // the step stays (a page stays the same for a screenshot)
	ops    []string
}

func (f *fixtureSource) freeze() { f.mu.Lock(); f.frozen = true; f.mu.Unlock() }

func mic(s string) natsbus.Amount {
	m, err := market.ParseSignedMicros(s)
	if err != nil {
		panic(err)
	}
	return natsbus.Amount(m)
}

func (f *fixtureSource) Fleet(context.Context) (supervisor.Fleet, error) {
	f.mu.Lock()
	k := f.step
	if !f.frozen {
		f.step++
	}
	f.mu.Unlock()
	now := f.clk.Now().UnixMilli()
	wave := []string{"0", "1.25", "2.10", "1.40", "3.05", "4.20", "3.60", "5.15", "6.40", "5.90", "7.35", "8.10"}
	pnl := mic(wave[k%len(wave)])
	q := &natsbus.Status{Agent: "quoter-1", State: natsbus.StateRunning, DryRun: true, Markets: []market.ConditionID{"0xaaa1"},
		MarketLabels: []string{"will-it-rain-in-london-tomorrow"}, Balance: mic("962.5"), Reserved: mic("23.75"),
		Realized: mic("1.5"), Unrealized: pnl - mic("1.5"), Equity: mic("1000") + pnl, PnL: pnl, LastEvent: now - 1500, OpenOrders: 2,
		Positions: []natsbus.PositionStatus{{Market: "0xaaa1", Label: "will-it-rain-in-london-tomorrow", Token: "11", Outcome: "YES", Size: mic("40"), AvgPrice: mic("0.47"), Mark: mic("0.5")}},
		Books:     []natsbus.BookStatus{{Market: "0xaaa1", Label: "will-it-rain-in-london-tomorrow", Token: "11", Outcome: "YES", Bid: mic("0.49"), Ask: mic("0.51"), Mid: mic("0.5"), Spread: mic("0.02")}},
		Orders: []natsbus.OrderStatus{
			{ID: "o-1", Market: "0xaaa1", Label: "will-it-rain-in-london-tomorrow", Outcome: "YES", Side: "BUY", Price: mic("0.48"), Size: mic("25"), Matched: mic("5"), Placed: now - 42000, Mid: mic("0.5"), Distance: mic("0.02")},
			{ID: "o-2", Market: "0xaaa1", Label: "will-it-rain-in-london-tomorrow", Outcome: "YES", Side: "SELL", Price: mic("0.53"), Size: mic("25"), Placed: now - 95000, Mid: mic("0.5"), Distance: mic("0.03")}},
		Guards: []natsbus.GuardStatus{{Guard: "max_position", Unit: "shares", Used: mic("40"), Limit: mic("50"), Use: 80},
			{Guard: "max_daily_loss", Unit: "USDC", Used: mic("0"), Limit: mic("50"), Use: 0},
			{Guard: "max_open_orders", Unit: "orders", Used: mic("2"), Limit: mic("20"), Use: 10}}}
	p := &natsbus.Status{Agent: "paused-2", State: natsbus.StatePaused, DryRun: true, Markets: []market.ConditionID{"0xbbb2"},
		MarketLabels: []string{"fed-cuts-rates-in-march"}, Balance: mic("500"), Equity: mic("497.25"), PnL: mic("-2.75"), Realized: mic("-2.75"), LastEvent: now - 8000}
	s := &natsbus.Status{Agent: "stalled-3", State: natsbus.StateRunning, DryRun: true, Markets: []market.ConditionID{"0xccc3"},
		MarketLabels: []string{"btc-above-100k-on-friday"}, Balance: mic("250"), Equity: mic("250.4"), PnL: mic("0.4"), Realized: mic("0.4"), LastEvent: now - 7*60000}
	addr := func(n byte) market.Address { var a market.Address; a[0], a[19] = 0xaa, n; return a }
	active := supervisor.FleetView{V: 1, Fleet: "demo", Supervisor: "sup-east", Host: "host-a", Time: now - 120, Agents: []supervisor.AgentView{
		{ID: "quoter-1", Supervisor: "sup-east", Host: "host-a", Wallet: addr(1), WalletRef: "keyring:quoter", Process: supervisor.ProcRunning, PID: 4101,
			Started: now - 3600000, Desired: natsbus.DesiredRunning, Liveness: "alive", HeartbeatAgeMS: 400, Status: q},
		{ID: "paused-2", Supervisor: "sup-east", Host: "host-a", Wallet: addr(2), Process: supervisor.ProcRunning, PID: 4102, Started: now - 3600000,
			Desired: natsbus.DesiredPaused, Liveness: "alive", HeartbeatAgeMS: 700, Status: p},
		{ID: "stalled-3", Supervisor: "sup-east", Host: "host-a", Wallet: addr(3), Process: supervisor.ProcRunning, PID: 4103, Started: now - 3600000,
			Restarts: 2, Desired: natsbus.DesiredRunning, Liveness: "alive", HeartbeatAgeMS: 300, Status: s}}}
	standby := supervisor.FleetView{V: 1, Fleet: "demo", Supervisor: "sup-west", Host: "host-b", Time: now - 200, Agents: []supervisor.AgentView{
		{ID: "quoter-1", Supervisor: "sup-west", Host: "host-b", Wallet: addr(1), WalletRef: "keyring:quoter", Process: supervisor.ProcRefused,
			Desired: natsbus.DesiredRunning, Liveness: "alive", HeartbeatAgeMS: 400, Message: "wallet locked by sup-east (standby)"}}}
	return supervisor.Fleet{Supervisors: []supervisor.FleetView{active, standby}}, nil
}

func (f *fixtureSource) KillAll(context.Context, string, string) (supervisor.KillResult, error) {
	return supervisor.KillResult{}, nil
}

func (f *fixtureSource) Control(_ context.Context, op supervisor.Op, id market.AgentID, by, reason string) (supervisor.ControlResult, error) {
	f.mu.Lock()
	f.ops = append(f.ops, string(op)+" "+string(id))
	f.mu.Unlock()
	return supervisor.ControlResult{Replies: []natsbus.ControlReply{{V: 1, Agent: id, OK: true, State: natsbus.StateRunning}}}, nil
}

func (f *fixtureSource) RecentAudit(_ context.Context, id market.AgentID, _ int) ([]natsbus.AuditEntry, []natsbus.AuditEntry, error) {
	t := fixtureEpoch.UnixMilli()
	recs := []natsbus.AuditEntry{
		{Seq: 10, Record: natsbus.AuditRecord{Kind: natsbus.AuditLifecycle, Agent: id, Time: t - 3600000, Lifecycle: &natsbus.LifecycleRecord{Event: "started", PID: 4101}}},
		{Seq: 11, Record: natsbus.AuditRecord{Kind: natsbus.AuditDecision, Agent: id, Time: t - 60000, Decision: &natsbus.DecisionRecord{Allow: false, Guard: "max_position", Reason: "position 50 would exceed max_position 50"}}},
		{Seq: 12, Record: natsbus.AuditRecord{Kind: natsbus.AuditOrder, Agent: id, Time: t - 42000, Order: &natsbus.OrderRecord{Action: "placed", ID: "o-1", Side: "BUY", Outcome: "YES", Price: mic("0.48"), Size: mic("25")}}},
	}
	fills := []natsbus.AuditEntry{
		{Seq: 9, Record: natsbus.AuditRecord{Kind: natsbus.AuditFill, Agent: id, Time: t - 300000, Fill: &natsbus.FillRecord{Trade: "t-1", Order: "o-0", Market: "0xaaa1", Outcome: "YES", Side: "BUY", Role: "maker", Price: mic("0.47"), Size: mic("40"), Time: t - 300000}}},
	}
	return recs, fills, nil
}

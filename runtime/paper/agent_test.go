package paper_test

import (
	"context"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
)

type listFeed []market.Event

func (f listFeed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	for i := range f {
		if !emit(&f[i]) {
			return nil
		}
	}
	return nil
}

type bidAt market.Micros

// Decide bids while the market is open and redeems its tokens once it resolved.
func (b bidAt) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	m := st.Markets[cond]
	switch {
	case m == nil:
		return out, nil
	case m.Resolved:
		if pay, held, _ := st.Redeemable(cond); held > 0 {
			out = append(out, market.Intent{Kind: market.IntentRedeem, Key: "m/collect", Market: cond, Size: pay})
		}
		return out, nil
	}
	return append(out, market.Intent{Kind: market.IntentQuote, Key: "m/bid", Market: cond, Token: yes, Outcome: market.Yes,
		Side: market.Buy, Price: market.Micros(b), Size: 10 * market.One}), nil
}

type allow struct{}

func (allow) Observe(*market.State) agent.Action                 { return agent.Action{} }
func (allow) Begin(*market.State) agent.Action                   { return agent.Action{} }
func (allow) Check(*market.Intent, market.OrderID) agent.Verdict { return agent.Verdict{Allowed: true} }
func (allow) RecordOrder(int64)                                  {}
func (allow) Trip(int64, string) agent.Action                    { return agent.Action{} }
func (allow) Resume(*market.State, string) bool                  { return false }
func (allow) Halted() bool                                       { return false }
func (allow) KillReason() string                                 { return "" }
func (allow) KillState() ([]byte, error)                         { return nil, nil }
func (allow) RestoreKill([]byte) error                           { return nil }

// TestDryRunPnLIsRealAfterResolution runs an agent on the paper venue: its bid waits
// behind the queue, fills when trades consume it, and the market resolves — the
// tokens stay held (marked at their payout) until the agent redeems them: a win
// pays 1 a share, a loss 0. The agent's state and the paper account agree, the PnL
// is realized, and the redeem is audited with what it paid.
func TestDryRunPnLIsRealAfterResolution(t *testing.T) {
	for _, tc := range []struct {
		winner                       market.TokenID
		paid, realized, balance, pnl market.Micros
	}{
		{yes, mic("10"), mic("5.5"), mic("1005.5"), mic("5.5")}, // bought 10 at 0.45, redeemed at 1
		{no, 0, -mic("4.5"), mic("995.5"), -mic("4.5")},         // redeemed at 0
	} {
		v := newPaper(t)
		const t0 = 1_000_000
		feed := listFeed{
			{Kind: market.EventBook, Time: t0, Market: cond, Token: yes,
				Bids: []market.Level{lv("0.45", "20")}, Asks: []market.Level{lv("0.50", "20")}},
			{Kind: market.EventLastTrade, Time: t0 + 10, Market: cond, Token: yes, Price: mic("0.45"), Size: mic("15"), Side: market.Sell},
			{Kind: market.EventLastTrade, Time: t0 + 20, Market: cond, Token: yes, Price: mic("0.45"), Size: mic("15"), Side: market.Sell},
			{Kind: market.EventResolved, Time: t0 + 30, Market: cond, Token: tc.winner, Winner: tc.winner},
		}
		var audit auditRecs
		s := runOnPaper(t, v, feed, bidAt(mic("0.45")), &audit)
		if s.Counts.Fills != 1 {
			t.Fatalf("%d fills, want 1 (10 shares once the 20 ahead traded)", s.Counts.Fills)
		}
		if s.Realized != tc.realized || s.Balance != tc.balance || s.PnL != tc.pnl {
			t.Fatalf("%s won: realized %s balance %s pnl %s; want %s, %s, %s", tc.winner, s.Realized, s.Balance, s.PnL,
				tc.realized, tc.balance, tc.pnl)
		}
		acct, _ := v.Account(context.Background())
		if acct.Balance != s.Balance || acct.Reserved != 0 {
			t.Fatalf("paper account %s (reserved %s), agent %s", acct.Balance, acct.Reserved, s.Balance)
		}
		if len(audit.redeems) != 1 || audit.redeems[0].Order.Size != tc.paid || audit.redeems[0].Err != "" {
			t.Fatalf("redeem audit records %+v, want one paying %s", audit.redeems, tc.paid)
		}
	}
}

// buyThenFlatten takes 100 YES at the ask on the first event and asks to flatten
// the market on the event at time flat.
type buyThenFlatten struct{ flat int64 }

func (d buyThenFlatten) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	switch {
	case ev.Kind != market.EventBook:
	case st.PositionSize(yes) == 0 && ev.Time < d.flat:
		out = append(out, market.Intent{Kind: market.IntentTake, Key: "m/buy", Market: cond, Token: yes, Outcome: market.Yes,
			Side: market.Buy, Price: mic("0.50"), Size: 100 * market.One, Type: market.FAK})
	case ev.Time == d.flat:
		out = append(out, market.Intent{Kind: market.IntentFlatten, Key: "m/stop", Market: cond})
	}
	return out, nil
}

// TestFlattenOnAThinBidEnds is the backtest livelock on the real paper venue: the
// flattening sell takes the 30 shares bid, the paper mirror drops the level it took
// while the agent's book still shows it, and the rest of the position must wait for
// the next book instead of being offered again and again in the same pass (each
// time refused: "no orders found to match with FAK order.").
func TestFlattenOnAThinBidEnds(t *testing.T) {
	v, err := paper.New(paper.Config{Address: addr}, source{mkInfo(0)})
	if err != nil {
		t.Fatal(err)
	}
	const t0 = 1_000_000
	feed := listFeed{
		{Kind: market.EventBook, Time: t0, Market: cond, Token: yes,
			Bids: []market.Level{lv("0.45", "30")}, Asks: []market.Level{lv("0.50", "200")}},
		{Kind: market.EventBook, Time: t0 + 10, Market: cond, Token: yes,
			Bids: []market.Level{lv("0.45", "30")}, Asks: []market.Level{lv("0.50", "100")}},
		{Kind: market.EventBook, Time: t0 + 20, Market: cond, Token: yes,
			Bids: []market.Level{lv("0.44", "100")}, Asks: []market.Level{lv("0.50", "100")}},
	}
	a, err := agent.New(agent.Config{ID: "paper-test", Wallet: addr, DryRun: true, Markets: []market.ConditionID{cond},
		Heartbeat: -1, TimerInterval: -1}, agent.Deps{Venue: v, Feed: feed, Decider: buyThenFlatten{flat: t0 + 10},
		Guards: allow{}, Clock: agent.EventClock})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return: the flattening sell is retried against the same book for ever")
	}
	s := a.Status()
	// The buy, the first flattening sell (30 at 0.45) and, after the next book,
	// the second (70 at 0.44): flat, with no refused retry in between.
	if s.Counts.Orders != 3 || s.Counts.Rejects != 0 {
		t.Fatalf("orders %d, rejects %d; want 3 and 0", s.Counts.Orders, s.Counts.Rejects)
	}
	if len(s.Positions) != 1 || s.Positions[0].Size != 0 {
		t.Fatalf("positions %+v, want flat", s.Positions)
	}
	acct, _ := v.Account(context.Background())
	if acct.Balance != s.Balance {
		t.Fatalf("paper balance %s, agent %s", acct.Balance, s.Balance)
	}
}

// buyBothThenMerge takes 10 YES and 10 NO on the first YES book, and merges the
// complete sets on the next one.
type buyBothThenMerge struct{}

func (buyBothThenMerge) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	switch {
	case ev.Kind != market.EventBook || ev.Token != yes:
	case st.PositionSize(yes) == 0 && st.PositionSize(no) == 0:
		out = append(out, market.Intent{Kind: market.IntentTake, Key: "m/yes", Market: cond, Token: yes, Outcome: market.Yes,
			Side: market.Buy, Price: mic("0.50"), Size: 10 * market.One, Type: market.FAK},
			market.Intent{Kind: market.IntentTake, Key: "m/no", Market: cond, Token: no, Outcome: market.No,
				Side: market.Buy, Price: mic("0.55"), Size: 10 * market.One, Type: market.FAK})
	case min(st.PositionSize(yes), st.PositionSize(no)) > 0:
		out = append(out, market.Intent{Kind: market.IntentMerge, Key: "m/merge", Market: cond,
			Size: min(st.PositionSize(yes), st.PositionSize(no))})
	}
	return out, nil
}

// TestMergeTurnsCompleteSetsIntoCollateral: 10 YES bought at 0.50 and 10 NO at
// 0.55 (the mirror of the 0.45 bid) are merged into 10 of collateral: both
// positions close, 0.50 is realized as a loss, and the agent's state and the paper
// account agree.
func TestMergeTurnsCompleteSetsIntoCollateral(t *testing.T) {
	v := newPaper(t)
	const t0 = 1_000_000
	book := func(t int64) market.Event {
		return market.Event{Kind: market.EventBook, Time: t, Market: cond, Token: yes,
			Bids: []market.Level{lv("0.45", "100")}, Asks: []market.Level{lv("0.50", "100")}}
	}
	noBook := market.Event{Kind: market.EventBook, Time: t0, Market: cond, Token: no,
		Bids: []market.Level{lv("0.50", "100")}, Asks: []market.Level{lv("0.55", "100")}}
	var audit auditRecs
	s := runOnPaper(t, v, listFeed{noBook, book(t0), book(t0 + 10)}, buyBothThenMerge{}, &audit)
	if s.Counts.Fills != 2 {
		t.Fatalf("%d fills, want 2 (%+v)", s.Counts.Fills, s.Counts)
	}
	for _, p := range s.Positions {
		if p.Size != 0 {
			t.Fatalf("positions %+v, want both merged away", s.Positions)
		}
	}
	// Paid 5 + 5.5 for the pairs, got 10 back.
	if s.Balance != mic("999.5") || s.Realized != -mic("0.5") || s.PnL != -mic("0.5") {
		t.Fatalf("balance %s realized %s pnl %s; want 999.5, -0.5, -0.5", s.Balance, s.Realized, s.PnL)
	}
	acct, _ := v.Account(context.Background())
	if acct.Balance != s.Balance || acct.Reserved != 0 {
		t.Fatalf("paper account %s (reserved %s), agent %s", acct.Balance, acct.Reserved, s.Balance)
	}
	for _, p := range acct.Positions {
		if p.Size != 0 {
			t.Fatalf("paper positions %+v, want none held", acct.Positions)
		}
	}
	if len(audit.merges) != 1 || audit.merges[0].Order.Size != 10*market.One || audit.merges[0].Err != "" {
		t.Fatalf("merge audit records %+v, want one of 10 sets", audit.merges)
	}
	// More sets than held: refused by the paper account, nothing changes.
	if err := v.Merge(context.Background(), cond, market.One); err == nil {
		t.Fatal("a merge of sets not held was accepted")
	}
}

// newPaper returns a paper venue of addr over the test market.
func newPaper(t *testing.T) *paper.Venue {
	t.Helper()
	v, err := paper.New(paper.Config{Address: addr}, source{mkInfo(0)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// runOnPaper runs a dry-run agent of decider d on paper venue v through feed (in
// event time, every intent allowed, audited to audit) and returns its final status.
func runOnPaper(t *testing.T, v *paper.Venue, feed listFeed, d agent.Decider, audit *auditRecs) agent.Status {
	t.Helper()
	a, err := agent.New(agent.Config{ID: "paper-test", Wallet: addr, DryRun: true, Markets: []market.ConditionID{cond},
		Heartbeat: -1, TimerInterval: -1}, agent.Deps{Venue: v, Feed: feed, Decider: d, Guards: allow{},
		Clock: agent.EventClock, Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a.Status()
}

// auditRecs keeps the merge and redeem records.
type auditRecs struct{ merges, redeems []agent.AuditRecord }

func (a *auditRecs) Audit(r *agent.AuditRecord) {
	switch {
	case r.Kind != agent.AuditOrder:
	case r.Op == "merge":
		a.merges = append(a.merges, *r)
	case r.Op == "redeem":
		a.redeems = append(a.redeems, *r)
	}
}

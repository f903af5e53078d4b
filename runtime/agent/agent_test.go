package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// moneyOut matches names of anything that would move funds out of the venue (the
// same pattern as the policies' test).
var moneyOut = regexp.MustCompile(`(?i)withdraw|transfer|bridge|swap|payout|send|recipient|destination|redeem|split|merge`)

// TestVenueCannotMoveFundsOut proves the agent's Venue has no method that moves
// funds out of the venue: its methods are exactly the trading and reconciliation
// ones, none is named like a withdrawal, and no argument or result carries an
// address other than the account's own (Account.Address, order owners).
func TestVenueCannotMoveFundsOut(t *testing.T) {
	typ := reflect.TypeOf((*agent.Venue)(nil)).Elem()
	want := []string{"Account", "Cancel", "CancelAll", "Heartbeat", "Markets", "Order", "OpenOrders", "Prepare", "Submit"}
	var got []string
	for i := 0; i < typ.NumMethod(); i++ {
		m := typ.Method(i)
		got = append(got, m.Name)
		if moneyOut.MatchString(m.Name) {
			t.Errorf("Venue has method %s", m.Name)
		}
		for j := 0; j < m.Type.NumIn(); j++ {
			if m.Type.In(j) == reflect.TypeOf(market.Address{}) {
				t.Errorf("Venue.%s takes an address: it could name a recipient", m.Name)
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("Venue methods %v, want exactly %v", got, want)
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(agent.OrderRequest{}), reflect.TypeOf(agent.PreparedOrder{})} {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if moneyOut.MatchString(f.Name) || f.Type == reflect.TypeOf(market.Address{}) {
				t.Errorf("%s has field %s %s", typ, f.Name, f.Type)
			}
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeOf((*agent.Simulator)(nil)).Elem(), reflect.TypeOf((*agent.Persistent)(nil)).Elem(),
		reflect.TypeOf((*agent.Synchronous)(nil)).Elem(), reflect.TypeOf((*agent.Agent)(nil))} {
		for i := 0; i < typ.NumMethod(); i++ {
			if name := typ.Method(i).Name; moneyOut.MatchString(name) {
				t.Errorf("%s has method %s", typ, name)
			}
		}
	}
}

func TestPlanQuoteHysteresis(t *testing.T) {
	const now = 1_000_000
	tick := market.Micros(10_000)
	want := func(px, size string) *market.Intent {
		return &market.Intent{Kind: market.IntentQuote, Token: yes, Side: market.Buy, Price: mic(px), Size: mic(size), Type: market.GTC}
	}
	live := func(px, rem string) *agent.Live {
		return &agent.Live{Token: yes, Side: market.Buy, Price: mic(px), Remaining: mic(rem), Type: market.GTC}
	}
	gtd := func(w *market.Intent, exp int64) *market.Intent { w.Type, w.Expiration = market.GTD, exp; return w }
	gtdLive := func(l *agent.Live, exp int64) *agent.Live { l.Type, l.Expiration = market.GTD, exp; return l }
	tests := []struct {
		name     string
		want     *market.Intent
		live     *agent.Live
		inFlight bool
		plan     agent.Plan
	}{
		{"nothing wanted, nothing live", nil, nil, false, agent.PlanNone},
		{"a new quote is placed", want("0.45", "10"), nil, false, agent.PlanPlace},
		{"an unwanted quote is cancelled", nil, live("0.45", "10"), false, agent.PlanCancel},
		{"the same price is kept", want("0.45", "10"), live("0.45", "10"), false, agent.PlanKeep},
		{"one tick away is kept", want("0.46", "10"), live("0.45", "10"), false, agent.PlanKeep},
		{"two ticks away is replaced", want("0.47", "10"), live("0.45", "10"), false, agent.PlanReplace},
		{"a partly filled order within the size tolerance is kept", want("0.45", "10"), live("0.45", "8"), false, agent.PlanKeep},
		{"a mostly filled order is replaced", want("0.45", "10"), live("0.45", "5"), false, agent.PlanReplace},
		{"a bigger wanted size beyond the tolerance is replaced", want("0.45", "20"), live("0.45", "10"), false, agent.PlanReplace},
		{"another side is replaced", &market.Intent{Token: yes, Side: market.Sell, Price: mic("0.45"), Size: mic("10")}, live("0.45", "10"), false, agent.PlanReplace},
		{"another token is replaced", &market.Intent{Token: no, Side: market.Buy, Price: mic("0.45"), Size: mic("10")}, live("0.45", "10"), false, agent.PlanReplace},
		{"a request in flight waits", want("0.60", "10"), live("0.45", "10"), true, agent.PlanWait},
		{"a recomputed GTD expiration alone does not replace", gtd(want("0.45", "10"), now/1000+60), gtdLive(live("0.45", "10"), now/1000+55), false, agent.PlanKeep},
		{"a GTD near its expiration is refreshed", gtd(want("0.45", "10"), now/1000+60), gtdLive(live("0.45", "10"), now/1000+20), false, agent.PlanReplace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := agent.PlanQuote(tc.want, tc.live, tc.inFlight, now, tick, 1, 250_000); got != tc.plan {
				t.Fatalf("plan %s, want %s", got, tc.plan)
			}
		})
	}
}

func TestFlattenPriceIsOnTickAndNeverBelowOneTick(t *testing.T) {
	tests := []struct {
		bid, slip, tick, want string
		ok                    bool
	}{
		{"0.45", "0.05", "0.01", "0.4", true},
		{"0.453", "0.05", "0.001", "0.403", true},
		{"0.03", "0.05", "0.01", "0.01", true},
		{"0", "0.05", "0.01", "0", false},
	}
	for _, tc := range tests {
		t.Run(tc.bid, func(t *testing.T) {
			p, ok := agent.FlattenPrice(mic(tc.bid), mic(tc.slip), mic(tc.tick))
			if ok != tc.ok || ok && p != mic(tc.want) {
				t.Fatalf("FlattenPrice = %s, %v; want %s, %v", p, ok, tc.want, tc.ok)
			}
		})
	}
}

// newAgent builds an agent over the fakes.
func newAgent(t *testing.T, cfg agent.Config, v agent.Venue, f agent.Feed, d agent.Decider, g agent.Guards, opts ...func(*agent.Deps)) *agent.Agent {
	t.Helper()
	deps := agent.Deps{Venue: v, Feed: f, Decider: d, Guards: g}
	for _, o := range opts {
		o(&deps)
	}
	a, err := agent.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestReconcilerKeepsOrdersWithinToleranceAndReplacesBeyond(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(map[bool]string{true: "synchronous venue", false: "asynchronous venue"}[sync], func(t *testing.T) {
			v := newFakeVenue()
			v.sync = sync
			more := make(chan market.Event)
			f := &scriptFeed{more: more}
			a := newAgent(t, baseConfig(), v, f, bidQuoter("10"), &fakeGuards{})
			stop := run(t, a)
			send := func(ev market.Event) { more <- ev }
			send(book(1000, "0.45", "0.50"))
			waitFor(t, "first order", func() bool { return len(v.live()) == 1 })
			send(book(2000, "0.46", "0.50")) // desired bid moves one tick: kept
			send(book(3000, "0.45", "0.50"))
			waitFor(t, "events handled", func() bool { return fresh(a).Counts.Events >= 3 })
			send(book(4000, "0.49", "0.52")) // four ticks: replaced
			waitFor(t, "replacement", func() bool {
				l := v.live()
				return len(l) == 1 && l[0].Price == mic("0.48")
			})
			if n := v.submitCount(); n != 2 {
				t.Fatalf("%d submissions, want 2 (one placement, one replacement)", n)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if l := v.live(); len(l) != 0 {
				t.Fatalf("orders left open after stop: %v", l)
			}
		})
	}
}

func TestNoDoublePlacementWhenTheOutcomeIsUnknown(t *testing.T) {
	tests := []struct {
		name        string
		fail        func(n int, id market.OrderID) (bool, error)
		wantSubmits int
	}{
		{"accepted but the answer timed out: looked up and adopted", func(n int, _ market.OrderID) (bool, error) {
			if n == 1 {
				return true, context.DeadlineExceeded
			}
			return true, nil
		}, 1},
		{"lost before the venue: resubmitted with the same id", func(n int, _ market.OrderID) (bool, error) {
			if n == 1 {
				return false, errors.New("connection reset")
			}
			return true, nil
		}, 2},
		{"accepted, answer lost, resubmitted: duplicate found by lookup", func(n int, _ market.OrderID) (bool, error) {
			if n == 1 {
				return true, errors.New("connection reset")
			}
			return true, nil
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newFakeVenue()
			v.submitFail = tc.fail
			more := make(chan market.Event)
			a := newAgent(t, baseConfig(), v, &scriptFeed{more: more}, bidQuoter("10"), &fakeGuards{})
			run(t, a)
			more <- book(1000, "0.45", "0.50")
			waitFor(t, "the order to be live", func() bool { return len(v.live()) == 1 })
			more <- book(2000, "0.45", "0.50") // the strategy states the same quote again
			more <- book(3000, "0.45", "0.50")
			waitFor(t, "the agent to see it live", func() bool { return fresh(a).OpenOrders == 1 })
			v.mu.Lock()
			ids := map[market.OrderID]bool{}
			for _, id := range v.submits {
				ids[id] = true
			}
			n := len(v.submits)
			v.mu.Unlock()
			if len(ids) != 1 {
				t.Fatalf("submitted %d different orders, want 1", len(ids))
			}
			if n != tc.wantSubmits {
				t.Fatalf("%d submissions, want %d", n, tc.wantSubmits)
			}
			if l := v.live(); len(l) != 1 {
				t.Fatalf("%d live orders on the venue, want 1", len(l))
			}
		})
	}
}

func TestStartupAdoptsKnownOrdersAndCancelsUnknownOnes(t *testing.T) {
	v := newFakeVenue()
	known := market.Order{ID: agent.DeriveOrderID(wallet, 1<<32|1), Owner: wallet, Market: cond, Token: yes, Side: market.Buy,
		Price: mic("0.44"), Size: mic("10"), Type: market.GTC, Status: market.StatusLive}
	unknown := known
	unknown.ID, unknown.Price = agent.DeriveOrderID(wallet, 99), mic("0.30")
	v.orders[known.ID], v.orders[unknown.ID] = known, unknown
	store := agent.NewMemStore()
	if err := store.Save(&agent.Checkpoint{Version: agent.CheckpointVersion, Agent: "t1", Wallet: wallet, Runs: 1,
		Orders: []agent.CheckpointOrder{{ID: known.ID, Client: 1<<32 | 1, Key: "m/bid", Market: cond, Token: yes,
			Side: market.Buy, Price: agent.Amount(known.Price), Size: agent.Amount(known.Size)}}}); err != nil {
		t.Fatal(err)
	}
	more := make(chan market.Event)
	a := newAgent(t, baseConfig(), v, &scriptFeed{more: more}, bidQuoter("10"), &fakeGuards{}, func(d *agent.Deps) { d.Store = store })
	run(t, a)
	more <- book(1000, "0.45", "0.50") // wants a bid at 0.44: the adopted order
	more <- book(2000, "0.45", "0.50")
	waitFor(t, "events", func() bool { return fresh(a).Counts.Events >= 2 })
	if n := v.submitCount(); n != 0 {
		t.Fatalf("%d new orders placed, want 0: the adopted order carries the quote", n)
	}
	l := v.live()
	if len(l) != 1 || l[0].ID != known.ID {
		t.Fatalf("live orders %v, want only the adopted one", l)
	}
	cp, _ := store.Load()
	if cp.Runs != 2 {
		t.Fatalf("checkpoint runs = %d, want 2", cp.Runs)
	}
}

func TestStartupRefusesAnotherAgentsStateDirectory(t *testing.T) {
	store := agent.NewMemStore()
	store.Save(&agent.Checkpoint{Version: agent.CheckpointVersion, Agent: "someone-else", Runs: 3})
	a := newAgent(t, baseConfig(), newFakeVenue(), &scriptFeed{}, bidQuoter("10"), &fakeGuards{}, func(d *agent.Deps) { d.Store = store })
	err := a.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "someone-else") {
		t.Fatalf("Run = %v, want a refusal naming the other agent", err)
	}
}

func TestLeaveOrdersKeepsThemOnStop(t *testing.T) {
	for _, leave := range []bool{false, true} {
		t.Run(map[bool]string{false: "cancel on stop", true: "leave orders"}[leave], func(t *testing.T) {
			v := newFakeVenue()
			cfg := baseConfig()
			cfg.LeaveOrders = leave
			more := make(chan market.Event)
			a := newAgent(t, cfg, v, &scriptFeed{more: more}, bidQuoter("10"), &fakeGuards{})
			stop := run(t, a)
			more <- book(1000, "0.45", "0.50")
			waitFor(t, "order", func() bool { return len(v.live()) == 1 })
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if got, want := len(v.live()), map[bool]int{false: 0, true: 1}[leave]; got != want {
				t.Fatalf("%d live orders after stop, want %d", got, want)
			}
			if a.Status().State != agent.StateStopped {
				t.Fatalf("state %s, want stopped", a.Status().State)
			}
		})
	}
}

func TestKillSwitchCancelsAndHalts(t *testing.T) {
	v := newFakeVenue()
	g := &fakeGuards{tripOn: func(st *market.State) bool { return st.Time >= 3000 }}
	more := make(chan market.Event)
	audit := &auditLog{}
	a := newAgent(t, baseConfig(), v, &scriptFeed{more: more}, bidQuoter("10"), g, func(d *agent.Deps) { d.Audit = audit })
	run(t, a)
	more <- book(1000, "0.45", "0.50")
	waitFor(t, "order", func() bool { return len(v.live()) == 1 })
	more <- book(3000, "0.45", "0.50")
	more <- book(4000, "0.40", "0.50")
	waitFor(t, "halt", func() bool { return fresh(a).State == agent.StateKilled })
	waitFor(t, "cancel", func() bool { return len(v.live()) == 0 })
	waitFor(t, "events", func() bool { return fresh(a).Counts.Events >= 3 })
	if n := v.submitCount(); n != 1 {
		t.Fatalf("%d submissions, want 1: nothing opens after the trip", n)
	}
	if audit.kinds()[agent.AuditTrip] != 1 {
		t.Fatalf("audit kinds %v, want one trip", audit.kinds())
	}
	st, err := a.Control(context.Background(), agent.ControlRequest{Op: agent.OpResume})
	if !errors.Is(err, market.Errorf(market.CodeKillSwitchTripped, "", "")) || st != agent.StateKilled {
		t.Fatalf("resume of a killed agent = %s, %v; want killed and a kill_switch_tripped error", st, err)
	}
	st, err = a.Control(context.Background(), agent.ControlRequest{Op: agent.OpResumeAfterKill, Reason: "checked"})
	if err != nil || st != agent.StateRunning {
		t.Fatalf("resume_after_kill = %s, %v", st, err)
	}
}

func TestStrategyFailureStopsOpeningUntilResumed(t *testing.T) {
	v := newFakeVenue()
	fail := true
	quoter := bidQuoter("10")
	d := funcDecider(func(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
		if ev.Time == 2000 && fail {
			return out, errors.New("division by zero at 1:5")
		}
		return quoter(ev, st, out)
	})
	more := make(chan market.Event)
	core, logs := observer.New(zap.InfoLevel)
	a := newAgent(t, baseConfig(), v, &scriptFeed{more: more}, d, &fakeGuards{}, func(d *agent.Deps) { d.Logger = zap.New(core) })
	run(t, a)
	more <- book(1000, "0.45", "0.50")
	waitFor(t, "order", func() bool { return len(v.live()) == 1 })
	more <- book(2000, "0.45", "0.50")
	waitFor(t, "failure", func() bool { return fresh(a).State == agent.StateFailed })
	waitFor(t, "cancel", func() bool { return len(v.live()) == 0 })
	more <- book(3000, "0.47", "0.50")
	more <- book(3500, "0.47", "0.50")
	waitFor(t, "events", func() bool { return fresh(a).Counts.Events >= 4 })
	if n := v.submitCount(); n != 1 {
		t.Fatalf("%d submissions, want 1: nothing new while failed", n)
	}
	if logs.FilterMessageSnippet("strategy failed").Len() != 1 {
		t.Fatalf("want one 'strategy failed' line, got %v", logs.All())
	}
	if _, err := a.Control(context.Background(), agent.ControlRequest{Op: agent.OpResume}); err != nil {
		t.Fatal(err)
	}
	more <- book(4000, "0.47", "0.50")
	waitFor(t, "trading again", func() bool { return len(v.live()) == 1 })
}

func TestPauseKeepsRestingOrdersAndPlacesNothing(t *testing.T) {
	v := newFakeVenue()
	more := make(chan market.Event)
	a := newAgent(t, baseConfig(), v, &scriptFeed{more: more}, bidQuoter("10"), &fakeGuards{})
	run(t, a)
	more <- book(1000, "0.45", "0.50")
	waitFor(t, "order", func() bool { return len(v.live()) == 1 })
	st, err := a.Control(context.Background(), agent.ControlRequest{Op: agent.OpPause, From: "test"})
	if err != nil || st != agent.StatePaused {
		t.Fatalf("pause = %s, %v", st, err)
	}
	more <- book(2000, "0.49", "0.52") // would be a replacement
	more <- book(2500, "0.49", "0.52")
	waitFor(t, "events", func() bool { return fresh(a).Counts.Events >= 3 })
	if n := v.submitCount(); n != 1 || len(v.live()) != 1 {
		t.Fatalf("submissions %d, live %d; want 1 and 1", n, len(v.live()))
	}
	if _, err := a.Control(context.Background(), agent.ControlRequest{Op: "withdraw"}); !errors.Is(err, market.Errorf(market.CodeUnknownControl, "")) {
		t.Fatalf("unknown op: %v", err)
	}
}

func TestRateLimitKeepsRestingOrders(t *testing.T) {
	v := newFakeVenue()
	g := &fakeGuards{}
	more := make(chan market.Event)
	a := newAgent(t, baseConfig(), v, &scriptFeed{more: more}, bidQuoter("10"), g)
	run(t, a)
	more <- book(1000, "0.45", "0.50")
	waitFor(t, "order", func() bool { return len(v.live()) == 1 })
	g.mu.Lock()
	g.rate = true // from now on the loop sees the rate guard deny (the loop reads it on its goroutine)
	g.mu.Unlock()
	more <- book(2000, "0.45", "0.50")
	more <- book(3000, "0.49", "0.52")
	more <- book(3500, "0.49", "0.52")
	waitFor(t, "events", func() bool { return fresh(a).Counts.Events >= 4 })
	if len(v.live()) != 1 || v.submitCount() != 1 {
		t.Fatalf("live %d, submissions %d; want the resting order kept and nothing new", len(v.live()), v.submitCount())
	}
}

func TestCheckpointRoundTripsExactAmounts(t *testing.T) {
	dir := t.TempDir()
	fs, err := agent.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	in := &agent.Checkpoint{Version: agent.CheckpointVersion, Agent: "a", Wallet: wallet, Runs: 7, Time: 123,
		StartEquity: agent.Amount(mic("1000.000001")), Kill: json.RawMessage(`{"tripped":true}`),
		Positions: []agent.CheckpointPosition{{Token: yes, Size: agent.Amount(mic("12.34")), Realized: -agent.Amount(mic("0.5"))}}}
	if err := fs.Save(in); err != nil {
		t.Fatal(err)
	}
	out, err := fs.Load()
	if err != nil {
		t.Fatal(err)
	}
	if out.StartEquity != in.StartEquity || out.Positions[0].Realized != in.Positions[0].Realized || out.Runs != 7 {
		t.Fatalf("round trip: %+v", out)
	}
	fi, err := statMode(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi != 0o600 {
		t.Fatalf("checkpoint mode %o, want 600", fi)
	}
	var a agent.Amount
	for _, bad := range []string{"1e3", "0.0000001", "x"} {
		if err := a.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("Amount accepted %q", bad)
		}
	}
}

func TestHeartbeatsFollowEventTimeWithTheEventClock(t *testing.T) {
	v := newFakeVenue()
	v.sync = true
	cfg := baseConfig()
	cfg.Heartbeat = 5 * time.Second
	var evs []market.Event
	for i := range 31 {
		evs = append(evs, book(int64(1_000_000+i*1000), "0.45", "0.50"))
	}
	a := newAgent(t, cfg, v, &scriptFeed{events: evs}, bidQuoter("10"), &fakeGuards{}, func(d *agent.Deps) { d.Clock = agent.EventClock })
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// One at start, then one per 5 s of event time over 30 s.
	if v.beats != 7 {
		t.Fatalf("%d heartbeats, want 7", v.beats)
	}
}

func TestMaxEventsStopsCleanly(t *testing.T) {
	v := newFakeVenue()
	cfg := baseConfig()
	cfg.MaxEvents = 3
	var evs []market.Event
	for i := range 10 {
		evs = append(evs, book(int64(1000+i*1000), "0.45", "0.50"))
	}
	a := newAgent(t, cfg, v, &scriptFeed{events: evs, hold: true}, bidQuoter("10"), &fakeGuards{})
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := a.Status().Time; got != 3000 {
		t.Fatalf("stopped at event time %d, want 3000", got)
	}
	if len(v.live()) != 0 {
		t.Fatal("orders left open")
	}
}

func TestRunLeavesNoGoroutineBehind(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(map[bool]string{true: "synchronous venue", false: "asynchronous venue"}[sync], func(t *testing.T) {
			before := runtime.NumGoroutine()
			v := newFakeVenue()
			v.sync = sync
			cfg := baseConfig()
			cfg.Heartbeat = 10 * time.Millisecond
			more := make(chan market.Event)
			a := newAgent(t, cfg, v, &scriptFeed{more: more}, bidQuoter("10"), &fakeGuards{})
			stop := run(t, a)
			more <- book(1000, "0.45", "0.50")
			waitFor(t, "order", func() bool { return len(v.live()) == 1 })
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			<-a.Done()
			waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
		})
	}
}

func TestUnknownOrdersAreAdoptedWhenAsked(t *testing.T) {
	v := newFakeVenue()
	stray := market.Order{ID: agent.DeriveOrderID(wallet, 99), Owner: wallet, Market: cond, Token: yes, Side: market.Buy,
		Price: mic("0.30"), Size: mic("10"), Type: market.GTC, Status: market.StatusLive}
	v.orders[stray.ID] = stray
	cfg := baseConfig()
	cfg.AdoptUnknown = true
	more := make(chan market.Event)
	a := newAgent(t, cfg, v, &scriptFeed{more: more}, bidQuoter("10"), &fakeGuards{})
	stop := run(t, a)
	more <- book(1000, "0.45", "0.50")
	waitFor(t, "the quote", func() bool { return len(v.live()) == 2 })
	if s := fresh(a); s.OpenOrders != 2 {
		t.Fatalf("the agent tracks %d open orders, want the stray one and its quote", s.OpenOrders)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if l := v.live(); len(l) != 0 {
		t.Fatalf("stop left %v open: an adopted order is cancelled like the agent's own", l)
	}
}

// TestWithoutAStoreNoCheckpointIsBuilt checks that an agent given no Store (a
// backtest) never builds a checkpoint — the kill switch is never encoded — while
// one with a store checkpoints every second of event time.
func TestWithoutAStoreNoCheckpointIsBuilt(t *testing.T) {
	for _, withStore := range []bool{false, true} {
		t.Run(map[bool]string{false: "no store", true: "a store"}[withStore], func(t *testing.T) {
			var evs []market.Event
			for i := range 50 {
				evs = append(evs, book(int64(1+i)*500, "0.45", "0.50"))
			}
			g := &fakeGuards{}
			a := newAgent(t, baseConfig(), newFakeVenue(), &scriptFeed{events: evs}, bidQuoter("10"), g, func(d *agent.Deps) {
				d.Clock = agent.EventClock
				if withStore {
					d.Store = agent.NewMemStore()
				}
			})
			if err := a.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if st := a.Status(); st.Counts.Events != 50 || st.Counts.Orders == 0 {
				t.Fatalf("counts %+v", st.Counts)
			}
			if withStore && g.encoded < 10 || !withStore && g.encoded != 0 {
				t.Fatalf("the kill switch was encoded %d times", g.encoded)
			}
		})
	}
}

package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// thinVenue is a synchronous, simulating venue (like the paper venue) whose book
// thins out under the agent's takes: a FAK sell fills at most `depth` shares at the
// best bid it last saw, and until the feed reports the book again every further FAK
// is refused as the service refuses it ("no orders found to match with FAK order.").
// The agent's own book still shows the bid: the situation of the reported livelock.
type thinVenue struct {
	*fakeVenue
	mu2      sync.Mutex
	emit     func(*market.Event)
	depth    market.Micros // what the next FAK may take
	fresh    market.Micros // depth restored by each book event
	seq      int
	takes    int // FAK/FOK submissions
	maxTakes int // after this many, fill everything (so a livelock ends and the test fails)
	t        *testing.T
	onSubmit func(n int) // called with the number of takes so far
}

func (v *thinVenue) Attach(emit func(*market.Event)) { v.emit = emit }

func (v *thinVenue) ObserveMarket(ev *market.Event) {
	if ev.Kind == market.EventBook || ev.Kind == market.EventPriceChange {
		v.mu2.Lock()
		v.depth = v.fresh
		v.mu2.Unlock()
	}
}

func (v *thinVenue) Submit(ctx context.Context, p *agent.PreparedOrder) (market.Order, error) {
	q := p.Request
	if q.Type.Rests() {
		return v.fakeVenue.Submit(ctx, p)
	}
	v.mu2.Lock()
	v.takes++
	n := v.takes
	if n == v.maxTakes {
		v.t.Errorf("%d take orders within one pass: the agent retries an unfilled take against the same book", n)
		v.depth = q.Size
	}
	take := min(v.depth, q.Size)
	v.depth -= take
	v.mu2.Unlock()
	if v.onSubmit != nil {
		v.onSubmit(n)
	}
	o := market.Order{ID: p.ID, Owner: wallet, Market: q.Market, Token: q.Token, Outcome: q.Outcome, Side: q.Side,
		Price: q.Price, Size: q.Size, Type: q.Type, CreatedAt: q.Time, Status: market.StatusCanceled}
	if take == 0 {
		return market.Order{}, market.ErrFAKNoMatch
	}
	v.seq++
	o.Matched = take
	if take == q.Size {
		o.Status = market.StatusMatched
	}
	v.emit(&market.Event{Kind: market.EventFill, Time: q.Time, Market: q.Market, Token: q.Token,
		Fill: market.Fill{Trade: market.TradeID(fmt.Sprint("t", v.seq)), Order: p.ID, Owner: wallet, Market: q.Market,
			Token: q.Token, Outcome: q.Outcome, Side: q.Side, Role: market.Taker, Price: q.Price, Size: take, Time: q.Time}})
	v.emit(&market.Event{Kind: market.EventOrder, Time: q.Time, Market: q.Market, Token: q.Token, Order: o,
		OrderUpdate: market.OrderUpdated})
	return o, nil
}

// flattenAt asks to flatten the market on the book event at time t.
func flattenAt(t int64) funcDecider {
	return func(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
		if ev.Kind == market.EventBook && ev.Time == t {
			out = append(out, market.Intent{Kind: market.IntentFlatten, Key: "m/stop", Market: cond})
		}
		return out, nil
	}
}

// TestUnfilledFlattenWaitsForNewMarketData is the regression test of the backtest
// livelock: a flattening FAK that fills part of the position (the venue's book had
// less at the bid than the agent's copy shows) must not be resubmitted within the
// same pass, where the venue refuses it again and again; the rest goes out once the
// feed reports the book again.
func TestUnfilledFlattenWaitsForNewMarketData(t *testing.T) {
	fv := newFakeVenue()
	fv.sync = true
	fv.positions = []market.Position{{Market: cond, Token: yes, Outcome: market.Yes, Size: 100 * market.One, Cost: 45 * market.One}}
	v := &thinVenue{fakeVenue: fv, fresh: 30 * market.One, maxTakes: 50, t: t}
	feed := &scriptFeed{events: []market.Event{book(1000, "0.45", "0.50"), book(2000, "0.45", "0.50")}}
	a := newAgent(t, baseConfig(), v, feed, flattenAt(1000), &fakeGuards{}, func(d *agent.Deps) { d.Clock = agent.EventClock })
	runToEnd(t, context.Background(), a, 20*time.Second, "Run did not return: the flatten loop never ends")
	s := a.Status()
	// 30 shares at t=1000 (the venue's depth), refused retries held back; 30 more
	// after the next book event; the rest waits for more data (the feed ended).
	if v.takes != 2 {
		t.Fatalf("%d flattening orders, want 2: one per book the venue reported", v.takes)
	}
	if len(s.Positions) != 1 || s.Positions[0].Size != 40*market.One {
		t.Fatalf("positions %+v, want 40 YES left", s.Positions)
	}
}

// TestFlattenRetriesAfterItsBackoffWithoutData: with no new market data, a held
// flatten is retried once its backoff (1 s, doubling) has passed in event time, so
// a quiet feed does not leave a position unflattened for ever.
func TestFlattenRetriesAfterItsBackoffWithoutData(t *testing.T) {
	fv := newFakeVenue()
	fv.sync = true
	fv.positions = []market.Position{{Market: cond, Token: yes, Outcome: market.Yes, Size: 100 * market.One, Cost: 45 * market.One}}
	v := &thinVenue{fakeVenue: fv, fresh: 30 * market.One, maxTakes: 50, t: t}
	cfg := baseConfig()
	cfg.TimerInterval = 250 * time.Millisecond
	// One book, then only time passes (timer events) for 3.5 s of event time: the
	// held flatten is retried at +1 s (refused: nothing at the bid), then +2 s more.
	feed := &scriptFeed{events: []market.Event{book(1000, "0.45", "0.50"), {Kind: market.EventTimer, Time: 4500}}}
	a := newAgent(t, cfg, v, feed, flattenAt(1000), &fakeGuards{}, func(d *agent.Deps) { d.Clock = agent.EventClock })
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v.takes < 2 || v.takes > 4 {
		t.Fatalf("%d flattening orders over 3.5 s without data, want 2 to 4 (the first, then one per backoff)", v.takes)
	}
}

// cascade is a decider that answers every event — its own order events included —
// with a take under a new key: a strategy that feeds itself without end.
type cascade struct{ n int }

func (c *cascade) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	c.n++
	return append(out, market.Intent{Kind: market.IntentTake, Key: fmt.Sprint("m/k", c.n), Market: cond, Token: yes,
		Outcome: market.Yes, Side: market.Buy, Price: mic("0.50"), Size: mic("1"), Type: market.FAK}), nil
}

func TestRunStopsPromptlyWhenCancelledInsideACascade(t *testing.T) {
	fv := newFakeVenue()
	fv.sync = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v := &thinVenue{fakeVenue: fv, fresh: 1 << 50, maxTakes: -1, t: t, onSubmit: func(n int) {
		if n == 1000 {
			cancel() // in the middle of the cascade
		}
	}}
	v.depth = 1 << 50
	feed := &scriptFeed{events: []market.Event{book(1000, "0.45", "0.50")}, hold: true}
	a := newAgent(t, baseConfig(), v, feed, &cascade{}, &fakeGuards{}, func(d *agent.Deps) { d.Clock = agent.EventClock })
	runToEnd(t, ctx, a, 20*time.Second, "Run did not return after its context was cancelled")
	v.mu2.Lock()
	n := v.takes
	v.mu2.Unlock()
	if n >= 1<<13 {
		t.Fatalf("%d orders: the cascade ran to the runaway bound instead of stopping at the cancellation", n)
	}
	if s := a.Status(); s.State != agent.StateStopped {
		t.Fatalf("state %s, want stopped", s.State)
	}
}

func TestARunawayCascadeFailsTheAgent(t *testing.T) {
	fv := newFakeVenue()
	fv.sync = true
	v := &thinVenue{fakeVenue: fv, fresh: 1 << 50, maxTakes: -1, t: t}
	v.depth = 1 << 50
	feed := &scriptFeed{events: []market.Event{book(1000, "0.45", "0.50"), book(2000, "0.45", "0.50")}}
	d := &cascade{}
	a := newAgent(t, baseConfig(), v, feed, d, &fakeGuards{}, func(d *agent.Deps) { d.Clock = agent.EventClock })
	runToEnd(t, context.Background(), a, 60*time.Second, "Run did not return: the cascade was not bounded")
	s := a.Status()
	if !strings.Contains(s.Reason, "runaway") {
		t.Fatalf("status %+v, want the agent failed by the runaway bound", s)
	}
	if v.takes > 1<<14 {
		t.Fatalf("%d orders for two market events", v.takes)
	}
}

// scribbler records the timer events it is given and then writes over them, as a
// careless decider might: what it writes must not reach the next timer event.
type scribbler struct{ timers []market.Event }

func (s *scribbler) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	if ev.Kind == market.EventTimer {
		s.timers = append(s.timers, *ev)
		ev.Market, ev.Token, ev.Price, ev.Bids = "0xscribbled", "scribbled", 7, []market.Level{{Price: 1, Size: 1}}
	}
	return out, nil
}

func TestEventClockTimerEventsCarryOnlyTheirTime(t *testing.T) {
	fv := newFakeVenue()
	fv.sync = true
	cfg := baseConfig()
	cfg.TimerInterval = 250 * time.Millisecond
	var evs []market.Event
	for ts := int64(1000); ts <= 3000; ts += 100 {
		evs = append(evs, book(ts, "0.45", "0.50"))
	}
	d := &scribbler{}
	a := newAgent(t, cfg, fv, &scriptFeed{events: evs}, d, &fakeGuards{}, func(d *agent.Deps) { d.Clock = agent.EventClock })
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(d.timers) < 6 {
		t.Fatalf("%d timer events over 2 s of event time at 250 ms", len(d.timers))
	}
	for i, ev := range d.timers {
		want := market.Event{Kind: market.EventTimer, Time: ev.Time}
		if ev.Market != "" || ev.Token != "" || ev.Price != 0 || ev.Bids != nil || (i > 0 && ev.Time <= d.timers[i-1].Time) {
			t.Fatalf("timer event %d: %+v, want %+v after %d", i, ev, want, d.timers[max(i-1, 0)].Time)
		}
	}
}

// runToEnd runs a with ctx and fails the test if Run returns an error or has not
// returned within limit (timeout says what that means).
func runToEnd(t *testing.T, ctx context.Context, a *agent.Agent, limit time.Duration, timeout string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(limit):
		t.Fatal(timeout)
	}
}

// TestTripAndFlattenAreAudited: a kill-switch trip is audited with what it asked
// for, and closing a market's positions is audited once when it begins (an order
// record "flatten_start" naming the market and why), whoever asked for it: the kill
// switch here, the strategy's flatten intent below. Reports mark both on their
// time charts.
func TestTripAndFlattenAreAudited(t *testing.T) {
	for _, tc := range []struct {
		name    string
		guards  *fakeGuards
		decider agent.Decider
		why     string
	}{
		{"kill switch", &fakeGuards{flatten: true, tripOn: func(st *market.State) bool { return st.Time >= 2000 }}, bidQuoter("10"), "kill switch"},
		{"strategy", &fakeGuards{}, flattenAt(2000), "m/stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fv := newFakeVenue()
			fv.sync = true
			fv.positions = []market.Position{{Market: cond, Token: yes, Outcome: market.Yes, Size: 10 * market.One, Cost: 4 * market.One}}
			v := &thinVenue{fakeVenue: fv, fresh: 100 * market.One, maxTakes: 50, t: t}
			audit := &auditLog{}
			feed := &scriptFeed{events: []market.Event{book(1000, "0.45", "0.50"), book(2000, "0.45", "0.50"), book(3000, "0.45", "0.50")}}
			a := newAgent(t, baseConfig(), v, feed, tc.decider, tc.guards, func(d *agent.Deps) {
				d.Clock = agent.EventClock
				d.Audit = audit
			})
			runToEnd(t, context.Background(), a, 20*time.Second, "Run did not return")
			var trips, flattens []agent.AuditRecord
			audit.mu.Lock()
			for _, r := range audit.recs {
				switch {
				case r.Kind == agent.AuditTrip:
					trips = append(trips, r)
				case r.Kind == agent.AuditOrder && r.Op == "flatten_start":
					flattens = append(flattens, r)
				}
			}
			audit.mu.Unlock()
			if tc.guards.tripOn != nil {
				want := agent.Action{CancelAll: true, Flatten: true, Halt: true, Reason: "test trip"}
				if len(trips) != 1 || trips[0].Action != want || trips[0].Reason != "test trip" || trips[0].Time != 2000 {
					t.Fatalf("trip records %+v, want one at 2000 with action %+v", trips, want)
				}
			} else if len(trips) != 0 {
				t.Fatalf("trip records %+v without a trip", trips)
			}
			if len(flattens) != 1 || flattens[0].Order.Market != cond || flattens[0].Reason != tc.why || flattens[0].Time != 2000 {
				t.Fatalf("flatten records %+v, want one for %s at 2000 because %q", flattens, cond, tc.why)
			}
		})
	}
}

package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// endlessFeed is an inline feed of book events that never ends by itself: the
// loop runs it (agent.InlineFeed), so only the loop can stop it.
type endlessFeed struct {
	n       atomic.Int64 // events emitted
	emitted chan struct{}
}

func (f *endlessFeed) Inline() bool { return true }

func (f *endlessFeed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	for i := int64(0); ; i++ {
		ev := book(1000+i, "0.45", "0.50")
		if i%2 == 1 {
			ev = book(1000+i, "0.46", "0.50")
		}
		if !emit(&ev) {
			return nil
		}
		if f.n.Add(1) == 1 && f.emitted != nil {
			close(f.emitted)
		}
	}
}

// inlineScript is scriptFeed run by the loop.
type inlineScript struct {
	scriptFeed
	err error // returned after the events
}

func (f *inlineScript) Inline() bool { return true }

func (f *inlineScript) Run(ctx context.Context, emit func(*market.Event) bool) error {
	if err := f.scriptFeed.Run(ctx, emit); err != nil {
		return err
	}
	return f.err
}

func TestInlineFeedStopsAtMaxEvents(t *testing.T) {
	v := newFakeVenue()
	v.sync = true
	cfg := baseConfig()
	cfg.MaxEvents = 3
	var evs []market.Event
	for i := range 10 {
		evs = append(evs, book(int64(1000+i*1000), "0.45", "0.50"))
	}
	a := newAgent(t, cfg, v, &inlineScript{scriptFeed: scriptFeed{events: evs}}, bidQuoter("10"), &fakeGuards{},
		func(d *agent.Deps) { d.Clock = agent.EventClock })
	if err := a.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); st.Time != 3000 || st.Counts.Events != 3 {
		t.Fatalf("stopped at event time %d after %d events, want 3000 and 3", st.Time, st.Counts.Events)
	}
	if len(v.live()) != 0 {
		t.Fatal("orders left open")
	}
}

// An inline feed that ends (or fails) ends the run as a queued one does: every
// event it delivered is handled, and a failure is Run's error.
func TestInlineFeedEndAndFailure(t *testing.T) {
	for _, fail := range []bool{false, true} {
		v := newFakeVenue()
		v.sync = true
		f := &inlineScript{scriptFeed: scriptFeed{events: []market.Event{book(1000, "0.45", "0.50"), book(2000, "0.47", "0.50")}}}
		if fail {
			f.err = errors.New("tape damaged")
		}
		a := newAgent(t, baseConfig(), v, f, bidQuoter("10"), &fakeGuards{}, func(d *agent.Deps) { d.Clock = agent.EventClock })
		err := a.Run(context.Background())
		switch {
		case fail && (err == nil || !strings.Contains(err.Error(), "agent: feed: tape damaged")):
			t.Fatalf("failing feed: Run = %v", err)
		case !fail && err != nil:
			t.Fatalf("ended feed: Run = %v", err)
		}
		if st := a.Status(); st.Counts.Events != 2 || st.Time != 2000 {
			t.Fatalf("fail=%v: %d events handled up to %d, want 2 up to 2000", fail, st.Counts.Events, st.Time)
		}
	}
}

// A feed that never ends runs on the loop's goroutine: the loop must still stop
// when ctx ends, and answer control requests while the feed runs.
func TestInlineFeedLetsControlAndCancellationIn(t *testing.T) {
	v := newFakeVenue()
	v.sync = true
	f := &endlessFeed{emitted: make(chan struct{})}
	a := newAgent(t, baseConfig(), v, f, bidQuoter("10"), &fakeGuards{}, func(d *agent.Deps) { d.Clock = agent.EventClock })
	stop := run(t, a)
	<-f.emitted
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := a.Control(ctx, agent.ControlRequest{Op: agent.OpPause, From: "test"})
	if err != nil || st != agent.StatePaused {
		t.Fatalf("pause while an inline feed runs = %s, %v", st, err)
	}
	subs := v.submitCount()
	n := f.n.Load()
	waitFor(t, "more events", func() bool { return f.n.Load() > n+1000 })
	if got := v.submitCount(); got != subs {
		t.Fatalf("paused agent submitted %d orders", got-subs)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if a.Status().State != agent.StateStopped {
		t.Fatalf("state %s after stop", a.Status().State)
	}
}

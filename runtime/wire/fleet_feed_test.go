package wire_test

import (
	"context"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// TestFleetFeedDeliversTheFanout: an agent's feed over the fan-out gets the book of
// its token, then the changes, and stops when the agent stops taking events.
func TestFleetFeedDeliversTheFanout(t *testing.T) {
	f := startFleetBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	agentBus, err := f.srv.Connect(ctx, natsbus.RoleAgent, natsbus.ConnectOptions{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	defer agentBus.Close()
	fan, err := f.bus.NewFanout(natsbus.FanoutConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fanCtx, stopFan := context.WithCancel(context.Background())
	fanDone := make(chan struct{})
	go func() { defer close(fanDone); _ = fan.Run(fanCtx) }()
	defer func() { stopFan(); <-fanDone }()
	const tok = market.TokenID("123")
	book := market.Event{Kind: market.EventBook, Token: tok, Market: "0xc1", Time: 1,
		Bids: []market.Level{{Price: 450_000, Size: 10 * market.One}}, Asks: []market.Level{{Price: 470_000, Size: 5 * market.One}}}
	if err := fan.Publish(&book); err != nil {
		t.Fatal(err)
	}
	feed, err := wire.NewFleetFeed(agentBus, "a", []market.TokenID{tok})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan market.Event, 16)
	done := make(chan error, 1)
	go func() {
		n := 0
		done <- feed.Run(ctx, func(ev *market.Event) bool {
			got <- *ev
			n++
			return n < 3 // the agent stops after three events
		})
	}()
	next := func() market.Event {
		select {
		case ev := <-got:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
			return market.Event{}
		}
	}
	if ev := next(); ev.Kind != market.EventBook || len(ev.Bids) != 1 || ev.Bids[0].Price != 450_000 {
		t.Fatalf("first event %+v", ev)
	}
	for i := 0; i < 2; i++ {
		ch := market.Event{Kind: market.EventPriceChange, Token: tok, Time: int64(2 + i),
			Changes: []market.LevelChange{{Token: tok, Side: market.Buy, Price: 460_000, Size: market.Micros(i+1) * market.One}}}
		if err := fan.Publish(&ch); err != nil {
			t.Fatal(err)
		}
		if ev := next(); ev.Kind != market.EventPriceChange || ev.Changes[0].Size != market.Micros(i+1)*market.One {
			t.Fatalf("change %d: %+v", i, ev)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not stop when the agent did")
	}
	if st := feed.Stats(); st.Emitted != 3 || st.Gaps != 0 {
		t.Fatalf("stats %+v", st)
	}
}

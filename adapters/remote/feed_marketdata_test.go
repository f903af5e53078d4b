package remote_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// scriptFeed is a market-data source a test drives: Run emits what send gives it,
// in order, until ctx ends, emit returns false, or fail is called.
type scriptFeed struct {
	evs  chan market.Event
	fail chan error
	ran  chan struct{}
}

var _ agent.Feed = (*scriptFeed)(nil)

func newScriptFeed() *scriptFeed {
	return &scriptFeed{evs: make(chan market.Event, 64), fail: make(chan error, 1), ran: make(chan struct{})}
}

func (s *scriptFeed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	close(s.ran)
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.fail:
			return err
		case ev := <-s.evs:
			if !emit(&ev) {
				return nil
			}
		}
	}
}

func (s *scriptFeed) send(ev market.Event) { s.evs <- ev }

// TestFeedTakesMarketDataFromTheGivenSource: with FeedConfig.MarketData (a fleet's
// fan-out), the feed opens no market-channel connection, passes the source's
// market data on in order (a tick-size change reaches the venue), drops wallet
// events the source should not carry, and keeps the wallet's own user channel.
func TestFeedTakesMarketDataFromTheGivenSource(t *testing.T) {
	l := startLocal(t)
	fed := l.market(fedSlug)
	v, _, cr := l.venue("fanned", fedSlug)
	maker, _ := l.client(signer(t, "fanned-maker"))
	src := newScriptFeed()
	f, err := remote.NewFeed(remote.FeedConfig{URL: l.WSURL, User: creds(cr), Venue: v, Markets: []market.ConditionID{fed.Condition},
		MarketData: src, Tune: fastWS})
	if err != nil {
		t.Fatal(err)
	}
	var col collector
	runFeed(t, f, col.emit)
	<-src.ran
	waitFor(t, "the user channel", func() bool { return f.Stats().Resyncs >= 1 })

	yes := fed.Tokens[market.Yes]
	src.send(market.Event{Kind: market.EventBook, Market: fed.Condition, Token: yes, Time: 1,
		Bids: []market.Level{{Price: mic("0.40"), Size: mic("10")}}, Asks: []market.Level{{Price: mic("0.45"), Size: mic("10")}}})
	src.send(market.Event{Kind: market.EventOrder, Market: fed.Condition, Token: yes, // not the source's to say
		Order: market.Order{ID: "0xforged", Token: yes, Status: market.StatusLive}, OrderUpdate: market.OrderPlacement})
	src.send(market.Event{Kind: market.EventPriceChange, Market: fed.Condition, Token: yes, Time: 2,
		Changes: []market.LevelChange{{Token: yes, Side: market.Buy, Price: mic("0.41"), Size: mic("3")}}})
	src.send(market.Event{Kind: market.EventTickSize, Market: fed.Condition, Token: yes, Time: 3, OldTick: mic("0.01"), NewTick: mic("0.001")})
	waitFor(t, "the tick-size change", func() bool { return len(col.events(market.EventTickSize)) == 1 })

	t.Run("market data arrives in the source's order", func(t *testing.T) {
		books, changes := col.events(market.EventBook), col.events(market.EventPriceChange)
		if len(books) != 1 || len(changes) != 1 || books[0].Time != 1 || changes[0].Time != 2 || changes[0].Changes[0].Price != mic("0.41") {
			t.Fatalf("books %+v, changes %+v", books, changes)
		}
	})
	t.Run("the source's wallet events are dropped", func(t *testing.T) {
		if n := len(col.events(market.EventOrder)); n != 0 || f.Stats().Foreign != 1 {
			t.Fatalf("%d orders delivered, %d dropped", n, f.Stats().Foreign)
		}
	})
	t.Run("a tick-size change reaches the venue", func(t *testing.T) {
		// 0.405 is on the new tick only.
		if _, err := v.Prepare(context.Background(), agent.OrderRequest{ClientID: 9, Market: fed.Condition, Token: yes,
			Outcome: market.Yes, Side: market.Buy, Price: mic("0.405"), Size: mic("5"), Type: market.GTC}); err != nil {
			t.Fatalf("a price on the new tick: %v", err)
		}
	})
	t.Run("the wallet's orders and fills come from its user channel", func(t *testing.T) {
		id := place(t, v, fed, 1, market.Yes, "0.30", "5")
		l.ask(maker, fed, market.Yes, "0.30", "5")
		waitFor(t, "the fill", func() bool { return len(col.events(market.EventFill)) == 1 })
		if fl := col.events(market.EventFill)[0]; fl.Fill.Order != id {
			t.Fatalf("fill %+v", fl.Fill)
		}
	})
	t.Run("no market-channel connection; one user channel", func(t *testing.T) {
		if m, u := l.WSRequests("/ws/market"), l.WSRequests("/ws/user"); m != 0 || u != 1 {
			t.Fatalf("%d market-channel and %d user-channel connections", m, u)
		}
	})
}

// TestFeedWithAMarketDataSourceEndsWithIt: a dry run's feed (no user channel) over a
// source connects nowhere; the source's failure is the feed's, and the agent's stop
// reaches the source.
func TestFeedWithAMarketDataSourceEndsWithIt(t *testing.T) {
	tok := market.TokenID("123")
	book := market.Event{Kind: market.EventBook, Token: tok, Bids: []market.Level{{Price: 400_000, Size: market.One}}}
	cases := []struct {
		name string
		act  func(src *scriptFeed)
		emit func(*market.Event) bool
		want error
	}{
		{"the source fails", func(src *scriptFeed) { src.fail <- errBroken }, func(*market.Event) bool { return true }, errBroken},
		{"the agent stops taking events", func(src *scriptFeed) { src.send(book) }, func(*market.Event) bool { return false }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := newScriptFeed()
			f, err := remote.NewFeed(remote.FeedConfig{MarketData: src}) // no URL, no tokens: nothing of ours to connect
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- f.Run(ctxT(t, 10*time.Second), c.emit) }()
			<-src.ran
			c.act(src)
			select {
			case err := <-done:
				if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
					t.Fatalf("Run: %v, want %v", err, c.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the feed did not end with its source")
			}
			if f.Stats().WS != (remote.FeedStats{}).WS {
				t.Fatalf("a WebSocket client ran: %+v", f.Stats().WS)
			}
		})
	}
}

var errBroken = errors.New("broken source")

package remote_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

func creds(cr auth.Credentials) *api.APIKeyCreds {
	return &api.APIKeyCreds{APIKey: cr.APIKey, Secret: cr.Secret, Passphrase: cr.Passphrase}
}

// place rests a BUY of outcome oc of info through the venue.
func place(t *testing.T, v *remote.Venue, info market.Info, client uint64, oc market.Outcome, price, size string) market.OrderID {
	t.Helper()
	p, err := v.Prepare(context.Background(), agent.OrderRequest{ClientID: client, Market: info.Condition,
		Token: info.Tokens[oc], Outcome: oc, Side: market.Buy, Price: mic(price), Size: mic(size), Type: market.GTC})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Submit(ctxT(t, 5*time.Second), &p); err != nil {
		t.Fatal(err)
	}
	return p.ID
}

func TestFeedMergesMarketDataWithTheWalletsOrdersAndFills(t *testing.T) {
	l := startLocal(t)
	ud := l.market(updown)
	v, _, cr := l.venue("feeder", updown)
	maker, _ := l.client(signer(t, "maker"))
	f, err := remote.NewFeed(remote.FeedConfig{URL: l.WSURL, Tokens: ud.Tokens[:], Markets: []market.ConditionID{ud.Condition},
		User: creds(cr), Venue: v, Tune: fastWS})
	if err != nil {
		t.Fatal(err)
	}
	var col collector
	runFeed(t, f, col.emit)
	waitFor(t, "both books", func() bool { return len(col.events(market.EventBook)) >= 2 })
	waitFor(t, "the user channel", func() bool { return f.Stats().Resyncs >= 1 })

	// A bid for Down (outcome No), then another wallet buys Up against it.
	id := place(t, v, ud, 1, market.No, "0.40", "10")
	l.ask(maker, ud, market.No, "0.40", "10") // a BUY of Up at 0.60: matches the bid (a mint)
	waitFor(t, "the fill", func() bool { return len(col.events(market.EventFill)) == 1 })
	fl := col.events(market.EventFill)[0]
	if fl.Fill.Order != id || fl.Fill.Outcome != market.No || fl.Fill.Side != market.Buy || fl.Fill.Price != mic("0.40") ||
		fl.Fill.Size != mic("10") || fl.Fill.Role != market.Maker || fl.Market != ud.Condition || fl.Fill.Owner != v.Address() {
		t.Fatalf("fill %+v", fl.Fill)
	}
	var placed bool
	for _, ev := range col.events(market.EventOrder) {
		if ev.Order.ID == id && ev.OrderUpdate == market.OrderPlacement {
			placed = ev.Order.Outcome == market.No
		}
	}
	if !placed {
		t.Fatalf("no placement of %s with outcome No: %+v", id, col.events(market.EventOrder))
	}
	// Market data goes on: the mint printed a trade on both tokens.
	waitFor(t, "the trade prints", func() bool { return len(col.events(market.EventLastTrade)) >= 2 })
}

func TestFeedResyncsWhatTheUserChannelMissed(t *testing.T) {
	l := startLocal(t)
	fed := l.market(fedSlug)
	v, c, cr := l.venue("resyncer", fedSlug)
	maker, _ := l.client(signer(t, "maker"))

	// A fill before the balances are read is in them: never delivered.
	early := place(t, v, fed, 1, market.Yes, "0.30", "5")
	l.ask(maker, fed, market.Yes, "0.30", "5") // the maker offers YES at 0.30: fills early
	if _, err := v.Account(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	a := place(t, v, fed, 2, market.Yes, "0.40", "10") // filled while the channel is down
	b := place(t, v, fed, 3, market.Yes, "0.41", "5")  // cancelled behind the agent's back
	// A fill after the balances and before the feed connects: replayed at connection.
	c0 := place(t, v, fed, 4, market.Yes, "0.42", "5")
	l.ask(maker, fed, market.Yes, "0.42", "5")

	var gate atomic.Bool // reconnections wait while it is set
	gate.Store(false)
	tune := func(wc *wsfeed.Config) {
		fastWS(wc)
		wc.Sleep = func(ctx context.Context, d time.Duration) error {
			for gate.Load() {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(5 * time.Millisecond):
				}
			}
			return nil
		}
	}
	f, err := remote.NewFeed(remote.FeedConfig{URL: l.WSURL, Tokens: fed.Tokens[:], User: creds(cr), Venue: v,
		ResyncInterval: 50 * time.Millisecond, Tune: tune})
	if err != nil {
		t.Fatal(err)
	}
	var col collector
	runFeed(t, f, col.emit)
	waitFor(t, "the replay of the fill after the balances", func() bool { return len(col.events(market.EventFill)) == 1 })
	if got := col.events(market.EventFill)[0].Fill.Order; got != c0 {
		t.Fatalf("replayed a fill of %s, want %s (not %s, counted in the balances)", got, c0, early)
	}

	// Cut the channels and keep them down.
	gate.Store(true)
	l.cutWS()
	waitFor(t, "the disconnection", func() bool { return f.Stats().WS.Reconnects >= 2 })
	other, err := clob.New(clob.Config{CLOBURL: l.URL, Address: v.Address(), Credentials: cr, Budget: clob.Unlimited()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.CancelOrder(ctxT(t, 5*time.Second), b); err != nil {
		t.Fatal(err)
	}
	l.ask(maker, fed, market.Yes, "0.40", "10") // fills a completely
	gate.Store(false)

	waitFor(t, "the missed fill", func() bool { return len(col.events(market.EventFill)) == 2 })
	waitFor(t, "the missed cancellation", func() bool {
		for _, ev := range col.events(market.EventOrder) {
			if ev.Order.ID == b && ev.OrderUpdate == market.OrderCancellation {
				return true
			}
		}
		return false
	})
	fills := col.events(market.EventFill)
	if fills[1].Fill.Order != a || fills[1].Fill.Size != mic("10") || fills[1].Fill.Price != mic("0.40") {
		t.Fatalf("missed fill %+v, want 10 of %s at 0.40", fills[1].Fill, a)
	}
	// More resyncs deliver nothing twice.
	n := f.Stats().Resyncs
	waitFor(t, "three more resyncs", func() bool { return f.Stats().Resyncs >= n+3 })
	if got := len(col.events(market.EventFill)); got != 2 {
		t.Fatalf("%d fills delivered, want 2", got)
	}
	if open := openOrders(t, c); len(open) != 0 {
		t.Fatalf("open orders left: %+v", open)
	}
}

// TestFeedLeavesNoGoroutineBehind: a feed with both channels, resyncs and a cut
// connection leaves no goroutine once Run returned (and the exchange stopped).
func TestFeedLeavesNoGoroutineBehind(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("session", func(t *testing.T) {
		l := startLocal(t)
		fed := l.market(fedSlug)
		v, _, cr := l.venue("leaker", fedSlug)
		if _, err := v.Account(ctxT(t, 5*time.Second)); err != nil {
			t.Fatal(err)
		}
		f, err := remote.NewFeed(remote.FeedConfig{URL: l.WSURL, Tokens: fed.Tokens[:], User: creds(cr), Venue: v,
			ResyncInterval: 10 * time.Millisecond, Tune: fastWS})
		if err != nil {
			t.Fatal(err)
		}
		var col collector
		runFeed(t, f, col.emit)
		waitFor(t, "resyncs", func() bool { return f.Stats().Resyncs >= 3 })
		l.cutWS()
		waitFor(t, "the reconnection", func() bool { return f.Stats().WS.Reconnects >= 2 && f.Stats().Resyncs >= 6 })
	})
	waitFor(t, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= before+2 })
}

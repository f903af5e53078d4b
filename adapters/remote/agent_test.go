package remote_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/adapters/remote/remotetest"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/agent/agenttest"
)

// allowAll lets every intent through (the guards have their own tests).
type allowAll = agenttest.AllowAll

// fixedBid quotes one bid at a fixed price on every event of its market.
type fixedBid struct {
	info  market.Info
	price market.Micros
}

func (d fixedBid) Decide(ev *market.Event, _ *market.State, out []market.Intent) ([]market.Intent, error) {
	if ev.Kind == market.EventOrder || ev.Kind == market.EventFill {
		return out, nil
	}
	return append(out, market.Intent{Kind: market.IntentQuote, Key: "m/bid", Market: d.info.Condition,
		Token: d.info.Tokens[market.Yes], Outcome: market.Yes, Side: market.Buy, Price: d.price, Size: 5 * market.One,
		Type: market.GTC}), nil
}

// TestAgentNeverPlacesTwiceWhenAnswersAreLost runs the real agent loop on the remote
// venue and feed while the exchange loses the answers to order posts and lookups:
// whatever the agent retries, the exchange never holds two orders for the quote.
func TestAgentNeverPlacesTwiceWhenAnswersAreLost(t *testing.T) {
	tests := []struct {
		name string
		lose func(r *http.Request, posts, lookups *atomic.Int64) bool
	}{
		{"the first post's answer is lost (the client finds the order by id)", func(r *http.Request, posts, _ *atomic.Int64) bool {
			return r.Method == http.MethodPost && r.URL.Path == "/order" && posts.Add(1) == 1
		}},
		{"posts and their lookups are lost (the agent looks the order up by id later)", func(r *http.Request, posts, lookups *atomic.Int64) bool {
			switch {
			case r.Method == http.MethodPost && r.URL.Path == "/order":
				return posts.Add(1) <= 2
			case strings.HasPrefix(r.URL.Path, "/data/order/"):
				return lookups.Add(1) <= 4
			}
			return false
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := startLocal(t)
			fed := l.market(fedSlug)
			v, c, cr := l.venue("agent", fedSlug)
			maker, _ := l.client(signer(t, "maker"))
			var posts, lookups atomic.Int64
			l.lose(func(r *http.Request) bool { return remotetest.Sender(r) == v.Address() && tc.lose(r, &posts, &lookups) })
			f, err := remote.NewFeed(remote.FeedConfig{URL: l.WSURL, Tokens: fed.Tokens[:], User: creds(cr), Venue: v, Tune: fastWS})
			if err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(agent.Config{ID: "a1", Wallet: v.Address(), Markets: []market.ConditionID{fed.Condition},
				Heartbeat: -1, TimerInterval: -1, RequestTimeout: 2 * time.Second, ShutdownTimeout: 5 * time.Second},
				agent.Deps{Venue: v, Feed: f, Decider: fixedBid{info: fed, price: mic("0.30")}, Guards: allowAll{}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- a.Run(ctx) }()
			// Market activity: every book change makes the agent state its quote again.
			for i := 0; i < 20; i++ {
				id := l.ask(maker, fed, market.Yes, "0.70", "5")
				if _, err := maker.CancelOrder(ctxT(t, 5*time.Second), id); err != nil {
					t.Fatal(err)
				}
				if n := len(openOrders(t, c)); n > 1 {
					t.Fatalf("%d orders on the exchange for one quote", n)
				}
			}
			waitFor(t, "the quote resting on the exchange", func() bool { return len(openOrders(t, c)) == 1 })
			if n := l.Lost(); n == 0 {
				t.Fatal("no answer was lost: the test tested nothing")
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if n := len(openOrders(t, c)); n != 0 {
				t.Fatalf("%d orders left after the stop", n)
			}
		})
	}
}

package remote_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/adapters/remote/remotetest"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// redeemer redeems market m's tokens once it resolved (once).
type redeemer struct {
	m    market.ConditionID
	done bool
}

func (d *redeemer) Decide(_ *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	if pay, held, ok := st.Redeemable(d.m); ok && held > 0 && !d.done {
		d.done = true
		out = append(out, market.Intent{Kind: market.IntentRedeem, Key: "m/collect", Market: d.m, Size: pay})
	}
	return out, nil
}

// TestAgentRedeemsOnTheRemoteVenue runs the agent loop on the remote venue and feed
// against the local exchange on loopback: the wallet holds 10 complete sets split
// there, a redeem before the resolution is refused (market_not_resolved, from POST
// /ctf/redeem), the market resolves YES (the exchange's internal route), the agent
// sees the resolution on the market channel and redeems (POST /ctf/redeem): the
// exchange's collateral grows by the 10 winning shares, nothing is left held there,
// and the agent's state agrees.
func TestAgentRedeemsOnTheRemoteVenue(t *testing.T) {
	l := startLocal(t)
	fed := l.market(remotetest.FedSlug)
	v, c, cr := l.venue("redeemer", remotetest.FedSlug)
	ctx := ctxT(t, 20*time.Second)
	if _, err := c.Split(ctx, clob.CTFRequest{ConditionID: fed.Condition, Size: decimal.NewFromInt(10)}); err != nil {
		t.Fatal(err)
	}
	var e *market.Error
	if err := v.Redeem(ctx, fed.Condition); !errors.As(err, &e) || e.Code != market.CodeMarketNotResolved {
		t.Fatalf("redeem before the resolution: %v, want market_not_resolved", err)
	}
	before, err := v.Account(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := remote.NewFeed(remote.FeedConfig{URL: l.WSURL, Tokens: fed.Tokens[:], User: creds(cr), Venue: v, Tune: fastWS})
	if err != nil {
		t.Fatal(err)
	}
	d := &redeemer{m: fed.Condition}
	a, err := agent.New(agent.Config{ID: "r1", Wallet: v.Address(), Markets: []market.ConditionID{fed.Condition},
		Heartbeat: -1, TimerInterval: -1, RequestTimeout: 5 * time.Second, ShutdownTimeout: 5 * time.Second},
		agent.Deps{Venue: v, Feed: f, Decider: d, Guards: allowAll{}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	defer func() {
		cancel()
		<-done
	}()
	waitFor(t, "the agent to hold the sets", func() bool {
		for _, p := range a.Status().Positions {
			if p.Size == 10*market.One {
				return true
			}
		}
		return false
	})
	internal := httptest.NewServer(l.Server.InternalHandler())
	defer internal.Close()
	resp, err := http.Post(internal.URL+"/internal/markets/resolve", "application/json",
		strings.NewReader(`{"market":"`+string(fed.Condition)+`","outcome":"YES"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resolve: %s", resp.Status)
	}
	var after agent.Account
	waitFor(t, "the redeem on the exchange", func() bool {
		after, err = v.Account(ctx)
		return err == nil && after.Balance == before.Balance+10*market.One
	})
	if len(after.Positions) != 0 {
		t.Fatalf("positions %+v left on the exchange after the redeem", after.Positions)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil // for the deferred stop
	s := a.Status()
	if s.Balance != after.Balance {
		t.Fatalf("agent balance %s, exchange %s", s.Balance, after.Balance)
	}
	for _, p := range s.Positions {
		if p.Size != 0 {
			t.Fatalf("agent position %+v left after the redeem", p)
		}
	}
}

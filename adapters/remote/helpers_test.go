package remote_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/adapters/remote/remotetest"
	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// local wraps the in-process exchange of remotetest with this package's helpers.
type local struct {
	*remotetest.Exchange
	t testing.TB
}

const (
	fedSlug = remotetest.FedSlug
	updown  = remotetest.UpDown
)

func startLocal(t testing.TB, opts ...func(*server.Config)) *local {
	t.Helper()
	return &local{Exchange: remotetest.Start(t, opts...), t: t}
}

func (l *local) market(slug string) market.Info { return l.Market(slug) }

func (l *local) lose(f func(r *http.Request) bool) { l.Lose(f) }

func (l *local) cutWS() { l.CutWS() }

func signer(t testing.TB, name string) *auth.KeySigner { return remotetest.Signer(t, name) }

func (l *local) client(s auth.Signer) (*clob.Client, auth.Credentials) { return l.Client(s) }

func (l *local) ask(c *clob.Client, info market.Info, oc market.Outcome, price, size string) market.OrderID {
	return l.Ask(c, info, oc, price, size)
}

func openOrders(t *testing.T, c *clob.Client) []api.OpenOrder { return remotetest.OpenOrders(t, c) }

// venue returns a remote venue of a new wallet, with the markets of slugs loaded.
func (l *local) venue(name string, slugs ...string) (*remote.Venue, *clob.Client, auth.Credentials) {
	l.t.Helper()
	s := signer(l.t, name)
	c, cr := l.client(s)
	v, err := remote.New(remote.Config{Client: c, Signer: s, Epoch: 7, Logger: zaptest.NewLogger(l.t, zaptest.Level(zapcore.WarnLevel))})
	if err != nil {
		l.t.Fatal(err)
	}
	var ids []market.ConditionID
	for _, sl := range slugs {
		ids = append(ids, l.market(sl).Condition)
	}
	if _, err := v.Markets(ctxT(l.t, 10*time.Second), ids); err != nil {
		l.t.Fatal(err)
	}
	return v, c, cr
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mic(s string) market.Micros {
	m, err := market.ParseMicros(s)
	if err != nil {
		panic(err)
	}
	return m
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fastWS shortens the WebSocket client's reconnection delays.
func fastWS(c *wsfeed.Config) {
	c.MinBackoff, c.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
}

// collector gathers a feed's events.
type collector struct {
	mu  sync.Mutex
	evs []market.Event
}

func (c *collector) emit(ev *market.Event) bool {
	e := *ev
	e.Bids = append([]market.Level(nil), ev.Bids...)
	e.Asks = append([]market.Level(nil), ev.Asks...)
	e.Changes = append([]market.LevelChange(nil), ev.Changes...)
	c.mu.Lock()
	c.evs = append(c.evs, e)
	c.mu.Unlock()
	return true
}

func (c *collector) events(k market.EventKind) []market.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []market.Event
	for _, e := range c.evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// runFeed runs f until the test ends.
func runFeed(t *testing.T, f *remote.Feed, emit func(*market.Event) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, emit) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("feed: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("feed did not stop")
		}
	})
}

package wsfeed_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

// TestFeedNoGoroutineLeak: a feed with both channels, a cut connection and a
// reconnection leaves no goroutine behind once Run returned.
func TestFeedNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("session", func(t *testing.T) {
		h, srv, ms := exchangeFixture(t)
		px := newProxy(t, srv.URL)
		c := newConsumer()
		f, err := wsfeed.New(wsfeed.Config{URL: "ws" + strings.TrimPrefix(px.url(), "http"), Assets: allTokens(ms),
			User: creds("key-alice"), Handler: c.handle, MinBackoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		runFeed(t, f)
		wstest.Eventually(t, 10*time.Second, "the snapshots", func() bool { _, ok := f.Book(ms[0].Yes); return ok })
		flow(h, wstest.NewFlow(9, ms, []market.Address{alice, bob, carol}), 200)
		px.kill()
		wstest.Eventually(t, 10*time.Second, "the reconnection", func() bool {
			_, ok := f.Book(ms[0].Yes)
			return ok && f.Stats().Reconnects >= 1
		})
	})
	wstest.Eventually(t, 10*time.Second, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= before+2 })
}

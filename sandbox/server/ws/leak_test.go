package ws_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

// TestNoGoroutineLeak: a hub with connections of every channel, a flow, a slow
// consumer dropped and a shutdown leaves no goroutine behind once Run returned.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("session", func(t *testing.T) {
		f := newFixture(t, ws.Config{QueueLen: 4}, wstest.SmallSendBuffer(4096))
		for _, p := range []string{"/ws/market", "/ws/user", "/ws/rtds", "/ws/comments", "/ws/sports"} {
			c := dial(t, f.srv.WS+p)
			c.sendText("PING")
		}
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		defer cancel()
		slow, _, err := websocket.Dial(ctx, f.srv.WS+"/ws/market", &websocket.DialOptions{HTTPClient: smallRcvbufDialer()})
		if err != nil {
			t.Fatal(err)
		}
		defer slow.CloseNow() //nolint:errcheck // test
		subscribeMarket(&client{t: t, c: slow}, f.m.Yes, f.m.No)
		for i := uint64(0); f.srv.Hub.Stats().Overflows == 0; i++ { // the client never reads: it overflows
			if i == 100 {
				t.Fatal("no overflow")
			}
			randomFlow(t, f.host, 5+i, 200, f.m)
			f.host.Flush()
		}
	}) // cleanups: clients closed, hub stopped (Run waited for its connections), server closed
	wstest.Eventually(t, 10*time.Second, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= before+2 })
}

package ws_test

import (
	"context"
	"testing"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// FuzzClientMessages: whatever a client sends on any channel, the hub answers a
// following PING with PONG (after any error frame or subscription frames) or closes
// the connection with a reason; it never panics, hangs or goes silent.
func FuzzClientMessages(f *testing.F) {
	for _, seed := range []struct {
		ch  byte
		msg string
	}{
		{0, `{"assets_ids":["1000","1001"],"type":"market","initial_dump":true}`},
		{0, `{"assets_ids":["1000"],"operation":"unsubscribe"}`},
		{0, `{"assets_ids":["x"],"type":"market"}`},
		{1, `{"type":"user","auth":{"apiKey":"key-alice","secret":"sa","passphrase":"pa"},"markets":[]}`},
		{1, `{"type":"user","auth":{"apiKey":"key-alice","secret":"no","passphrase":"pa"}}`},
		{2, `{"action":"subscribe","subscriptions":[{"topic":"clob_market","type":"*","filters":"[\"1000\"]"}]}`},
		{2, `{"action":"subscribe","subscriptions":[{"topic":"activity","type":"trades","filters":"{\"market_slug\":1}"}]}`},
		{2, `{"action":"unsubscribe","subscriptions":[{"topic":"comments","type":"*","filters":"{\"parentEntityID\":\"1\"}"}]}`},
		{2, `{"action":"subscribe","subscriptions":[{"topic":"rfq","type":"*","filters":"{\"markets\":[\"0xc\"],\"token\":\"1000\"}"}]}`},
		{2, `{"action":"unsubscribe","subscriptions":[{"topic":"rfq","type":"request_created"}]}`},
		{2, `{"action":"subscribe","subscriptions":[{"topic":"clob_user","type":"rfq_quote","clob_auth":{"key":"key-alice","secret":"sa","passphrase":"pa"}}]}`},
		{3, `{"type":"comments","parent_entity_type":"Event","parent_entity_ids":["1"]}`},
		{3, `{"operation":"unsubscribe","parent_entity_type":"Event"}`},
		{0, `PING`},
		{1, "\x00\xff"},
	} {
		f.Add(seed.ch, []byte(seed.msg))
	}
	fx := newFixture(f, ws.Config{})
	paths := []string{"/ws/market", "/ws/user", "/ws/rtds", "/ws/comments"}
	conns := make([]*client, len(paths))
	f.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				_ = c.c.CloseNow()
			}
		}
	})
	f.Fuzz(func(t *testing.T, ch byte, msg []byte) {
		i := int(ch) % len(paths)
		if conns[i] == nil {
			ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
			wc, _, err := websocket.Dial(ctx, fx.srv.WS+paths[i], nil)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			conns[i] = &client{c: wc}
		}
		c := conns[i]
		c.t = t
		c.sendText(string(msg))
		c.sendText("PING")
		for {
			b, err := c.readErr()
			if err != nil {
				conns[i] = nil // closed by the hub (refused credentials): redial next time
				_ = c.c.CloseNow()
				return
			}
			if string(b) == "PONG" || string(b) == "pong" {
				return
			}
		}
	})
}

package ws_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// TestErrorFramesDoNotEchoUnboundedInput: a subscription to 500 unknown assets with
// long ids, a wrong channel type of 10 KB and an RTDS topic of 10 KB are answered by
// small error frames (issue 20, attack 6: each used to echo the ids back, ~41 KB).
func TestErrorFramesDoNotEchoUnboundedInput(t *testing.T) {
	f := newFixture(t, ws.Config{})
	c := dial(t, f.srv.WS+"/ws/market")
	var ids []market.TokenID
	for i := range 500 {
		ids = append(ids, market.TokenID(fmt.Sprintf("%s%03d", strings.Repeat("9", 70), i)))
	}
	c.send(api.WSSubscribe{Type: "market", AssetsIDs: ids})
	b := c.read()
	if len(b) > 2048 {
		t.Fatalf("an error frame of %d bytes for 500 unknown ids", len(b))
	}
	var e struct {
		Error     string   `json:"error"`
		AssetsIDs []string `json:"assets_ids"`
	}
	if err := json.Unmarshal(firstFrame(b), &e); err != nil || e.Error != "No orderbook exists for the requested token id" || len(e.AssetsIDs) != 8 {
		t.Fatalf("frame %s (%v)", b, err)
	}
	for _, id := range e.AssetsIDs {
		if len(id) > 64+len("…") {
			t.Fatalf("an echoed id of %d bytes", len(id))
		}
	}
	c.sendText(`{"type":"` + strings.Repeat("x", 10_000) + `","assets_ids":[]}`)
	if b := c.read(); len(b) > 512 {
		t.Fatalf("a wrong-channel error frame of %d bytes", len(b))
	}
	r := dial(t, f.srv.WS+"/ws/rtds")
	r.sendText(`{"action":"subscribe","subscriptions":[{"topic":"` + strings.Repeat("t", 10_000) + `","type":"*"}]}`)
	if b := r.read(); len(b) > 1024 {
		t.Fatalf("an RTDS error frame of %d bytes", len(b))
	}
}

// firstFrame is the first object of a frame (an object, or an array of them).
func firstFrame(b []byte) []byte {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) == nil && len(arr) > 0 {
			return arr[0]
		}
	}
	return b
}

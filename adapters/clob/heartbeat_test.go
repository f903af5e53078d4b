package clob

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/market"
)

// TestHeartbeaterRepairsItsChain scripts a service's heartbeat answers: a stale id
// joins the service's current chain silently; an ended chain (the current id is
// ours, or none) starts a new chain and reports ErrHeartbeatLapsed.
func TestHeartbeaterRepairsItsChain(t *testing.T) {
	type answer struct {
		want   string // the id the beat must carry
		status int
		id     string // heartbeat_id answered
	}
	script := []answer{
		{"", 200, "A"},
		{"A", 400, "B"}, // another chain is current: join B at once
		{"B", 200, "B"},
		{"B", 400, ""}, // our chain ended: start a new one
		{"", 200, "C"},
		{"C", 400, "C"}, // expired, still reported as current: start a new one
		{"", 200, "D"},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	n := 0
	srv := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID *string `json:"heartbeat_id"`
		}
		_ = json.Unmarshal(body, &req)
		got := ""
		if req.ID != nil {
			got = *req.ID
		}
		mu.Lock()
		defer mu.Unlock()
		if n >= len(script) {
			cancel()
			_, _ = w.Write([]byte(`{"heartbeat_id":"D","status":"ok"}`))
			return
		}
		a := script[n]
		n++
		if got != a.want {
			t.Errorf("beat %d carried %q, want %q", n, got, a.want)
		}
		w.WriteHeader(a.status)
		if a.status == 200 {
			_, _ = w.Write([]byte(`{"heartbeat_id":"` + a.id + `","status":"ok"}`))
			return
		}
		_, _ = w.Write([]byte(`{"error":"invalid heartbeat id","heartbeat_id":"` + a.id + `"}`))
	}))
	clk := newFakeClock()
	cfg := testConfig(t, clk, srv.URL)
	cfg.Address = market.Address{19: 1}
	cfg.Credentials = auth.Credentials{APIKey: "00000000-0000-4000-8000-000000000000", Secret: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", Passphrase: "p"}
	c := mustNew(t, cfg)
	var lapses []error
	hb := NewHeartbeater(c, time.Second, func(err error) {
		if !errors.Is(err, ErrHeartbeatLapsed) {
			t.Errorf("unexpected failure: %v", err)
		}
		lapses = append(lapses, err)
	})
	if err := hb.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(lapses) != 2 {
		t.Fatalf("%d lapses reported, want 2: %v", len(lapses), lapses)
	}
	if last, id := hb.LastBeat(); last.IsZero() || id != "D" {
		t.Fatalf("LastBeat = %v, %q; want the chain D", last, id)
	}
	if got := len(clk.Sleeps()); got < 4 {
		t.Fatalf("%d intervals slept, want one per round", got)
	}
}

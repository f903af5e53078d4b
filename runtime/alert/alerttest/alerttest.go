// Package alerttest is a loopback receiver of JSON-format webhooks for the
// tests of whatever sends alerts (a standalone run, a supervisor).
package alerttest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/runtime/alert"
)

// Receiver records every alert.Payload posted to it; a body that is not one
// fails the test.
type Receiver struct {
	// URL is the receiver's base address on loopback; any path is accepted.
	URL string
	mu  sync.Mutex
	got []alert.Payload
}

// NewReceiver starts a receiver, closed when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var p alert.Payload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Errorf("alerttest: body %q: %v", b, err)
			return
		}
		r.mu.Lock()
		r.got = append(r.got, p)
		r.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Payloads returns a copy of what was received so far, in arrival order.
func (r *Receiver) Payloads() []alert.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]alert.Payload(nil), r.got...)
}

// Wait polls until done holds for what was received, failing the test with
// what was received and what after timeout.
func (r *Receiver) Wait(t testing.TB, what string, timeout time.Duration, done func([]alert.Payload) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := r.Payloads()
		if done(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("alerttest: no %s in %v: %d received: %+v", what, timeout, len(got), got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

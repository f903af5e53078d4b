package bridge

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// The bridge starts no goroutine of its own: after a rig (host, listener) stops,
// the goroutine count is back where it was.
func TestNoGoroutineOutlivesTheService(t *testing.T) {
	before := runtime.NumGoroutine()
	r := newRig(t, t.TempDir(), Config{})
	r.deposit(alice, "1000000000000000000")
	r.ok("GET", "/status/"+alice.String(), nil, market.Address{}, nil)
	r.stop()
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

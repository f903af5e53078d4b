package clob_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain runs the tests and examples, then checks that no goroutine of the
// client, the local exchange or NATS outlived them: every Heartbeater, exchange
// and server the tests start has an owner that stops it and waits for it.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(10 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leakMarkers identify goroutines that must not outlive a test.
var leakMarkers = []string{"adapters/clob.", "adapters/clob/funding.", "sandbox/", "nats-io/nats-server", "nats-io/nats.go"}

// waitNoLeaks polls until no goroutine runs code of leakMarkers, and returns the
// offending stacks if some remain after d.
func waitNoLeaks(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var bad []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "waitNoLeaks") || strings.Contains(g, "TestMain") {
				continue
			}
			for _, m := range leakMarkers {
				if strings.Contains(g, m) {
					bad = append(bad, g)
					break
				}
			}
		}
		if len(bad) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(bad, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

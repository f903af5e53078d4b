package natsbustest

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// natsMarkers identify the goroutines of nats-server and nats.go in a stack dump.
var natsMarkers = []string{"nats-io/nats-server", "nats-io/nats.go"}

// WaitNoLeaks polls every 20 ms until no goroutine runs code of nats-server,
// nats.go or own (markers of the package under test, such as
// "adapters/natsbus.("), and returns the offending stacks if some remain after d;
// "" means none. The calling goroutine is never counted.
func WaitNoLeaks(d time.Duration, own ...string) string {
	markers := append(slices.Clip(natsMarkers), own...)
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var bad []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "natsbustest.WaitNoLeaks") {
				continue
			}
			for _, m := range markers {
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

// RunCheckingLeaks runs m's tests and, if they passed, waits up to 10 s for the
// goroutines of NATS and own to end (WaitNoLeaks); it returns the exit code for
// os.Exit: the tests', or 1 (the stacks on stderr) when some goroutine leaked.
func RunCheckingLeaks(m *testing.M, own ...string) int {
	code := m.Run()
	if code == 0 {
		if leaked := WaitNoLeaks(10*time.Second, own...); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by the tests:\n%s\n", leaked)
			code = 1
		}
	}
	return code
}

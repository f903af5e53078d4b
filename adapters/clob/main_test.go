package clob_test

import (
	"os"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
)

// TestMain runs the tests and examples, then checks that no goroutine of the
// client, the local exchange or NATS outlived them: every Heartbeater, exchange
// and server the tests start has an owner that stops it and waits for it.
func TestMain(m *testing.M) {
	os.Exit(natsbustest.RunCheckingLeaks(m, "adapters/clob.", "adapters/clob/funding.", "sandbox/"))
}

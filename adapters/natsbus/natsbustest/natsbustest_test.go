package natsbustest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
)

//go:noinline
func lingering(started chan<- struct{}, release <-chan struct{}, done chan<- struct{}) {
	close(started)
	<-release
	close(done)
}

// TestWaitNoLeaksReportsAGoroutineOfTheMarkersUntilItEnds: a goroutine running
// code named by a marker is reported with its stack; once it ends, nothing is.
func TestWaitNoLeaksReportsAGoroutineOfTheMarkersUntilItEnds(t *testing.T) {
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go lingering(started, release, done)
	<-started
	const marker = "natsbustest_test.lingering("
	if leaked := natsbustest.WaitNoLeaks(100*time.Millisecond, marker); !strings.Contains(leaked, marker) {
		t.Fatalf("a running goroutine of the marker was not reported: %q", leaked)
	}
	close(release)
	<-done
	if leaked := natsbustest.WaitNoLeaks(5*time.Second, marker); leaked != "" {
		t.Fatalf("an ended goroutine was reported:\n%s", leaked)
	}
}

package backtest

import (
	"os"
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestBatchGCRaisesTheTargetWhileRunsOverlap(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	a := BatchGC()
	if got := gcPercent(); got != BatchGCPercent {
		t.Fatalf("target %d during a batch run, want %d", got, BatchGCPercent)
	}
	b := BatchGC()
	a()
	a() // a second release of the same run changes nothing
	if got := gcPercent(); got != BatchGCPercent {
		t.Fatalf("target %d while a second run is under way", got)
	}
	b()
	if got := gcPercent(); got != 100 {
		t.Fatalf("target %d after the last run, want the 100 from before", got)
	}

	debug.SetGCPercent(800) // higher already: left alone
	BatchGC()()
	if got := gcPercent(); got != 800 {
		t.Fatalf("target %d, want 800 left alone", got)
	}
}

func TestBatchGCLeavesTheUsersGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	release := BatchGC()
	defer release()
	if got := gcPercent(); got != 100 {
		t.Fatalf("target %d with GOGC=100 set by the user", got)
	}
}

package backtest

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// memoryLimit reads the soft memory limit.
func memoryLimit() int64 { return debug.SetMemoryLimit(-1) }

func TestBatchGCRaisesTheTargetWhileRunsOverlap(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	lim := batchMemoryLimit()
	if runtime.GOOS == "linux" && (lim <= 0 || lim == math.MaxInt64) {
		t.Fatalf("memory limit %d on Linux, want half the physical memory", lim)
	}
	if lim <= 0 {
		lim = math.MaxInt64 // unknown: no limit set
	}
	a := BatchGC()
	if got := gcPercent(); got != BatchGCPercent {
		t.Fatalf("target %d during a batch run, want %d", got, BatchGCPercent)
	}
	if got := memoryLimit(); got != lim {
		t.Fatalf("memory limit %d during a batch run, want %d", got, lim)
	}
	b := BatchGC()
	a()
	a() // a second release of the same run changes nothing
	if got := gcPercent(); got != BatchGCPercent || memoryLimit() != lim {
		t.Fatalf("target %d, limit %d while a second run is under way", got, memoryLimit())
	}
	b()
	if got := gcPercent(); got != 100 {
		t.Fatalf("target %d after the last run, want the 100 from before", got)
	}
	if got := memoryLimit(); got != math.MaxInt64 {
		t.Fatalf("memory limit %d after the last run, want none as before", got)
	}

	debug.SetMemoryLimit(1 << 20) // lower already: left alone
	BatchGC()()
	if got := memoryLimit(); got != 1<<20 {
		t.Fatalf("memory limit %d, want 1 MiB left alone", got)
	}
	debug.SetMemoryLimit(math.MaxInt64)

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

func TestBatchGCLeavesTheUsersGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	t.Setenv("GOMEMLIMIT", "off")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	release := BatchGC()
	defer release()
	if got := gcPercent(); got != BatchGCPercent {
		t.Fatalf("target %d, want %d", got, BatchGCPercent)
	}
	if got := memoryLimit(); got != math.MaxInt64 {
		t.Fatalf("memory limit %d with GOMEMLIMIT set by the user", got)
	}
}

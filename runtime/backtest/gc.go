package backtest

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// BatchGCPercent is the garbage collector's target (as GOGC) while batch runs —
// backtests, sweeps, sweep workers — are under way in a process (BatchGC).
const BatchGCPercent = 400

var batchGC struct {
	sync.Mutex
	users    int
	old      int   // the target before the first user, restored after the last
	oldLimit int64 // the soft memory limit before the first user, likewise
}

// BatchMemoryShare is the soft memory limit BatchGC sets, as a share (1/N) of the
// machine's physical memory: the headroom of BatchGCPercent stops there.
const BatchMemoryShare = 2

// BatchGC raises the garbage collector's target to BatchGCPercent until the
// returned function is called, unless the environment sets GOGC (the user's choice
// stands) or the target is already higher or off. Calls may overlap: the first
// raises it, the last to release restores what was there before.
//
// Why: a run's live heap is small (a few MB), so at the default target the
// collector runs about once a run; while it marks, every pointer written goes
// through its write barrier. With every core running a sweep point no core is idle
// to finish the marking quickly, and the barriers cost a fifth to a third more CPU
// (BenchmarkSweep, -cpu 2: cpu-ratio 1.27-1.30 at GOGC=100, 1.07-1.17 at 400).
// The price is a heap of about five times the live one instead of twice; for
// runs whose live heap is large (long tapes, many markets) that price is bounded:
// unless the environment sets GOMEMLIMIT, BatchGC also sets a soft memory limit of
// 1/BatchMemoryShare of the machine's physical memory (where it can be read;
// a lower limit already set stands), near which the collector runs as often as it
// must, as it would at a lower target. Below a live heap of a tenth of the memory
// the limit is never reached; up to a quarter, the collector still runs less often
// than at the default target.
func BatchGC() (release func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	batchGC.Lock()
	defer batchGC.Unlock()
	if batchGC.users == 0 {
		batchGC.old = debug.SetGCPercent(BatchGCPercent)
		if batchGC.old < 0 || batchGC.old >= BatchGCPercent {
			debug.SetGCPercent(batchGC.old) // off, or higher already: leave it
		}
		batchGC.oldLimit = debug.SetMemoryLimit(-1) // reads it
		if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
			if lim := batchMemoryLimit(); lim > 0 && lim < batchGC.oldLimit {
				debug.SetMemoryLimit(lim)
			}
		}
	}
	batchGC.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			batchGC.Lock()
			defer batchGC.Unlock()
			if batchGC.users--; batchGC.users == 0 {
				debug.SetGCPercent(batchGC.old)
				debug.SetMemoryLimit(batchGC.oldLimit)
			}
		})
	}
}

// batchMemoryLimit is the soft memory limit of batch runs: 1/BatchMemoryShare of
// the physical memory, 0 where it cannot be read.
func batchMemoryLimit() int64 {
	m := physicalMemory()
	if m == 0 || m/BatchMemoryShare > math.MaxInt64 {
		return 0
	}
	return int64(m / BatchMemoryShare)
}

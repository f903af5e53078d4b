//go:build unix

package ws_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the whole process has used so
// far, and false where it cannot be read. Benchmarks report it per iteration
// ("cpu-ns/op"): unlike latencies, it barely depends on the neighbours sharing the
// machine.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

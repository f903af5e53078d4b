//go:build !linux

package exchange

import "time"

var start = time.Now()

// threadCPU falls back to the wall clock where no thread CPU clock is read.
func threadCPU() time.Duration { return time.Since(start) }

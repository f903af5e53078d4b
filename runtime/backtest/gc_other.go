//go:build !linux

package backtest

// physicalMemory returns 0: the physical memory is read on Linux only, so elsewhere
// BatchGC sets no memory limit.
func physicalMemory() uint64 { return 0 }

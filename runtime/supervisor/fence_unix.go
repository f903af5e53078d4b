//go:build unix

package supervisor

import "golang.org/x/sys/unix"

// monotonicNow reads CLOCK_MONOTONIC, which every process of the machine shares
// (Go's own monotonic readings are relative to the process).
func monotonicNow() (int64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, err
	}
	return ts.Nano(), nil
}

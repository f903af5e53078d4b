//go:build !unix

package supervisor

import "errors"

// monotonicNow has no machine-wide monotonic clock here: agents are fenced at once.
func monotonicNow() (int64, error) {
	return 0, errors.New("lease fencing needs a unix system (CLOCK_MONOTONIC)")
}

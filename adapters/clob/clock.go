package clob

import (
	"context"
	"time"
)

// Clock is the time source of a Client and of a Budget: the wall clock for L1/L2
// timestamps and for rate budgeting, and the sleeps of retries and budget waits.
// Tests inject a virtual clock; SystemClock is the real one. Implementations must be
// safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d, or until ctx ends (then it returns ctx's error). A
	// non-positive d returns at once with nil, unless ctx has already ended.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock returns the real clock: time.Now and a timer.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

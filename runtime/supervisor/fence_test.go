//go:build unix

package supervisor_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
)

// TestFenceExpiresBeforeTheLease: the child's fence passes while the deadline
// minus the margin is ahead, fails after it (market.ErrLockLost), follows a later
// deadline, keeps the last one when the supervisor's pipe closes, and a fence
// that never got a deadline refuses to open.
func TestFenceExpiresBeforeTheLease(t *testing.T) {
	r, w := io.Pipe()
	send := func(until time.Time) {
		b, err := FenceRecord(until)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = w.Write(b) }()
	}
	const margin = 200 * time.Millisecond
	send(time.Now().Add(500 * time.Millisecond))
	f, err := NewFence(r, margin, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Check(); err != nil {
		t.Fatalf("fenced at once: %v", err)
	}
	if rem := f.Remaining(); rem > 300*time.Millisecond || rem < 100*time.Millisecond {
		t.Fatalf("remaining %s, want about 300 ms (deadline 500 ms minus the margin)", rem)
	}
	start := time.Now()
	if !f.Wait(nil) {
		t.Fatal("Wait returned false")
	}
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Fatalf("the fence passed after %s, want under 300 ms + the 20 ms poll", d)
	}
	if err := f.Check(); !errors.Is(err, market.ErrLockLost) {
		t.Fatalf("after the fence: %v", err)
	}
	send(time.Now().Add(time.Hour)) // a renewal
	time.Sleep(50 * time.Millisecond)
	if err := f.Check(); err != nil {
		t.Fatalf("after a renewal: %v", err)
	}
	w.Close() // the supervisor is gone: the last deadline stays
	time.Sleep(20 * time.Millisecond)
	if err := f.Check(); err != nil {
		t.Fatalf("after the pipe closed: %v", err)
	}

	r2, w2 := io.Pipe()
	w2.Close()
	if _, err := NewFence(r2, margin, time.Second); err == nil {
		t.Fatal("a fence without a deadline opened")
	}
}

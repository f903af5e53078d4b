package supervisor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// EnvFenceFD names the child's file descriptor on which its supervisor writes the
// lease deadline (docs/design/0142). A supervisor of this version always sets it.
const EnvFenceFD = "PITBOSS_FLEET_FENCE_FD"

// fenceFD is the descriptor the fence pipe gets in the child (the first of
// exec.Cmd.ExtraFiles).
const fenceFD = 3

// fenceRecord is one deadline on the pipe: a CLOCK_MONOTONIC reading in
// nanoseconds, big-endian.
const fenceRecord = 8

// monoDeadline converts until (a time with a monotonic reading, such as
// natsbus.Lease.ValidUntil) into a reading of the machine's CLOCK_MONOTONIC, which
// the child shares. The clock is read first and time.Until second: a stall between
// the two makes the remaining duration smaller, so the deadline can only come out
// earlier than the true one, never later. A zero until gives a deadline in the
// past.
func monoDeadline(until time.Time) (int64, error) {
	now, err := monotonicNow()
	if err != nil {
		return 0, err
	}
	if until.IsZero() {
		return now - 1, nil
	}
	return now + int64(time.Until(until)), nil
}

// fenceSender writes a child's lease deadlines on its fence pipe.
type fenceSender struct {
	w    *os.File
	last int64
}

// send writes the deadline of until, unless it equals the last one sent. A child
// that does not read (stopped) makes the write time out after 100 ms: it fences
// itself on the last deadline it read.
func (f *fenceSender) send(until time.Time) error {
	b, err := FenceRecord(until)
	if err != nil {
		return err
	}
	d := int64(binary.BigEndian.Uint64(b))
	if d == f.last {
		return nil
	}
	_ = f.w.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := f.w.Write(b); err != nil {
		return err
	}
	f.last = d
	return nil
}

// Fence is a supervised agent's side of its lease (docs/design/0142): it trades
// only while the machine's monotonic clock is before the deadline its supervisor
// last sent minus a safety margin. Safe for concurrent use.
type Fence struct {
	margin   int64
	deadline atomic.Int64 // CLOCK_MONOTONIC ns; 0: none yet
	first    chan struct{}
	closed   atomic.Bool
}

// ErrNoFence: the child has no fence pipe (started by hand or by an older
// supervisor).
var ErrNoFence = errors.New("no lease fence from the supervisor (" + EnvFenceFD + " is not set)")

// OpenFence reads the lease deadlines the supervisor writes on the descriptor
// that getenv(EnvFenceFD) names, in a goroutine of its own, until the pipe closes
// (the supervisor ended: the last deadline stays). margin is taken off every
// deadline. It waits up to wait for the first deadline.
func OpenFence(getenv func(string) string, margin, wait time.Duration) (*Fence, error) {
	s := getenv(EnvFenceFD)
	if s == "" {
		return nil, ErrNoFence
	}
	var fd int
	if _, err := fmt.Sscanf(s, "%d", &fd); err != nil || fd < 3 {
		return nil, fmt.Errorf("%s: %q is not a file descriptor", EnvFenceFD, s)
	}
	return NewFence(os.NewFile(uintptr(fd), "fence"), margin, wait)
}

// NewFence is OpenFence on r.
func NewFence(r io.Reader, margin, wait time.Duration) (*Fence, error) {
	f := &Fence{margin: int64(margin), first: make(chan struct{})}
	go f.read(r)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-f.first:
	case <-t.C:
		return nil, fmt.Errorf("no lease deadline from the supervisor within %s", wait)
	}
	if f.deadline.Load() == 0 {
		return nil, errors.New("the supervisor closed the lease fence before sending a deadline")
	}
	return f, nil
}

func (f *Fence) read(r io.Reader) {
	var b [fenceRecord]byte
	once := false
	defer func() {
		f.closed.Store(true)
		if !once {
			close(f.first)
		}
	}()
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return
		}
		d := int64(binary.BigEndian.Uint64(b[:]))
		if d == 0 {
			d = 1 // released: a deadline long past
		}
		f.deadline.Store(d)
		if !once {
			once = true
			close(f.first)
		}
	}
}

// Remaining returns how long the agent may still trade (negative: fenced).
func (f *Fence) Remaining() time.Duration {
	now, err := monotonicNow()
	if err != nil {
		return -1
	}
	return time.Duration(f.deadline.Load() - f.margin - now)
}

// Check returns nil while the agent may trade, and an error matching
// market.ErrLockLost once the lease may expire within the margin.
func (f *Fence) Check() error {
	if f.Remaining() > 0 {
		return nil
	}
	return market.Errorf(market.CodeLockLost, "the wallet (fenced: the lease's deadline minus the margin has passed)")
}

// Wait returns true when the fence has passed, false when done is closed first.
// It looks every 20 ms at most, so a caller that stops the agent then does so at
// most 20 ms after the fence began refusing its venue calls.
func (f *Fence) Wait(done <-chan struct{}) bool {
	for {
		r := f.Remaining()
		if r <= 0 {
			return true
		}
		t := time.NewTimer(min(r, 20*time.Millisecond))
		select {
		case <-done:
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// FenceRecord encodes until as one record of the fence pipe (what a supervisor
// writes; tests that play the supervisor write it too).
func FenceRecord(until time.Time) ([]byte, error) {
	d, err := monoDeadline(until)
	if err != nil {
		return nil, err
	}
	var b [fenceRecord]byte
	binary.BigEndian.PutUint64(b[:], uint64(d))
	return b[:], nil
}

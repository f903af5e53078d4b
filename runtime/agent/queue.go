package agent

import (
	"context"
	"sync"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// eventQueue is the bounded queue between the feed's goroutine and the loop: a ring
// of slots that own their events' storage, so that passing an event copies it once
// and allocates nothing in steady state. The loop is woken through ready (one token
// when the ring becomes non-empty) and then takes the queued events in runs under a
// mutex (take, at, release) — a lock and an unlock per run instead of channel
// operations and a select per event, which cost most of the hand-over on one core. Overflow policy: the producer waits for a
// free slot (backpressure).
type eventQueue struct {
	mu      sync.Mutex
	slots   []queued
	head, n int  // the ready events are slots[head], ... (n of them, wrapping)
	waiting bool // the producer waits for a free slot
	closed  bool

	ready chan struct{} // capacity 1: there are events to take
	space chan struct{} // capacity 1: a waiting producer may try again
	stop  chan struct{}
	once  sync.Once
}

type queued struct {
	ev market.Event
	at time.Time // when the feed handed it over
}

func newEventQueue(n int) *eventQueue {
	return &eventQueue{slots: make([]queued, n), ready: make(chan struct{}, 1), space: make(chan struct{}, 1),
		stop: make(chan struct{})}
}

// signal leaves a token in c unless one is there.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// put copies ev into a free slot and queues it. It waits for a slot and reports
// false when ctx ends or the queue is closed.
func (q *eventQueue) put(ctx context.Context, ev *market.Event, at time.Time) bool {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return false
		}
		if q.n < len(q.slots) {
			// The slot is outside the ready range: the loop does not read it.
			s := &q.slots[(q.head+q.n)%len(q.slots)]
			s.ev.CopyFrom(ev)
			s.at = at
			q.n++
			first := q.n == 1
			q.mu.Unlock()
			if first {
				signal(q.ready)
			}
			return true
		}
		q.waiting = true
		q.mu.Unlock()
		select {
		case <-q.space:
		case <-ctx.Done():
			return false
		case <-q.stop:
			return false
		}
	}
}

// take returns how many of the oldest queued events (at most max) the loop may
// now handle, one lock for all of them: they are at(0), ..., at(k-1), and stay the
// loop's (the producer does not touch them) until release(k).
func (q *eventQueue) take(max int) int {
	q.mu.Lock()
	k := min(q.n, max)
	q.mu.Unlock()
	return k
}

// at returns the i-th of the events take granted. Only the loop calls it, between
// take and release: head does not move meanwhile (only release moves it).
func (q *eventQueue) at(i int) *queued {
	return &q.slots[(q.head+i)%len(q.slots)]
}

// release frees the k oldest slots (those take granted), and reports whether more
// events are queued.
func (q *eventQueue) release(k int) bool {
	q.mu.Lock()
	q.head = (q.head + k) % len(q.slots)
	q.n -= k
	wake, more := q.waiting, q.n > 0
	q.waiting = false
	q.mu.Unlock()
	if wake {
		signal(q.space)
	}
	return more
}

// rearm leaves a ready token when events remain (the loop took a bounded batch).
func (q *eventQueue) rearm() {
	q.mu.Lock()
	more := q.n > 0
	q.mu.Unlock()
	if more {
		signal(q.ready)
	}
}

// close makes every put report false from now on.
func (q *eventQueue) close() {
	q.once.Do(func() {
		q.mu.Lock()
		q.closed = true
		q.mu.Unlock()
		close(q.stop)
	})
}

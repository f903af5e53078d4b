package agent

import (
	"context"
	"sync"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// eventQueue is the bounded queue between the feed's goroutine and the loop: a fixed
// set of slots that cycle between a free list and a ready list, so that passing an
// event copies it once into storage the slot owns and allocates nothing in steady
// state. Overflow policy: the producer waits for a free slot (backpressure).
type eventQueue struct {
	free  chan *queued
	ready chan *queued
	stop  chan struct{}
	once  sync.Once
}

type queued struct {
	ev market.Event
	at time.Time // when the feed handed it over
}

func newEventQueue(n int) *eventQueue {
	q := &eventQueue{free: make(chan *queued, n), ready: make(chan *queued, n), stop: make(chan struct{})}
	for range n {
		q.free <- new(queued)
	}
	return q
}

// put copies ev into a free slot and queues it. It waits for a slot and reports
// false when ctx ends or the queue is closed.
func (q *eventQueue) put(ctx context.Context, ev *market.Event, at time.Time) bool {
	var s *queued
	select {
	case s = <-q.free:
	case <-ctx.Done():
		return false
	case <-q.stop:
		return false
	}
	copyEvent(&s.ev, ev)
	s.at = at
	q.ready <- s // never blocks: there are as many ready places as slots
	return true
}

// release returns a handled slot to the free list.
func (q *eventQueue) release(s *queued) { q.free <- s }

// close makes every put report false from now on.
func (q *eventQueue) close() { q.once.Do(func() { close(q.stop) }) }

// copyEvent copies src into dst, reusing dst's slices.
func copyEvent(dst, src *market.Event) {
	bids, asks, changes := dst.Bids[:0], dst.Asks[:0], dst.Changes[:0]
	*dst = *src
	dst.Bids = append(bids, src.Bids...)
	dst.Asks = append(asks, src.Asks...)
	dst.Changes = append(changes, src.Changes...)
}

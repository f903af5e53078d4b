package ws

import (
	"context"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// noSource is a Source for unit tests of a connection's queue: no events, no reads.
type noSource struct{}

func (noSource) Subscribe(string, func([]exchange.Event)) func() { return func() {} }
func (noSource) Read(context.Context, func(*exchange.Engine)) error {
	return nil
}

// queueConn returns a connection of a hub with the given queue length, without a
// socket or goroutines: the test plays the writer with take.
func queueConn(t *testing.T, queueLen int) *conn {
	t.Helper()
	h, err := New(Config{Source: noSource{}, QueueLen: queueLen, CloseGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := &conn{h: h, kind: chMarket, wake: make(chan struct{}, 1), kick: make(chan struct{})}
	t.Cleanup(func() {
		if c.grace != nil {
			c.grace.Stop() // the timer would close a socket the test does not have
		}
	})
	return c
}

func (c *conn) enqueue(b []byte) {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	c.enqueueLocked(b)
}

func (c *conn) isDead() bool {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.dead
}

// TestQueueBoundCountsEveryUnwrittenFrame: the queue's bound covers the frames the
// writer took but has not begun to write, not only those still queued: with
// QueueLen 3, a writer holding a batch of 2 leaves room for 1 more; once it begins
// to write one of them, for 1 more again; the next frame closes the connection as
// a slow consumer.
func TestQueueBoundCountsEveryUnwrittenFrame(t *testing.T) {
	c := queueConn(t, 3)
	c.enqueue([]byte("a"))
	c.enqueue([]byte("b"))
	batch, ok := c.take()
	if !ok || len(batch) != 2 || string(batch[0]) != "a" || string(batch[1]) != "b" {
		t.Fatalf("take = %q, %v; want [a b], true", batch, ok)
	}
	c.enqueue([]byte("c")) // 2 in the batch + 1 queued: full
	if c.isDead() {
		t.Fatal("dropped with 3 frames waiting and QueueLen 3")
	}
	c.batched.Add(-1) // the writer begins to write "a"
	c.enqueue([]byte("d"))
	if c.isDead() {
		t.Fatal("dropped with 3 frames waiting (besides the one being written) and QueueLen 3")
	}
	c.enqueue([]byte("e"))
	if !c.isDead() || c.closeCode != CloseSlowConsumer || c.closeReason != ReasonSlowConsumer {
		t.Fatalf("dead %v, close %d %q; want a slow-consumer close", c.isDead(), c.closeCode, c.closeReason)
	}
	if got := c.h.Stats().Overflows; got != 1 {
		t.Fatalf("overflows %d, want 1", got)
	}
	if _, ok := c.take(); ok {
		t.Fatal("take after the kick returned a batch")
	}
	if len(c.pending) != 2 {
		t.Fatalf("%d frames left for finish, want 2 (c, d)", len(c.pending))
	}
}

// TestWriterWokenOnlyWhenWaiting: producers wake the writer (one token) only when
// it waits; frames queued while it writes are taken together at its next take, in
// order, without a wake-up; the kick wakes a waiting writer.
func TestWriterWokenOnlyWhenWaiting(t *testing.T) {
	c := queueConn(t, 100)
	type result struct {
		batch [][]byte
		ok    bool
	}
	takes := make(chan result)
	next := make(chan struct{}) // the writer "writes" its batch until the test sends
	go func() {
		for {
			b, ok := c.take()
			takes <- result{b, ok}
			if !ok {
				return
			}
			<-next
		}
	}()
	waiting := func() bool {
		c.qmu.Lock()
		defer c.qmu.Unlock()
		return c.waiting
	}
	deadline := time.Now().Add(10 * time.Second)
	for !waiting() {
		if time.Now().After(deadline) {
			t.Fatal("the writer never waited")
		}
		time.Sleep(time.Millisecond)
	}
	c.enqueue([]byte("1"))
	r := <-takes
	if !r.ok || len(r.batch) != 1 || string(r.batch[0]) != "1" {
		t.Fatalf("first take = %q, %v", r.batch, r.ok)
	}
	// The writer is busy: no wake-up is queued.
	c.enqueue([]byte("2"))
	c.enqueue([]byte("3"))
	if n := len(c.wake); n != 0 {
		t.Fatalf("%d wake-up tokens for a busy writer", n)
	}
	next <- struct{}{}
	r = <-takes
	if !r.ok || len(r.batch) != 2 || string(r.batch[0]) != "2" || string(r.batch[1]) != "3" {
		t.Fatalf("second take = %q, %v; want [2 3]", r.batch, r.ok)
	}
	next <- struct{}{}
	for !waiting() {
		if time.Now().After(deadline) {
			t.Fatal("the writer never waited again")
		}
		time.Sleep(time.Millisecond)
	}
	c.h.mu.Lock()
	c.h.dropLocked(c, 1000, "")
	c.h.mu.Unlock()
	if r = <-takes; r.ok {
		t.Fatalf("take after the kick = %q, true", r.batch)
	}
}

// TestQueueBoundCountsBytes: the queue is bounded in bytes too (issue 20, attack 6):
// frames whose sizes pass QueueBytes close the connection as a slow consumer, and
// written frames free their bytes.
func TestQueueBoundCountsBytes(t *testing.T) {
	h, err := New(Config{Source: noSource{}, QueueLen: 1000, QueueBytes: 100, CloseGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := &conn{h: h, kind: chMarket, wake: make(chan struct{}, 1), kick: make(chan struct{})}
	t.Cleanup(func() {
		if c.grace != nil {
			c.grace.Stop()
		}
	})
	big := make([]byte, 40)
	c.enqueue(big)
	c.enqueue(big)
	if c.isDead() || c.qbytes.Load() != 80 {
		t.Fatalf("dead %v with %d bytes queued", c.isDead(), c.qbytes.Load())
	}
	c.enqueue(big) // 120 > 100
	if !c.isDead() || c.closeCode != CloseSlowConsumer {
		t.Fatal("120 bytes queued with QueueBytes 100 did not close the connection")
	}
}

package agent

import (
	"context"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// TestEventQueueKeepsOrderUnderBackpressure: a producer faster than the consumer
// waits for free slots, and every event arrives once, in order, with its levels,
// whether the consumer takes them one by one (as the loop drains the queue after
// the feed ended) or in runs (as the loop's batches do).
func TestEventQueueKeepsOrderUnderBackpressure(t *testing.T) {
	for _, mode := range []struct {
		name string
		run  int
	}{{"one by one", 1}, {"in runs", 3}} {
		t.Run(mode.name, func(t *testing.T) {
			q := newEventQueue(4)
			const n = 10_000
			go func() {
				for i := range n {
					ev := market.Event{Kind: market.EventBook, Time: int64(i), Bids: []market.Level{{Price: market.Micros(i), Size: 1}}}
					if !q.put(context.Background(), &ev, time.Time{}) {
						return
					}
				}
			}()
			defer q.close()
			next := int64(0)
			check := func(s *queued) {
				if s.ev.Time != next || len(s.ev.Bids) != 1 || s.ev.Bids[0].Price != market.Micros(next) {
					t.Fatalf("event %d: got %+v", next, s.ev)
				}
				next++
			}
			deadline := time.After(10 * time.Second)
			for next < n {
				select {
				case <-q.ready:
				case <-deadline:
					t.Fatalf("stuck after %d events", next)
				}
				for more := true; more; {
					k := q.take(mode.run)
					if k == 0 {
						break
					}
					if k > mode.run {
						t.Fatalf("take(%d) granted %d events", mode.run, k)
					}
					for j := range k {
						check(q.at(j))
					}
					more = q.release(k)
				}
			}
		})
	}
}

// TestEventQueuePutStopsOnCloseAndCancel: a producer waiting on a full queue
// returns false when the queue is closed or its context ends.
func TestEventQueuePutStopsOnCloseAndCancel(t *testing.T) {
	for _, how := range []string{"close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			q := newEventQueue(1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ev := market.Event{Kind: market.EventTimer}
			if !q.put(ctx, &ev, time.Time{}) {
				t.Fatal("first put refused")
			}
			res := make(chan bool)
			go func() { res <- q.put(ctx, &ev, time.Time{}) }()
			if how == "close" {
				q.close()
			} else {
				cancel()
			}
			select {
			case ok := <-res:
				if ok {
					t.Fatal("put succeeded on a full queue")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("put did not return")
			}
			if how == "close" && q.put(context.Background(), &ev, time.Time{}) {
				t.Fatal("put after close succeeded")
			}
		})
	}
}

// TestArrivalTimesAreTakenOnlyWhenRead: the feed stamps events with the wall clock
// unless nothing reads the stamp (an event clock and no metrics).
func TestArrivalTimesAreTakenOnlyWhenRead(t *testing.T) {
	tests := []struct {
		name  string
		clock Clock
		m     Metrics
		want  bool
	}{
		{"wall clock, no metrics: timer events", WallClock, NopMetrics{}, true},
		{"event clock, metrics: tick-to-trade", EventClock, countingMetrics{}, true},
		{"wall clock, metrics", WallClock, countingMetrics{}, true},
		{"event clock, no metrics: never read", EventClock, NopMetrics{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readsArrival(tt.clock, tt.m); got != tt.want {
				t.Fatalf("readsArrival = %v, want %v", got, tt.want)
			}
		})
	}
}

// countingMetrics is any Metrics but NopMetrics.
type countingMetrics struct{ NopMetrics }

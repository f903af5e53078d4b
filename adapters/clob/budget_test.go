package clob

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// TestBudgetBurstThenRate checks the token bucket on a frozen clock: Burst −
// Reserve ordinary requests go at once, every later one waits one more interval;
// waits are assigned in arrival order whatever the number of concurrent callers.
func TestBudgetBurstThenRate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     BudgetConfig
		callers int
		urgent  bool
		free    int           // requests that go at once
		step    time.Duration // added wait per later request
	}{
		{"defaults: 8 of 10 at once, then 125 ms apart", BudgetConfig{}, 20, false, 8, 125 * time.Millisecond},
		{"urgent requests use the reserve", BudgetConfig{}, 20, true, 10, 125 * time.Millisecond},
		{"no reserve", BudgetConfig{Rate: 4, Burst: 3, Reserve: -1}, 7, false, 3, 250 * time.Millisecond},
		{"reserve clamped below the burst", BudgetConfig{Rate: 10, Burst: 2, Reserve: 5}, 5, false, 1, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			clk.frozen = true
			tt.cfg.Clock = clk
			b := NewBudget(tt.cfg)
			var wg sync.WaitGroup
			for range tt.callers {
				wg.Go(func() {
					acquire := b.Acquire
					if tt.urgent {
						acquire = b.AcquireUrgent
					}
					if err := acquire(context.Background()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			got := clk.Sleeps()
			slices.Sort(got)
			var want []time.Duration
			for k := 1; k <= tt.callers-tt.free; k++ {
				want = append(want, time.Duration(k)*tt.step)
			}
			if !equalDurations(got, want) {
				t.Errorf("waits = %v, want %v", got, want)
			}
		})
	}
}

// TestBudgetRefillsOverTime checks that an idle budget refills, at most to its burst.
func TestBudgetRefillsOverTime(t *testing.T) {
	clk := newFakeClock()
	clk.frozen = true
	b := NewBudget(BudgetConfig{Rate: 10, Burst: 5, Reserve: -1, Clock: clk})
	ctx := context.Background()
	acquire := func() {
		t.Helper()
		if err := b.Acquire(ctx); err != nil {
			t.Fatalf("Acquire: %v", err)
		}
	}
	for range 5 {
		acquire()
	}
	if n := len(clk.Sleeps()); n != 0 {
		t.Fatalf("burst waited %d times", n)
	}
	clk.Advance(300 * time.Millisecond) // three slots back
	for range 3 {
		acquire()
	}
	if n := len(clk.Sleeps()); n != 0 {
		t.Fatalf("refilled slots waited %d times", n)
	}
	acquire()
	if got := clk.Sleeps(); !equalDurations(got, []time.Duration{100 * time.Millisecond}) {
		t.Fatalf("fourth request after the refill waited %v, want [100ms]", got)
	}
	clk.Advance(time.Hour) // a long idle period refills only the burst
	for range 5 {
		acquire()
	}
	acquire()
	if got := clk.Sleeps(); len(got) != 2 || got[1] != 100*time.Millisecond {
		t.Fatalf("after an idle hour: waits %v, want one more 100ms wait after 5 free requests", got)
	}
}

// TestBudgetRespectsTheContext checks that a wait the deadline cannot cover fails
// at once as a rate limit (and a deadline) without taking the slot, and that a
// cancelled wait gives its slot back.
func TestBudgetRespectsTheContext(t *testing.T) {
	clk := newFakeClock()
	clk.frozen = true
	b := NewBudget(BudgetConfig{Rate: 1, Burst: 1, Reserve: -1, Clock: clk})
	if err := b.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), clk.Now().Add(500*time.Millisecond))
	defer cancel()
	err := b.Acquire(ctx)
	if !errors.Is(err, market.ErrRateLimited) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a rate limit and a deadline", err)
	}
	if len(clk.Sleeps()) != 0 {
		t.Fatal("a hopeless wait slept")
	}
	// The refused caller took nothing: the next one waits exactly one interval.
	if err := b.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := clk.Sleeps(); !equalDurations(got, []time.Duration{time.Second}) {
		t.Fatalf("waits = %v, want [1s]", got)
	}
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	if err := b.Acquire(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestBudgetCancelledWaiterGivesItsSlotBack uses the real clock: a waiter whose
// context is cancelled while it sleeps returns its slot, so the next caller does
// not wait for it.
func TestBudgetCancelledWaiterGivesItsSlotBack(t *testing.T) {
	b := NewBudget(BudgetConfig{Rate: 2, Burst: 1, Reserve: -1}) // 500 ms per slot
	if err := b.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Acquire(ctx) }()
	// Poll until the waiter holds its reservation, then cancel it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		queued := time.Until(b.tat) > 600*time.Millisecond
		b.mu.Unlock()
		if queued || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	b.mu.Lock()
	ahead := time.Until(b.tat)
	b.mu.Unlock()
	if ahead > 500*time.Millisecond {
		t.Fatalf("the cancelled slot was kept: bucket full for another %v", ahead)
	}
}

// TestBudgetSharedByClients checks that two clients with one budget draw from one
// bucket, that only CLOB requests take slots, and that cancels take urgent slots.
func TestBudgetSharedByClients(t *testing.T) {
	srv := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/time":
			_, _ = w.Write([]byte(`1700000000`))
		default:
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	clk := newFakeClock()
	clk.frozen = true
	rec := &recordingLimiter{inner: NewBudget(BudgetConfig{Rate: 10, Burst: 10, Reserve: 2, Clock: clk})}
	cfg := testConfig(t, clk, srv.URL, srv.URL, srv.URL, srv.URL)
	cfg.Budget = rec
	a, b := mustNew(t, cfg), mustNew(t, cfg)
	ctx := ctxT(t, 10*time.Second)
	for _, c := range []*Client{a, b} {
		for range 5 {
			if _, err := c.ServerTime(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := clk.Sleeps(); !equalDurations(got, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}) {
		t.Errorf("10 requests of two clients on one 8+2 budget waited %v, want [100ms 200ms]", got)
	}
	if _, err := a.Bridge().SupportedAssets(ctx); err != nil {
		t.Fatal(err)
	}
	ord, urg := rec.counts()
	if ord != 10 || urg != 0 {
		t.Errorf("slots: %d ordinary, %d urgent; want 10 ordinary (the bridge takes none)", ord, urg)
	}
}

// recordingLimiter counts the slots a client takes.
type recordingLimiter struct {
	inner        UrgentLimiter
	mu           sync.Mutex
	ordinary, ur int
}

func (r *recordingLimiter) Acquire(ctx context.Context) error {
	r.mu.Lock()
	r.ordinary++
	r.mu.Unlock()
	return r.inner.Acquire(ctx)
}

func (r *recordingLimiter) AcquireUrgent(ctx context.Context) error {
	r.mu.Lock()
	r.ur++
	r.mu.Unlock()
	return r.inner.AcquireUrgent(ctx)
}

func (r *recordingLimiter) counts() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ordinary, r.ur
}

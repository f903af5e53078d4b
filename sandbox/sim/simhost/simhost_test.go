package simhost_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/sim"
	"github.com/pitbossdev/pitboss/sandbox/sim/simhost"
)

const t0 = 1_700_000_000_000

// fast are parameters that make a market busy within a fraction of a second.
var fast = sim.Params{
	MakerRefresh: 20 * time.Millisecond, NoiseEvery: 10 * time.Millisecond, InformedEvery: 50 * time.Millisecond,
	NewsEvery: 300 * time.Millisecond, InformedDelay: 5 * time.Millisecond, MakerReaction: 40 * time.Millisecond,
	FairStep: 10 * time.Millisecond, NoiseLifetime: 2 * time.Second,
}

func genesis(n int) func(apply func(exchange.Command) error) error {
	return func(apply func(exchange.Command) error) error {
		for _, c := range sim.SyntheticMarkets(n, 0) {
			if err := apply(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkNoLeak fails if goroutines started during the test are still running.
func checkNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// running is a host with its Run goroutine.
type running struct {
	h      *host.Host
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, cfg host.Config) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("Open: %v", err)
	}
	r := &running{h: h, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- h.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func (r *running) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	r.cancel = nil
}

func check(t *testing.T, h *host.Host) {
	t.Helper()
	var err error
	if rerr := h.Read(context.Background(), func(e *exchange.Engine) { err = e.Check() }); rerr != nil {
		t.Fatalf("Read: %v", rerr)
	}
	if err != nil {
		t.Fatalf("engine invariant: %v", err)
	}
}

func TestDriverTradesThroughTheHostOnTheWallClock(t *testing.T) {
	checkNoLeak(t)
	r := start(t, host.Config{Genesis: genesis(2)})
	var published atomic.Int64
	stopSub := r.h.Subscribe("test", func(batch []exchange.Event) {
		for i := range batch {
			if batch[i].Kind == exchange.TradeExecuted {
				published.Add(1)
			}
		}
	})
	defer stopSub()

	d := sim.NewDriver(sim.New(sim.Config{Defaults: fast}, 7), simhost.Venue(r.h), sim.DriverConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	trades := func() int {
		n := 0
		for _, m := range d.Summary().Markets {
			n += m.Trades
		}
		return n
	}
	waitFor(t, "20 trades", func() bool { return trades() >= 20 })
	waitFor(t, "trades published to listeners", func() bool { return published.Load() >= 20 })
	if err := d.Run(ctx); !errors.Is(err, sim.ErrRunning) {
		t.Fatalf("second Run = %v, want ErrRunning", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil after cancel", err)
	}
	check(t, r.h)
	sum := d.Summary()
	if len(sum.Markets) != 2 {
		t.Fatalf("markets = %d", len(sum.Markets))
	}
	for _, m := range sum.Markets {
		if m.Commands == 0 || m.Rejected*20 > m.Commands {
			t.Errorf("%s: %d commands, %d rejected (%v)", m.Market, m.Commands, m.Rejected, m.Rejections)
		}
	}
}

// fakeTime is a clock that only moves when the driver sleeps.
type fakeTime struct {
	mu  sync.Mutex
	now int64
}

func (f *fakeTime) clock() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTime) sleep(ctx context.Context, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now += d.Milliseconds()
}

// The driver over a journaled host with a deterministic clock produces exactly the
// command stream that AdvanceTo produces on a plain engine: grouping actions into
// transactions and journaling change nothing.
func TestDriverOverTheHostMatchesAdvanceTo(t *testing.T) {
	checkNoLeak(t)
	const span = 5_000 // ms of simulated time
	cfg := sim.Config{Start: t0, Defaults: fast}
	markets := sim.SyntheticMarkets(2, 0)

	// Reference: AdvanceTo on a plain engine.
	e := exchange.New(exchange.Config{})
	for i := range markets {
		c := markets[i]
		c.Time = t0
		if _, err := e.Apply(&c); err != nil {
			t.Fatal(err)
		}
	}
	var want []byte
	s := sim.New(cfg, 11)
	for now := int64(t0); now <= t0+span; now += 100 {
		s.AdvanceTo(now, e, func(c *exchange.Command, _ []exchange.Event) { want, _ = c.AppendBinary(want) })
	}

	// The driver on a durable host, stopped once the clock passes the span.
	ft := &fakeTime{now: t0}
	r := start(t, host.Config{Dir: t.TempDir(), Genesis: genesis(2), Clock: ft.clock})
	var got []byte
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := sim.NewDriver(sim.New(cfg, 11), simhost.Venue(r.h), sim.DriverConfig{
		Clock: ft.clock,
		Sleep: func(ctx context.Context, d time.Duration) {
			ft.sleep(ctx, d)
			if ft.clock() > t0+span {
				cancel()
			}
		},
		OnCommand: func(c *exchange.Command, _ []exchange.Event) {
			if c.Time <= t0+span {
				got, _ = c.AppendBinary(got)
			}
		},
	})
	if err := d.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(want) == 0 {
		t.Fatal("no commands")
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("driver commands differ from AdvanceTo's (%d and %d bytes)", len(got), len(want))
	}
	check(t, r.h)
}

// After a restart the host recovers the sim's state from its journal, and a new sim
// with the same seed carries on with the same accounts without reusing an order id.
func TestSimFlowSurvivesAHostRestart(t *testing.T) {
	checkNoLeak(t)
	dir := t.TempDir()
	ft := &fakeTime{now: t0}
	run := func(seconds int64) (snap []byte, sum sim.Summary) {
		r := start(t, host.Config{Dir: dir, Genesis: genesis(1), Clock: ft.clock})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stop := ft.clock() + seconds*1000
		d := sim.NewDriver(sim.New(sim.Config{Defaults: fast}, 5), simhost.Venue(r.h), sim.DriverConfig{
			Clock: ft.clock,
			Sleep: func(ctx context.Context, d time.Duration) {
				ft.sleep(ctx, d)
				if ft.clock() > stop {
					cancel()
				}
			},
		})
		if err := d.Run(ctx); err != nil {
			t.Fatalf("Run: %v", err)
		}
		check(t, r.h)
		if err := r.h.Read(context.Background(), func(e *exchange.Engine) { snap = e.AppendSnapshot(nil) }); err != nil {
			t.Fatalf("Read: %v", err)
		}
		r.stop()
		return snap, d.Summary()
	}
	before, first := run(3)
	r := start(t, host.Config{Dir: dir, Genesis: genesis(1), Clock: ft.clock})
	var recovered []byte
	if err := r.h.Read(context.Background(), func(e *exchange.Engine) { recovered = e.AppendSnapshot(nil) }); err != nil {
		t.Fatalf("Read after the restart: %v", err)
	}
	r.stop()
	if len(before) == 0 {
		t.Fatal("no snapshot before the restart")
	}
	if !bytes.Equal(before, recovered) {
		t.Fatal("the recovered engine differs from the engine before the restart")
	}

	_, second := run(3)
	m := second.Markets[0]
	if first.Markets[0].Trades == 0 || m.Trades == 0 {
		t.Fatalf("trades before %d, after %d", first.Markets[0].Trades, m.Trades)
	}
	if n := m.Rejections[market.CodeDuplicated]; n > 0 {
		t.Fatalf("%d order ids reused after the restart", n)
	}
	if m.Rejected*20 > m.Commands {
		t.Fatalf("%d of %d commands rejected after the restart: %v", m.Rejected, m.Commands, m.Rejections)
	}
}

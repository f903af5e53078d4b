package sim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// steppedClock is a fake clock that moves only when the driver sleeps, and can jump.
type steppedClock struct {
	mu  sync.Mutex
	now int64
}

func (c *steppedClock) get() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *steppedClock) add(ms int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += ms
}

// A driver that falls far behind (a suspended machine) skips the missed flow
// instead of replaying it in a burst.
func TestDriverSkipsAfterFallingBehind(t *testing.T) {
	clk := &steppedClock{now: t0}
	v := &LockedEngine{Engine: newEngine(t, 2)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var times []int64
	jumped := false
	core, logs := observer.New(zap.InfoLevel)
	d := NewDriver(New(Config{}, 4), v, DriverConfig{
		Logger: zap.New(core),
		Clock:  clk.get,
		Sleep: func(_ context.Context, d time.Duration) {
			clk.add(d.Milliseconds())
			switch now := clk.get(); {
			case !jumped && now > t0+60_000:
				jumped = true
				clk.add(3_600_000) // an hour asleep
			case now > t0+3_720_000:
				cancel()
			}
		},
		OnCommand: func(c *exchange.Command, _ []exchange.Event) { times = append(times, c.Time) },
	})
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.Skips != 1 || st.Transactions == 0 {
		t.Fatalf("stats %+v", st)
	}
	for _, msg := range []string{"sim: driver started", "sim: driving markets", "sim: driver fell behind; skipping the missed flow", "sim: driver stopped"} {
		if logs.FilterMessage(msg).Len() != 1 {
			t.Errorf("log %q: %d entries", msg, logs.FilterMessage(msg).Len())
		}
	}
	if e := logs.FilterMessage("sim: driving markets").All(); len(e) == 1 && e[0].ContextMap()["markets"] != int64(2) {
		t.Errorf("driving markets: %v", e[0].ContextMap())
	}
	var gap int
	for _, at := range times {
		if at > t0+61_000 && at < t0+3_660_000 {
			gap++
		}
	}
	if gap > 0 || len(times) == 0 {
		t.Fatalf("%d commands in the hour asleep (of %d)", gap, len(times))
	}
	if err := v.Engine.Check(); err != nil {
		t.Fatal(err)
	}
}

type failingVenue struct{ err error }

func (f failingVenue) Exec(context.Context, func(Engine) error) error { return f.err }

func TestDriverReturnsTheVenuesFailure(t *testing.T) {
	broken := errors.New("journal: disk full")
	d := NewDriver(New(Config{}, 1), failingVenue{broken}, DriverConfig{})
	if err := d.Run(context.Background()); !errors.Is(err, broken) {
		t.Fatalf("Run = %v, want the venue's error", err)
	}
}

func TestLockedEngineRefusesADoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := &LockedEngine{Engine: newEngine(t, 1)}
	if err := v.Exec(ctx, func(Engine) error { t.Fatal("ran"); return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec = %v", err)
	}
}

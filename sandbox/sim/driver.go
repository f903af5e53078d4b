package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Venue is an exchange a Driver runs a Sim against. Exec runs fn serialized with
// every other change of the venue — fn reads the state and applies commands through
// e, which it must not retain — and returns once everything fn applied is durable.
// Its error is the venue's failure (a cancelled context, a closed venue, a journal
// error), never a command's rejection. sandbox/sim/simhost adapts the engine host of
// `pitboss exchange`; LockedEngine is an in-process Venue.
type Venue interface {
	Exec(ctx context.Context, fn func(e Engine) error) error
}

// DriverConfig configures NewDriver. The zero value runs on the wall clock.
type DriverConfig struct {
	// Clock returns the current time in Unix ms: the driver steps the sim at it and
	// the sim's commands carry the due times it reaches. Use the venue's clock. If
	// nil, the wall clock.
	Clock func() int64
	// MaxActions bounds the actions performed in one Exec, so that a driver that is
	// behind does not hold the venue for long. If zero, 256.
	MaxActions int
	// MaxLag is how far behind its schedule the driver may fall before it skips the
	// missed flow (Sim.SkipTo) instead of catching up in a burst. If zero, 10s;
	// negative: never skip.
	MaxLag time.Duration
	// Logger receives the driver's start, stop, lag skips and venue failures. If
	// nil, nothing is logged.
	Logger *zap.Logger
	// Sleep waits for d or until ctx ends. If nil, a timer. Tests with a fake Clock
	// advance it here instead of waiting.
	Sleep func(ctx context.Context, d time.Duration)
	// OnCommand, if set, is called inside Exec with every command applied and its
	// events (valid only during the call). It must not block.
	OnCommand func(c *exchange.Command, evs []exchange.Event)
}

// maxSleep bounds one wait of the driver, so that a clock that is not the wall
// clock (a test's, a faster one) is looked at often enough.
const maxSleep = 250 * time.Millisecond

// ErrRunning is returned by Run when the Driver is already running.
var ErrRunning = errors.New("sim: driver already running")

// Driver runs a Sim against a Venue on a clock: it sleeps until the next action is
// due, then performs every due action in one Exec (each action's commands applied
// before the next action looks at the state). All methods are safe for concurrent
// use; the Driver owns the Sim while it runs (read it through Summary).
type Driver struct {
	s       *Sim
	v       Venue
	cfg     DriverConfig
	log     *zap.Logger
	clock   func() int64
	mu      sync.Mutex // guards s
	running atomic.Bool
	execs   atomic.Uint64
	skips   atomic.Uint64
}

// NewDriver returns a Driver of s against v. It starts nothing: call Run.
func NewDriver(s *Sim, v Venue, cfg DriverConfig) *Driver {
	d := &Driver{s: s, v: v, cfg: cfg, log: cfg.Logger, clock: cfg.Clock}
	if d.log == nil {
		d.log = zap.NewNop()
	}
	if d.clock == nil {
		d.clock = func() int64 { return time.Now().UnixMilli() }
	}
	if d.cfg.MaxActions <= 0 {
		d.cfg.MaxActions = 256
	}
	if d.cfg.MaxLag == 0 {
		d.cfg.MaxLag = 10 * time.Second
	}
	return d
}

// Run drives the sim until ctx ends (then it returns nil) or the venue fails (then
// it returns the failure). It runs on the caller's goroutine and starts none.
func (d *Driver) Run(ctx context.Context) error {
	if !d.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer d.running.Store(false)
	d.log.Info("sim: driver started", zap.Uint64("seed", d.s.Seed()))
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		if ctx.Err() != nil {
			d.log.Info("sim: driver stopped", zap.Uint64("transactions", d.execs.Load()))
			return nil
		}
		d.mu.Lock()
		due, ok := d.s.Next()
		started := d.s.started
		d.mu.Unlock()
		now := d.clock()
		if !ok {
			d.log.Info("sim: nothing left to simulate")
			<-ctx.Done()
			continue
		}
		if due > now {
			wait := min(time.Duration(due-now)*time.Millisecond, maxSleep)
			if d.cfg.Sleep != nil {
				d.cfg.Sleep(ctx, wait)
				continue
			}
			timer.Reset(wait)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
			continue
		}
		if lag := time.Duration(now-due) * time.Millisecond; started && d.cfg.MaxLag > 0 && lag > d.cfg.MaxLag {
			d.mu.Lock()
			d.s.SkipTo(now)
			d.mu.Unlock()
			d.skips.Add(1)
			d.log.Warn("sim: driver fell behind; skipping the missed flow", zap.Duration("lag", lag))
		}
		err := d.v.Exec(ctx, func(e Engine) error {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.s.advance(now, e, d.cfg.MaxActions, d.cfg.OnCommand)
			return nil
		})
		if d.execs.Add(1) == 1 && err == nil {
			d.mu.Lock()
			markets, accounts := len(d.s.markets), len(d.s.owners)
			d.mu.Unlock()
			d.log.Info("sim: driving markets", zap.Int("markets", markets), zap.Int("accounts", accounts))
		}
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			d.log.Error("sim: venue failed; driver stops", zap.Error(err))
			return fmt.Errorf("sim: driver: %w", err)
		}
	}
}

// Summary returns the sim's summary so far.
func (d *Driver) Summary() Summary {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.s.Summary()
}

// DriverStats are a Driver's counters.
type DriverStats struct {
	Transactions uint64 // Exec calls made
	Skips        uint64 // times the driver skipped missed flow
}

// Stats returns the driver's counters.
func (d *Driver) Stats() DriverStats {
	return DriverStats{Transactions: d.execs.Load(), Skips: d.skips.Load()}
}

// LockedEngine is an in-process Venue: an *exchange.Engine behind a mutex, for a
// Driver in a process that owns its engine (tests, tools). Exec applies directly,
// so "durable" means applied. Hold the mutex (Lock, Unlock) to use the engine
// elsewhere. The zero value is not usable: set Engine.
type LockedEngine struct {
	sync.Mutex
	Engine *exchange.Engine
}

var _ Venue = (*LockedEngine)(nil)

// Exec runs fn with the engine under the mutex.
func (l *LockedEngine) Exec(ctx context.Context, fn func(e Engine) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.Lock()
	defer l.Unlock()
	return fn(l.Engine)
}

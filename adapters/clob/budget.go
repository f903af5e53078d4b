package clob

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Limiter grants permission to send one request to the CLOB service, waiting as
// long as it must. Acquire returns nil when the request may go; otherwise an error
// (the context ended, or the budget refused) and the request is not sent. The CLOB
// service counts every request of one client IP in one window, so every Client of a
// process (and, with the fleet budget, every process behind one IP) should share one
// Limiter. Implementations must be safe for concurrent use.
//
// *Budget is the in-process implementation; adapters/natsbus's *Budget is the
// fleet-wide one and satisfies this interface (and UrgentLimiter) as it is.
type Limiter interface {
	Acquire(ctx context.Context) error
}

// UrgentLimiter is a Limiter that keeps a reserve for urgent requests. The client
// calls AcquireUrgent for cancels (DELETE /order, /orders, /cancel-all,
// /cancel-market-orders), so that a kill switch finds room even when ordinary
// traffic uses the whole budget.
type UrgentLimiter interface {
	Limiter
	AcquireUrgent(ctx context.Context) error
}

// Budget defaults: 8 requests per second stays under the service's 500 requests per
// 60 s (the specification's "roughly 8 requests per second"); with a burst of 10 at
// most 8·60 + 10 = 490 requests fall in any 60-second window.
const (
	DefaultRate    = 8.0
	DefaultBurst   = 10
	DefaultReserve = 2
)

// BudgetConfig configures a Budget. The zero value is the default budget.
type BudgetConfig struct {
	// Rate is the sustained rate in requests per second. If zero, DefaultRate.
	Rate float64
	// Burst is how many requests may go at once after an idle period. If zero,
	// DefaultBurst.
	Burst int
	// Reserve is the part of Burst only urgent requests may use. If zero,
	// DefaultReserve (clamped below Burst); negative means no reserve.
	Reserve int
	// Clock is the time source. If nil, SystemClock.
	Clock Clock
}

// Budget is a token bucket shared by any number of Clients of one process: at most
// Burst requests at once, Rate per second sustained, with Reserve slots of the burst
// kept for urgent requests (cancels). It is implemented as a generic cell rate
// algorithm: one theoretical arrival time, no goroutine, no ticker. Waiters reserve
// their slot when they arrive, so they are served in arrival order; a waiter whose
// context ends gives its slot back when no later waiter has queued behind it.
//
// Build it with NewBudget (or use DefaultBudget). It is safe for concurrent use.
type Budget struct {
	clock    Clock
	interval time.Duration
	tolAll   time.Duration // urgent requests: the whole burst
	tolStd   time.Duration // ordinary requests: the burst minus the reserve

	mu  sync.Mutex
	tat time.Time // when the bucket would be empty again
}

var (
	_ UrgentLimiter = (*Budget)(nil)
	_ Limiter       = unlimited{}
)

// NewBudget returns a budget for cfg (see BudgetConfig for the defaults). It panics
// on a negative rate or burst, which is a programmer error.
func NewBudget(cfg BudgetConfig) *Budget {
	if cfg.Rate < 0 || cfg.Burst < 0 {
		panic("clob: negative budget rate or burst")
	}
	if cfg.Rate == 0 {
		cfg.Rate = DefaultRate
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	switch {
	case cfg.Reserve == 0:
		cfg.Reserve = min(DefaultReserve, cfg.Burst-1)
	case cfg.Reserve < 0:
		cfg.Reserve = 0
	case cfg.Reserve >= cfg.Burst:
		cfg.Reserve = cfg.Burst - 1
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock()
	}
	iv := time.Duration(float64(time.Second) / cfg.Rate)
	if iv <= 0 {
		iv = 1
	}
	return &Budget{
		clock:    cfg.Clock,
		interval: iv,
		tolAll:   time.Duration(cfg.Burst) * iv,
		tolStd:   time.Duration(cfg.Burst-cfg.Reserve) * iv,
	}
}

var defaultBudget = sync.OnceValue(func() *Budget { return NewBudget(BudgetConfig{}) })

// DefaultBudget returns the process-wide budget with the default settings, created
// on first use. Clients whose Config.Budget is nil share it, so that every client of
// one process stays within the service's per-IP limit together.
func DefaultBudget() *Budget { return defaultBudget() }

// Unlimited returns a Limiter that never waits: for tests, and for services behind
// their own limiter. Against the real service it risks 429 answers for the whole IP.
func Unlimited() Limiter { return unlimited{} }

type unlimited struct{}

func (unlimited) Acquire(ctx context.Context) error { return ctx.Err() }

// Acquire waits for a slot for an ordinary request. It fails at once, without
// waiting, when ctx's deadline comes before the slot would: the error then matches
// both market.ErrRateLimited (the venue's own 429 error, so that callers treat a
// local refusal like the service's) and context.DeadlineExceeded. If ctx is
// cancelled while waiting, the error is ctx's.
func (b *Budget) Acquire(ctx context.Context) error { return b.acquire(ctx, b.tolStd) }

// AcquireUrgent is Acquire for urgent requests (cancels): they may also use the
// reserve, so they wait only when the whole burst is spent.
func (b *Budget) AcquireUrgent(ctx context.Context) error { return b.acquire(ctx, b.tolAll) }

func (b *Budget) acquire(ctx context.Context, tol time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := b.clock.Now()
	b.mu.Lock()
	tat := b.tat
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(b.interval)
	wait := next.Add(-tol).Sub(now)
	if wait > 0 {
		if dl, ok := ctx.Deadline(); ok && dl.Before(now.Add(wait)) {
			b.mu.Unlock()
			return &budgetError{cause: context.DeadlineExceeded}
		}
	}
	b.tat = next
	b.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	if err := b.clock.Sleep(ctx, wait); err != nil {
		b.mu.Lock()
		if b.tat.Equal(next) { // nobody queued behind us: give the slot back
			b.tat = tat
		}
		b.mu.Unlock()
		if errors.Is(err, context.DeadlineExceeded) {
			return &budgetError{cause: err}
		}
		return err
	}
	return nil
}

// budgetError is a local refusal: the catalog's 429 "rate limit exceeded" and the
// context error that caused it.
type budgetError struct{ cause error }

func (e *budgetError) Error() string {
	return "clob: rate limit exceeded: no request slot before the deadline"
}

func (e *budgetError) Unwrap() []error {
	return []error{market.Errorf(market.CodeRateLimited), e.cause}
}

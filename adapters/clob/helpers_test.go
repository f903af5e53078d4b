package clob

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// fakeClock is a virtual clock: Sleep advances it at once by the requested
// duration (unless the context has ended) and records the duration. It starts at
// the real time, so that real context deadlines compare sensibly with it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	frozen bool // Sleep records without advancing (concurrent budget tests)
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	if !f.frozen {
		f.now = f.now.Add(d)
	}
	return nil
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

func (f *fakeClock) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// maxJitter makes retry delays deterministic: the whole jitter range.
func maxJitter(d time.Duration) time.Duration { return d }

// loopback starts an HTTP server on 127.0.0.1 for the test.
func loopback(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// testConfig is a client configuration for a loopback server: unlimited budget
// (unless the test sets one), a fake clock and deterministic retries.
func testConfig(t testing.TB, clock Clock, urls ...string) Config {
	t.Helper()
	cfg := Config{
		Budget: Unlimited(),
		Clock:  clock,
		Retry:  RetryPolicy{MaxAttempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Jitter: maxJitter},
		Logger: zaptest.NewLogger(t),
	}
	for i, u := range urls {
		switch i {
		case 0:
			cfg.CLOBURL = u
		case 1:
			cfg.CatalogueURL = u
		case 2:
			cfg.DataURL = u
		case 3:
			cfg.BridgeURL = u
		}
	}
	return cfg
}

func mustNew(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

package clob

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// step is one scripted answer of a loopback server.
type step struct {
	status     int
	body       string
	retryAfter string
	hangup     bool // close the connection without answering
}

// script answers requests with its steps in order (the last one repeats) and
// counts them.
type script struct {
	mu    sync.Mutex
	steps []step
	n     int
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st := s.steps[min(s.n, len(s.steps)-1)]
	s.n++
	s.mu.Unlock()
	if st.hangup {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	if st.retryAfter != "" {
		w.Header().Set("Retry-After", st.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st.status)
	_, _ = w.Write([]byte(st.body))
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

var (
	ok200  = step{status: 200, body: `1700000000`}
	err429 = step{status: 429, body: `{"error":"rate limit exceeded"}`}
	err500 = step{status: 500, body: `{"error":"database error"}`}
	err503 = step{status: 503, body: `{"error":"trading disabled"}`}
	err400 = step{status: 400, body: `{"error":"Invalid token id"}`}
	hangup = step{hangup: true}
)

// TestRetryOnlyWhereSafe checks which failures are retried, how often, and with
// which delays, for an idempotent read (GET /time) and a non-idempotent post
// (POST /waitlist).
func TestRetryOnlyWhereSafe(t *testing.T) {
	const base = 100 * time.Millisecond
	tests := []struct {
		name     string
		post     bool
		steps    []step
		attempts int
		sleeps   []time.Duration
		wantErr  error // nil: success
		status   int   // of the *APIError, when wantErr is set
	}{
		{"read retried on 429 until success", false, []step{err429, err429, ok200}, 3, []time.Duration{base, 2 * base}, nil, 0},
		{"read retried on 500 until success", false, []step{err500, err500, err500, ok200}, 4, []time.Duration{base, 2 * base, 4 * base}, nil, 0},
		{"read gives up after MaxAttempts", false, []step{err500}, 4, []time.Duration{base, 2 * base, 4 * base}, market.ErrDatabase, 500},
		{"read retried on a lost connection", false, []step{hangup, ok200}, 2, []time.Duration{base}, nil, 0},
		{"read not retried on 400", false, []step{err400}, 1, nil, market.Errorf(market.CodeInvalidTokenID), 400},
		{"Retry-After lengthens the delay", false, []step{{status: 429, body: `{"error":"rate limit exceeded"}`, retryAfter: "3"}, ok200}, 2, []time.Duration{3 * time.Second}, nil, 0},
		{"Retry-After beyond the maximum ends the retries", false, []step{{status: 429, body: `{"error":"rate limit exceeded"}`, retryAfter: "3600"}, ok200}, 1, nil, market.ErrRateLimited, 429},
		{"post retried on 429 (refused before processing)", true, []step{err429, ok200}, 2, []time.Duration{base}, nil, 0},
		{"post not retried on 500 (may have taken effect)", true, []step{err500, ok200}, 1, nil, market.ErrDatabase, 500},
		{"post not retried on 503", true, []step{err503, ok200}, 1, nil, market.ErrDatabase, 503},
		{"post not retried on a lost connection", true, []step{hangup, ok200}, 1, nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &script{steps: tt.steps}
			srv := loopback(t, sc)
			clk := newFakeClock()
			c := mustNew(t, testConfig(t, clk, srv.URL))
			var err error
			if tt.post {
				_, err = c.JoinWaitlist(ctxT(t, 10*time.Second), WaitlistRequest{Email: "a@example.com"})
			} else {
				_, err = c.ServerTime(ctxT(t, 10*time.Second))
			}
			if got := sc.count(); got != tt.attempts {
				t.Errorf("attempts = %d, want %d", got, tt.attempts)
			}
			if got := clk.Sleeps(); !equalDurations(got, tt.sleeps) {
				t.Errorf("sleeps = %v, want %v", got, tt.sleeps)
			}
			switch {
			case tt.wantErr == nil && tt.status == 0 && tt.post && tt.steps[0].hangup:
				if err == nil || !outcomeOpen(err) {
					t.Errorf("err = %v, want a transport error with an open outcome", err)
				}
			case tt.wantErr == nil:
				if err != nil {
					t.Errorf("err = %v, want success", err)
				}
			default:
				var ae *APIError
				if !errors.As(err, &ae) || ae.Status != tt.status || !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want *APIError %d matching %v", err, tt.status, tt.wantErr)
				}
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRetryDelaysGrowExponentiallyWithJitter checks the policy's delays: doubling
// from BaseDelay, capped at MaxDelay, each in [nominal/2, nominal].
func TestRetryDelaysGrowExponentiallyWithJitter(t *testing.T) {
	tests := []struct {
		name   string
		jitter func(time.Duration) time.Duration
		want   []time.Duration
	}{
		{"no jitter drawn gives the lower half", func(time.Duration) time.Duration { return 0 },
			[]time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}},
		{"full jitter gives the nominal delay", maxJitter,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Jitter: tt.jitter}
			for i, want := range tt.want {
				if got := p.Delay(i + 1); got != want {
					t.Errorf("Delay(%d) = %v, want %v", i+1, got, want)
				}
			}
		})
	}
	t.Run("default jitter stays in range", func(t *testing.T) {
		p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			d := p.Delay(3)
			if d < 200*time.Millisecond || d > 400*time.Millisecond {
				t.Fatalf("Delay(3) = %v outside [200ms, 400ms]", d)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("only %d distinct delays in 200 draws: no jitter", len(seen))
		}
	})
}

// TestRetryStopsAtTheCallersDeadline checks that a retry whose delay would pass the
// context's deadline is not attempted: the last answer's error comes back at once.
func TestRetryStopsAtTheCallersDeadline(t *testing.T) {
	sc := &script{steps: []step{err500, ok200}}
	srv := loopback(t, sc)
	clk := newFakeClock()
	cfg := testConfig(t, clk, srv.URL)
	cfg.Retry.BaseDelay = time.Hour
	cfg.Retry.MaxDelay = time.Hour
	c := mustNew(t, cfg)
	_, err := c.ServerTime(ctxT(t, 5*time.Second))
	if !errors.Is(err, market.ErrDatabase) || sc.count() != 1 || len(clk.Sleeps()) != 0 {
		t.Fatalf("err = %v after %d attempts, %v slept; want the 500 after 1 attempt and no sleep", err, sc.count(), clk.Sleeps())
	}
}

// TestRetryAfterATimeout checks that an attempt that times out is retried for a
// read but not for a post.
func TestRetryAfterATimeout(t *testing.T) {
	var n atomic.Int32
	srv := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // lets the server notice the client hanging up
		if n.Add(1) == 1 {
			select { // the first attempt never gets an answer
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		_, _ = w.Write([]byte(`1700000000`))
	}))
	tests := []struct {
		name     string
		post     bool
		attempts int32
		ok       bool
	}{
		{"read is retried", false, 2, true},
		{"post is not", true, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n.Store(0)
			cfg := testConfig(t, newFakeClock(), srv.URL)
			cfg.Timeout = 200 * time.Millisecond
			c := mustNew(t, cfg)
			var err error
			if tt.post {
				_, err = c.JoinWaitlist(ctxT(t, 10*time.Second), WaitlistRequest{Email: "a@example.com"})
			} else {
				_, err = c.ServerTime(ctxT(t, 10*time.Second))
			}
			if got := n.Load(); got != tt.attempts {
				t.Errorf("attempts = %d, want %d", got, tt.attempts)
			}
			if (err == nil) != tt.ok {
				t.Errorf("err = %v, want success %v", err, tt.ok)
			}
			if !tt.ok && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want a timeout", err)
			}
		})
	}
}

// TestRetryWhenNothingWasSent checks that a post whose connection could not be
// opened is retried (nothing reached the service), up to MaxAttempts.
func TestRetryWhenNothingWasSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: every dial is refused
	clk := newFakeClock()
	c := mustNew(t, testConfig(t, clk, "http://"+addr))
	_, err = c.JoinWaitlist(ctxT(t, 10*time.Second), WaitlistRequest{Email: "a@example.com"})
	if err == nil || outcomeOpen(err) {
		t.Fatalf("err = %v, want a not-sent error", err)
	}
	if got := len(clk.Sleeps()); got != 3 {
		t.Errorf("%d retries, want 3 (MaxAttempts 4)", got)
	}
}

// TestRetryAfterParsing checks both forms of Retry-After.
func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.v), func(t *testing.T) {
			h := http.Header{}
			if tt.v != "" {
				h.Set("Retry-After", tt.v)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter(%q) = %v, want %v", tt.v, got, tt.want)
			}
		})
	}
}

package clob

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy says how often and how patiently a Client retries a request that
// failed in a way worth retrying: 429, 5xx and network errors, and only where a
// retry is safe (see the package documentation). The zero value is the default
// policy: 4 attempts, delays from 250 ms doubling up to 8 s, with jitter.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first included. If zero, 4; 1
	// disables retries.
	MaxAttempts int
	// BaseDelay is the nominal delay before the first retry; each later retry
	// doubles it. If zero, 250 ms.
	BaseDelay time.Duration
	// MaxDelay caps the nominal delay. If zero, 8 s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After (sent with a 429 or 503) the client
	// waits for; a longer one ends the retries with the answer's error. If zero,
	// 60 s.
	MaxRetryAfter time.Duration
	// Jitter returns a random duration uniformly in [0, d]. If nil, math/rand/v2's
	// concurrency-safe generator. Tests inject a deterministic one.
	Jitter func(d time.Duration) time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 250 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 8 * time.Second
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 60 * time.Second
	}
	if p.Jitter == nil {
		p.Jitter = func(d time.Duration) time.Duration {
			if d <= 0 {
				return 0
			}
			return rand.N(d + 1)
		}
	}
	return p
}

// Delay returns the wait before retry number n (1 for the first retry) of a policy
// with its defaults applied: the nominal delay BaseDelay·2^(n−1), capped at
// MaxDelay, of which the second half is jittered ("equal jitter": the wait is in
// [nominal/2, nominal]), so that clients that failed together do not retry
// together, yet every wait is at least half the nominal one.
func (p RetryPolicy) Delay(n int) time.Duration {
	p = p.withDefaults()
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := d / 2
	return d - half + p.Jitter(half)
}

// retryAfter parses a Retry-After header: delay seconds or an HTTP date (relative
// to now). It returns 0 when the header is absent or unusable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 || s > 24*3600 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

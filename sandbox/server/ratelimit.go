package server

import (
	"hash/maphash"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// limitBuckets is the number of buckets of a window: a window of length w counts in
// buckets of w/60, and an event is remembered for 61 of them, so that any window of
// length w ending now holds at most max accepted events (an event is forgotten
// between w and w + w/60 after it happened: the limit is never exceeded, and a
// client waits at most one bucket longer than an exact log would make it wait).
const limitBuckets = 61

// DefaultMaxClients bounds the entries of every per-client table (the rate limit and
// the per-IP caps).
const DefaultMaxClients = 1 << 16

// limiter is a per-client sliding-window counter: at most max events per client in
// any window of length win, one counter per key (a client IP, see clientOf) for
// every path. Each key costs a fixed-size entry (limitEntry, about 0.4 KiB with the
// map's share, measured by TestLimiterMemoryPerEntryIsBounded); the table holds at
// most its capacity: past it, entries idle for a whole window are dropped first,
// then the least recently used of a sample. Safe for concurrent use (sharded locks).
type limiter struct {
	cfg      atomic.Pointer[limitCfg]
	seed     maphash.Seed
	capacity int64
	n        atomic.Int64 // entries in all shards
	evicted  atomic.Uint64
	shards   [64]limitShard
}

type limitCfg struct {
	max int
	win int64 // ms
	bw  int64 // bucket width, ms
	gen uint64
}

type limitShard struct {
	mu    sync.Mutex
	keys  map[netip.Addr]*limitEntry
	swept int64 // bucket of the last sweep
}

type limitEntry struct {
	counts [limitBuckets]uint32 // by bucket index modulo limitBuckets
	total  uint32
	last   int64  // bucket index of the newest count
	gen    uint64 // the configuration the buckets belong to
}

func newLimiter(limit int, win time.Duration, capacity int) *limiter {
	if capacity <= 0 {
		capacity = DefaultMaxClients
	}
	l := &limiter{seed: maphash.MakeSeed(), capacity: int64(capacity)}
	l.set(limit, win)
	for i := range l.shards {
		l.shards[i].keys = map[netip.Addr]*limitEntry{}
	}
	return l
}

// set changes the limit; the counts of a changed window start afresh.
func (l *limiter) set(limit int, win time.Duration) {
	c := &limitCfg{max: limit, win: max(win.Milliseconds(), 1)}
	c.bw = max(c.win/(limitBuckets-1), 1)
	if old := l.cfg.Load(); old != nil {
		c.gen = old.gen
		if old.win != c.win {
			c.gen++
		}
	}
	l.cfg.Store(c)
}

func (l *limiter) get() limitCfg { return *l.cfg.Load() }

func (l *limiter) shard(k netip.Addr) *limitShard {
	return &l.shards[maphash.Comparable(l.seed, k)%uint64(len(l.shards))]
}

// allow counts an event of key k at now (ms) and reports whether it is within the
// limit, and if not, how long until it would be (rounded up to whole seconds, for
// Retry-After). A refused event is not counted.
func (l *limiter) allow(k netip.Addr, now int64) (bool, int64) { return l.do(k, now, true, true) }

// peek reports what allow would, counting nothing.
func (l *limiter) peek(k netip.Addr, now int64) (bool, int64) { return l.do(k, now, true, false) }

// add counts an event of k at now whatever the limit.
func (l *limiter) add(k netip.Addr, now int64) { l.do(k, now, false, true) }

func (l *limiter) do(k netip.Addr, now int64, check, count bool) (bool, int64) {
	cfg := l.cfg.Load()
	if cfg.max <= 0 {
		return true, 0
	}
	sh := l.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.keys[k]
	if e == nil {
		if !count {
			return true, 0
		}
		e = sh.insert(k, l, cfg, now)
	}
	b := now / cfg.bw
	e.advance(cfg, b)
	if check && int(e.total) >= cfg.max {
		return false, e.retryAfter(cfg, now)
	}
	if count {
		e.counts[b%limitBuckets]++
		e.total++
	}
	return true, 0
}

// advance forgets the buckets that left the window at bucket b.
func (e *limitEntry) advance(cfg *limitCfg, b int64) {
	if e.gen != cfg.gen || b-e.last >= limitBuckets {
		*e = limitEntry{last: b, gen: cfg.gen}
		return
	}
	for i := e.last + 1; i <= b; i++ {
		c := &e.counts[i%limitBuckets]
		e.total -= *c
		*c = 0
	}
	if b > e.last {
		e.last = b
	}
}

// retryAfter is the wait, in whole seconds (at least 1), until the oldest counted
// bucket leaves the window.
func (e *limitEntry) retryAfter(cfg *limitCfg, now int64) int64 {
	for i := e.last - limitBuckets + 1; i <= e.last; i++ {
		if i >= 0 && e.counts[i%limitBuckets] > 0 {
			ms := (i+limitBuckets)*cfg.bw - now
			return max((ms+999)/1000, 1)
		}
	}
	return 1
}

// insert adds an entry for k, making room first when the table is full (or this
// shard holds twice its share): entries idle for a window go first (one sweep of the
// shard per bucket), then the least recently used of a sample. The table may pass
// its capacity by at most one entry per shard.
func (sh *limitShard) insert(k netip.Addr, l *limiter, cfg *limitCfg, now int64) *limitEntry {
	full := func() bool {
		return l.n.Load() >= l.capacity || int64(len(sh.keys)) >= 2*l.capacity/int64(len(l.shards))
	}
	if b := now / cfg.bw; full() && b != sh.swept {
		sh.swept = b
		l.n.Add(-int64(sh.sweep(cfg, b)))
	}
	if full() && len(sh.keys) > 0 {
		// Evict the least recently used of a few (map iteration is randomized).
		var victim netip.Addr
		oldest, n := int64(-1), 0
		for key, e := range sh.keys {
			if oldest < 0 || e.last < oldest {
				victim, oldest = key, e.last
			}
			if n++; n == 8 {
				break
			}
		}
		delete(sh.keys, victim)
		l.n.Add(-1)
		l.evicted.Add(1)
	}
	e := &limitEntry{last: now / cfg.bw, gen: cfg.gen}
	sh.keys[k] = e
	l.n.Add(1)
	return e
}

// sweep drops the shard's entries with nothing left in the window at bucket b and
// returns how many.
func (sh *limitShard) sweep(cfg *limitCfg, b int64) int {
	n := 0
	for k, e := range sh.keys {
		if e.gen != cfg.gen || b-e.last >= limitBuckets {
			delete(sh.keys, k)
			n++
		}
	}
	return n
}

// gc drops keys with nothing left in the window.
func (l *limiter) gc(now int64) {
	cfg := l.cfg.Load()
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		l.n.Add(-int64(sh.sweep(cfg, now/cfg.bw)))
		sh.mu.Unlock()
	}
}

// size is the number of keys held.
func (l *limiter) size() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.keys)
		sh.mu.Unlock()
	}
	return n
}

// capPerIP caps an event per client (a wallet registration, a waitlist entry, a
// failed invitation code) in a sliding window. The zero value caps nothing.
type capPerIP struct{ l *limiter }

func newCapPerIP(n int, win time.Duration, capacity int) capPerIP {
	if n <= 0 {
		return capPerIP{}
	}
	return capPerIP{newLimiter(n, win, capacity)}
}

// check returns a *limitedError when k's events in the window reached the cap.
func (c capPerIP) check(k netip.Addr, now int64) error {
	if c.l == nil {
		return nil
	}
	if ok, retry := c.l.peek(k, now); !ok {
		return &limitedError{retry: retry}
	}
	return nil
}

// add counts an event of k.
func (c capPerIP) add(k netip.Addr, now int64) {
	if c.l != nil {
		c.l.add(k, now)
	}
}

func (c capPerIP) gc(now int64) {
	if c.l != nil {
		c.l.gc(now)
	}
}

// limitedError is a refusal by a per-client cap: 429 "rate limit exceeded" with
// Retry-After (writeErr sets it).
type limitedError struct{ retry int64 }

func (e *limitedError) Error() string { return "rate limit exceeded" }
func (e *limitedError) Unwrap() error { return market.Errorf(market.CodeRateLimited) }

// rateLimited answers 429 with Retry-After (seconds).
func (s *Server) rateLimited(w http.ResponseWriter, retry int64) {
	w.Header().Set("Retry-After", strconv.FormatInt(retry, 10))
	s.writeErr(w, market.Errorf(market.CodeRateLimited))
}

// rateLimitBody is the body of GET and POST /internal/rate-limit.
type rateLimitBody struct {
	MaxRequests int   `json:"maxRequests"`
	WindowSecs  int64 `json:"windowSecs"`
}

// getRateLimit is GET /internal/rate-limit.
func (s *Server) getRateLimit(w http.ResponseWriter, r *http.Request) {
	c := s.limiter.get()
	s.writeJSON(w, rateLimitBody{MaxRequests: c.max, WindowSecs: c.win / 1000})
}

// setRateLimit is POST /internal/rate-limit with {"maxRequests", "windowSecs"}: both
// positive (maxRequests ≤ 1 000 000, windowSecs ≤ 86 400). It answers the new
// settings. A new window starts every client's count afresh.
func (s *Server) setRateLimit(w http.ResponseWriter, r *http.Request) {
	var req rateLimitBody
	if !s.readJSON(w, r, &req) {
		return
	}
	if req.MaxRequests <= 0 || req.MaxRequests > 1_000_000 {
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "maxRequests"))
		return
	}
	if req.WindowSecs <= 0 || req.WindowSecs > 86_400 {
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "windowSecs"))
		return
	}
	s.limiter.set(req.MaxRequests, time.Duration(req.WindowSecs)*time.Second)
	s.writeJSON(w, req)
}

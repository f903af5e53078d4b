package server

import (
	"hash/maphash"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// limiter is the per-IP sliding-window rate limit: at most max requests in any
// window of length win ending now, one counter per client IP for every path. Each IP
// keeps the times of its last max accepted requests in a ring; a request is allowed
// when the oldest of them is older than the window. Memory: 8 bytes × max per active
// IP; idle entries are dropped by gc. Safe for concurrent use (sharded locks).
type limiter struct {
	cfg    atomic.Pointer[limitCfg]
	seed   maphash.Seed
	shards [64]limitShard
}

type limitCfg struct {
	max int
	win int64 // ms
}

type limitShard struct {
	mu  sync.Mutex
	ips map[string]*ring
}

type ring struct {
	times []int64 // accepted request times, ms; a ring of capacity max
	head  int     // index of the oldest
	n     int
}

func newLimiter(max int, win time.Duration) *limiter {
	l := &limiter{seed: maphash.MakeSeed()}
	l.set(max, win)
	for i := range l.shards {
		l.shards[i].ips = map[string]*ring{}
	}
	return l
}

func (l *limiter) set(max int, win time.Duration) {
	l.cfg.Store(&limitCfg{max: max, win: win.Milliseconds()})
}

func (l *limiter) get() limitCfg { return *l.cfg.Load() }

// allow records a request of ip at now (ms) and reports whether it is within the
// limit. A refused request is not counted.
func (l *limiter) allow(ip string, now int64) bool {
	cfg := l.cfg.Load()
	if cfg.max <= 0 {
		return true
	}
	sh := &l.shards[maphash.String(l.seed, ip)%uint64(len(l.shards))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r := sh.ips[ip]
	if r == nil || len(r.times) != cfg.max {
		r = resize(r, cfg.max)
		sh.ips[ip] = r
	}
	if r.n == cfg.max {
		if now-r.times[r.head] < cfg.win {
			return false
		}
		r.times[r.head] = now
		r.head = (r.head + 1) % cfg.max
		return true
	}
	r.times[(r.head+r.n)%cfg.max] = now
	r.n++
	return true
}

// resize returns a ring of capacity max keeping the newest times of r.
func resize(r *ring, capacity int) *ring {
	out := &ring{times: make([]int64, capacity)}
	if r == nil {
		return out
	}
	skip := max(r.n-capacity, 0)
	for i := skip; i < r.n; i++ {
		out.times[out.n] = r.times[(r.head+i)%len(r.times)]
		out.n++
	}
	return out
}

// gc drops IPs whose newest request is older than the window.
func (l *limiter) gc(now int64) {
	cfg := l.cfg.Load()
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for ip, r := range sh.ips {
			if r.n == 0 || now-r.times[(r.head+r.n-1)%len(r.times)] >= cfg.win {
				delete(sh.ips, ip)
			}
		}
		sh.mu.Unlock()
	}
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
// settings.
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

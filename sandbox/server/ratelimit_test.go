package server

import (
	"math/rand/v2"
	"net/netip"
	"runtime"
	"testing"
	"time"
)

// heapBytes is the live heap after a collection.
func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// maxLimiterEntryBytes is the documented bound of one client's entry in a per-client
// table (docs/exchange.md, "Running it for others").
const maxLimiterEntryBytes = 512

// TestLimiterMemoryPerEntryIsBounded measures the heap one client costs in a full
// table, and checks that a flood of new clients past the capacity keeps the table at
// its capacity (issue 20, attack 1: one entry per spoofed address).
func TestLimiterMemoryPerEntryIsBounded(t *testing.T) {
	const capacity = 1 << 14
	before := heapBytes()
	l := newLimiter(500, time.Minute, capacity)
	now := int64(1_700_000_000_000)
	ip := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	for i := range capacity {
		l.allow(ip(i), now)
	}
	full := heapBytes()
	per := float64(full-before) / capacity
	t.Logf("%.0f bytes per client entry (%d entries)", per, l.size())
	if per > maxLimiterEntryBytes {
		t.Fatalf("%.0f bytes per entry, documented bound %d", per, maxLimiterEntryBytes)
	}
	for i := capacity; i < 4*capacity; i++ {
		l.allow(ip(i), now+int64(i))
	}
	if n := l.size(); n > capacity+len(l.shards) {
		t.Fatalf("%d entries after a flood of new clients, capacity %d", n, capacity)
	}
	if grown := int64(heapBytes()) - int64(full); grown > int64(capacity/8*maxLimiterEntryBytes) {
		t.Fatalf("the heap grew by %d bytes past the capacity", grown)
	}
	if l.evicted.Load() == 0 {
		t.Fatal("nothing was evicted")
	}
	runtime.KeepAlive(l)
}

// TestLimiterNeverExceedsTheLimitInAnyWindow drives one client with random
// arrivals and checks the contract on every accepted request: at most max accepted
// in any window of length win, and a refused client is told to retry no later than
// it may.
func TestLimiterNeverExceedsTheLimitInAnyWindow(t *testing.T) {
	const limit, win = 20, int64(60_000)
	r := rand.New(rand.NewPCG(1, 2))
	l := newLimiter(limit, time.Duration(win)*time.Millisecond, 0)
	k := netip.MustParseAddr("192.0.2.1")
	now := int64(1_700_000_000_000)
	var accepted []int64
	for range 20_000 {
		now += int64(r.IntN(2_000))
		ok, retry := l.allow(k, now)
		if !ok {
			if retry < 1 || retry > win/1000+1 {
				t.Fatalf("Retry-After %d s", retry)
			}
			continue
		}
		accepted = append(accepted, now)
		n := 0
		for i := len(accepted) - 1; i >= 0 && now-accepted[i] < win; i-- {
			n++
		}
		if n > limit {
			t.Fatalf("%d accepted within %d ms", n, win)
		}
	}
	if len(accepted) < 20_000/10 {
		t.Fatalf("only %d accepted: the limiter is too strict", len(accepted))
	}
}

func BenchmarkLimiterAllow(b *testing.B) {
	l := newLimiter(1<<30, time.Minute, 0)
	k := netip.MustParseAddr("192.0.2.1")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.allow(k, int64(i))
	}
}

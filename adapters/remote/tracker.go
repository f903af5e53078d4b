package remote

import (
	"maps"
	"slices"
	"sync"

	"github.com/pitbossdev/pitboss/market"
)

// fillKey identifies one fill: a trade and the wallet's order in it (a trade can
// fill several of the wallet's orders, one fill each).
type fillKey struct {
	trade market.TradeID
	order market.OrderID
}

// maxFillKeys bounds the fills remembered for deduplication: the oldest are
// forgotten first. A fill older than every remembered one is never replayed (replays
// look back a minute), so the bound only has to cover a minute of fills.
const maxFillKeys = 1 << 14

// maxOpenTracked bounds the orders the tracker believes open; beyond it new orders
// are not tracked (a resync then cannot report their end, the agent's cancels still
// work).
const maxOpenTracked = 1 << 14

// tracker is what the venue and its feed share about the wallet's own orders and
// fills, so that a feed that lost its user channel can tell the agent what it missed
// without telling it twice: the orders believed open (with the largest matched size
// reported), the fills already accounted for (counted in the balances the venue read,
// or delivered), and the cut — the time of the balances the agent started from.
// Safe for concurrent use.
type tracker struct {
	mu    sync.Mutex
	open  map[market.OrderID]market.Micros
	fills map[fillKey]struct{}
	ring  []fillKey // insertion order of fills, for eviction
	next  int       // next ring slot to overwrite once full
	cut   int64     // Unix seconds of the balances read by Account; 0 before
	last  int64     // Unix seconds of the newest fill delivered

	closes  uint64                    // orders closed so far
	recent  map[market.OrderID]uint64 // recently closed orders → their close number
	recentQ []market.OrderID          // recent's insertion order, for eviction
}

// maxRecentClosed bounds the recently closed orders remembered (for resyncs whose
// listing is older than a cancel).
const maxRecentClosed = 1024

func newTracker() *tracker {
	return &tracker{open: map[market.OrderID]market.Micros{}, fills: map[fillKey]struct{}{}}
}

// opened records an order believed open with matched size m (keeps the larger).
func (t *tracker) opened(id market.OrderID, m market.Micros) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.open[id]; ok {
		if m > old {
			t.open[id] = m
		}
		return
	}
	if len(t.open) < maxOpenTracked {
		t.open[id] = m
	}
}

// closed forgets an order that is final.
func (t *tracker) closed(id market.OrderID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.open, id)
	t.closes++
	if t.recent == nil {
		t.recent = map[market.OrderID]uint64{}
	}
	if _, ok := t.recent[id]; !ok {
		if len(t.recentQ) >= maxRecentClosed {
			delete(t.recent, t.recentQ[0])
			t.recentQ = t.recentQ[1:]
		}
		t.recentQ = append(t.recentQ, id)
	}
	t.recent[id] = t.closes
}

// closedMark returns a mark to pass to closedSince later.
func (t *tracker) closedMark() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closes
}

// closedSince reports whether id was closed after mark was taken.
func (t *tracker) closedSince(id market.OrderID, mark uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.recent[id]
	return ok && n > mark
}

// matched returns the largest matched size reported for an open order.
func (t *tracker) matched(id market.OrderID) (market.Micros, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.open[id]
	return m, ok
}

// openIDs returns the orders believed open, sorted.
func (t *tracker) openIDs() []market.OrderID {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Sorted(maps.Keys(t.open))
}

// observe keeps the open set in step with an order event.
func (t *tracker) observe(o *market.Order, u market.OrderUpdate) {
	if u == market.OrderCancellation || o.Status.Final() || o.Remaining() <= 0 {
		t.closed(o.ID)
		return
	}
	t.opened(o.ID, o.Matched)
}

// markFill records fill k (at Unix seconds sec) and reports whether it is new.
func (t *tracker) markFill(k fillKey, sec int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.fills[k]; dup {
		return false
	}
	t.addLocked(k)
	if sec > t.last {
		t.last = sec
	}
	return true
}

func (t *tracker) addLocked(k fillKey) {
	if len(t.ring) < maxFillKeys {
		t.ring = append(t.ring, k)
	} else {
		delete(t.fills, t.ring[t.next])
		t.ring[t.next] = k
		t.next = (t.next + 1) % maxFillKeys
	}
	t.fills[k] = struct{}{}
}

// setCut records the balances' time and the fills they already include.
func (t *tracker) setCut(sec int64, counted []fillKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cut = sec
	for _, k := range counted {
		if _, ok := t.fills[k]; !ok {
			t.addLocked(k)
		}
	}
}

// since returns from when (Unix seconds) a replay after a (re)connection must look
// for fills: a little before the newest fill delivered, or before the cut when none
// was; 0 when there is nothing to start from.
func (t *tracker) since() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.last > 0:
		return max(t.last, t.cut) - replayOverlap
	case t.cut > 0:
		return t.cut - replayOverlap
	}
	return 0
}

// replayOverlap is how far (seconds) a replay looks back before the newest fill it
// knows: trade times are whole seconds, and fills of the same second may have been
// missed; duplicates are dropped by key.
const replayOverlap = 60

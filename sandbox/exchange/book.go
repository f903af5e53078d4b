package exchange

import (
	"math/bits"

	"github.com/pitbossdev/pitboss/market"
)

// level is one price level of one side of a YES book: an intrusive FIFO list of
// orders (indices into the order slab) and their aggregate remaining size.
type level struct {
	head, tail int32
	size       market.Micros
	mark       uint64 // command number when last reported dirty
}

// bookSide is one side of a YES book. Levels are indexed directly by price/unit; a
// bitmap of non-empty levels finds the next best level in a few word operations.
type bookSide struct {
	levels []level
	bits   []uint64
	best   int32 // index of the best non-empty level, -1 when the side is empty
	bid    bool  // bids: best is the highest index; asks: the lowest
}

const (
	sideBid = 0 // index of the bid side in a book
	sideAsk = 1
)

func newBookSide(n int, bid bool) bookSide {
	s := bookSide{levels: make([]level, n), bits: make([]uint64, (n+63)/64), best: -1, bid: bid}
	for i := range s.levels {
		s.levels[i].head, s.levels[i].tail = -1, -1
	}
	return s
}

// better reports whether level i is better than level j on this side.
func (s *bookSide) better(i, j int32) bool {
	if s.bid {
		return i > j
	}
	return i < j
}

// setBit marks level i non-empty and updates best.
func (s *bookSide) setBit(i int32) {
	s.bits[i>>6] |= 1 << uint(i&63)
	if s.best < 0 || s.better(i, s.best) {
		s.best = i
	}
}

// clearBit marks level i empty and updates best.
func (s *bookSide) clearBit(i int32) {
	s.bits[i>>6] &^= 1 << uint(i&63)
	if i == s.best {
		s.best = s.after(i)
	}
}

// after returns the next worse non-empty level after i (below for bids, above for
// asks), or -1.
func (s *bookSide) after(i int32) int32 {
	if s.bid {
		return s.below(i)
	}
	return s.above(i)
}

// below returns the highest non-empty level index < i, or -1.
func (s *bookSide) below(i int32) int32 {
	if i <= 0 {
		return -1
	}
	j := i - 1
	w := int(j >> 6)
	word := s.bits[w] & (^uint64(0) >> (63 - uint(j&63)))
	for {
		if word != 0 {
			return int32(w<<6 + 63 - bits.LeadingZeros64(word))
		}
		w--
		if w < 0 {
			return -1
		}
		word = s.bits[w]
	}
}

// above returns the lowest non-empty level index > i, or -1.
func (s *bookSide) above(i int32) int32 {
	j := i + 1
	w := int(j >> 6)
	if w >= len(s.bits) {
		return -1
	}
	word := s.bits[w] & (^uint64(0) << uint(j&63))
	for {
		if word != 0 {
			return int32(w<<6 + bits.TrailingZeros64(word))
		}
		w++
		if w >= len(s.bits) {
			return -1
		}
		word = s.bits[w]
	}
}

// bestPrice returns the best price of side si of market m, or 0 when empty.
func (m *mkt) bestPrice(si int) market.Micros {
	s := &m.book[si]
	if s.best < 0 {
		return 0
	}
	return market.Micros(s.best) * m.unit
}

// divTick returns p / t and p % t for p ≥ 0 and a tick or level unit t (one of
// market.TickSizes): a switch over the four constants lets the compiler divide by a
// multiplication, where a division by a variable is a hardware divide of tens of
// cycles, and place divides twice per order.
func divTick(p, t market.Micros) (market.Micros, market.Micros) {
	switch t {
	case 10_000:
		return p / 10_000, p % 10_000
	case 1_000:
		return p / 1_000, p % 1_000
	case 100_000:
		return p / 100_000, p % 100_000
	case 100:
		return p / 100, p % 100
	}
	return p / t, p % t
}

// levelsFor returns the number of level slots for a level unit: prices are in
// (0, One), so indices 1 .. One/unit−1 are used.
func levelsFor(unit market.Micros) int { return int(market.One / unit) }

// reindex rebuilds both sides of m's book for a finer level unit. Orders keep their
// FIFO lists; only their level index changes. It runs between commands (UpdateMarket),
// so no level is pending in the dirty list.
func (e *Engine) reindex(m *mkt, unit market.Micros) {
	factor := int32(m.unit / unit)
	for si := range m.book {
		old := &m.book[si]
		nb := newBookSide(levelsFor(unit), old.bid)
		for li := int32(0); li < int32(len(old.levels)); li++ {
			lv := old.levels[li]
			if lv.head < 0 {
				continue
			}
			ni := li * factor
			nb.levels[ni] = level{head: lv.head, tail: lv.tail, size: lv.size}
			nb.setBit(ni)
			for oi := lv.head; oi >= 0; oi = e.orders[oi].next {
				e.orders[oi].li = ni
			}
		}
		*old = nb
	}
	m.unit = unit
}

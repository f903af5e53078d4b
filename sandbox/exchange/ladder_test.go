package exchange

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"

	"github.com/pitbossdev/pitboss/market"
)

// ladder is the reference matching book of BenchmarkLadderReference: written for the
// benchmark only, as fast as we can make it, so that ladder-ratio says how much of the
// machine the core leaves on the table. It reads the same Commands as the engine and
// makes the same fills, but keeps no ledger, emits no events and validates nothing
// (a bad command is ignored or misbehaves). What it does:
//
//   - per market, a YES book of two sides, each an array of levels indexed by
//     price/tick with a bitmap of the non-empty ones and the index of the best, so the
//     next level is a few word operations away; NO orders are mirrored into it;
//   - orders in one slab with a free list and intrusive FIFO links (int32), int64
//     remaining sizes, each level's aggregate size kept for FOK checks;
//   - resting orders found by the caller's order ids through an open-addressing table
//     of (64-bit hash, slot) pairs with linear probing and backward-shift deletion,
//     the hit confirmed on the id; the hash is seeded (hash/maphash), as it must be
//     where callers choose the ids; tokens (listed by the venue) through a small
//     table of the same kind keyed by a cheap hash of their last 8 bytes;
//   - fills appended to a reused slice (maker id, YES price, size); a taker that
//     exhausts a level unlinks the whole filled prefix at once.
//
// Self-trade prevention is not implemented (the mixed flow's makers and takers are
// different accounts); a FOK checks the aggregate sizes; a post-only order that would
// cross is dropped, as the engine rejects it.
type ladder struct {
	seed   maphash.Seed
	books  []ladderBook
	toks   []ladderTok // token → book*2 + outcome
	ntoks  int32
	orders []ladderOrder
	free   int32
	ids    []ladderSlot // order id hash → slot, live orders only
	nids   int
	fills  []ladderFill
}

type ladderTok struct {
	hash uint64
	id   market.TokenID
	v    int32 // book*2 + outcome + 1; 0: empty
}

type ladderSlot struct {
	hash uint64
	v    int32 // value + 1; 0: empty
}

type ladderBook struct {
	unit market.Micros
	side [2]ladderSide // sideBid, sideAsk of the YES book
}

type ladderSide struct {
	lv   []ladderLevel
	bits []uint64
	best int32 // -1: empty
}

type ladderLevel struct {
	head, tail int32
	size       market.Micros
}

type ladderOrder struct {
	id         market.OrderID
	hash       uint64
	size       market.Micros // remaining
	next, prev int32
	li         int32
	book       int32
	bs         uint8
}

// ladderFill is one fill: the resting order, the YES-book price and the size.
type ladderFill struct {
	maker market.OrderID
	price market.Micros
	size  market.Micros
}

// newLadder returns an empty reference book with room for orders resting orders. Its
// id table starts small and doubles at half load: it stays as small as the number of
// resting orders allows, which keeps it in the fastest cache.
func newLadder(orders int) *ladder {
	return &ladder{seed: maphash.MakeSeed(), toks: make([]ladderTok, 64), ids: make([]ladderSlot, 64),
		orders: make([]ladderOrder, 0, orders), free: -1, fills: make([]ladderFill, 0, 16)}
}

// apply executes one command; the fills it made are in l.fills until the next call.
func (l *ladder) apply(c *Command) {
	l.fills = l.fills[:0]
	switch c.Kind {
	case Place:
		l.place(c)
	case Cancel:
		l.cancel(c.Order)
	case CreateMarket:
		l.create(c)
	}
}

func (l *ladder) create(c *Command) {
	n := int(market.One / c.Spec.TickSize)
	b := ladderBook{unit: c.Spec.TickSize}
	for s := range b.side {
		b.side[s] = ladderSide{lv: make([]ladderLevel, n), bits: make([]uint64, (n+63)/64), best: -1}
		for i := range b.side[s].lv {
			b.side[s].lv[i] = ladderLevel{head: -1, tail: -1}
		}
	}
	l.books = append(l.books, b)
	if 2*(int(l.ntoks)+2) > len(l.toks) {
		panic("ladder: more markets than its token table holds")
	}
	for _, t := range c.Spec.Tokens {
		h := sampleHash(string(t))
		mask := len(l.toks) - 1
		i := int(h) & mask
		for l.toks[i].v != 0 {
			i = (i + 1) & mask
		}
		l.ntoks++
		l.toks[i] = ladderTok{hash: h, id: t, v: l.ntoks}
	}
}

// token returns book*2 + outcome of token t, or -1.
func (l *ladder) token(t market.TokenID) int32 {
	h := sampleHash(string(t))
	mask := len(l.toks) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &l.toks[i]
		if s.v == 0 {
			return -1
		}
		if s.hash == h && s.id == t {
			return s.v - 1
		}
	}
}

func (l *ladder) place(c *Command) {
	tk := l.token(c.Token)
	if tk < 0 {
		return
	}
	b := &l.books[tk>>1]
	px := c.Price
	if tk&1 == 1 {
		px = market.One - px
	}
	bs := uint8(sideBid)
	if (c.Side == market.Buy) != (tk&1 == 0) {
		bs = sideAsk
	}
	li := int32(px / b.unit)
	opp := &b.side[bs^1]
	crosses := opp.best >= 0 && (bs == sideBid && opp.best <= li || bs == sideAsk && opp.best >= li)
	rem := c.Size
	switch {
	case c.PostOnly && crosses:
		return
	case c.Type == market.FOK && (!crosses || opp.depth(bs^1, li, rem) < rem):
		return
	}
	if crosses {
		rem = l.match(b, opp, bs^1, li, rem)
	}
	if rem > 0 && (c.Type == market.GTC || c.Type == market.GTD) {
		l.rest(c.Order, tk>>1, bs, li, rem)
	}
}

// depth sums the sizes of side s's levels that cross limit li, up to want.
func (s *ladderSide) depth(side uint8, li int32, want market.Micros) market.Micros {
	var sum market.Micros
	for i := s.best; i >= 0 && sum < want; i = s.after(side, i) {
		if side == sideAsk && i > li || side == sideBid && i < li {
			break
		}
		sum += s.lv[i].size
	}
	return sum
}

// match fills up to rem against side s (of kind side) at levels crossing li and
// returns what is left.
func (l *ladder) match(b *ladderBook, s *ladderSide, side uint8, li int32, rem market.Micros) market.Micros {
	for rem > 0 && s.best >= 0 {
		i := s.best
		if side == sideAsk && i > li || side == sideBid && i < li {
			break
		}
		lv := &s.lv[i]
		px := market.Micros(i) * b.unit
		oi := lv.head
		for oi >= 0 && rem > 0 {
			o := &l.orders[oi]
			q := min(rem, o.size)
			l.fills = append(l.fills, ladderFill{maker: o.id, price: px, size: q})
			rem -= q
			o.size -= q
			lv.size -= q
			if o.size > 0 {
				break
			}
			next := o.next
			l.forget(o.hash, oi)
			o.id, o.next = "", l.free
			l.free = oi
			oi = next
		}
		lv.head = oi
		if oi >= 0 {
			l.orders[oi].prev = -1
			break
		}
		lv.tail = -1
		s.clear(side, i)
	}
	return rem
}

func (l *ladder) rest(id market.OrderID, book int32, bs uint8, li int32, size market.Micros) {
	oi := l.free
	if oi >= 0 {
		l.free = l.orders[oi].next
	} else {
		oi = int32(len(l.orders))
		l.orders = append(l.orders, ladderOrder{})
	}
	s := &l.books[book].side[bs]
	lv := &s.lv[li]
	h := maphash.String(l.seed, string(id))
	l.orders[oi] = ladderOrder{id: id, hash: h, size: size, next: -1, prev: lv.tail, li: li, book: book, bs: bs}
	if lv.tail >= 0 {
		l.orders[lv.tail].next = oi
	} else {
		lv.head = oi
		s.set(bs, li)
	}
	lv.tail = oi
	lv.size += size
	l.remember(h, oi)
}

func (l *ladder) cancel(id market.OrderID) {
	h := maphash.String(l.seed, string(id))
	mask := len(l.ids) - 1
	var oi int32
	for i := int(h) & mask; ; i = (i + 1) & mask {
		e := l.ids[i]
		if e.v == 0 {
			return
		}
		if e.hash == h && l.orders[e.v-1].id == id {
			oi = e.v - 1
			break
		}
	}
	o := &l.orders[oi]
	s := &l.books[o.book].side[o.bs]
	lv := &s.lv[o.li]
	if o.prev >= 0 {
		l.orders[o.prev].next = o.next
	} else {
		lv.head = o.next
	}
	if o.next >= 0 {
		l.orders[o.next].prev = o.prev
	} else {
		lv.tail = o.prev
	}
	lv.size -= o.size
	if lv.head < 0 {
		s.clear(o.bs, o.li)
	}
	l.forget(h, oi)
	o.id, o.next = "", l.free
	l.free = oi
}

// remember adds (h, oi) to the id table, doubling it at half load.
func (l *ladder) remember(h uint64, oi int32) {
	if 2*(l.nids+1) > len(l.ids) {
		old := l.ids
		l.ids = make([]ladderSlot, 2*len(old))
		for _, e := range old {
			if e.v != 0 {
				l.insert(e)
			}
		}
	}
	l.insert(ladderSlot{hash: h, v: oi + 1})
	l.nids++
}

func (l *ladder) insert(e ladderSlot) {
	mask := len(l.ids) - 1
	i := int(e.hash) & mask
	for l.ids[i].v != 0 {
		i = (i + 1) & mask
	}
	l.ids[i] = e
}

// forget deletes slot oi (hash h) from the id table, shifting the rest of its probe
// run back so that no tombstone is left.
func (l *ladder) forget(h uint64, oi int32) {
	mask := len(l.ids) - 1
	i := int(h) & mask
	for l.ids[i].v != oi+1 {
		i = (i + 1) & mask
	}
	for j := i; ; {
		j = (j + 1) & mask
		e := l.ids[j]
		if e.v == 0 {
			break
		}
		// e can fill the hole at i unless its home is cyclically in (i, j]
		if (j-int(e.hash))&mask >= (j-i)&mask {
			l.ids[i] = e
			i = j
		}
	}
	l.ids[i] = ladderSlot{}
	l.nids--
}

// set marks level i of side s (of kind side) non-empty.
func (s *ladderSide) set(side uint8, i int32) {
	s.bits[i>>6] |= 1 << (uint(i) & 63)
	if s.best < 0 || side == sideBid && i > s.best || side == sideAsk && i < s.best {
		s.best = i
	}
}

// clear marks level i empty and moves best to the next non-empty level if it was i.
func (s *ladderSide) clear(side uint8, i int32) {
	s.bits[i>>6] &^= 1 << (uint(i) & 63)
	if i == s.best {
		s.best = s.after(side, i)
	}
}

// after returns the next non-empty level worse than i, or -1.
func (s *ladderSide) after(side uint8, i int32) int32 {
	if side == sideBid { // downwards
		w := int(i) >> 6
		word := s.bits[w] & (1<<(uint(i)&63) - 1)
		for word == 0 {
			if w--; w < 0 {
				return -1
			}
			word = s.bits[w]
		}
		return int32(w<<6 + 63 - bits.LeadingZeros64(word))
	}
	w := int(i) >> 6
	word := s.bits[w] &^ (1<<(uint(i)&63+1) - 1)
	for word == 0 {
		if w++; w == len(s.bits) {
			return -1
		}
		word = s.bits[w]
	}
	return int32(w<<6 + bits.TrailingZeros64(word))
}

// sampleHash hashes the length and the last 8 bytes of s (all of s if shorter): a
// few instructions whatever its length. Token ids are long random numbers, so their
// tails are as good as a full hash; a collision costs a probe and an equality test.
func sampleHash(s string) uint64 {
	var x uint64
	if n := len(s); n >= 8 {
		x = binary.LittleEndian.Uint64([]byte(s[n-8:]))
	} else {
		for i := 0; i < n; i++ {
			x = x<<8 | uint64(s[i])
		}
	}
	x ^= uint64(len(s)) << 59
	x *= 0x9e3779b97f4a7c15
	return x ^ x>>32
}

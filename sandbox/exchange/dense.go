package exchange

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"

	"github.com/pitbossdev/pitboss/market"
)

// denseTable maps keys to the dense indices of a slab (accounts, tokens, positions):
// an open-addressing table of 8-byte slots (32-bit fingerprint of the key << 32 |
// index+1) with linear probing, kept at most half full. Entries are never removed
// (the slabs it indexes only grow). A fingerprint match is confirmed on the key the
// slab holds at that index, so the table is exact; the caller does the confirming,
// which keeps the probe loops free of indirect calls. It replaces Go maps on the hot
// path: a map lookup hashes the whole key through the runtime's generic path (a
// 20-byte address, a 77-digit token id) and walks its groups, where this is a
// multiply and, nearly always, one slot.
//
// The fingerprints come from a hash seeded per engine (hashSeed): the seed decides
// only where an index is stored, never an outcome, and nothing of it reaches a
// snapshot.
type denseTable struct {
	tab []uint64
	n   int
}

func newDenseTable(capacity int) denseTable {
	return denseTable{tab: make([]uint64, slotsFor(capacity, 16))}
}

// slotsFor returns the power-of-two size, at least least, of a table that holds
// capacity entries at most half full.
func slotsFor(capacity, least int) int {
	n := least
	for n < 2*capacity {
		n *= 2
	}
	return n
}

// growSlots returns tab, a table of 8-byte slots holding n entries (fingerprint << 32
// in the high half), or a copy of twice its size when one more entry would fill it
// beyond half.
func growSlots(tab []uint64, n int) []uint64 {
	if 2*(n+1) <= len(tab) {
		return tab
	}
	grown := make([]uint64, 2*len(tab))
	for _, s := range tab {
		if s != 0 {
			place(grown, s)
		}
	}
	return grown
}

// insert records index v under fingerprint fp; the caller has checked that its key
// is absent.
func (t *denseTable) insert(fp uint32, v int32) {
	t.tab = growSlots(t.tab, t.n)
	place(t.tab, uint64(fp)<<32|uint64(uint32(v+1)))
	t.n++
}

// hashSeed is the seed of an engine's dense tables (and of the id index's inline
// hash): four random words.
type hashSeed struct{ k0, k1, k2, k3 uint64 }

func newHashSeed() hashSeed { return hashSeedOf(maphash.MakeSeed()) }

func hashSeedOf(s maphash.Seed) hashSeed {
	return hashSeed{maphash.String(s, "k0"), maphash.String(s, "k1"), maphash.String(s, "k2"), maphash.String(s, "k3")}
}

// mix folds three words into a 32-bit fingerprint (two 64×64→128 multiplies, as
// wyhash does): every input bit reaches the top bits the tables use, and every
// operand is masked by a seed word, so no input known in advance (a zero operand)
// makes a product constant.
func (s hashSeed) mix(x, y, z uint64) uint32 {
	hi, lo := bits.Mul64(x^s.k0, y^s.k1)
	hi, lo = bits.Mul64(hi^lo^s.k2, z^s.k3)
	return uint32((hi ^ lo) >> 32)
}

func (s hashSeed) addr(a *market.Address) uint32 {
	return s.mix(binary.LittleEndian.Uint64(a[0:8]), binary.LittleEndian.Uint64(a[8:16]), uint64(binary.LittleEndian.Uint32(a[16:20])))
}

// str hashes the length, the first and the last 8 bytes of t (all of t if shorter):
// a few instructions whatever its length. Token ids are long numbers chosen by the
// venue, distinct in their digits; a collision costs a probe and an equality test.
func (s hashSeed) str(t string) uint32 {
	n := len(t)
	var x, y uint64
	if n >= 8 {
		x = binary.LittleEndian.Uint64([]byte(t[:8]))
		y = binary.LittleEndian.Uint64([]byte(t[n-8:]))
	} else {
		for i := 0; i < n; i++ {
			x = x<<8 | uint64(t[i])
		}
	}
	return s.mix(x, y, uint64(n))
}

func (s hashSeed) key(k uint64) uint32 { return s.mix(k, k>>32, 0) }

// lookupAccount returns the index of a's account.
func (e *Engine) lookupAccount(a market.Address) (int32, bool) {
	fp := e.seed.addr(&a)
	t := e.acctIdx.tab
	mask := len(t) - 1
	for i := home(fp, len(t)); ; i = (i + 1) & mask {
		s := t[i]
		if s == 0 {
			return -1, false
		}
		if uint32(s>>32) == fp {
			if v := int32(uint32(s)) - 1; sameAddr(&e.accts[v].addr, &a) {
				return v, true
			}
		}
	}
}

// sameAddr is a == b in three loads per side (the generic comparison of a 20-byte
// array is a call).
func sameAddr(a, b *market.Address) bool {
	le := binary.LittleEndian
	return le.Uint64(a[0:8]) == le.Uint64(b[0:8]) && le.Uint64(a[8:16]) == le.Uint64(b[8:16]) &&
		le.Uint32(a[16:20]) == le.Uint32(b[16:20])
}

// lookupToken returns market*2 + outcome of token t.
func (e *Engine) lookupToken(t market.TokenID) (int32, bool) {
	fp := e.seed.str(string(t))
	tab := e.tokenIdx.tab
	mask := len(tab) - 1
	for i := home(fp, len(tab)); ; i = (i + 1) & mask {
		s := tab[i]
		if s == 0 {
			return -1, false
		}
		if uint32(s>>32) == fp {
			if v := int32(uint32(s)) - 1; e.markets[v>>1].tokens[v&1] == t {
				return v, true
			}
		}
	}
}

// addToken indexes token t as market*2 + outcome v; the caller has checked that t is
// not listed.
func (e *Engine) addToken(t market.TokenID, v int32) { e.tokenIdx.insert(e.seed.str(string(t)), v) }

// posTable maps (account, token) to the index of the position: open addressing over
// 16-byte slots that hold the whole key (account << 32 | token, plus one) beside the
// index, so a lookup touches one slot and never the position itself (a position is
// looked up on every order; its slab and the table together outgrow L1 with a few
// thousand positions). At most half full; entries are never removed.
type posTable struct {
	tab []posSlot
	n   int
}

type posSlot struct {
	key uint64 // posKey + 1; 0: empty
	v   int32
}

func newPosTable(capacity int) posTable {
	return posTable{tab: make([]posSlot, slotsFor(capacity, 16))}
}

// insert records position v under key k; the caller has checked that k is absent.
func (t *posTable) insert(s hashSeed, k uint64, v int32) {
	if 2*(t.n+1) > len(t.tab) {
		old := t.tab
		t.tab = make([]posSlot, 2*len(old))
		for _, o := range old {
			if o.key != 0 {
				t.put(s, o)
			}
		}
	}
	t.put(s, posSlot{key: k + 1, v: v})
	t.n++
}

func (t *posTable) put(s hashSeed, o posSlot) {
	mask := len(t.tab) - 1
	i := home(s.key(o.key-1), len(t.tab))
	for t.tab[i].key != 0 {
		i = (i + 1) & mask
	}
	t.tab[i] = o
}

// lookupPosition returns account a's position in tok, or -1.
func (e *Engine) lookupPosition(a, tok int32) int32 {
	k := posKey(a, tok)
	t := e.posIdx.tab
	mask := len(t) - 1
	for i := home(e.seed.key(k), len(t)); ; i = (i + 1) & mask {
		switch t[i].key {
		case k + 1:
			return t[i].v
		case 0:
			return -1
		}
	}
}

package exchange

import (
	"encoding/binary"
	"hash/maphash"

	"github.com/pitbossdev/pitboss/market"
)

// idIndex remembers every order id the engine accepted, exactly and for ever, while
// keeping the hot path of a new order to one cache line of a small structure. (On the
// reference machine a random load costs ~8 ns within 1 MB, 40–80 ns up to 8 MB and
// 270–480 ns beyond 16 MB, so a table of millions of ids must stay off the hot path.)
//
//   - ids and their states are stored in acceptance order (a reference is the
//     acceptance rank), in fixed-size chunks so that growing never copies; retiring an
//     order writes its final status at its reference, without hashing;
//   - an exact open-addressing table of 8-byte slots (32-bit fingerprint, reference)
//     finds a reference by id; a fingerprint match is confirmed on the full id;
//   - a blocked Bloom filter (one 64-byte block per fingerprint, about one byte per
//     table slot) answers "never seen" for a new id without touching the table;
//   - new ids wait in a small pending batch and enter the table together: the batch
//     first loads every target line, then places, so the cache misses overlap;
//   - a slot's home is its fingerprint scaled to the table size, so doubling the table
//     moves each slot to about twice its position: migration streams through both
//     tables and rebuilds the filter as it goes, a few slots per insert, so nothing
//     ever pauses for a whole-table rehash.
//
// The hash seed is random per process; it decides only where things are stored and
// which lookups take the slow path, never an outcome.
type idIndex struct {
	seed   maphash.Seed
	k      hashSeed // the inline hash of short ids, drawn from seed
	chunks []*idChunk
	n      int // references handed out
	// indexed: references below it are in the table (or pending); those from it to n
	// were recorded by record (an admitted engine, docs/design/0169) and enter the
	// table only when a lookup needs them (catchUp).
	indexed int

	tab   []uint64 // 0: empty; else fingerprint<<32 | (ref+1)
	count int      // slots used in tab
	old   []uint64 // table being migrated from, nil when none
	moved int      // slots of old already migrated

	bloom    []uint64 // filter sized for tab, complete when old == nil
	oldBloom []uint64 // complete filter sized for old, while migrating

	pending   []int32 // references not yet in tab
	pendingFP []uint32
	sink      uint64 // keeps the batch's warming loads alive
}

const (
	idChunkBits   = 12
	pendingBatch  = 256
	bloomBlockLog = 6 // one 512-bit block per 64 table slots: ~10.7 bits per id at 3/4 load
)

type idChunk struct {
	ids   [1 << idChunkBits]market.OrderID
	state [1 << idChunkBits]market.OrderStatus
}

func newIDIndex() idIndex {
	seed := maphash.MakeSeed()
	return idIndex{seed: seed, k: hashSeedOf(seed), tab: make([]uint64, 1024), bloom: make([]uint64, 1024>>bloomBlockLog*8),
		pending: make([]int32, 0, pendingBatch), pendingFP: make([]uint32, 0, pendingBatch)}
}

func (x *idIndex) id(ref int32) market.OrderID {
	return x.chunks[ref>>idChunkBits].ids[ref&(1<<idChunkBits-1)]
}

func (x *idIndex) state(ref int32) market.OrderStatus {
	return x.chunks[ref>>idChunkBits].state[ref&(1<<idChunkBits-1)]
}

func (x *idIndex) setState(ref int32, s market.OrderStatus) {
	x.chunks[ref>>idChunkBits].state[ref&(1<<idChunkBits-1)] = s
}

// fingerprint returns the top 32 bits of id's hash, never 0. Ids of 8 to 16 bytes
// (the paper venue's, backtests', the benchmarks') are hashed inline from two
// overlapping words that cover every byte (hashSeed.mix, seeded like maphash);
// others go through maphash.
func (x *idIndex) fingerprint(id market.OrderID) uint32 {
	var fp uint32
	if n := len(id); n >= 8 && n <= 16 {
		fp = x.k.mix(binary.LittleEndian.Uint64([]byte(id[:8])), binary.LittleEndian.Uint64([]byte(id[n-8:])), uint64(n))
	} else {
		fp = uint32(maphash.String(x.seed, string(id)) >> 32)
	}
	if fp == 0 {
		fp = 1
	}
	return fp
}

func home(fp uint32, size int) int { return int(uint64(fp) * uint64(size) >> 32) }

// bloomBits returns the word of fp in a filter of the given length and its four
// bits in that word, from a multiplicative mix of fp: the filter is register-blocked
// (one word per id, ≈ 2 % false positives at 3/4 table load, against ≈ 1 % for a
// 512-bit block), so setting or testing an id is one load and one mask.
func bloomBits(fp uint32, words int) (int, uint64) {
	m := uint64(fp) * 0x9e3779b97f4a7c15
	return home(fp, words), 1<<(m>>58) | 1<<(m>>52&63) | 1<<(m>>46&63) | 1<<(m>>40&63)
}

func bloomSet(f []uint64, fp uint32) {
	w, mask := bloomBits(fp, len(f))
	f[w] |= mask
}

func bloomHas(f []uint64, fp uint32) bool {
	w, mask := bloomBits(fp, len(f))
	return f[w]&mask == mask
}

// mayContain reports false only for fingerprints never added.
func (x *idIndex) mayContain(fp uint32) bool {
	if x.oldBloom != nil {
		return bloomHas(x.oldBloom, fp)
	}
	return bloomHas(x.bloom, fp)
}

// find returns the reference of id, or -1.
func (x *idIndex) find(id market.OrderID) int32 { return x.findFP(id, x.fingerprint(id)) }

// findFP is find for an id whose fingerprint is known.
func (x *idIndex) findFP(id market.OrderID, fp uint32) int32 {
	x.catchUp()
	return x.findIndexed(id, fp)
}

// findIndexed is findFP among the indexed references only.
func (x *idIndex) findIndexed(id market.OrderID, fp uint32) int32 {
	if !x.mayContain(fp) {
		return -1
	}
	for i, f := range x.pendingFP {
		if f == fp && x.id(x.pending[i]) == id {
			return x.pending[i]
		}
	}
	if r := x.probe(x.tab, 0, fp, id); r >= 0 {
		return r
	}
	if x.old != nil {
		return x.probe(x.old, x.moved, fp, id)
	}
	return -1
}

// probe searches tab for id from its home; slots below from have been migrated away
// and only continue the chain.
func (x *idIndex) probe(tab []uint64, from int, fp uint32, id market.OrderID) int32 {
	mask := len(tab) - 1
	for i := home(fp, len(tab)); ; i = (i + 1) & mask {
		s := tab[i]
		if s == 0 {
			return -1
		}
		if uint32(s>>32) == fp && i >= from {
			if ref := int32(uint32(s) - 1); x.id(ref) == id {
				return ref
			}
		}
	}
}

// add records a new id with state st and returns its reference; the caller has
// checked that id is not known.
func (x *idIndex) add(id market.OrderID, st market.OrderStatus) int32 {
	return x.addFP(id, x.fingerprint(id), st)
}

// addFP is add for an id whose fingerprint is known.
func (x *idIndex) addFP(id market.OrderID, fp uint32, st market.OrderStatus) int32 {
	x.catchUp()
	ref := x.record(id, st)
	x.indexed = x.n
	x.insert(ref, fp)
	return ref
}

// record stores a new id with state st in acceptance order and returns its
// reference, without indexing it: two sequential writes, no hashing. The id enters
// the table at the next lookup (catchUp). The caller guarantees that id is not known
// (an admitted engine: the host's admission checked it, docs/design/0169).
func (x *idIndex) record(id market.OrderID, st market.OrderStatus) int32 {
	ref := int32(x.n)
	if x.n>>idChunkBits == len(x.chunks) {
		x.chunks = append(x.chunks, new(idChunk))
	}
	c := x.chunks[x.n>>idChunkBits]
	c.ids[x.n&(1<<idChunkBits-1)] = id
	c.state[x.n&(1<<idChunkBits-1)] = st
	x.n++
	return ref
}

// catchUp indexes the references recorded but not yet indexed, in acceptance order
// through the batched inserts.
func (x *idIndex) catchUp() {
	for x.indexed < x.n {
		ref := int32(x.indexed)
		x.indexed++
		x.insert(ref, x.fingerprint(x.id(ref)))
	}
}

// insert enters reference ref (fingerprint fp) into the filter and the pending batch.
func (x *idIndex) insert(ref int32, fp uint32) {
	bloomSet(x.bloom, fp)
	if x.oldBloom != nil {
		bloomSet(x.oldBloom, fp)
	}
	x.pending = append(x.pending, ref)
	x.pendingFP = append(x.pendingFP, fp)
	if len(x.pending) == pendingBatch {
		x.flush()
	}
}

// flush moves the pending batch into the table, migrating old slots at four per id.
func (x *idIndex) flush() {
	if x.count+len(x.pending) > len(x.tab)/4*3 {
		x.grow()
	}
	x.migrate(4 * len(x.pending))
	tab := x.tab
	var sink uint64
	for _, fp := range x.pendingFP { // load every target line first: the misses overlap
		sink += tab[home(fp, len(tab))]
	}
	x.sink += sink
	for i, fp := range x.pendingFP {
		place(tab, uint64(fp)<<32|uint64(x.pending[i]+1))
	}
	x.count += len(x.pending)
	x.pending, x.pendingFP = x.pending[:0], x.pendingFP[:0]
}

// place puts slot s at the first free position from its home.
func place(tab []uint64, s uint64) {
	mask := len(tab) - 1
	i := home(uint32(s>>32), len(tab))
	for tab[i] != 0 {
		i = (i + 1) & mask
	}
	tab[i] = s
}

// grow starts migrating to a table twice the size, with a new filter that the
// migration fills; the pending ids go into the new filter now. A migration still
// running is finished first (it cannot be: the new table needs len/4 more ids to
// reach 3/4, which migrate a whole old table four times over).
func (x *idIndex) grow() {
	x.migrate(len(x.old))
	x.old, x.moved, x.oldBloom = x.tab, 0, x.bloom
	x.tab = make([]uint64, 2*len(x.old))
	x.bloom = make([]uint64, len(x.tab)>>bloomBlockLog*8)
	for _, fp := range x.pendingFP {
		bloomSet(x.bloom, fp)
	}
}

// migrate moves up to k slots of the old table into the new table and filter.
func (x *idIndex) migrate(k int) {
	if x.old == nil {
		return
	}
	end := min(x.moved+k, len(x.old))
	for ; x.moved < end; x.moved++ {
		if s := x.old[x.moved]; s != 0 {
			place(x.tab, s)
			bloomSet(x.bloom, uint32(s>>32))
		}
	}
	if x.moved == len(x.old) {
		x.old, x.moved, x.oldBloom = nil, 0, nil
	}
}

// liveTable maps the ids of open orders to their order slots, in two open-addressing
// tables of 8-byte slots (fingerprint<<32 | slot+1) with linear probing and
// backward-shift deletion, so that the churn of placing and removing orders leaves no
// tombstones. Fingerprints come from the idIndex hash; equality is confirmed on the
// order's id.
//
// A new order enters the young table, small and fixed (a few KiB: it stays in the
// first-level cache); when the young table is half full, all its entries move to the
// old table, which grows with the open orders and is read only behind a filter of
// its fingerprints. The orders that come and go near the top of a book are placed,
// cancelled and filled while young, and the id of a new order is found absent
// without touching the old table: with thousands of orders resting deep in the books
// the old table is hundreds of KiB, a cache miss per probe, and only the orders that
// stay long (moved with a batch) are ever looked up there (docs/design/0171).
type liveTable struct {
	young []uint64
	yn    int // entries in young
	old   []uint64
	on    int // entries in old
	// filter: a blocked Bloom filter (bloomBits) of the fingerprints of old's entries
	// and of entries removed since it was last rebuilt (stale bits only cost a probe
	// of old); rebuilt from old when stale removals reach a quarter of old's slots.
	filter []uint64
	stale  int
	sink   uint64
}

// liveYoung is the default number of young slots: 4 KiB, at most 256 entries.
const liveYoung = 512

// newLiveTable returns an empty table with young slots in its young table (a power
// of two; liveYoung if zero).
func newLiveTable(young int) liveTable {
	if young <= 0 {
		young = liveYoung
	}
	return liveTable{young: make([]uint64, slotsFor(young/2, 8))}
}

// find returns the order slot of the open order id, or -1.
func (t *liveTable) find(orders []order, id market.OrderID, fp uint32) int32 {
	if oi := probeLive(t.young, orders, id, fp); oi >= 0 || t.on == 0 || !bloomHas(t.filter, fp) {
		return oi
	}
	return probeLive(t.old, orders, id, fp)
}

func probeLive(tab []uint64, orders []order, id market.OrderID, fp uint32) int32 {
	mask := len(tab) - 1
	for i := home(fp, len(tab)); ; i = (i + 1) & mask {
		s := tab[i]
		if s == 0 {
			return -1
		}
		if uint32(s>>32) == fp {
			if oi := int32(uint32(s) - 1); orders[oi].id == id {
				return oi
			}
		}
	}
}

// add records open order slot oi under fingerprint fp.
func (t *liveTable) add(fp uint32, oi int32) {
	if 2*(t.yn+1) > len(t.young) {
		t.age()
	}
	place(t.young, uint64(fp)<<32|uint64(oi+1))
	t.yn++
}

// len returns the number of entries: the open orders.
func (t *liveTable) len() int { return t.yn + t.on }

// age moves every young entry to the old table, growing it (and rebuilding the
// filter) to keep it at most half full. The batch first loads every target line of
// old, so that its cache misses overlap.
func (t *liveTable) age() {
	if need := t.on + t.yn; 2*need > len(t.old) {
		grown := make([]uint64, slotsFor(need, 2*len(t.young)))
		for _, s := range t.old {
			if s != 0 {
				place(grown, s)
			}
		}
		t.old = grown
		t.rebuild()
	}
	var sink uint64
	for _, s := range t.young {
		if s != 0 {
			sink += t.old[home(uint32(s>>32), len(t.old))]
		}
	}
	t.sink += sink
	for _, s := range t.young {
		if s != 0 {
			place(t.old, s)
			bloomSet(t.filter, uint32(s>>32))
		}
	}
	clear(t.young)
	t.on += t.yn
	t.yn = 0
}

// rebuild sizes the filter for old (one word per 16 slots: ≥ 8 bits per entry at
// most half full) and sets the fingerprints of old's entries.
func (t *liveTable) rebuild() {
	if w := max(len(t.old)/16, 1); len(t.filter) != w {
		t.filter = make([]uint64, w)
	} else {
		clear(t.filter)
	}
	for _, s := range t.old {
		if s != 0 {
			bloomSet(t.filter, uint32(s>>32))
		}
	}
	t.stale = 0
}

// remove deletes the entry of slot oi (fingerprint fp).
func (t *liveTable) remove(fp uint32, oi int32) {
	want := uint64(fp)<<32 | uint64(oi+1)
	if deleteSlot(t.young, want) {
		t.yn--
		return
	}
	deleteSlot(t.old, want)
	t.on--
	if t.stale++; 4*t.stale >= len(t.old) {
		t.rebuild()
	}
}

// deleteSlot removes slot value want from tab, if there, and shifts the rest of its
// probe run back so that lookups never need tombstones. It reports whether want was
// there.
func deleteSlot(tab []uint64, want uint64) bool {
	if len(tab) == 0 {
		return false
	}
	mask := len(tab) - 1
	i := home(uint32(want>>32), len(tab))
	for tab[i] != want {
		if tab[i] == 0 {
			return false
		}
		i = (i + 1) & mask
	}
	for {
		tab[i] = 0
		j := i
		for {
			j = (j + 1) & mask
			s := tab[j]
			if s == 0 {
				return true
			}
			// s may move to the hole at i unless its home lies cyclically in (i, j]
			h := home(uint32(s>>32), len(tab))
			if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
				tab[i] = s
				i = j
				break
			}
		}
	}
}

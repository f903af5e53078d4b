package market

import "sort"

// Book is a consumer's copy of one token's aggregated order book: price levels with
// their total resting size, kept best-first (Bids descending, Asks ascending). It is
// what a feed client rebuilds from a snapshot plus deltas, what an agent keeps per
// token, and what strategies read. The zero value is an empty book.
//
// A Book is not safe for concurrent use. Updates reuse the level slices' storage, so
// steady-state updates do not allocate.
type Book struct {
	Token TokenID
	Bids  []Level
	Asks  []Level
	Time  int64  // Unix milliseconds of the last change applied
	Hash  string // the venue's hash of the last snapshot, if any
}

// Reset replaces the whole book with the given levels, which may be in any order;
// levels with zero size are dropped and duplicate prices are summed. Levels that
// are already best-first (what adapters deliver) are copied without sorting.
func (b *Book) Reset(bids, asks []Level) {
	b.Bids = copyLevels(b.Bids, bids, true)
	b.Asks = copyLevels(b.Asks, asks, false)
}

// copyLevels copies src into dst's storage. Levels that are already strictly
// best-first with positive sizes (what adapters deliver) are copied as they are;
// anything else goes through the sort-and-merge (resetSide).
func copyLevels(dst, src []Level, desc bool) []Level {
	ok := true
	for i, l := range src {
		if l.Size <= 0 || i > 0 && (desc && l.Price >= src[i-1].Price || !desc && l.Price <= src[i-1].Price) {
			ok = false
			break
		}
	}
	if ok {
		return append(dst[:0], src...)
	}
	return resetSide(dst[:0], src, desc)
}

func resetSide(dst, src []Level, desc bool) []Level {
	for _, l := range src {
		if l.Size > 0 {
			dst = append(dst, l)
		}
	}
	sort.Slice(dst, func(i, j int) bool {
		if desc {
			return dst[i].Price > dst[j].Price
		}
		return dst[i].Price < dst[j].Price
	})
	// merge duplicates in place
	out := dst[:0]
	for _, l := range dst {
		if n := len(out); n > 0 && out[n-1].Price == l.Price {
			out[n-1].Size += l.Size
			continue
		}
		out = append(out, l)
	}
	return out
}

// Set sets the aggregate size at price on side (Buy: bids, Sell: asks); size zero
// removes the level. It reports whether side was valid.
func (b *Book) Set(side Side, price, size Micros) bool {
	switch side {
	case Buy:
		b.Bids = setLevel(b.Bids, price, size, true)
	case Sell:
		b.Asks = setLevel(b.Asks, price, size, false)
	default:
		return false
	}
	return true
}

func setLevel(lv []Level, price, size Micros, desc bool) []Level {
	i := levelIndex(lv, price, desc)
	if i < len(lv) && lv[i].Price == price {
		if size <= 0 {
			return append(lv[:i], lv[i+1:]...)
		}
		lv[i].Size = size
		return lv
	}
	if size <= 0 {
		return lv
	}
	lv = append(lv, Level{})
	copy(lv[i+1:], lv[i:])
	lv[i] = Level{Price: price, Size: size}
	return lv
}

// scanLevels is how many levels from the top levelIndex compares one by one before
// it searches the rest by halves.
const scanLevels = 8

// levelIndex returns where price is, or would go, in the best-first levels lv
// (descending when desc): the index of the first level not better than price, as
// sort.Search would. Most updates of a live book are at or near its top (in the
// synthetic flows, two thirds at the best level), so the first levels are compared
// in order — predictable branches, usually one or two — and only a deeper price
// costs a binary search.
func levelIndex(lv []Level, price Micros, desc bool) int {
	n := min(len(lv), scanLevels)
	if desc {
		for i := 0; i < n; i++ {
			if lv[i].Price <= price {
				return i
			}
		}
	} else {
		for i := 0; i < n; i++ {
			if lv[i].Price >= price {
				return i
			}
		}
	}
	if n == len(lv) {
		return n
	}
	return n + sort.Search(len(lv)-n, func(i int) bool {
		if desc {
			return lv[n+i].Price <= price
		}
		return lv[n+i].Price >= price
	})
}

// SizeAt returns the aggregate size at price on side.
func (b *Book) SizeAt(side Side, price Micros) Micros {
	lv, desc := b.Asks, false
	if side == Buy {
		lv, desc = b.Bids, true
	}
	i := levelIndex(lv, price, desc)
	if i < len(lv) && lv[i].Price == price {
		return lv[i].Size
	}
	return 0
}

// BestBid returns the highest bid level, if any.
func (b *Book) BestBid() (Level, bool) {
	if len(b.Bids) == 0 {
		return Level{}, false
	}
	return b.Bids[0], true
}

// BestAsk returns the lowest ask level, if any.
func (b *Book) BestAsk() (Level, bool) {
	if len(b.Asks) == 0 {
		return Level{}, false
	}
	return b.Asks[0], true
}

// Mid returns (best bid + best ask) / 2 rounded down to the micro-unit, when both
// sides exist.
func (b *Book) Mid() (Micros, bool) {
	if len(b.Bids) == 0 || len(b.Asks) == 0 {
		return 0, false
	}
	return (b.Bids[0].Price + b.Asks[0].Price) / 2, true
}

// Spread returns best ask − best bid, when both sides exist.
func (b *Book) Spread() (Micros, bool) {
	if len(b.Bids) == 0 || len(b.Asks) == 0 {
		return 0, false
	}
	return b.Asks[0].Price - b.Bids[0].Price, true
}

// Microprice returns the size-weighted mid of the top level:
// (bid·askSize + ask·bidSize) / (bidSize + askSize), rounded down.
func (b *Book) Microprice() (Micros, bool) {
	if len(b.Bids) == 0 || len(b.Asks) == 0 {
		return 0, false
	}
	bid, ask := b.Bids[0], b.Asks[0]
	total := bid.Size + ask.Size
	x, ok1 := MulDiv(bid.Price, ask.Size, total)
	y, ok2 := MulDiv(ask.Price, bid.Size, total)
	if !ok1 || !ok2 {
		return 0, false
	}
	return x + y, true
}

// Depth returns the total size of the best n levels of side (all levels if n <= 0).
func (b *Book) Depth(side Side, n int) Micros {
	lv := b.Asks
	if side == Buy {
		lv = b.Bids
	}
	if n <= 0 || n > len(lv) {
		n = len(lv)
	}
	var sum Micros
	for _, l := range lv[:n] {
		sum += l.Size
	}
	return sum
}

// Imbalance returns (bid depth − ask depth) / (bid depth + ask depth) over the best n
// levels, in micro-units between −One and One; zero when the book is empty.
func (b *Book) Imbalance(n int) Micros {
	bd, ad := b.Depth(Buy, n), b.Depth(Sell, n)
	if bd+ad == 0 {
		return 0
	}
	diff := bd - ad
	neg := diff < 0
	if neg {
		diff = -diff
	}
	r, ok := MulDiv(diff, One, bd+ad)
	if !ok {
		return 0
	}
	if neg {
		return -r
	}
	return r
}

// Crossed reports whether the best bid is at or above the best ask.
func (b *Book) Crossed() bool {
	return len(b.Bids) > 0 && len(b.Asks) > 0 && b.Bids[0].Price >= b.Asks[0].Price
}

// MirrorInto writes into dst the book of the complementary token of a binary market:
// a bid at p for this token is an ask at 1−p for the other, and the reverse. dst's
// storage is reused; dst.Token is left for the caller to set.
func (b *Book) MirrorInto(dst *Book) {
	dst.Bids = dst.Bids[:0]
	dst.Asks = dst.Asks[:0]
	for _, l := range b.Asks {
		dst.Bids = append(dst.Bids, Level{Price: One - l.Price, Size: l.Size})
	}
	for _, l := range b.Bids {
		dst.Asks = append(dst.Asks, Level{Price: One - l.Price, Size: l.Size})
	}
	dst.Time = b.Time
	dst.Hash = ""
}

// CopyFrom makes b an independent copy of src, reusing b's storage.
func (b *Book) CopyFrom(src *Book) {
	b.Token, b.Time, b.Hash = src.Token, src.Time, src.Hash
	b.Bids = append(b.Bids[:0], src.Bids...)
	b.Asks = append(b.Asks[:0], src.Asks...)
}

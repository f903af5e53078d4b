package market

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
)

func TestBookResetSortsAndMerges(t *testing.T) {
	var b Book
	b.Reset([]Level{{300_000, 5}, {400_000, 1}, {300_000, 2}, {100_000, 0}}, []Level{{700_000, 1}, {600_000, 3}})
	if want := []Level{{400_000, 1}, {300_000, 7}}; !reflect.DeepEqual(b.Bids, want) {
		t.Fatalf("bids %v, want %v", b.Bids, want)
	}
	if want := []Level{{600_000, 3}, {700_000, 1}}; !reflect.DeepEqual(b.Asks, want) {
		t.Fatalf("asks %v, want %v", b.Asks, want)
	}
	if m, ok := b.Mid(); !ok || m != 500_000 {
		t.Fatalf("mid %d %v", m, ok)
	}
	if s, _ := b.Spread(); s != 200_000 {
		t.Fatalf("spread %d", s)
	}
	// microprice: (0.4*3 + 0.6*1)/4 = 0.45
	if mp, _ := b.Microprice(); mp != 450_000 {
		t.Fatalf("microprice %d", mp)
	}
	// imbalance over all levels: (8-4)/12 = 1/3
	if im := b.Imbalance(0); im != 333_333 {
		t.Fatalf("imbalance %d", im)
	}
}

// TestBookSetMatchesModel applies random level updates and compares with a map model.
func TestBookSetMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b Book
	model := map[Side]map[Micros]Micros{Buy: {}, Sell: {}}
	for i := 0; i < 5000; i++ {
		side := Side(1 + r.IntN(2))
		price := Micros(1+r.IntN(99)) * 10_000
		size := Micros(r.IntN(4)) * Lot
		b.Set(side, price, size)
		if size == 0 {
			delete(model[side], price)
		} else {
			model[side][price] = size
		}
		if b.SizeAt(side, price) != size {
			t.Fatalf("SizeAt after Set = %d, want %d", b.SizeAt(side, price), size)
		}
	}
	for side, lv := range map[Side][]Level{Buy: b.Bids, Sell: b.Asks} {
		var want []Level
		for p, s := range model[side] {
			want = append(want, Level{p, s})
		}
		sort.Slice(want, func(i, j int) bool {
			if side == Buy {
				return want[i].Price > want[j].Price
			}
			return want[i].Price < want[j].Price
		})
		if !reflect.DeepEqual(append([]Level(nil), lv...), want) && !(len(lv) == 0 && len(want) == 0) {
			t.Fatalf("%s levels differ from model", side)
		}
	}
}

func TestBookMirror(t *testing.T) {
	var yes, no Book
	yes.Reset([]Level{{400_000, 10}}, []Level{{450_000, 20}})
	yes.MirrorInto(&no)
	if bb, _ := no.BestBid(); bb != (Level{550_000, 20}) {
		t.Fatalf("NO best bid %v", bb)
	}
	if ba, _ := no.BestAsk(); ba != (Level{600_000, 10}) {
		t.Fatalf("NO best ask %v", ba)
	}
}

func TestBookSetNoAllocSteadyState(t *testing.T) {
	var b Book
	for p := Micros(1); p < 50; p++ {
		b.Set(Buy, p*10_000, Lot)
	}
	n := testing.AllocsPerRun(1000, func() {
		b.Set(Buy, 250_000, 2*Lot)
		b.Set(Buy, 255_000, Lot)
		b.Set(Buy, 255_000, 0)
	})
	if n != 0 {
		t.Fatalf("Set allocates %v", n)
	}
}

func BenchmarkBookSet(b *testing.B) {
	b.ReportAllocs()
	var bk Book
	for p := Micros(1); p < 100; p++ {
		bk.Set(Buy, p*10_000, Lot)
		bk.Set(Sell, One-p*10_000, Lot)
	}
	i := 0
	for b.Loop() {
		i++
		bk.Set(Buy, Micros(1+i%99)*10_000, Micros(i%3)*Lot)
	}
}

// TestLevelIndexIsSortSearch pins levelIndex to the sort.Search it replaces, over
// random best-first sides (shallower and deeper than its linear part) and prices
// inside, between and outside their levels.
func TestLevelIndexIsSortSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 5000 {
		n := r.IntN(3 * scanLevels)
		asc := make([]Level, 0, n)
		for p := Micros(r.IntN(5)); len(asc) < n; p += Micros(1 + r.IntN(3)) {
			asc = append(asc, Level{Price: p, Size: 1})
		}
		desc := slices.Clone(asc)
		slices.Reverse(desc)
		price := Micros(r.IntN(4*scanLevels+4) - 2)
		wantAsc := sort.Search(len(asc), func(i int) bool { return asc[i].Price >= price })
		wantDesc := sort.Search(len(desc), func(i int) bool { return desc[i].Price <= price })
		if got := levelIndex(asc, price, false); got != wantAsc {
			t.Fatalf("asks %v price %d: %d, want %d", asc, price, got, wantAsc)
		}
		if got := levelIndex(desc, price, true); got != wantDesc {
			t.Fatalf("bids %v price %d: %d, want %d", desc, price, got, wantDesc)
		}
	}
}

// BenchmarkBookSetNearTop updates a book of eight levels a side where live flow
// does: two thirds at the best level, the rest within the next four.
func BenchmarkBookSetNearTop(b *testing.B) {
	b.ReportAllocs()
	var bk Book
	for p := Micros(1); p <= 8; p++ {
		bk.Set(Buy, 500_000-p*10_000, Lot)
		bk.Set(Sell, 500_000+p*10_000, Lot)
	}
	at := [...]Micros{0, 0, 0, 0, 0, 0, 1, 2, 3, 4}
	i := 0
	for b.Loop() {
		i++
		bk.Set(Buy, 490_000-at[i%len(at)]*10_000, Micros(1+i%3)*Lot)
		bk.Set(Sell, 510_000+at[(i+3)%len(at)]*10_000, Micros(1+i%3)*Lot)
	}
}

// TestBookResetCopiesBestFirstLevelsWithoutAllocating: levels already best-first
// (what adapters deliver) are copied as they are, into the book's storage, and
// give the book the sort-and-merge would.
func TestBookResetCopiesBestFirstLevelsWithoutAllocating(t *testing.T) {
	bids := []Level{{Price: 500_000, Size: One}, {Price: 490_000, Size: 2 * One}}
	asks := []Level{{Price: 510_000, Size: 3 * One}, {Price: 520_000, Size: One}}
	var b Book
	b.Reset(bids, asks)
	if !reflect.DeepEqual(b.Bids, bids) || !reflect.DeepEqual(b.Asks, asks) {
		t.Fatalf("book %+v %+v, want %+v %+v", b.Bids, b.Asks, bids, asks)
	}
	if &b.Bids[0] == &bids[0] || &b.Asks[0] == &asks[0] {
		t.Fatal("the book shares the caller's levels")
	}
	if n := testing.AllocsPerRun(100, func() { b.Reset(bids, asks) }); n != 0 {
		t.Fatalf("Reset of best-first levels allocates %v times", n)
	}
}

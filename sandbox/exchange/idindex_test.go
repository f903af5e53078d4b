package exchange

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestIDIndex checks the id index against a plain map over hundreds of thousands of
// ids (several table doublings, migrations and filter rebuilds), with forced
// fingerprint collisions so that the exact comparison is what decides.
func TestIDIndex(t *testing.T) {
	tests := []struct {
		name string
		n    int
		fp   func(x *idIndex, id market.OrderID, i int) uint32
	}{
		{"random fingerprints, many doublings", map[bool]int{false: 300_000, true: 60_000}[raceEnabled], func(x *idIndex, id market.OrderID, _ int) uint32 { return x.fingerprint(id) }},
		{"colliding fingerprints are told apart by the id", 5_000, func(_ *idIndex, _ market.OrderID, i int) uint32 { return uint32(i%7) + 1 }},
		{"fingerprints at the top of the range wrap around the table", 5_000, func(_ *idIndex, _ market.OrderID, i int) uint32 {
			return ^uint32(0) - uint32(i%50)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newIDIndex()
			ref := map[market.OrderID]int32{}
			fps := map[market.OrderID]uint32{}
			r := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < tt.n; i++ {
				id := market.OrderID("id-" + strconv.Itoa(i))
				fp := tt.fp(&x, id, i)
				if got := x.findFP(id, fp); got != -1 {
					t.Fatalf("new id %s found at %d", id, got)
				}
				st := market.OrderStatus(i % 4)
				ref[id] = x.addFP(id, fp, st)
				fps[id] = fp
				if x.state(ref[id]) != st || x.id(ref[id]) != id {
					t.Fatalf("id %s: stored %q %v", id, x.id(ref[id]), x.state(ref[id]))
				}
				// look up a few known ids while tables migrate
				for k := 0; k < 2; k++ {
					j := r.IntN(i + 1)
					old := market.OrderID("id-" + strconv.Itoa(j))
					if got := x.findFP(old, fps[old]); got != ref[old] {
						t.Fatalf("after %d ids: %s found at %d, want %d", i+1, old, got, ref[old])
					}
				}
			}
			for id, want := range ref {
				if got := x.findFP(id, fps[id]); got != want {
					t.Fatalf("%s found at %d, want %d", id, got, want)
				}
			}
			if x.count+len(x.pending) != tt.n || x.n != tt.n {
				t.Fatalf("count %d + pending %d, n %d", x.count, len(x.pending), x.n)
			}
		})
	}
}

// TestLiveTable checks the open-order table against a map through random adds and
// removals, with colliding and wrapping fingerprints, so that backward-shift deletion
// keeps every remaining entry findable, in both tables: a young table of 8 slots ages
// into the old one constantly (which grows, and whose filter is rebuilt), the default
// one when the open orders outgrow it.
func TestLiveTable(t *testing.T) {
	for _, tt := range []struct {
		name  string
		young int
		fp    func(i int) uint32
	}{
		{"random fingerprints", 8, func(i int) uint32 { return uint32(i)*2654435761 | 1 }},
		{"few distinct fingerprints", 8, func(i int) uint32 { return uint32(i%5) + 1 }},
		{"fingerprints that wrap around the table", 8, func(i int) uint32 { return ^uint32(0) - uint32(i%40) }},
		{"default young table", 0, func(i int) uint32 { return uint32(i)*2654435761 | 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lt := newLiveTable(tt.young)
			orders := make([]order, 1000)
			open := map[int32]bool{}
			r := rand.New(rand.NewPCG(3, 4))
			for i := range orders {
				orders[i].id = market.OrderID("o" + strconv.Itoa(i))
				orders[i].fp = tt.fp(i)
			}
			for step := 0; step < 20_000; step++ {
				oi := int32(r.IntN(len(orders)))
				if open[oi] {
					lt.remove(orders[oi].fp, oi)
					delete(open, oi)
				} else if len(open) < 400 {
					lt.add(orders[oi].fp, oi)
					open[oi] = true
				}
				if lt.len() != len(open) || occupied(lt.young) != lt.yn || occupied(lt.old) != lt.on {
					t.Fatalf("step %d: %d entries (young %d in %d slots, old %d in %d slots), want %d",
						step, lt.len(), lt.yn, occupied(lt.young), lt.on, occupied(lt.old), len(open))
				}
				if step%197 == 0 {
					for j := range orders {
						want := int32(-1)
						if open[int32(j)] {
							want = int32(j)
						}
						if got := lt.find(orders, orders[j].id, orders[j].fp); got != want {
							t.Fatalf("step %d: %s found at %d, want %d", step, orders[j].id, got, want)
						}
					}
				}
			}
			if lt.len() != len(open) {
				t.Fatalf("%d entries, want %d", lt.len(), len(open))
			}
			if len(lt.old) < 512 || len(lt.filter) == 0 {
				t.Fatalf("the old table never grew: %d slots, filter of %d words", len(lt.old), len(lt.filter))
			}
		})
	}
}

// occupied counts the used slots of tab.
func occupied(tab []uint64) int {
	n := 0
	for _, s := range tab {
		if s != 0 {
			n++
		}
	}
	return n
}

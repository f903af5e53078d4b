package data

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// randomFlow drives n random commands (orders of both sides and outcomes, splits,
// merges, RFQ swaps, a resolution and redemptions) through an engine and the index, as the host
// would, and returns the engine.
func randomFlow(t testing.TB, ix *Index, cat *catalog.Catalog, seed uint64, n int) *exchange.Engine {
	t.Helper()
	e := exchange.New(exchange.Config{FeeAccount: feeTo})
	apply := func(cmd exchange.Command) {
		evs, _ := e.Apply(&cmd)
		ix.Observe(&cmd, evs)
	}
	for _, cmd := range catalog.GenesisCommands(cat, 1) {
		apply(cmd)
	}
	wallets := []market.Address{alice, bob, carol, dave}
	for _, w := range wallets {
		apply(exchange.Command{Kind: exchange.Deposit, Time: 1, Owner: w, Amount: 10_000 * market.One})
	}
	var ms []*catalog.Market
	for m := range cat.Markets() {
		ms = append(ms, m)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	now := int64(1)
	for i := range n {
		now += int64(rng.IntN(3_600_000))
		w := wallets[rng.IntN(len(wallets))]
		m := ms[rng.IntN(len(ms))]
		cmd := exchange.Command{Time: now, Owner: w, Market: m.Condition}
		switch k := rng.IntN(20); {
		case k == 13:
			o, size := market.Outcome(rng.IntN(2)), market.Micros(rng.IntN(5)+1)*market.One
			cmd.Kind, cmd.Token, cmd.To, cmd.Size = exchange.Swap, m.Tokens[o], wallets[rng.IntN(len(wallets))], size
			cmd.Amount, _ = market.MulDiv(size, market.Micros(rng.IntN(999_999)+1), market.One)
			cmd.Market = ""
		case k < 14:
			o := market.Outcome(rng.IntN(2))
			cmd.Kind, cmd.Order, cmd.Token = exchange.Place, market.OrderID(fmt.Sprintf("0x%x-%d", seed, i)), m.Tokens[o]
			cmd.Side = market.Side(rng.IntN(2) + 1)
			cmd.Price = market.Micros(rng.IntN(19)+1) * 50_000
			cmd.Size = market.Micros(rng.IntN(50)+1) * market.One
			cmd.Type = market.OrderType(rng.IntN(4))
			if cmd.Type == market.GTD {
				cmd.Type = market.GTC
			}
			cmd.FeeRateBps = m.FeeBps
			cmd.Market = ""
		case k < 16:
			cmd.Kind, cmd.Amount = exchange.Split, market.Micros(rng.IntN(20)+1)*market.One
		case k < 18:
			cmd.Kind, cmd.Amount = exchange.Merge, market.Micros(rng.IntN(10)+1)*market.One
		case k == 18 && i > n/2:
			cmd.Kind, cmd.Winner, cmd.Owner = exchange.Resolve, market.Outcome(rng.IntN(2)), market.Address{}
		default:
			cmd.Kind = exchange.Redeem
		}
		apply(cmd)
	}
	return e
}

func TestRandomFlowKeepsTheIndexEqualToTheLedger(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			cat := testCatalog(t)
			ix := New(Config{Catalog: cat, Clock: func() int64 { return 1 }})
			e := randomFlow(t, ix, cat, seed, 400)
			for _, a := range e.Accounts(nil) {
				for _, h := range e.Holdings(a, nil) {
					u := ix.users[a]
					var got market.Micros
					if u != nil && u.pos[h.Token] != nil {
						got = u.pos[h.Token].Size
					}
					if got != h.Available+h.Reserved {
						t.Fatalf("%s %s: index %s, ledger %s", a, h.Token, got, h.Available+h.Reserved)
					}
				}
			}
			if ix.unknownCost != 0 {
				t.Fatalf("an index that saw everything booked %s shares at unknown cost", ix.unknownCost)
			}
			// Cash identity: a wallet's collateral change (available + reserved −
			// deposits) equals what it realized minus the cost of what it still holds.
			var vol market.Micros
			for a, u := range ix.users {
				vol += u.vol
				var sum market.Micros
				for _, h := range u.pos {
					sum += h.Realized - h.Cost
				}
				av, rs := e.Collateral(a)
				if got := av + rs - 10_000*market.One; got != sum {
					t.Fatalf("%s: collateral change %s, realized − open cost %s", a, got, sum)
				}
			}
			if vol == 0 {
				t.Fatal("the flow traded nothing")
			}
		})
	}
}

func TestSnapshotRoundTripIsExactAndCanonical(t *testing.T) {
	cat := testCatalog(t)
	ix := New(Config{Catalog: cat, Clock: func() int64 { return 1 }})
	randomFlow(t, ix, cat, 42, 600)
	a := ix.AppendSnapshot(nil)
	back := New(Config{Catalog: cat, Clock: func() int64 { return 1 }})
	if err := back.RestoreSnapshot(a); err != nil {
		t.Fatal(err)
	}
	if b := back.AppendSnapshot(nil); !bytes.Equal(a, b) {
		t.Fatal("snapshot → restore → snapshot changed the bytes")
	}
	for _, w := range []market.Address{alice, bob, carol, dave} {
		x, _ := ix.WalletStats(w)
		y, _ := back.WalletStats(w)
		if x != y {
			t.Fatalf("%s: %+v != %+v", w, x, y)
		}
	}
	// The restored index goes on exactly like the original.
	for _, m := range []*Index{ix, back} {
		m.Observe(&exchange.Command{Kind: exchange.Split}, []exchange.Event{{Kind: exchange.PositionsSplit, Seq: 1 << 40,
			Time: 1 << 40, Owner: alice, Market: cat.Events()[0].Markets[0].Condition, Amount: 3 * market.One}})
	}
	if !bytes.Equal(ix.AppendSnapshot(nil), back.AppendSnapshot(nil)) {
		t.Fatal("the restored index diverged")
	}
}

func TestRestoreRefusesDamagedSnapshotsAndKeepsItsState(t *testing.T) {
	cat := testCatalog(t)
	ix := New(Config{Catalog: cat})
	randomFlow(t, ix, cat, 3, 100)
	good := ix.AppendSnapshot(nil)
	target := New(Config{Catalog: cat})
	randomFlow(t, target, cat, 4, 50)
	before := target.AppendSnapshot(nil)
	cases := map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{9}, good[1:]...),
		"truncated": good[:len(good)/2],
		"trailing":  append(append([]byte(nil), good...), 0),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if err := target.RestoreSnapshot(data); !errors.Is(err, ErrSnapshot) {
				t.Fatalf("err = %v", err)
			}
			if !bytes.Equal(target.AppendSnapshot(nil), before) {
				t.Fatal("a refused snapshot changed the state")
			}
		})
	}
}

// FuzzRestoreSnapshot: any bytes are either refused with ErrSnapshot or give a state
// whose snapshot is canonical (re-encodes to the same bytes).
func FuzzRestoreSnapshot(f *testing.F) {
	cat := testCatalog(f)
	ix := New(Config{Catalog: cat})
	randomFlow(f, ix, cat, 5, 60)
	f.Add(ix.AppendSnapshot(nil))
	f.Add(New(Config{}).AppendSnapshot(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := New(Config{})
		if err := x.RestoreSnapshot(data); err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("error %v does not wrap ErrSnapshot", err)
			}
			return
		}
		snap := x.AppendSnapshot(nil)
		y := New(Config{})
		if err := y.RestoreSnapshot(snap); err != nil {
			t.Fatalf("the snapshot of a restored state is refused: %v", err)
		}
		if got := y.AppendSnapshot(nil); !bytes.Equal(got, snap) {
			t.Fatalf("the snapshot of a restored state is not canonical:\n%x\nre-encodes to\n%x", snap, got)
		}
	})
}

// A durable host recovers the index with the engine: the answers after a restart
// are byte for byte those before it.
func TestRestartRecoversTheIndex(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, dir)
	scenario(t, r)
	paths := []string{"/positions?user=" + alice.String(), "/activity?user=" + bob.String(), "/v1/leaderboard?orderBy=pnl",
		"/v1/market-positions?market=" + string(r.market("alpha").Condition)}
	before := map[string]string{}
	for _, p := range paths {
		_, before[p] = r.raw("GET", p)
	}
	now := r.now.Load()
	r.stop()

	r2 := newRig(t, dir)
	defer r2.stop()
	r2.now.Store(now)
	for _, p := range paths {
		if _, got := r2.raw("GET", p); got != before[p] {
			t.Fatalf("%s after restart:\n%s\nbefore:\n%s", p, got, before[p])
		}
	}
}

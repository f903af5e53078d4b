package sim

import (
	"strconv"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// TestUpDownResolvesFromThePriceProcess: for several seeds, windows of one minute
// from an origin off the second: each window is listed at its start (slug, outcomes,
// end date) and resolved at its end, Up exactly when NewPrices(seed, origin) —
// stepped here on its own — is at least as high at the end as at the start; both
// outcomes occur. Two wallets holding the two sides settle exactly when they redeem
// (the winner's 10 shares pay 10, the ledger's invariants hold), and an UpDown
// started later (SkipTo) lists and resolves the same markets the same way.
func TestUpDownResolvesFromThePriceProcess(t *testing.T) {
	const origin, windows = 1_700_000_000_300, 6
	btc := market.FeedSymbol{Source: market.FeedCrypto, Symbol: "btcusdt"}
	// Wallets a and b of window k hold its two sides.
	wallets := func(k int64) (a, b market.Address) { return market.Address{1, byte(k)}, market.Address{2, byte(k)} }
	seen := map[market.Outcome]int{}
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		// The reference: the price at every second from the process itself.
		ref := NewPrices(seed, origin, []market.FeedSymbol{btc})
		px := map[int64]float64{}
		for ref.Next() <= 1_700_000_001_000+windows*60_000 {
			ev := ref.Step(nil)[0]
			px[ev.Time] = ev.Value
		}
		u, err := NewUpDown(seed, origin, market.FeedSymbol{}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		e := exchange.New(exchange.Config{})
		apply := func(c exchange.Command) {
			t.Helper()
			if _, err := e.Apply(&c); err != nil {
				t.Fatalf("seed %d: %s: %v", seed, c.Kind, err)
			}
		}
		for k := int64(0); k <= windows; k++ {
			if want := 1_700_000_001_000 + k*60_000; u.Next() != want {
				t.Fatalf("boundary %d at %d, want %d", k, u.Next(), want)
			}
			for _, c := range u.Step(e, nil) {
				apply(c)
			}
			start, end := u.Window(k - 1)
			if k > 0 {
				info, _ := e.Market(u.Market(k - 1).Market)
				want := market.No
				if px[end] >= px[start] {
					want = market.Yes
				}
				if !info.Resolved || info.Winner != want || e.Time() != end {
					t.Fatalf("seed %d window %d: resolved %v winner %v at %d; want %v at %d (prices %v → %v)", seed, k-1,
						info.Resolved, info.Winner, e.Time(), want, end, px[start], px[end])
				}
				seen[want]++
				// The two sides settle exactly.
				c := info.Condition
				a, b := wallets(k - 1)
				for _, o := range []market.Address{a, b} {
					apply(exchange.Command{Kind: exchange.Redeem, Owner: o, Market: c})
				}
				ca, _ := e.Collateral(a)
				cb, _ := e.Collateral(b)
				wantA := 100*market.One - 10*market.One + 4*market.One
				wantB := 100*market.One - 4*market.One
				if want == market.Yes {
					wantA += 10 * market.One
				} else {
					wantB += 10 * market.One
				}
				if ca != wantA || cb != wantB {
					t.Fatalf("seed %d window %d: balances %s %s, want %s %s", seed, k-1, ca, cb, wantA, wantB)
				}
				if err := e.Check(); err != nil {
					t.Fatal(err)
				}
			}
			if k == windows {
				break
			}
			info, ok := e.Market(u.Market(k).Market)
			start, end = u.Window(k)
			if !ok || !info.Tradable() || info.Outcomes != [2]string{"Up", "Down"} || info.EndDate != end/1000 ||
				info.Slug != "btc-updown-1m-"+strconv.FormatInt(start/1000, 10) {
				t.Fatalf("window %d listed %v: %+v", k, ok, info)
			}
			// a holds 10 Up, b 10 Down, both starting from 100.
			a, b := wallets(k)
			for _, o := range []market.Address{a, b} {
				apply(exchange.Command{Kind: exchange.Deposit, Owner: o, Amount: 100 * market.One})
			}
			apply(exchange.Command{Kind: exchange.Split, Owner: a, Market: info.Condition, Amount: 10 * market.One})
			apply(exchange.Command{Kind: exchange.Place, Owner: b, Order: market.OrderID("b" + strconv.FormatInt(k, 10)), Token: info.Tokens[market.No],
				Side: market.Buy, Price: 400_000, Size: 10 * market.One})
			apply(exchange.Command{Kind: exchange.Place, Owner: a, Order: market.OrderID("a" + strconv.FormatInt(k, 10)), Token: info.Tokens[market.No],
				Side: market.Sell, Price: 400_000, Size: 10 * market.One})
		}

		// Started in window 3: lists window 3 at once, and window 3's outcome is the same.
		late, _ := NewUpDown(seed, origin, market.FeedSymbol{}, time.Minute)
		late.SkipTo(1_700_000_001_000 + 3*60_000 + 5_000)
		e2 := exchange.New(exchange.Config{})
		cmds := late.Step(e2, nil)
		if len(cmds) != 1 || cmds[0].Market != u.Market(3).Market {
			t.Fatalf("after SkipTo: %+v", cmds)
		}
		e2.Apply(&cmds[0])
		cmds = late.Step(e2, nil)
		first, _ := e.Market(u.Market(3).Market)
		if len(cmds) != 2 || cmds[0].Kind != exchange.Resolve || cmds[0].Winner != first.Winner || cmds[1].Market != u.Market(4).Market {
			t.Fatalf("window 3 resolved %+v; the first resolved it %v", cmds, first.Winner)
		}
	}
	if seen[market.Yes] == 0 || seen[market.No] == 0 {
		t.Fatalf("outcomes %v: want both", seen)
	}
	if _, err := NewUpDown(1, 0, market.FeedSymbol{}, 1500*time.Millisecond); err == nil {
		t.Fatal("a window of 1.5 s was accepted")
	}
}

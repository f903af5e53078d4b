package exchange

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// A neg-risk event of three markets (A, B, C: exactly one resolves YES).
const (
	evID  = "0xe1"
	condA = market.ConditionID("0xa0")
	condB = market.ConditionID("0xb0")
	condC = market.ConditionID("0xc9")
	yesA  = market.TokenID("a1")
	noA   = market.TokenID("a2")
	yesB  = market.TokenID("b1")
	noB   = market.TokenID("b2")
	yesC  = market.TokenID("c1")
	noC   = market.TokenID("c2")
)

// newEventHarness is newHarness plus the neg-risk event A, B, C.
func newEventHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	for _, m := range []struct {
		c    market.ConditionID
		y, n market.TokenID
	}{{condA, yesA, noA}, {condB, yesB, noB}, {condC, yesC, noC}} {
		s := spec(m.y, m.n, "0.01")
		s.NegRisk, s.NegRiskID = true, evID
		h.ok(Command{Kind: CreateMarket, Market: m.c, Spec: s})
	}
	return h
}

func (h *harness) wantLocked(want string) {
	h.t.Helper()
	if got := h.e.Totals().Locked; got != d(want) {
		h.t.Fatalf("locked %s, want %s", got, want)
	}
}

// TestConvert checks the neg-risk conversion: NO of one market becomes as many YES
// of every other unresolved market, with no collateral moving, and the ledger pays
// exactly what the positions are worth whatever the winner.
func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		name   string
		winner market.ConditionID
		// alice's collateral after redeeming everything
		alice string
	}{
		// alice split 10 of A (paid 10), converted 4 NO_A into 4 YES_B + 4 YES_C.
		// She holds YES_A 10, NO_A 6, YES_B 4, YES_C 4.
		{"A wins", condA, "1000"}, // YES_A 10 → 10
		{"B wins", condB, "1000"}, // NO_A 6 + YES_B 4 → 10
		{"C wins", condC, "1000"}, // NO_A 6 + YES_C 4 → 10
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newEventHarness(t)
			h.ok(Command{Kind: Split, Owner: alice, Market: condA, Amount: d("10")})
			evs := h.ok(Command{Kind: Convert, Owner: alice, Market: condA, Amount: d("4")})
			if c := find(evs, Converted); len(c) != 1 || c[0].Token != noA || c[0].Amount != d("4") || c[0].Owner != alice {
				t.Fatalf("converted events %+v", c)
			}
			h.wantTokens(alice, noA, "6", "0")
			h.wantTokens(alice, yesA, "10", "0")
			h.wantTokens(alice, yesB, "4", "0")
			h.wantTokens(alice, yesC, "4", "0")
			h.wantColl(alice, "990", "0")
			h.wantLocked("10") // net of the vault's debt: 10 + 4 + 4 − (3 − 1) × 4
			if _, vault, ok := h.e.NegRiskEvent(evID, nil); !ok || vault != d("4") {
				t.Fatalf("vault %s", vault)
			}

			evs = h.ok(Command{Kind: Resolve, Market: tc.winner, Winner: market.Yes})
			if r := find(evs, MarketResolved); len(r) != 3 || r[0].Market != tc.winner || r[0].Outcome != market.Yes ||
				r[1].Outcome != market.No || r[2].Outcome != market.No {
				t.Fatalf("a YES resolves the whole event: %+v", r)
			}
			for _, c := range []market.ConditionID{condA, condB, condC} {
				if _, err := h.do(Command{Kind: Redeem, Owner: alice, Market: c}); err != nil &&
					!errors.Is(err, market.Errorf(market.CodeNothingToRedeem, c)) {
					t.Fatalf("redeem %s: %v", c, err)
				}
			}
			h.wantColl(alice, tc.alice, "0")
			h.wantLocked("0")
		})
	}
}

// TestConvertAfterANoResolution checks that a market resolving NO pays the vault's
// NO tokens in it, and that conversions afterwards only involve the open markets.
func TestConvertAfterANoResolution(t *testing.T) {
	h := newEventHarness(t)
	h.ok(Command{Kind: Split, Owner: alice, Market: condA, Amount: d("10")})
	h.ok(Command{Kind: Convert, Owner: alice, Market: condA, Amount: d("4")}) // YES_B 4, YES_C 4
	h.ok(Command{Kind: Resolve, Market: condC, Winner: market.No})            // C out: vault's NO_C pays 4
	h.wantLocked("10")
	h.ok(Command{Kind: Split, Owner: bob, Market: condB, Amount: d("5")})
	evs := h.ok(Command{Kind: Convert, Owner: bob, Market: condB, Amount: d("5")}) // only into A
	h.wantTokens(bob, yesA, "5", "0")
	h.wantTokens(bob, yesC, "0", "0")
	if len(find(evs, BalanceChanged)) != 2 {
		t.Fatalf("balances touched: %+v", find(evs, BalanceChanged))
	}
	h.wantLocked("15")
	// B resolving NO leaves A, the last market, which cannot resolve NO.
	h.ok(Command{Kind: Resolve, Market: condB, Winner: market.No})
	h.fails(Command{Kind: Resolve, Market: condA, Winner: market.No}, market.CodeNegRiskNeedsWinner,
		"neg-risk event 0xe1 needs a winner: its last market cannot resolve NO")
	h.fails(Command{Kind: Convert, Owner: alice, Market: condA, Amount: d("1")}, market.CodeNegRiskTooFew, "")
	h.ok(Command{Kind: Resolve, Market: condA, Winner: market.Yes})
	for _, c := range []market.ConditionID{condA, condB, condC} {
		for _, a := range []market.Address{alice, bob} {
			h.do(Command{Kind: Redeem, Owner: a, Market: c}) //nolint:errcheck // nothing to redeem is fine
		}
	}
	// alice: YES_A 10 → 10 (her NO_A 6 lost, YES_B and YES_C lost). bob: YES_A 5 → 5.
	h.wantColl(alice, "1000", "0")
	h.wantColl(bob, "1000", "0")
	h.wantLocked("0")
}

// TestConvertRefusals covers every refusal of Convert and of joining an event.
func TestConvertRefusals(t *testing.T) {
	h := newEventHarness(t)
	h.ok(Command{Kind: Split, Owner: alice, Market: condA, Amount: d("10")})
	h.fails(Command{Kind: Convert, Owner: alice, Market: cond, Amount: d("1")}, market.CodeNotNegRisk, "market 0xc0 is not part of a neg-risk event")
	h.fails(Command{Kind: Convert, Owner: alice, Market: "0xnope", Amount: d("1")}, market.CodeMarketNotFound, "")
	h.fails(Command{Kind: Convert, Market: condA, Amount: d("1")}, market.CodeBadRequest, "")
	h.fails(Command{Kind: Convert, Owner: alice, Market: condA}, market.CodeInvalidAmount, "")
	h.fails(Command{Kind: Convert, Owner: alice, Market: condA, Amount: d("10.000001")}, market.CodeInsufficientBalance, "")
	h.fails(Command{Kind: Convert, Owner: bob, Market: condA, Amount: d("1")}, market.CodeInsufficientBalance, "")
	// reserved NO tokens cannot be converted
	h.place(alice, noA, market.Sell, "0.5", "8")
	h.fails(Command{Kind: Convert, Owner: alice, Market: condA, Amount: d("3")}, market.CodeInsufficientBalance, "")
	h.ok(Command{Kind: Convert, Owner: alice, Market: condA, Amount: d("2")})
	for _, mode := range []market.AccountMode{market.ModeCloseOnly, market.ModeBanned} {
		h.ok(Command{Kind: SetAccountMode, Owner: alice, Mode: mode})
		code := market.CodeAddressCloseOnly
		if mode == market.ModeBanned {
			code = market.CodeAddressBanned
		}
		h.fails(Command{Kind: Convert, Owner: alice, Market: condA, Amount: d("1")}, code, "")
	}
	// a market joins an event only before conversions
	s := spec("d1", "d2", "0.01")
	s.NegRisk, s.NegRiskID = true, evID
	h.fails(Command{Kind: CreateMarket, Market: "0xd0", Spec: s}, market.CodeNegRiskClosed, "neg-risk event 0xe1 takes no new market")
	s.NegRisk = false
	h.fails(Command{Kind: CreateMarket, Market: "0xd0", Spec: s}, market.CodeBadRequest, "")
	// resolved markets convert nothing
	h.ok(Command{Kind: Resolve, Market: condB, Winner: market.Yes})
	h.fails(Command{Kind: Convert, Owner: bob, Market: condA, Amount: d("1")}, market.CodeMarketResolved, "")
}

// TestTransfer checks Transfer: available collateral only, both accounts touched,
// conservation unchanged, refusals change nothing.
func TestTransfer(t *testing.T) {
	h := newHarness(t)
	evs := h.ok(Command{Kind: Transfer, Owner: alice, To: dave, Amount: d("12.5")})
	if tr := find(evs, Transferred); len(tr) != 1 || tr[0].Owner != alice || tr[0].To != dave || tr[0].Amount != d("12.5") {
		t.Fatalf("transferred %+v", tr)
	}
	if bc := find(evs, BalanceChanged); len(bc) != 2 {
		t.Fatalf("balance changes %+v", bc)
	}
	h.wantColl(alice, "987.5", "0")
	h.wantColl(dave, "12.5", "0")
	h.place(alice, yes, market.Buy, "0.5", "1000") // reserves 500
	h.fails(Command{Kind: Transfer, Owner: alice, To: dave, Amount: d("487.500001")}, market.CodeInsufficientBalance, "")
	h.fails(Command{Kind: Transfer, Owner: carol, To: carol, Amount: d("1")}, market.CodeBadRequest, "")
	h.fails(Command{Kind: Transfer, Owner: carol, Amount: d("1")}, market.CodeBadRequest, "")
	h.fails(Command{Kind: Transfer, To: carol, Amount: d("1")}, market.CodeBadRequest, "")
	h.fails(Command{Kind: Transfer, Owner: carol, To: dave, Amount: -1}, market.CodeInvalidAmount, "")
	h.fails(Command{Kind: Transfer, Owner: addr(77), To: dave, Amount: 1}, market.CodeInsufficientBalance, "")
	// a banned account can still pay (the venue's bookkeeping decides who pays whom)
	h.ok(Command{Kind: SetAccountMode, Owner: carol, Mode: market.ModeBanned})
	h.ok(Command{Kind: Transfer, Owner: carol, To: dave, Amount: d("1")})
	h.wantColl(dave, "13.5", "0")
}

// TestSnapshotVersion1StillRestores checks that a version 1 snapshot (before
// neg-risk events) restores to the same state as a version 2 one without events.
func TestSnapshotVersion1StillRestores(t *testing.T) {
	h := newHarness(t)
	h.split(alice, "3")
	h.place(alice, yes, market.Sell, "0.6", "2")
	v2 := h.e.AppendSnapshot(nil)
	if v2[4] != 2 || v2[len(v2)-1] != 0 {
		t.Fatalf("version %d, last byte %d: want version 2 ending with zero events", v2[4], v2[len(v2)-1])
	}
	v1 := append([]byte(nil), v2[:len(v2)-1]...)
	v1[4] = 1
	e, err := Restore(v1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.AppendSnapshot(nil), v2) {
		t.Fatal("a version 1 snapshot restores to another state")
	}
	// and the neg-risk events survive a version 2 round trip
	h2 := newEventHarness(t)
	h2.ok(Command{Kind: Split, Owner: alice, Market: condA, Amount: d("10")})
	h2.ok(Command{Kind: Convert, Owner: alice, Market: condA, Amount: d("4")})
	snap := h2.e.AppendSnapshot(nil)
	e2, err := Restore(snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e2.AppendSnapshot(nil), snap) || e2.MarketNegRiskID(condB) != evID {
		t.Fatal("neg-risk events do not round-trip")
	}
	if _, err := Restore(append(snap[:len(snap):len(snap)], 0)); err == nil {
		t.Fatal("trailing bytes accepted")
	}
}

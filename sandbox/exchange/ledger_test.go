package exchange

import (
	"slices"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// withFee sets the market's taker fee rate and makes h.order sign it.
func withFee(h *harness, bps uint32) {
	s := spec(yes, no, "0.01")
	s.FeeBps = bps
	h.ok(Command{Kind: UpdateMarket, Market: cond, Spec: s})
	h.fee = bps
}

// TestFees checks the fee rule: only the taker pays, floor(bps × min(p, 1−p) × size)
// in collateral (p in the taker's token), on top of a buy or out of a sell's proceeds,
// to the fee account; a crossing BUY reserves the worst case.
func TestFees(t *testing.T) {
	t.Run("the taker pays the fee and the maker none", func(t *testing.T) {
		h := newHarness(t)
		withFee(h, 100)
		h.split(alice, "10")
		h.place(alice, yes, market.Sell, "0.7", "10")
		evs := h.ok(h.order(bob, yes, market.Buy, "0.7", "10"))
		if acc := find(evs, OrderAccepted)[0]; acc.Amount != d("7.05") {
			t.Fatalf("reserved %s, want 7.05 (7 + worst-case fee at 0.5)", acc.Amount)
		}
		if tr := find(evs, TradeExecuted)[0]; tr.Fee != d("0.03") {
			t.Fatalf("taker fee %s, want 0.03", tr.Fee)
		}
		if f := find(evs, OrderFilled)[0]; f.Fee != 0 {
			t.Fatalf("maker fee %s", f.Fee)
		}
		h.wantColl(bob, "992.97", "0")
		h.wantColl(alice, "997", "0")
		h.wantColl(feeAcct, "0.03", "0")
	})
	t.Run("a SELL taker's fee comes out of its proceeds", func(t *testing.T) {
		h := newHarness(t)
		withFee(h, 100)
		h.split(alice, "10")
		h.place(bob, yes, market.Buy, "0.4", "10")
		h.ok(h.order(alice, yes, market.Sell, "0.4", "10"))
		h.wantColl(alice, "993.96", "0")
		h.wantColl(bob, "996", "0")
		h.wantColl(feeAcct, "0.04", "0")
	})
	t.Run("the fee uses the taker's own price in a mint", func(t *testing.T) {
		h := newHarness(t)
		withFee(h, 100)
		h.place(alice, yes, market.Buy, "0.8", "10")
		h.ok(h.order(bob, no, market.Buy, "0.2", "10"))
		h.wantColl(bob, "997.98", "0") // 2 + 100 bps × 0.2 × 10
		h.wantColl(feeAcct, "0.02", "0")
	})
	t.Run("the fee is rounded down to the micro-unit", func(t *testing.T) {
		h := newHarness(t)
		withFee(h, 3)
		h.split(alice, "2")
		h.place(alice, yes, market.Sell, "0.33", "1.01")
		h.ok(h.order(bob, yes, market.Buy, "0.33", "1.01"))
		h.wantColl(feeAcct, "0.000099", "0") // 3 bps × 0.33 × 1.01 = 0.00009999
	})
	t.Run("a 100% fee never exceeds a seller's proceeds", func(t *testing.T) {
		h := newHarness(t)
		withFee(h, 10_000)
		h.split(alice, "10")
		h.place(bob, yes, market.Buy, "0.2", "10")
		h.ok(h.order(alice, yes, market.Sell, "0.2", "10"))
		h.wantColl(alice, "990", "0")
		h.wantColl(feeAcct, "2", "0")
	})
	t.Run("a crossing BUY needs collateral for the worst-case fee", func(t *testing.T) {
		h := newHarness(t)
		withFee(h, 100)
		h.split(alice, "10")
		h.place(alice, yes, market.Sell, "0.7", "10")
		h.ok(Command{Kind: Deposit, Owner: dave, Amount: d("7")})
		h.fails(h.order(dave, yes, market.Buy, "0.7", "10"), market.CodeInsufficientBalance, "")
		h.ok(Command{Kind: Deposit, Owner: dave, Amount: d("0.05")})
		h.ok(h.order(dave, yes, market.Buy, "0.7", "10"))
		h.wantColl(dave, "0.02", "0") // the unused part of the fee reservation is released
		h.wantTokens(dave, yes, "10", "0")
	})
	t.Run("a BUY that does not cross reserves no fee", func(t *testing.T) {
		h := newHarness(t)
		withFee(h, 100)
		h.ok(Command{Kind: Deposit, Owner: dave, Amount: d("7")})
		h.ok(h.order(dave, yes, market.Buy, "0.7", "10"))
		h.wantColl(dave, "0", "7")
	})
	t.Run("an order signing less than the market fee rate is rejected", func(t *testing.T) {
		h := newHarness(t)
		withFee(h, 100)
		c := h.order(bob, yes, market.Buy, "0.7", "10")
		c.FeeRateBps = 50
		h.fails(c, market.CodeInvalidFeeRate, "order "+string(c.Order)+" is invalid. Fee rate (50 bps) lower than the market fee rate: 100 bps")
	})
}

// TestLedger checks deposits, withdrawals, splits, merges, resolution and redemption.
func TestLedger(t *testing.T) {
	t.Run("deposit credits available collateral", func(t *testing.T) {
		h := newHarness(t)
		evs := h.ok(Command{Kind: Deposit, Owner: dave, Amount: d("12.5")})
		if k := kinds(evs); !slices.Equal(k, []EventKind{Deposited, BalanceChanged}) || evs[1].Available != d("12.5") {
			t.Fatalf("events %+v", evs)
		}
		h.wantColl(dave, "12.5", "0")
	})
	t.Run("amounts must be positive", func(t *testing.T) {
		h := newHarness(t)
		for _, k := range []CommandKind{Deposit, Withdraw, Split, Merge} {
			h.fails(Command{Kind: k, Owner: alice, Market: cond, Amount: 0}, market.CodeInvalidAmount, "invalid amount")
			h.fails(Command{Kind: k, Owner: alice, Market: cond, Amount: -1}, market.CodeInvalidAmount, "invalid amount")
		}
	})
	t.Run("the zero address holds nothing", func(t *testing.T) {
		h := newHarness(t)
		for _, k := range []CommandKind{Deposit, Withdraw, Split, Merge, Redeem, IncrementNonce, SetAccountMode} {
			h.fails(Command{Kind: k, Market: cond, Amount: 1}, market.CodeBadRequest, "invalid address")
		}
	})
	t.Run("total collateral is capped so that no sum overflows", func(t *testing.T) {
		h := newHarness(t)
		h.ok(Command{Kind: Withdraw, Owner: alice, Amount: d("1000")})
		h.ok(Command{Kind: Withdraw, Owner: bob, Amount: d("1000")})
		h.ok(Command{Kind: Withdraw, Owner: carol, Amount: d("1000")})
		for i := 0; i < int(maxTotal/market.MaxMicros); i++ {
			h.ok(Command{Kind: Deposit, Owner: dave, Amount: market.MaxMicros})
		}
		h.fails(Command{Kind: Deposit, Owner: dave, Amount: 1}, market.CodeInvalidAmount, "")
	})
	t.Run("withdraw cannot touch reserved collateral", func(t *testing.T) {
		h := newHarness(t)
		h.place(alice, yes, market.Buy, "0.5", "1998")
		h.ok(Command{Kind: Withdraw, Owner: alice, Amount: d("1")})
		h.fails(Command{Kind: Withdraw, Owner: alice, Amount: d("0.000001")}, market.CodeInsufficientWithdraw, "insufficient balance for withdrawal")
		h.fails(Command{Kind: Withdraw, Owner: dave, Amount: d("1")}, market.CodeInsufficientWithdraw, "")
	})
	t.Run("split turns collateral into one YES and one NO per unit", func(t *testing.T) {
		h := newHarness(t)
		evs := h.ok(Command{Kind: Split, Owner: alice, Market: cond, Amount: d("10.000001")})
		if evs[0].Kind != PositionsSplit || evs[0].Amount != d("10.000001") {
			t.Fatalf("events %+v", evs)
		}
		h.wantColl(alice, "989.999999", "0")
		h.wantTokens(alice, yes, "10.000001", "0")
		h.wantTokens(alice, no, "10.000001", "0")
		if h.e.Totals().Locked != d("10.000001") {
			t.Fatal("locked")
		}
	})
	t.Run("split needs the collateral and a known market", func(t *testing.T) {
		h := newHarness(t)
		h.fails(Command{Kind: Split, Owner: alice, Market: cond, Amount: d("1000.000001")}, market.CodeInsufficientBalance, "")
		h.fails(Command{Kind: Split, Owner: dave, Market: cond, Amount: d("1")}, market.CodeInsufficientBalance, "")
		h.fails(Command{Kind: Split, Owner: alice, Market: "0xnone", Amount: d("1")}, market.CodeMarketNotFound, "market not found")
	})
	t.Run("merge turns one YES and one NO into one unit", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.ok(Command{Kind: Merge, Owner: alice, Market: cond, Amount: d("4")})
		h.wantColl(alice, "994", "0")
		h.wantTokens(alice, yes, "6", "0")
		h.wantTokens(alice, no, "6", "0")
	})
	t.Run("merge needs both tokens unreserved", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.place(alice, yes, market.Sell, "0.6", "5")
		h.fails(Command{Kind: Merge, Owner: alice, Market: cond, Amount: d("6")}, market.CodeInsufficientBalance, "")
		h.fails(Command{Kind: Merge, Owner: bob, Market: cond, Amount: d("1")}, market.CodeInsufficientBalance, "")
		h.ok(Command{Kind: Merge, Owner: alice, Market: cond, Amount: d("5")})
	})
	t.Run("resolve cancels open orders and releases their reservations", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		b := h.place(alice, yes, market.Buy, "0.4", "10")
		s := h.place(alice, no, market.Sell, "0.7", "10")
		evs := h.ok(Command{Kind: Resolve, Market: cond, Winner: market.No})
		if c := find(evs, OrderCancelled); len(c) != 2 || c[0].Reason != ReasonResolved {
			t.Fatalf("events %v", kinds(evs))
		}
		r := find(evs, MarketResolved)
		if len(r) != 1 || r[0].Token != no || r[0].Outcome != market.No || r[0].Flags&FlagResolved == 0 {
			t.Fatalf("resolution %+v", r)
		}
		h.wantStatus(b, market.StatusCanceled)
		h.wantStatus(s, market.StatusCanceled)
		h.wantColl(alice, "990", "0")
		h.wantTokens(alice, no, "10", "0")
		if info, _ := h.e.Market(cond); !info.Resolved || info.Winner != market.No || info.Tradable() {
			t.Fatalf("info %+v", info)
		}
	})
	t.Run("redeem pays one per winning token and burns the losing ones", func(t *testing.T) {
		h := newHarness(t)
		h.place(alice, yes, market.Buy, "0.6", "10")
		h.ok(h.order(bob, no, market.Buy, "0.4", "10")) // mint: alice YES 10, bob NO 10
		h.split(carol, "3")
		h.ok(Command{Kind: Resolve, Market: cond, Winner: market.Yes})
		evs := h.ok(Command{Kind: Redeem, Owner: alice, Market: cond})
		if r := find(evs, Redeemed); len(r) != 1 || r[0].Amount != d("10") || r[0].Token != yes {
			t.Fatalf("events %+v", evs)
		}
		h.wantColl(alice, "1004", "0")
		h.wantTokens(alice, yes, "0", "0")
		evs = h.ok(Command{Kind: Redeem, Owner: bob, Market: cond})
		if r := find(evs, Redeemed); r[0].Amount != 0 || r[0].Size != d("10") {
			t.Fatalf("events %+v", evs)
		}
		h.wantColl(bob, "996", "0")
		h.wantTokens(bob, no, "0", "0")
		h.ok(Command{Kind: Redeem, Owner: carol, Market: cond})
		h.wantColl(carol, "1000", "0")
		if h.e.Totals().Locked != 0 {
			t.Fatal("collateral left locked after every token was redeemed")
		}
	})
	t.Run("redeem before resolution is refused", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "1")
		h.fails(Command{Kind: Redeem, Owner: alice, Market: cond}, market.CodeMarketNotResolved, "market 0xc0 is not resolved")
	})
	t.Run("redeem with nothing held is refused", func(t *testing.T) {
		h := newHarness(t)
		h.ok(Command{Kind: Resolve, Market: cond, Winner: market.Yes})
		h.fails(Command{Kind: Redeem, Owner: alice, Market: cond}, market.CodeNothingToRedeem, "nothing to redeem in market 0xc0")
		h.fails(Command{Kind: Redeem, Owner: dave, Market: cond}, market.CodeNothingToRedeem, "")
	})
	t.Run("a resolved market cannot resolve, split, merge or update again", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "1")
		h.ok(Command{Kind: Resolve, Market: cond, Winner: market.Yes})
		h.fails(Command{Kind: Resolve, Market: cond, Winner: market.No}, market.CodeMarketResolved, "market is resolved")
		h.fails(Command{Kind: Split, Owner: alice, Market: cond, Amount: d("1")}, market.CodeMarketResolved, "")
		h.fails(Command{Kind: Merge, Owner: alice, Market: cond, Amount: d("1")}, market.CodeMarketResolved, "")
		h.fails(Command{Kind: UpdateMarket, Market: cond, Spec: spec(yes, no, "0.01")}, market.CodeMarketResolved, "")
	})
	t.Run("resolution needs a known market and outcome", func(t *testing.T) {
		h := newHarness(t)
		h.fails(Command{Kind: Resolve, Market: "0xnone"}, market.CodeMarketNotFound, "")
		h.fails(Command{Kind: Resolve, Market: cond, Winner: 2}, market.CodeBadRequest, "invalid outcome")
	})
	t.Run("holdings list every token an account has held", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "2")
		hs := h.e.Holdings(alice, nil)
		if len(hs) != 2 || hs[0].Token != yes || hs[1].Token != no || hs[0].Available != d("2") {
			t.Fatalf("holdings %+v", hs)
		}
	})
}

// TestMarkets checks listing and administering markets.
func TestMarkets(t *testing.T) {
	t.Run("create lists a market with its tokens and parameters", func(t *testing.T) {
		h := newHarness(t)
		s := spec(yes2, no2, "0.001")
		s.FeeBps, s.NegRisk, s.EndDate = 25, true, 1_900_000_000
		evs := h.ok(Command{Kind: CreateMarket, Market: cond2, Spec: s})
		ev := evs[0]
		if ev.Kind != MarketCreated || ev.Token != yes2 || ev.Other != no2 || ev.Tick != d("0.001") || ev.FeeBps != 25 ||
			ev.Flags != FlagActive|FlagAcceptingOrders|FlagNegRisk {
			t.Fatalf("event %+v", ev)
		}
		info, ok := h.e.Market(cond2)
		if !ok || info.Tokens != s.Tokens || info.Question != "Will it?" || info.TickSize != d("0.001") || !info.NegRisk ||
			info.EndDate != 1_900_000_000 || !info.Tradable() {
			t.Fatalf("info %+v", info)
		}
		if c, o, ok := h.e.TokenMarket(no2); !ok || c != cond2 || o != market.No {
			t.Fatal("token lookup")
		}
		if all := h.e.Markets(nil); len(all) != 2 || all[0].Condition != cond || all[1].Condition != cond2 {
			t.Fatalf("markets %+v", all)
		}
	})
	tests := []struct {
		name string
		cmd  Command
		code market.Code
		msg  string
	}{
		{"a condition is listed once", Command{Market: cond, Spec: spec(yes2, no2, "0.01")}, market.CodeMarketExists, "market 0xc0 already exists"},
		{"a token belongs to one market", Command{Market: cond2, Spec: spec(yes2, yes, "0.01")}, market.CodeTokenInUse, "token 101 already belongs to a market"},
		{"YES and NO are different tokens", Command{Market: cond2, Spec: spec(yes2, yes2, "0.01")}, market.CodeTokenInUse, ""},
		{"the tick is one of the four tick sizes", Command{Market: cond2, Spec: spec(yes2, no2, "0.02")}, market.CodeBadRequest, "invalid tick size"},
		{"the condition id is required", Command{Spec: spec(yes2, no2, "0.01")}, market.CodeBadRequest, "invalid market"},
		{"both token ids are required", Command{Market: cond2, Spec: spec(yes2, "", "0.01")}, market.CodeBadRequest, "invalid market"},
		{"the fee rate is at most 10000 bps", Command{Market: cond2, Spec: func() MarketSpec { s := spec(yes2, no2, "0.01"); s.FeeBps = 10_001; return s }()},
			market.CodeBadRequest, "invalid fee rate"},
		{"the minimum size is not negative", Command{Market: cond2, Spec: func() MarketSpec { s := spec(yes2, no2, "0.01"); s.MinSize = -1; return s }()},
			market.CodeBadRequest, "invalid minimum order size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			tt.cmd.Kind = CreateMarket
			h.fails(tt.cmd, tt.code, tt.msg)
		})
	}
	t.Run("update of an unknown market is refused", func(t *testing.T) {
		h := newHarness(t)
		h.fails(Command{Kind: UpdateMarket, Market: "0xnone", Spec: spec(yes, no, "0.01")}, market.CodeMarketNotFound, "market not found")
		h.fails(Command{Kind: UpdateMarket, Market: cond, Spec: spec(yes, no, "0.5")}, market.CodeBadRequest, "invalid tick size")
	})
	t.Run("a finer tick keeps resting orders and allows finer prices", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "10")
		h.place(alice, yes, market.Sell, "0.6", "5")
		h.place(bob, yes, market.Buy, "0.5", "5")
		evs := h.ok(Command{Kind: UpdateMarket, Market: cond, Spec: spec(yes, no, "0.001")})
		if evs[0].Kind != MarketUpdated || evs[0].OldTick != d("0.01") || evs[0].Tick != d("0.001") {
			t.Fatalf("event %+v", evs[0])
		}
		h.place(carol, yes, market.Buy, "0.505", "5")
		h.wantLevels(yes, market.Buy, "0.505x5", "0.5x5")
		h.wantLevels(yes, market.Sell, "0.6x5")
		h.ok(h.order(alice, yes, market.Sell, "0.5", "5"))
		h.wantLevels(yes, market.Buy, "0.5x5")
		h.wantTokens(carol, yes, "5", "0")
	})
	t.Run("a coarser tick keeps resting orders at their finer prices", func(t *testing.T) {
		h := newHarness(t)
		h.ok(Command{Kind: CreateMarket, Market: cond2, Spec: spec(yes2, no2, "0.001")})
		h.place(bob, yes2, market.Buy, "0.505", "5")
		h.ok(Command{Kind: UpdateMarket, Market: cond2, Spec: spec(yes2, no2, "0.01")})
		h.wantLevels(yes2, market.Buy, "0.505x5")
		c := h.order(carol, yes2, market.Buy, "0.505", "5")
		h.fails(c, market.CodeTickSize, "order "+string(c.Order)+" is invalid. Price (0.505) breaks minimum tick size rule: 0.01")
		h.ok(Command{Kind: Split, Owner: alice, Market: cond2, Amount: d("5")})
		h.ok(h.order(alice, yes2, market.Sell, "0.5", "5"))
		h.wantColl(alice, "997.525", "0") // 1000 − 5 split + 5 × 0.505
	})
	t.Run("closing a market cancels its open orders; reopening takes orders again", func(t *testing.T) {
		h := newHarness(t)
		id := h.place(alice, yes, market.Buy, "0.5", "5")
		s := spec(yes, no, "0.01")
		s.Closed = true
		evs := h.ok(Command{Kind: UpdateMarket, Market: cond, Spec: s})
		if c := find(evs, OrderCancelled); len(c) != 1 || c[0].Reason != ReasonClosed || c[0].Order != id {
			t.Fatalf("events %v", kinds(evs))
		}
		h.fails(h.order(alice, yes, market.Buy, "0.5", "5"), market.CodeMarketNotAccepting, "")
		s.Closed = false
		h.ok(Command{Kind: UpdateMarket, Market: cond, Spec: s})
		h.place(alice, yes, market.Buy, "0.5", "5")
	})
	t.Run("pausing a market freezes its book without cancelling", func(t *testing.T) {
		h := newHarness(t)
		id := h.place(alice, yes, market.Buy, "0.5", "5")
		s := spec(yes, no, "0.01")
		s.AcceptingOrders = false
		h.ok(Command{Kind: UpdateMarket, Market: cond, Spec: s})
		h.wantStatus(id, market.StatusLive)
		h.ok(Command{Kind: Cancel, Order: id, Owner: alice})
	})
}

// TestEventStream checks sequence numbers, the clock and how book and balance changes
// are reported.
func TestEventStream(t *testing.T) {
	t.Run("sequence numbers increase by one across commands, rejections included", func(t *testing.T) {
		h := newHarness(t)
		h.place(alice, yes, market.Buy, "0.5", "5")
		h.fails(Command{Kind: Withdraw, Owner: dave, Amount: 1}, market.CodeInsufficientWithdraw, "")
		h.split(bob, "5")
		h.ok(h.order(bob, yes, market.Sell, "0.5", "5"))
		for i, ev := range h.log {
			if ev.Seq != uint64(i+1) {
				t.Fatalf("event %d has seq %d", i, ev.Seq)
			}
		}
		if h.e.Seq() != uint64(len(h.log)) {
			t.Fatalf("Seq() %d, %d events", h.e.Seq(), len(h.log))
		}
	})
	t.Run("an earlier command time is applied at the engine's time", func(t *testing.T) {
		h := newHarness(t)
		evs := h.ok(Command{Kind: Deposit, Owner: dave, Amount: 1, Time: h.now - 5000})
		if evs[0].Time != h.now || h.e.Time() != h.now {
			t.Fatalf("event time %d, engine time %d, want %d", evs[0].Time, h.e.Time(), h.now)
		}
	})
	t.Run("book changes are reported once per level with the final size and top of book", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "20")
		h.place(alice, yes, market.Sell, "0.5", "5")
		h.place(alice, yes, market.Sell, "0.5", "5")
		h.place(alice, yes, market.Sell, "0.55", "10")
		evs := h.ok(h.order(bob, yes, market.Buy, "0.55", "12"))
		b := find(evs, BookChanged)
		if len(b) != 2 || b[0].Price != d("0.5") || b[0].Size != 0 || b[1].Price != d("0.55") || b[1].Size != d("8") ||
			b[0].BestAsk != d("0.55") || b[0].BestBid != 0 || b[0].Side != market.Sell || b[0].Token != yes || b[0].Other != no {
			t.Fatalf("book events %+v", b)
		}
		yesCh, noCh, ok := b[1].LevelChanges()
		if !ok || yesCh.Price != d("0.55") || noCh.Token != no || noCh.Side != market.Buy || noCh.Price != d("0.45") ||
			noCh.Size != d("8") || noCh.BestBid != d("0.45") || noCh.BestAsk != 0 {
			t.Fatalf("level changes %+v %+v", yesCh, noCh)
		}
	})
	t.Run("balance changes are reported once per balance with final values", func(t *testing.T) {
		h := newHarness(t)
		h.split(alice, "20")
		h.place(alice, yes, market.Sell, "0.5", "5")
		h.place(alice, yes, market.Sell, "0.55", "10")
		evs := h.ok(h.order(bob, yes, market.Buy, "0.55", "12"))
		seen := map[[2]string]bool{}
		for _, ev := range find(evs, BalanceChanged) {
			k := [2]string{ev.Owner.String(), string(ev.Token)}
			if seen[k] {
				t.Fatalf("balance %v reported twice", k)
			}
			seen[k] = true
			if ev.Owner == alice && ev.Token == "" && ev.Available != d("986.35") {
				t.Fatalf("alice collateral %s", ev.Available)
			}
		}
		if len(seen) != 4 {
			t.Fatalf("balances %v", seen)
		}
	})
	t.Run("a rejection's event carries its catalog code", func(t *testing.T) {
		h := newHarness(t)
		evs, _ := h.do(Command{Kind: Withdraw, Owner: dave, Amount: 1})
		if err := evs[0].Err(); err == nil || err.Code != market.CodeInsufficientWithdraw || err.Status != 400 {
			t.Fatalf("Err() %v", err)
		}
	})
	t.Run("an unknown command kind is refused", func(t *testing.T) {
		h := newHarness(t)
		h.fails(Command{Kind: 99}, market.CodeBadRequest, "invalid command kind")
	})
}

// TestAmountsAreExact checks the money rules the engine relies on: decimal text that is
// not exactly representable is refused rather than rounded, every price on any tick
// times any whole number of lots is a whole number of micro-units, and the two legs of a
// mint or merge add up to the size exactly.
func TestAmountsAreExact(t *testing.T) {
	t.Run("decimal text that is not exactly representable is refused", func(t *testing.T) {
		for _, s := range []string{"0.1234567", "1e-6", "-1", "0.5.5", " 1", ""} {
			if _, err := market.ParseMicros(s); err == nil {
				t.Errorf("%q was accepted", s)
			}
		}
		if v, err := market.ParseMicros("0.1234560"); err != nil || v != 123456 {
			t.Errorf("trailing zero: %v %v", v, err)
		}
	})
	t.Run("price × size is a whole number of micro-units on every tick", func(t *testing.T) {
		sizes := []market.Micros{market.Lot, 3 * market.Lot, 7 * market.Lot, market.One + market.Lot, 12_345 * market.Lot, market.MaxMicros / market.Lot * market.Lot}
		for _, tick := range market.TickSizes {
			for p := tick; p < market.One; p += tick {
				for _, s := range sizes {
					n := notional(p, s)
					back, _ := market.MulDiv(n, market.One, s)
					if n2, _ := market.MulDiv(p, s, market.One); n != n2 || back != p {
						t.Fatalf("tick %s: %s × %s = %s is not exact", tick, p, s, n)
					}
					if notional(p, s)+notional(market.One-p, s) != s {
						t.Fatalf("legs of %s at %s do not add up", s, p)
					}
				}
			}
		}
	})
	t.Run("the fee is rounded down and never exceeds a seller's proceeds", func(t *testing.T) {
		for _, bps := range []uint32{1, 3, 100, 10_000} {
			for p := market.Micros(100); p < market.One; p += 900 {
				for _, s := range []market.Micros{market.Lot, 101 * market.Lot, 99_999 * market.Lot} {
					f := feeOf(bps, p, s)
					q := min(p, market.One-p)
					exact, _ := market.MulDiv(market.Micros(bps)*q, s, feeDivisor)
					if f != exact || f > notional(p, s) || f > maxFeeOf(bps, p, s) {
						t.Fatalf("fee(%d bps, %s, %s) = %s", bps, p, s, f)
					}
				}
			}
		}
	})
}

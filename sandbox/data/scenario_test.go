package data

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// scenario drives a scripted sequence of orders, splits, merges, a resolution and
// redemptions through a real host, and books into the model the fills that the
// exchange's rules imply (written out by hand below: maker price, taker average, the
// documented taker fee). Checks made along the way: mergeable after the split,
// redeemable after the resolution.
//
//	day 0  alice BUY YES 100 @0.40 (rests); bob BUY NO 100 @0.60 → mint at 0.40/0.60
//	       carol BUY YES 50 @0.55 (rests); alice SELL YES 50 @0.55 → transfer
//	day 5  bob splits 40 in beta; carol BUY YES 20 @0.30 (rests); bob SELL YES 20
//	       @0.30 → taker fee floor(200 × min(0.3, 0.7) × 20 / 10⁴) = 0.12; bob merges 20
//	day 9  dave BUY YES 10 @0.50 and BUY NO 10 @0.40 (alpha quoted 0.50 / 0.60 → mark
//	       0.55); beta resolves YES; carol and bob redeem
func scenario(t *testing.T, r *rig) *model {
	m := newModel()
	t0 := r.now.Load()
	for _, w := range []market.Address{alice, bob, carol, dave} {
		r.deposit(w, 1000)
	}

	r.order(alice, "alpha", market.Yes, market.Buy, "0.40", "100")
	r.order(bob, "alpha", market.No, market.Buy, "0.60", "100")
	m.fill(t0, alice, "alpha", market.Yes, market.Buy, "0.40", "100", "0")
	m.fill(t0, bob, "alpha", market.No, market.Buy, "0.60", "100", "0")

	r.order(carol, "alpha", market.Yes, market.Buy, "0.55", "50")
	r.order(alice, "alpha", market.Yes, market.Sell, "0.55", "50")
	m.fill(t0, carol, "alpha", market.Yes, market.Buy, "0.55", "50", "0")
	m.fill(t0, alice, "alpha", market.Yes, market.Sell, "0.55", "50", "0")

	t5 := t0 + 5*day
	r.now.Store(t5)
	beta := r.market("beta")
	r.submit(exchange.Command{Kind: exchange.Split, Owner: bob, Market: beta.Condition, Amount: 40 * market.One})
	m.split(t5, bob, "beta", "40")
	var merg []api.Position
	r.get("/positions?mergeable=true&user="+bob.String(), &merg)
	if len(merg) != 2 || !merg[0].Mergeable || merg[0].ConditionID != beta.Condition {
		t.Fatalf("after the split bob's beta tokens are mergeable: %+v", merg)
	}
	r.order(carol, "beta", market.Yes, market.Buy, "0.30", "20")
	r.order(bob, "beta", market.Yes, market.Sell, "0.30", "20")
	m.fill(t5, carol, "beta", market.Yes, market.Buy, "0.30", "20", "0")
	m.fill(t5, bob, "beta", market.Yes, market.Sell, "0.30", "20", "0.12")
	r.submit(exchange.Command{Kind: exchange.Merge, Owner: bob, Market: beta.Condition, Amount: 20 * market.One})
	m.merge(t5, bob, "beta", "20")

	t9 := t0 + 9*day
	r.now.Store(t9)
	r.order(dave, "alpha", market.Yes, market.Buy, "0.50", "10")
	r.order(dave, "alpha", market.No, market.Buy, "0.40", "10")
	r.submit(exchange.Command{Kind: exchange.Resolve, Market: beta.Condition, Winner: market.Yes})
	var red []api.Position
	r.get("/positions?redeemable=true&user="+carol.String(), &red)
	if len(red) != 1 || red[0].Asset != beta.Tokens[market.Yes] || red[0].CurPrice != api.Decimal(market.One) {
		t.Fatalf("after the resolution carol's beta YES is redeemable at 1: %+v", red)
	}
	r.get("/positions?redeemable=true&user="+bob.String(), &red)
	if len(red) != 0 {
		t.Fatalf("bob's losing beta NO is not redeemable: %+v", red)
	}
	r.submit(exchange.Command{Kind: exchange.Redeem, Owner: carol, Market: beta.Condition})
	m.redeem(t9, carol, "beta", market.Yes)
	r.submit(exchange.Command{Kind: exchange.Redeem, Owner: bob, Market: beta.Condition})
	m.redeem(t9, bob, "beta", market.Yes)
	r.now.Store(t9 + 3_600_000)
	return m
}

// marks are the prices the scenario leaves: alpha quoted 0.50/0.60 (mid 0.55), beta
// resolved YES.
var marks = map[string][2]string{"alpha": {"0.55", "0.45"}, "beta": {"1", "0"}}

func decOf(d api.Decimal) decimal.Decimal { return market.Micros(d).Decimal() }

func TestPositionsMatchTheIndependentModel(t *testing.T) {
	r := newRig(t, "")
	defer r.stop()
	m := scenario(t, r)
	cases := []struct {
		who  market.Address
		slug string
		o    market.Outcome
	}{
		{alice, "alpha", market.Yes}, {bob, "alpha", market.No}, {carol, "alpha", market.Yes},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%s", c.who, c.slug, c.o), func(t *testing.T) {
			var got []api.Position
			if st := r.get("/positions?user="+c.who.String(), &got); st != 200 {
				t.Fatalf("status %d", st)
			}
			if len(got) != 1 {
				t.Fatalf("%d open positions, want 1: %+v", len(got), got)
			}
			g := got[0]
			w := m.position(c.who, c.slug, c.o, marks[c.slug][c.o])
			mk := r.market(c.slug)
			checks := []struct {
				name string
				got  api.Decimal
				want decimal.Decimal
			}{
				{"size", g.Size, w.size}, {"avgPrice", g.AvgPrice, w.avgPrice}, {"initialValue", g.InitialValue, w.initial},
				{"currentValue", g.CurrentValue, w.current}, {"cashPnl", g.CashPnl, w.cashPnl},
				{"percentPnl", g.PercentPnl, w.percentPnl}, {"realizedPnl", g.RealizedPnl, w.realized},
				{"percentRealizedPnl", g.PercentRealizedPnl, w.percentRealized}, {"curPrice", g.CurPrice, w.curPrice},
				{"totalBought", g.TotalBought, w.bought},
			}
			for _, ch := range checks {
				if !decOf(ch.got).Equal(ch.want) {
					t.Errorf("%s = %s, want %s", ch.name, decOf(ch.got), ch.want)
				}
			}
			if g.Asset != mk.Tokens[c.o] || g.OppositeAsset != mk.Tokens[c.o.Other()] || g.OutcomeIndex != int(c.o) ||
				g.Outcome != mk.Outcomes[c.o] || g.OppositeOutcome != mk.Outcomes[c.o.Other()] || g.Title != mk.Question ||
				g.Slug != mk.Slug || g.ConditionID != mk.Condition || g.ProxyWallet != c.who || g.Redeemable || g.Mergeable {
				t.Errorf("descriptive fields: %+v", g)
			}
		})
	}
	// Closed positions keep their realized PnL for the market-positions view.
	beta := r.market("beta")
	var closed []api.MarketPosition
	r.get("/v1/market-positions?status=closed&sortBy=CASHPNL&sortDirection=ASC&market="+string(beta.Condition), &closed)
	want := []struct {
		who market.Address
		o   market.Outcome
	}{{bob, market.No}, {bob, market.Yes}, {carol, market.Yes}} // realized −10, −4.12, 14
	if len(closed) != len(want) {
		t.Fatalf("closed beta positions: %+v", closed)
	}
	for i, w := range want {
		mp := m.p(w.who, "beta", w.o)
		if closed[i].ProxyWallet != w.who || closed[i].OutcomeIndex != int(w.o) || !decOf(closed[i].CashPnl).Equal(mp.realized) ||
			closed[i].Size != 0 {
			t.Errorf("closed[%d] = %+v, want %s %s realized %s", i, closed[i], w.who, w.o, mp.realized)
		}
	}
}

func TestMarketPositionsRankHoldersOfOneMarket(t *testing.T) {
	r := newRig(t, "")
	defer r.stop()
	m := scenario(t, r)
	alpha := r.market("alpha")
	var got []api.MarketPosition
	if st := r.get("/v1/market-positions?market="+string(alpha.Condition), &got); st != 200 {
		t.Fatalf("status %d", st)
	}
	// SIZE descending, ties by address: bob NO 100, alice YES 50, carol YES 50.
	want := []struct {
		who market.Address
		o   market.Outcome
	}{{bob, market.No}, {alice, market.Yes}, {carol, market.Yes}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i, w := range want {
		e := m.position(w.who, "alpha", w.o, marks["alpha"][w.o])
		g := got[i]
		if g.ProxyWallet != w.who || g.OutcomeIndex != int(w.o) || !decOf(g.Size).Equal(e.size) ||
			!decOf(g.CashPnl).Equal(e.cashPnl) || !decOf(g.AvgPrice).Equal(e.avgPrice) || !decOf(g.CurPrice).Equal(e.curPrice) ||
			g.Name == "" {
			t.Errorf("[%d] = %+v, want %s %s %+v", i, g, w.who, w.o, e)
		}
	}
	var one []api.MarketPosition
	r.get("/v1/market-positions?market="+string(alpha.Condition)+"&user="+carol.String(), &one)
	if len(one) != 1 || one[0].ProxyWallet != carol {
		t.Fatalf("user filter: %+v", one)
	}
	var byPnl []api.MarketPosition
	r.get("/v1/market-positions?sortBy=CASHPNL&market="+string(alpha.Condition), &byPnl)
	if byPnl[0].ProxyWallet != alice || byPnl[2].ProxyWallet != bob {
		t.Fatalf("by cash PnL: %+v", byPnl)
	}
	if st, body := r.raw("GET", "/v1/market-positions?market=0x"+fmt.Sprintf("%064d", 7)); st != 404 || body != `{"error":"market not found"}`+"\n" {
		t.Fatalf("unknown market: %d %s", st, body)
	}
}

func TestLeaderboardRanksMatchTheIndependentModel(t *testing.T) {
	r := newRig(t, "")
	defer r.stop()
	m := scenario(t, r)
	now := r.now.Load()
	for _, period := range []string{api.PeriodAll, api.Period1D, api.Period7D, api.Period30D} {
		for _, orderBy := range []string{api.OrderByVol, api.OrderByPnl} {
			t.Run(period+"/"+orderBy, func(t *testing.T) {
				from := int64(0)
				if p := api.PeriodMillis(period); p > 0 {
					from = now - p
				}
				want := m.board(from, orderBy, marks)
				var got []api.LeaderboardEntry
				if st := r.get("/v1/leaderboard?timePeriod="+period+"&orderBy="+orderBy, &got); st != 200 {
					t.Fatalf("status %d", st)
				}
				if len(got) != len(want) {
					t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
				}
				for i, w := range want {
					g := got[i]
					if g.Rank != i+1 || g.ProxyWallet != w.who || !decOf(g.Vol).Equal(w.vol) || !decOf(g.Pnl).Equal(w.pnl) {
						t.Errorf("#%d = %s vol %s pnl %s, want %s vol %s pnl %s", g.Rank, g.ProxyWallet, decOf(g.Vol),
							decOf(g.Pnl), w.who, w.vol, w.pnl)
					}
				}
			})
		}
	}
	// The ranks are the hand-derived ones of the scenario's comment, too.
	var all []api.LeaderboardEntry
	r.get("/v1/leaderboard?orderBy=pnl", &all)
	if len(all) != 3 || all[0].ProxyWallet != alice || all[1].ProxyWallet != carol || all[2].ProxyWallet != bob ||
		all[2].Pnl != api.Decimal(-29_120_000) {
		t.Fatalf("ALL by pnl: %+v", all)
	}
	// A user filter keeps the wallet's true rank.
	var bobOnly []api.LeaderboardEntry
	r.get("/v1/leaderboard?orderBy=pnl&user="+bob.String(), &bobOnly)
	if len(bobOnly) != 1 || bobOnly[0].Rank != 3 {
		t.Fatalf("user filter: %+v", bobOnly)
	}
	var byName []api.LeaderboardEntry
	r.get("/v1/leaderboard?userName="+url.QueryEscape(all[1].Name[:4]), &byName)
	if len(byName) == 0 || byName[0].ProxyWallet != carol && byName[0].Name[:4] != all[1].Name[:4] {
		t.Fatalf("userName search: %+v", byName)
	}
}

func TestActivityIsOneChronologicalStream(t *testing.T) {
	r := newRig(t, "")
	defer r.stop()
	scenario(t, r)
	beta := r.market("beta")
	var got []api.Activity
	r.get("/activity?user="+bob.String(), &got)
	wantTypes := []string{"REDEEM", "MERGE", "TRADE", "SPLIT", "TRADE"}
	if len(got) != len(wantTypes) {
		t.Fatalf("bob's activity: %+v", got)
	}
	for i, w := range wantTypes {
		if got[i].Type != w {
			t.Errorf("[%d] type %s, want %s", i, got[i].Type, w)
		}
		if i > 0 && got[i].Timestamp > got[i-1].Timestamp {
			t.Errorf("not newest first at %d", i)
		}
	}
	sell := got[2]
	if sell.Side != "SELL" || sell.Price != 300_000 || sell.Size != 20*api.Decimal(market.One) || sell.UsdcSize != 6*api.Decimal(market.One) ||
		sell.Asset != beta.Tokens[market.Yes] || sell.Outcome != "Yes" || sell.ConditionID != beta.Condition ||
		sell.EventSlug != "ev-beta" || len(sell.TransactionHash) != 66 {
		t.Errorf("the fee-paying sale: %+v", sell)
	}
	if red := got[0]; red.Asset != beta.Tokens[market.Yes] || red.Size != 20*api.Decimal(market.One) || red.UsdcSize != 0 {
		t.Errorf("bob's redemption burned 20 NO for nothing: %+v", red)
	}
	// Maker and taker rows of one trade share its hash.
	var carolRows []api.Activity
	r.get("/activity?type=TRADE&market="+string(beta.Condition)+"&user="+carol.String(), &carolRows)
	if len(carolRows) != 1 || carolRows[0].TransactionHash != sell.TransactionHash {
		t.Errorf("maker row %+v does not share the trade hash %s", carolRows, sell.TransactionHash)
	}
	cases := []struct {
		query string
		types []string
	}{
		{"&type=trade,split", []string{"TRADE", "SPLIT", "TRADE"}},
		{"&side=BUY", []string{"TRADE"}},
		{"&sortDirection=ASC", []string{"TRADE", "SPLIT", "TRADE", "MERGE", "REDEEM"}},
		{"&sortBy=CASH&sortDirection=ASC&type=TRADE", []string{"TRADE", "TRADE"}},
		{"&limit=2&offset=1", []string{"MERGE", "TRADE"}},
		{fmt.Sprintf("&start=%d", (r.now.Load()-2*day)/1000), []string{"REDEEM"}},
		{fmt.Sprintf("&end=%d", (r.now.Load()-4*day-3_600_000)/1000), []string{"MERGE", "TRADE", "SPLIT", "TRADE"}},
		{"&eventId=" + r.cat.Events()[0].ID, []string{"TRADE"}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			var rows []api.Activity
			if st := r.get("/activity?user="+bob.String()+c.query, &rows); st != 200 {
				t.Fatalf("status %d", st)
			}
			if len(rows) != len(c.types) {
				t.Fatalf("got %d rows, want %v: %+v", len(rows), c.types, rows)
			}
			for i, w := range c.types {
				if rows[i].Type != w {
					t.Errorf("[%d] %s, want %s", i, rows[i].Type, w)
				}
			}
		})
	}
	var cash []api.Activity
	r.get("/activity?sortBy=CASH&type=TRADE&user="+bob.String(), &cash)
	if cash[0].UsdcSize != 60*api.Decimal(market.One) {
		t.Fatalf("CASH DESC: %+v", cash)
	}
}

// The index's holdings equal the exchange's ledger (available + reserved) for every
// wallet and token after the scenario.
func TestIndexSizesEqualTheLedger(t *testing.T) {
	r := newRig(t, "")
	defer r.stop()
	scenario(t, r)
	checkLedger(t, r)
}

func checkLedger(t *testing.T, r *rig) {
	t.Helper()
	type bal struct {
		a market.Address
		t market.TokenID
	}
	ledger := map[bal]market.Micros{}
	if err := r.h.Read(r.ctx, func(e *exchange.Engine) {
		for _, a := range e.Accounts(nil) {
			for _, h := range e.Holdings(a, nil) {
				ledger[bal{a, h.Token}] = h.Available + h.Reserved
			}
		}
	}); err != nil {
		t.Fatalf("reading the ledger: %v", err)
	}
	r.ix.mu.RLock()
	defer r.ix.mu.RUnlock()
	for a, u := range r.ix.users {
		for tok, h := range u.pos {
			if got, want := h.Size, ledger[bal{a, tok}]; got != want {
				t.Errorf("%s %s: index %s, ledger %s", a, tok, got, want)
			}
			delete(ledger, bal{a, tok})
		}
	}
	for k, v := range ledger {
		if v != 0 {
			t.Errorf("%s holds %s of %s unknown to the index", k.a, v, k.t)
		}
	}
}

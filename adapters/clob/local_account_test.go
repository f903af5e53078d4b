package clob_test

import (
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// TestLocalAccount exercises the account endpoints and the conditional-token
// operations: balances before and after a split, the account state, the balance
// reconciliation, notifications, merge, and redeem after a resolution.
func TestLocalAccount(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 60*time.Second)
	c, other := l.client("acct"), l.client("acct-other")
	fed := l.market(fedSlug)
	yes, no := fed.Tokens[market.Yes], fed.Tokens[market.No]

	bal, err := c.BalanceAllowance(ctx, clob.BalanceParams{})
	if err != nil || bal.Balance.String() != "1000" || bal.Allowance.String() != "1000" {
		t.Fatalf("BalanceAllowance = %+v, %v", bal, err)
	}
	if err := c.UpdateBalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetCollateral}); err != nil {
		t.Fatal(err)
	}
	split, err := c.Split(ctx, clob.CTFRequest{TokenID: yes, Size: d("30")})
	if err != nil || !split.Success || split.ConditionID != fed.Condition || split.Amount.String() != "30" {
		t.Fatalf("Split = %+v, %v", split, err)
	}
	tok, err := c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetConditional, TokenID: no})
	if err != nil || tok.Balance.String() != "30" {
		t.Fatalf("NO balance after the split = %+v, %v", tok, err)
	}
	if _, err := c.Split(ctx, clob.CTFRequest{TokenID: yes}); !is(err, market.CodeTokenIDAndSizeRequired) {
		t.Fatalf("split without a size: %v", err)
	}
	merged, err := c.Merge(ctx, clob.CTFRequest{ConditionID: fed.Condition, Size: d("10")})
	if err != nil || merged.Amount.String() != "10" {
		t.Fatalf("Merge = %+v, %v", merged, err)
	}

	// A trade between the two wallets, for the state, the reconciliation and the
	// notifications: c sells 5 YES to other's bid.
	place(t, other, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.6"), Size: d("5")})
	if _, err := c.PlaceMarketOrder(ctx, clob.MarketOrderArgs{Token: yes, Side: market.Sell, Amount: d("5")}); err != nil {
		t.Fatal(err)
	}
	raw, err := c.AccountState(ctx)
	if err != nil || !json.Valid(raw) {
		t.Fatalf("AccountState: %v", err)
	}
	state, err := c.AccountStateTyped(ctx)
	if err != nil || state.Address != c.Address().String() || state.Balance.String() != "983" || !state.Registered ||
		len(state.RecentTrades) != 1 || len(state.ConditionalTokenBalances) != 2 {
		t.Fatalf("AccountStateTyped = %+v, %v", state, err)
	}
	rec, err := c.BalanceReconciliation(ctx)
	if err != nil || rec.Balance.String() != "983" || rec.NetUSDCTaker.String() != "3" {
		t.Fatalf("BalanceReconciliation = %+v, %v", rec, err)
	}
	notes, err := c.Notifications(ctx)
	if err != nil || len(notes) != 1 || notes[0].Type != "TRADE_CONFIRMED" || notes[0].Owner != c.APIKey() {
		t.Fatalf("Notifications = %+v, %v", notes, err)
	}
	var payload struct {
		TradeID string `json:"tradeId"`
	}
	if err := json.Unmarshal(notes[0].Payload, &payload); err != nil || payload.TradeID == "" {
		t.Fatalf("payload %s: %v", notes[0].Payload, err)
	}
	if err := c.DeleteNotifications(ctx); err != nil {
		t.Fatal(err)
	}
	if notes, err = c.Notifications(ctx); err != nil || len(notes) != 0 {
		t.Fatalf("Notifications after delete = %+v, %v", notes, err)
	}

	// Resolution: YES wins; c holds 15 YES and 20 NO.
	if _, err := c.Redeem(ctx, clob.CTFRequest{ConditionID: fed.Condition}); !errors.Is(err, market.Errorf(market.CodeMarketNotResolved)) {
		t.Fatalf("redeem before resolution: %v", err)
	}
	if resp := l.internalPost("/internal/markets/resolve", `{"market":"`+string(fed.Condition)+`","outcome":"yes"}`); resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("resolve: %d %s", resp.StatusCode, b)
	}
	red, err := c.Redeem(ctx, clob.CTFRequest{TokenID: no})
	if err != nil || red.Amount.String() != "15" {
		t.Fatalf("Redeem = %+v, %v", red, err)
	}
	if _, err := c.PlaceOrder(ctx, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.5"), Size: d("5")}); !errors.Is(err, market.ErrMarketResolved) && !errors.Is(err, market.ErrMarketNotAccepting) {
		t.Fatalf("order on a resolved market: %v", err)
	}
}

// TestLocalDataService exercises the data service after a few trades: positions,
// market positions, activity and the leaderboard, one page and iterated.
func TestLocalDataService(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 60*time.Second)
	maker, taker := l.client("data-maker"), l.client("data-taker")
	fed := l.market(fedSlug)
	yes := fed.Tokens[market.Yes]
	if _, err := maker.Split(ctx, clob.CTFRequest{ConditionID: fed.Condition, Size: d("15")}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		place(t, maker, clob.OrderArgs{Token: yes, Side: market.Sell, Price: d("0.5"), Size: d("5")})
	}
	if _, err := taker.PlaceMarketOrder(ctx, clob.MarketOrderArgs{Token: yes, Side: market.Buy, Amount: d("6")}); err != nil {
		t.Fatal(err)
	}
	data := taker.Data()
	pos, err := data.PositionsPage(ctx, api.PositionsQuery{User: taker.Address()})
	if err != nil || len(pos) != 1 || pos[0].Asset != yes || pos[0].Size.String() != "12" || pos[0].AvgPrice.String() != "0.5" {
		t.Fatalf("PositionsPage = %+v, %v", pos, err)
	}
	if all := collect(t, data.Positions(ctx, api.PositionsQuery{User: maker.Address(), Limit: 1})); len(all) != 2 {
		t.Fatalf("maker positions in pages of 1: %d, want 2 (YES and NO)", len(all))
	}
	mps, err := data.MarketPositionsPage(ctx, api.MarketPositionsQuery{Market: fed.Condition})
	if err != nil || len(mps) < 2 {
		t.Fatalf("MarketPositionsPage = %+v, %v", mps, err)
	}
	if all := collect(t, data.MarketPositions(ctx, api.MarketPositionsQuery{Market: fed.Condition, Limit: 1})); len(all) != len(mps) {
		t.Fatalf("MarketPositions iterated %d, one page held %d", len(all), len(mps))
	}
	act := collect(t, data.Activity(ctx, api.ActivityQuery{User: maker.Address(), Limit: 2}))
	if len(act) != 4 { // a split and three trades (one per maker order)
		t.Fatalf("maker activity: %d rows, want 4: %+v", len(act), act)
	}
	if page, err := data.ActivityPage(ctx, api.ActivityQuery{User: taker.Address()}); err != nil || len(page) != 1 || page[0].Type != api.ActivityTrade {
		t.Fatalf("ActivityPage = %+v, %v", page, err)
	}
	lb := collect(t, data.Leaderboard(ctx, api.LeaderboardQuery{Limit: 1}))
	if len(lb) < 2 || lb[0].Rank != 1 {
		t.Fatalf("Leaderboard = %+v", lb)
	}
	if page, err := data.LeaderboardPage(ctx, api.LeaderboardQuery{OrderBy: api.OrderByVol}); err != nil || len(page) != len(lb) {
		t.Fatalf("LeaderboardPage = %+v, %v", page, err)
	}
	_, err = data.MarketPositionsPage(ctx, api.MarketPositionsQuery{Market: "0x12"})
	var ae *clob.APIError
	if !is(err, market.CodeBadRequest) || !errors.As(err, &ae) || ae.Service != clob.ServiceData || ae.Message != "invalid market" {
		t.Fatalf("a bad market id: %v", err)
	}
}

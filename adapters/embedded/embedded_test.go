package embedded_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/embedded"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

const (
	cond  market.ConditionID = "0x00000000000000000000000000000000000000000000000000000000000000c1"
	yes   market.TokenID     = "101"
	no    market.TokenID     = "102"
	start int64              = 1_700_000_000_000
)

var (
	wallet = market.Address{0xaa}
	maker  = market.Address{0xbb}
)

func mic(s string) market.Micros {
	m, err := market.ParseMicros(s)
	if err != nil {
		panic(err)
	}
	return m
}

// script lists one market (fee 200 bps), funds a maker with YES and NO, and rests
// three asks and a bid; then applies extra commands at their times.
func script(extra ...exchange.Command) *embedded.ScriptFlow {
	listing := []exchange.Command{
		{Kind: exchange.CreateMarket, Market: cond, Spec: exchange.MarketSpec{Tokens: [2]market.TokenID{yes, no}, Slug: "m",
			TickSize: 10_000, MinSize: 5 * market.One, FeeBps: 200, Active: true, AcceptingOrders: true}},
		{Kind: exchange.Deposit, Owner: maker, Amount: 10_000 * market.One},
		{Kind: exchange.Split, Owner: maker, Market: cond, Amount: 1000 * market.One},
		{Kind: exchange.Place, Owner: maker, Order: "a1", Token: yes, Side: market.Sell, Price: mic("0.48"), Size: mic("10"), FeeRateBps: 200},
		{Kind: exchange.Place, Owner: maker, Order: "a2", Token: no, Side: market.Buy, Price: mic("0.51"), Size: mic("10"), FeeRateBps: 200}, // a YES ask at 0.49
		{Kind: exchange.Place, Owner: maker, Order: "a3", Token: yes, Side: market.Sell, Price: mic("0.50"), Size: mic("20"), FeeRateBps: 200},
		{Kind: exchange.Place, Owner: maker, Order: "b1", Token: yes, Side: market.Buy, Price: mic("0.45"), Size: mic("50"), FeeRateBps: 200},
	}
	return &embedded.ScriptFlow{Listing: listing, Commands: extra}
}

// collect runs the feed until it ends (Config.End) and returns a copy of every
// event.
func collect(t *testing.T, f *embedded.Feed) []market.Event {
	t.Helper()
	var out []market.Event
	err := f.Run(context.Background(), func(ev *market.Event) bool {
		e := *ev
		e.Bids = append([]market.Level(nil), ev.Bids...)
		e.Asks = append([]market.Level(nil), ev.Asks...)
		e.Changes = append([]market.LevelChange(nil), ev.Changes...)
		out = append(out, e)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFeedStartsWithBookSnapshotsOfBothTokens(t *testing.T) {
	x, err := embedded.New(embedded.Config{Start: start, End: start + 1}, script())
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, x.Feed([]market.ConditionID{cond}, wallet))
	if len(evs) < 2 || evs[0].Kind != market.EventBook || evs[1].Kind != market.EventBook {
		t.Fatalf("first events %v", evs)
	}
	yesBook, noBook := evs[0], evs[1]
	if yesBook.Token != yes || noBook.Token != no {
		t.Fatalf("tokens %s %s", yesBook.Token, noBook.Token)
	}
	if len(yesBook.Asks) != 3 || yesBook.Asks[0].Price != mic("0.48") || yesBook.Bids[0].Price != mic("0.45") {
		t.Fatalf("YES book %+v", yesBook)
	}
	if noBook.Bids[0].Price != mic("0.52") || noBook.Asks[0].Price != mic("0.55") {
		t.Fatalf("NO book is not the mirror: %+v", noBook)
	}
}

// TestOwnTradesBecomeFillsAsTheEngineSettlesThem places a crossing order through the
// venue and checks that the feed's events, applied to a market.State, give the
// engine's own balances: one fill per maker level at the maker's price in our
// token, fees that sum to the engine's.
func TestOwnTradesBecomeFillsAsTheEngineSettlesThem(t *testing.T) {
	x, err := embedded.New(embedded.Config{Start: start}, script())
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Fund(wallet, 100*market.One); err != nil {
		t.Fatal(err)
	}
	x.SetEnd(start + 10)
	feed := x.Feed([]market.ConditionID{cond}, wallet)
	v := x.Venue(wallet)
	ctx := context.Background()
	p, _ := v.Prepare(ctx, agent.OrderRequest{ClientID: 1, Market: cond, Token: yes, Side: market.Buy, Price: mic("0.50"),
		Size: mic("30"), Type: market.GTC})
	o, err := v.Submit(ctx, &p)
	if err != nil {
		t.Fatal(err)
	}
	// 10 @0.48, 10 @0.49 (the NO bid, a mint), 10 of the 20 @0.50: all 30 at once.
	if o.Status != market.StatusMatched || o.Matched != mic("30") {
		t.Fatalf("Submit = %+v", o)
	}
	evs := collect(t, feed)
	var st market.State
	st.Init()
	st.Balance = 100 * market.One
	var fills []market.Fill
	var fees market.Micros
	for i := range evs {
		st.Apply(&evs[i])
		if evs[i].Kind == market.EventFill {
			fills = append(fills, evs[i].Fill)
			fees += evs[i].Fill.Fee
		}
	}
	want := []string{"0.48", "0.49", "0.5"}
	if len(fills) != 3 {
		t.Fatalf("fills %+v, want one per maker level", fills)
	}
	for i, f := range fills {
		if f.Price.String() != want[i] || f.Size != mic("10") || f.Role != market.Taker || f.Token != yes {
			t.Fatalf("fill %d: %+v", i, f)
		}
	}
	var engFee market.Micros
	var avail, res market.Micros
	var held market.Micros
	x.Read(func(eng *exchange.Engine) {
		avail, res = eng.Collateral(wallet)
		a, r := eng.TokenBalance(wallet, yes)
		held = a + r
		engFee, _ = eng.Collateral(market.Address{}) // the fee account
	})
	if fees != engFee {
		t.Fatalf("fills' fees %s, the engine charged %s", fees, engFee)
	}
	if st.Balance != avail || st.Reserved != res || st.Positions[yes].Size != held {
		t.Fatalf("state from events: balance %s reserved %s held %s; engine: %s %s %s", st.Balance, st.Reserved,
			st.Positions[yes].Size, avail, res, held)
	}
}

func TestHeartbeatTimeoutCancelsTheWalletsOrders(t *testing.T) {
	for _, beat := range []bool{true, false} {
		t.Run(map[bool]string{true: "beating", false: "silent"}[beat], func(t *testing.T) {
			// The maker adds a small bid every second for 30 s: an event a second.
			var steps []exchange.Command
			for s := int64(1); s <= 30; s++ {
				steps = append(steps, exchange.Command{Kind: exchange.Place, Time: start + s*1000, Owner: maker,
					Order: market.OrderID(rune('A' + s)), Token: yes, Side: market.Buy, Price: mic("0.30"), Size: mic("5"), FeeRateBps: 200})
			}
			x, err := embedded.New(embedded.Config{Start: start, End: start + 31_000}, script(steps...))
			if err != nil {
				t.Fatal(err)
			}
			x.Fund(wallet, 100*market.One)
			v := x.Venue(wallet)
			ctx := context.Background()
			v.Heartbeat(ctx)
			p, _ := v.Prepare(ctx, agent.OrderRequest{ClientID: 1, Market: cond, Token: yes, Side: market.Buy, Price: mic("0.40"), Size: mic("10")})
			if _, err := v.Submit(ctx, &p); err != nil {
				t.Fatal(err)
			}
			f := x.Feed([]market.ConditionID{cond}, wallet)
			f.Run(ctx, func(ev *market.Event) bool {
				if beat && ev.Time%5000 == 0 {
					v.Heartbeat(ctx)
				}
				return true
			})
			open, _ := v.OpenOrders(ctx)
			if got, want := len(open), map[bool]int{true: 1, false: 0}[beat]; got != want {
				t.Fatalf("%d open orders, want %d", got, want)
			}
		})
	}
}

func TestSimFlowIsDeterministicAndKeepsTheInvariants(t *testing.T) {
	runOnce := func() ([]market.Event, error) {
		f := embedded.NewSimFlow(7, 2, start, sim.Config{})
		x, err := embedded.New(embedded.Config{Start: start, End: start + 120_000}, f)
		if err != nil {
			return nil, err
		}
		var ids []market.ConditionID
		infos, _ := x.Markets(context.Background(), nil)
		for _, info := range infos {
			ids = append(ids, info.Condition)
		}
		evs := collect(t, x.Feed(ids, wallet))
		var cerr error
		x.Read(func(eng *exchange.Engine) { cerr = eng.Check() })
		return evs, cerr
	}
	a, err := runOnce()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := runOnce()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave different events")
	}
	kinds := map[market.EventKind]int{}
	for _, ev := range a {
		kinds[ev.Kind]++
	}
	if kinds[market.EventLastTrade] == 0 || kinds[market.EventPriceChange] == 0 || kinds[market.EventBook] != 4 {
		t.Fatalf("event kinds %v: want four book snapshots, trades and price changes", kinds)
	}
}

func TestVenueLooksOrdersUp(t *testing.T) {
	x, _ := embedded.New(embedded.Config{Start: start}, script())
	x.Fund(wallet, 100*market.One)
	v := x.Venue(wallet)
	ctx := context.Background()
	p, _ := v.Prepare(ctx, agent.OrderRequest{ClientID: 1, Market: cond, Token: yes, Side: market.Buy, Price: mic("0.40"), Size: mic("10")})
	if _, err := v.Submit(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Submit(ctx, &p); !errors.Is(err, market.ErrDuplicated) {
		t.Fatalf("resubmission: %v, want duplicated", err)
	}
	if o, err := v.Order(ctx, p.ID); err != nil || o.Status != market.StatusLive {
		t.Fatalf("Order = %+v, %v", o, err)
	}
	if err := v.Cancel(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if o, err := v.Order(ctx, p.ID); err != nil || o.Status != market.StatusCanceled {
		t.Fatalf("after cancel: %+v, %v", o, err)
	}
	if _, err := v.Order(ctx, "0xnope"); !errors.Is(err, market.ErrUnknownOrder) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := v.Markets(ctx, []market.ConditionID{"0xnope"}); !errors.Is(err, market.ErrMarketNotFound) {
		t.Fatalf("unknown market: %v", err)
	}
}

func TestPacedFeedFollowsTheWallClock(t *testing.T) {
	// At 1000 times real time, 3 s of event time take about 3 ms.
	x, _ := embedded.New(embedded.Config{Start: start, End: start + 3000, Paced: true, Speed: 1000},
		embedded.NewSimFlow(1, 1, start, sim.Config{}))
	t0 := time.Now()
	collect(t, x.Feed(nil, wallet))
	if d := time.Since(t0); d < 2*time.Millisecond || d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
}

// TestVenueMergesCompleteSets: the venue's Merge burns complete sets of the
// wallet for collateral in the engine, and refuses more sets than are held.
func TestVenueMergesCompleteSets(t *testing.T) {
	x, _ := embedded.New(embedded.Config{Start: start}, script())
	x.Fund(wallet, 100*market.One)
	v := x.Venue(wallet)
	ctx := context.Background()
	for i, req := range []agent.OrderRequest{
		{ClientID: 1, Market: cond, Token: yes, Side: market.Buy, Price: mic("0.48"), Size: mic("10"), Type: market.FOK},
		{ClientID: 2, Market: cond, Token: no, Side: market.Buy, Price: mic("0.55"), Size: mic("10"), Type: market.FOK}, // the 0.45 YES bid
	} {
		p, _ := v.Prepare(ctx, req)
		if o, err := v.Submit(ctx, &p); err != nil || o.Matched != mic("10") {
			t.Fatalf("order %d: %+v, %v", i, o, err)
		}
	}
	before, _ := v.Account(ctx)
	if err := v.Merge(ctx, cond, mic("11")); err == nil {
		t.Fatal("a merge of 11 sets with 10 held was accepted")
	}
	if err := v.Merge(ctx, cond, mic("10")); err != nil {
		t.Fatal(err)
	}
	after, _ := v.Account(ctx)
	if after.Balance != before.Balance+mic("10") || len(after.Positions) != 0 {
		t.Fatalf("after the merge: balance %s (was %s), positions %+v", after.Balance, before.Balance, after.Positions)
	}
}

package paper_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

const (
	cond market.ConditionID = "0x00000000000000000000000000000000000000000000000000000000000000c1"
	yes  market.TokenID     = "101"
	no   market.TokenID     = "102"
)

var addr = market.Address{0x11}

func mic(s string) market.Micros {
	m, err := market.ParseMicros(s)
	if err != nil {
		panic(err)
	}
	return m
}

type source []market.Info

func (s source) Markets(_ context.Context, ids []market.ConditionID) ([]market.Info, error) {
	return s, nil
}

func mkInfo(feeBps uint32) market.Info {
	return market.Info{Condition: cond, Tokens: [2]market.TokenID{yes, no}, TickSize: 10_000, MinSize: 5 * market.One,
		FeeBps: feeBps, Active: true, AcceptingOrders: true}
}

// harness is a paper venue whose emitted events are applied to a market.State, as
// the agent does, so every test also checks that the events tell the same story as
// the paper account.
type harness struct {
	t      *testing.T
	v      *paper.Venue
	st     market.State
	events []market.Event
	client uint64
	now    int64
}

func newHarness(t *testing.T, cfg paper.Config, info market.Info) *harness {
	t.Helper()
	cfg.Address = addr
	v, err := paper.New(cfg, source{info})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, v: v, now: 1_000_000}
	v.Attach(func(ev *market.Event) {
		h.events = append(h.events, *ev)
		h.st.Apply(ev)
	})
	if _, err := v.Markets(context.Background(), []market.ConditionID{cond}); err != nil {
		t.Fatal(err)
	}
	acct, _ := v.Account(context.Background())
	h.st.Init()
	h.st.Balance = acct.Balance
	mi := info
	h.st.Markets[cond] = &mi
	return h
}

// market feeds one market event (at the harness's time, advanced by 1 ms).
func (h *harness) market(ev market.Event) {
	h.now++
	ev.Time = h.now
	if ev.Market == "" {
		ev.Market = cond
	}
	h.st.Apply(&ev)
	h.v.ObserveMarket(&ev)
	h.check()
}

func (h *harness) book(tok market.TokenID, bids, asks []market.Level) {
	h.market(market.Event{Kind: market.EventBook, Token: tok, Bids: bids, Asks: asks})
}

func (h *harness) trade(tok market.TokenID, px string, size string, taker market.Side) {
	h.market(market.Event{Kind: market.EventLastTrade, Token: tok, Price: mic(px), Size: mic(size), Side: taker})
}

func (h *harness) change(tok market.TokenID, side market.Side, px, size string) {
	h.market(market.Event{Kind: market.EventPriceChange, Token: tok,
		Changes: []market.LevelChange{{Token: tok, Side: side, Price: mic(px), Size: mic(size)}}})
}

func (h *harness) place(tok market.TokenID, side market.Side, px, size string, typ market.OrderType, postOnly bool) (market.Order, error) {
	h.client++
	req := agent.OrderRequest{ClientID: h.client, Market: cond, Token: tok, Side: side, Price: mic(px), Size: mic(size),
		Type: typ, PostOnly: postOnly, Time: h.now}
	p, err := h.v.Prepare(context.Background(), req)
	if err != nil {
		h.t.Fatal(err)
	}
	o, err := h.v.Submit(context.Background(), &p)
	h.check()
	return o, err
}

// check compares the paper account with the state built from its events.
func (h *harness) check() {
	h.t.Helper()
	acct, _ := h.v.Account(context.Background())
	if acct.Balance != h.st.Balance || acct.Reserved != h.st.Reserved {
		h.t.Fatalf("paper balance %s reserved %s, events say %s and %s", acct.Balance, acct.Reserved, h.st.Balance, h.st.Reserved)
	}
	for _, p := range acct.Positions {
		sp := h.st.Positions[p.Token]
		if sp == nil || sp.Size != p.Size || sp.Cost != p.Cost || sp.Realized != p.Realized {
			h.t.Fatalf("paper position %+v, events say %+v", p, sp)
		}
	}
}

func (h *harness) fills() []market.Fill {
	var out []market.Fill
	for _, ev := range h.events {
		if ev.Kind == market.EventFill {
			out = append(out, ev.Fill)
		}
	}
	return out
}

func lv(px, size string) market.Level { return market.Level{Price: mic(px), Size: mic(size)} }

func TestRestingOrderWaitsBehindTheQueueAhead(t *testing.T) {
	h := newHarness(t, paper.Config{}, mkInfo(0))
	h.book(yes, []market.Level{lv("0.45", "100")}, []market.Level{lv("0.50", "100")})
	if _, err := h.place(yes, market.Buy, "0.45", "10", market.GTC, true); err != nil {
		t.Fatal(err)
	}
	h.trade(yes, "0.45", "60", market.Sell)
	if len(h.fills()) != 0 {
		t.Fatalf("filled with 40 shares still ahead: %v", h.fills())
	}
	h.trade(yes, "0.45", "45", market.Sell)
	f := h.fills()
	if len(f) != 1 || f[0].Size != mic("5") || f[0].Price != mic("0.45") || f[0].Role != market.Maker || f[0].Fee != 0 {
		t.Fatalf("fills %+v, want 5 at 0.45 as maker without fee", f)
	}
	h.trade(yes, "0.45", "20", market.Sell)
	if f := h.fills(); len(f) != 2 || f[1].Size != mic("5") {
		t.Fatalf("fills %+v, want the rest (5)", f)
	}
	if p := h.st.Positions[yes]; p == nil || p.Size != mic("10") || p.Cost != mic("4.5") {
		t.Fatalf("position %+v", p)
	}
	if len(h.st.Orders) != 0 {
		t.Fatalf("a filled order stays open: %v", h.st.Orders)
	}
}

func TestQueueModel(t *testing.T) {
	tests := []struct {
		name   string
		after  func(h *harness)
		filled string
	}{
		{"a buy taker on our side does not fill us", func(h *harness) { h.trade(yes, "0.45", "500", market.Buy) }, "0"},
		{"a trade through our price fills us at once", func(h *harness) { h.trade(yes, "0.44", "30", market.Sell) }, "10"},
		{"a trade above our price does nothing", func(h *harness) { h.trade(yes, "0.46", "500", market.Sell) }, "0"},
		{"cancellations ahead shrink the queue", func(h *harness) {
			h.change(yes, market.Buy, "0.45", "20")
			h.trade(yes, "0.45", "25", market.Sell)
		}, "5"},
		{"a level that empties and refills puts the newcomers behind us", func(h *harness) {
			h.market(market.Event{Kind: market.EventPriceChange, Token: yes, Changes: []market.LevelChange{
				{Token: yes, Side: market.Buy, Price: mic("0.45"), Size: 0},
				{Token: yes, Side: market.Buy, Price: mic("0.45"), Size: mic("80")}}})
			h.trade(yes, "0.45", "4", market.Sell)
		}, "4"},
		{"the ask side moving onto our price fills us as maker", func(h *harness) {
			h.change(yes, market.Sell, "0.45", "7")
		}, "7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, paper.Config{}, mkInfo(0))
			h.book(yes, []market.Level{lv("0.45", "100")}, []market.Level{lv("0.50", "100")})
			if _, err := h.place(yes, market.Buy, "0.45", "10", market.GTC, false); err != nil {
				t.Fatal(err)
			}
			tc.after(h)
			var got market.Micros
			for _, f := range h.fills() {
				got += f.Size
				if f.Price != mic("0.45") || f.Role != market.Maker {
					t.Fatalf("fill %+v: want our price, as maker", f)
				}
			}
			if got != mic(tc.filled) {
				t.Fatalf("filled %s, want %s", got, tc.filled)
			}
		})
	}
}

// TestTakerFillsMatchTheExchangeCore places the same crossing order on the paper
// venue and on sandbox/exchange over the same book: same fills, same fees, same
// collateral spent.
func TestTakerFillsMatchTheExchangeCore(t *testing.T) {
	const fee = 200
	asks := []market.Level{lv("0.48", "10"), lv("0.49", "10"), lv("0.50", "20")}

	h := newHarness(t, paper.Config{}, mkInfo(fee))
	h.book(yes, []market.Level{lv("0.40", "50")}, asks)
	before := h.st.Balance
	o, err := h.place(yes, market.Buy, "0.50", "30", market.FAK, false)
	if err != nil || o.Status != market.StatusMatched || o.Matched != mic("30") {
		t.Fatalf("paper FAK = %+v, %v", o, err)
	}
	paperSpent := before - h.st.Balance
	var paperFees market.Micros
	for _, f := range h.fills() {
		paperFees += f.Fee
		if f.Role != market.Taker {
			t.Fatalf("fill %+v is not a taker fill", f)
		}
	}

	eng := exchange.New(exchange.Config{})
	maker, taker := market.Address{0x22}, market.Address{0x33}
	cmds := []exchange.Command{
		{Kind: exchange.CreateMarket, Time: 1, Market: cond, Spec: exchange.MarketSpec{Tokens: [2]market.TokenID{yes, no},
			TickSize: 10_000, MinSize: 5 * market.One, FeeBps: fee, Active: true, AcceptingOrders: true}},
		{Kind: exchange.Deposit, Time: 1, Owner: maker, Amount: 1000 * market.One},
		{Kind: exchange.Split, Time: 1, Owner: maker, Market: cond, Amount: 100 * market.One},
		{Kind: exchange.Deposit, Time: 1, Owner: taker, Amount: 1000 * market.One},
	}
	for i, a := range asks {
		cmds = append(cmds, exchange.Command{Kind: exchange.Place, Time: 2, Owner: maker, Order: market.OrderID(rune('a' + i)),
			Token: yes, Side: market.Sell, Type: market.GTC, Price: a.Price, Size: a.Size, FeeRateBps: fee})
	}
	cmds = append(cmds, exchange.Command{Kind: exchange.Place, Time: 3, Owner: taker, Order: "t", Token: yes,
		Side: market.Buy, Type: market.FAK, Price: mic("0.50"), Size: mic("30"), FeeRateBps: fee})
	var engFee market.Micros
	for i := range cmds {
		evs, err := eng.Apply(&cmds[i])
		if err != nil {
			t.Fatalf("%s: %v", cmds[i].Kind, err)
		}
		for _, e := range evs {
			if e.Kind == exchange.TradeExecuted {
				engFee = e.Fee
			}
		}
	}
	avail, _ := eng.Collateral(taker)
	engSpent := 1000*market.One - avail
	if engFee != paperFees || engSpent != paperSpent {
		t.Fatalf("paper spent %s with fees %s; the exchange core spent %s with fees %s", paperSpent, paperFees, engSpent, engFee)
	}
}

func TestOrderTypesAndValidationRefuseLikeTheVenue(t *testing.T) {
	tests := []struct {
		name   string
		place  func(h *harness) (market.Order, error)
		want   error
		status market.OrderStatus
	}{
		{"post-only crossing", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.50", "10", market.GTC, true)
		}, market.ErrPostOnlyCrosses, 0},
		{"FOK that cannot fill", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.50", "200", market.FOK, false)
		}, market.ErrFOKNotFilled, 0},
		{"FAK with nothing to match", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.47", "10", market.FAK, false)
		}, market.ErrFAKNoMatch, 0},
		{"FAK partly filled: the rest is cancelled", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.50", "150", market.FAK, false)
		}, nil, market.StatusCanceled},
		{"off tick", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.455", "10", market.GTC, false)
		}, market.ErrTickSize, 0},
		{"below the minimum size", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.45", "1", market.GTC, false)
		}, market.ErrMinSize, 0},
		{"not a whole lot", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.45", "5.001", market.GTC, false)
		}, market.ErrAmountNotExact, 0},
		{"more than the balance", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.45", "10000", market.GTC, false)
		}, market.ErrInsufficientBalance, 0},
		{"selling what is not held", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Sell, "0.55", "10", market.GTC, false)
		}, market.ErrInsufficientBalance, 0},
		{"GTD without expiration", func(h *harness) (market.Order, error) {
			return h.place(yes, market.Buy, "0.45", "10", market.GTD, false)
		}, market.ErrInvalidExpiration, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, paper.Config{}, mkInfo(0))
			h.book(yes, []market.Level{lv("0.45", "100")}, []market.Level{lv("0.50", "100")})
			o, err := tc.place(h)
			if !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == nil && o.Status != tc.status {
				t.Fatalf("status %s, want %s", o.Status, tc.status)
			}
			if tc.want != nil && len(h.st.Orders) != 0 {
				t.Fatal("a refused order is open")
			}
		})
	}
	t.Run("a resubmitted order is a duplicate", func(t *testing.T) {
		h := newHarness(t, paper.Config{}, mkInfo(0))
		h.book(yes, []market.Level{lv("0.45", "100")}, []market.Level{lv("0.50", "100")})
		p, _ := h.v.Prepare(context.Background(), agent.OrderRequest{ClientID: 9, Market: cond, Token: yes, Side: market.Buy,
			Price: mic("0.45"), Size: mic("10"), Time: h.now})
		if _, err := h.v.Submit(context.Background(), &p); err != nil {
			t.Fatal(err)
		}
		if _, err := h.v.Submit(context.Background(), &p); !errors.Is(err, market.ErrDuplicated) {
			t.Fatalf("second submit: %v, want duplicated", err)
		}
		if o, err := h.v.Order(context.Background(), p.ID); err != nil || o.Status != market.StatusLive {
			t.Fatalf("Order = %+v, %v", o, err)
		}
		if _, err := h.v.Order(context.Background(), "0xnope"); !errors.Is(err, market.ErrUnknownOrder) {
			t.Fatalf("unknown order: %v", err)
		}
	})
}

func TestLatencyDelaysArrival(t *testing.T) {
	h := newHarness(t, paper.Config{Latency: 100 * time.Millisecond}, mkInfo(0))
	h.book(yes, []market.Level{lv("0.45", "100")}, []market.Level{lv("0.50", "100")})
	o, err := h.place(yes, market.Buy, "0.50", "10", market.FAK, false)
	if err != nil || o.Status != market.StatusLive {
		t.Fatalf("a delayed FAK is accepted and pending: %+v, %v", o, err)
	}
	h.change(yes, market.Sell, "0.50", "0") // the ask goes away before we arrive
	h.now += 200
	h.change(yes, market.Sell, "0.52", "50")
	if len(h.fills()) != 0 {
		t.Fatalf("fills %v: the order arrived after the liquidity left", h.fills())
	}
	if len(h.st.Orders) != 0 {
		t.Fatal("the FAK should have been cancelled on arrival")
	}
}

// TestResolutionKeepsTheHoldingsUntilRedeemed: a resolution cancels the market's
// orders and leaves the tokens held, as the venue does; Redeem refuses before the
// resolution (market_not_resolved), then pays 1 a winning share and 0 a losing one,
// realizing the PnL, and refuses a second time (nothing_to_redeem).
func TestResolutionKeepsTheHoldingsUntilRedeemed(t *testing.T) {
	h := newHarness(t, paper.Config{}, mkInfo(0))
	ctx := context.Background()
	h.book(yes, []market.Level{lv("0.40", "100")}, []market.Level{lv("0.45", "100")})
	if _, err := h.place(yes, market.Buy, "0.45", "10", market.FAK, false); err != nil {
		t.Fatal(err)
	}
	h.book(no, []market.Level{lv("0.55", "100")}, []market.Level{lv("0.60", "100")})
	if _, err := h.place(no, market.Buy, "0.60", "5", market.FAK, false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.place(yes, market.Buy, "0.30", "10", market.GTC, false); err != nil { // still open at resolution
		t.Fatal(err)
	}
	var e *market.Error
	if err := h.v.Redeem(ctx, cond); !errors.As(err, &e) || e.Code != market.CodeMarketNotResolved {
		t.Fatalf("redeem before the resolution: %v, want market_not_resolved", err)
	}
	h.market(market.Event{Kind: market.EventResolved, Token: yes, Winner: yes})
	acct, _ := h.v.Account(ctx)
	// 1000 − 4.5 − 3: the tokens wait for the redeem
	if acct.Balance != mic("992.5") || acct.Reserved != 0 || len(acct.Positions) != 2 {
		t.Fatalf("balance %s reserved %s positions %+v, want 992.5, 0 and both held", acct.Balance, acct.Reserved, acct.Positions)
	}
	if _, err := h.place(yes, market.Buy, "0.30", "10", market.GTC, false); !errors.Is(err, market.ErrMarketResolved) {
		t.Fatalf("order on a resolved market: %v", err)
	}
	if err := h.v.Redeem(ctx, cond); err != nil {
		t.Fatal(err)
	}
	acct, _ = h.v.Account(ctx)
	// + 10 (winning YES at 1) + 0 (losing NO)
	if acct.Balance != mic("1002.5") {
		t.Fatalf("balance %s after the redeem, want 1002.5", acct.Balance)
	}
	var realized market.Micros
	for _, p := range acct.Positions {
		if p.Size != 0 {
			t.Fatalf("position %+v left after the redeem", p)
		}
		realized += p.Realized
	}
	if realized != mic("2.5") {
		t.Fatalf("realized %s, want 2.5", realized)
	}
	if err := h.v.Redeem(ctx, cond); !errors.As(err, &e) || e.Code != market.CodeNothingToRedeem {
		t.Fatalf("a second redeem: %v, want nothing_to_redeem", err)
	}
}

func TestGTDOrdersExpire(t *testing.T) {
	h := newHarness(t, paper.Config{}, mkInfo(0))
	h.book(yes, []market.Level{lv("0.45", "100")}, []market.Level{lv("0.50", "100")})
	h.client++
	p, _ := h.v.Prepare(context.Background(), agent.OrderRequest{ClientID: h.client, Market: cond, Token: yes, Side: market.Buy,
		Price: mic("0.44"), Size: mic("10"), Type: market.GTD, Expiration: h.now/1000 + 2, Time: h.now})
	if _, err := h.v.Submit(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	h.now += 1000
	h.change(yes, market.Buy, "0.45", "90")
	if o, _ := h.v.Order(context.Background(), p.ID); o.Status != market.StatusLive {
		t.Fatalf("expired too early: %s", o.Status)
	}
	h.now += 2000
	h.change(yes, market.Buy, "0.45", "80")
	if o, _ := h.v.Order(context.Background(), p.ID); o.Status != market.StatusExpired {
		t.Fatalf("status %s, want expired", o.Status)
	}
	h.check()
}

// restoredAccount makes a paper account holding 20 YES with a resting buy at 0.45
// and a resting sell at 0.55, and restores its snapshot into a new venue. It returns
// the harness, the snapshot and the restored venue.
func restoredAccount(t *testing.T) (*harness, []byte, *paper.Venue) {
	t.Helper()
	h := newHarness(t, paper.Config{}, mkInfo(100))
	h.book(yes, []market.Level{lv("0.45", "100")}, []market.Level{lv("0.50", "100")})
	h.place(yes, market.Buy, "0.50", "20", market.FAK, false)
	h.place(yes, market.Buy, "0.45", "10", market.GTC, false)
	h.place(yes, market.Sell, "0.55", "5", market.GTC, false)
	snap, err := h.v.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := paper.New(paper.Config{Address: addr}, source{mkInfo(100)})
	if err := v2.Restore(snap); err != nil {
		t.Fatal(err)
	}
	return h, snap, v2
}

func TestSnapshotRestoresTheAccount(t *testing.T) {
	h, snap, v2 := restoredAccount(t)
	a1, _ := h.v.Account(context.Background())
	a2, _ := v2.Account(context.Background())
	o1, _ := h.v.OpenOrders(context.Background())
	o2, _ := v2.OpenOrders(context.Background())
	if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(o1, o2) {
		t.Fatalf("restored account differs:\n%+v\n%+v\n%+v\n%+v", a1, a2, o1, o2)
	}
	v3, _ := paper.New(paper.Config{Address: market.Address{0x99}}, source{mkInfo(100)})
	if err := v3.Restore(snap); err == nil {
		t.Fatal("restored another wallet's account")
	}
}

func TestSameInputSameFills(t *testing.T) {
	runOnce := func() []market.Event {
		h := newHarness(t, paper.Config{Latency: 50 * time.Millisecond}, mkInfo(150))
		h.book(yes, []market.Level{lv("0.45", "100"), lv("0.44", "50")}, []market.Level{lv("0.50", "100")})
		h.place(yes, market.Buy, "0.45", "10", market.GTC, false)
		h.place(yes, market.Buy, "0.44", "10", market.GTC, false)
		for i := range 20 {
			h.now += 20
			h.trade(yes, []string{"0.45", "0.44", "0.43"}[i%3], "17", market.Sell)
			h.change(yes, market.Buy, "0.45", []string{"90", "60", "30", "0"}[i%4])
		}
		return h.events
	}
	a, b := runOnce(), runOnce()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs over the same input emitted different events")
	}
	if len(a) == 0 {
		t.Fatal("no events")
	}
}

// TestARestoredRestingOrderKeepsTrading checks that the resting orders of a restored
// account are on their tokens' mirrors: a print through a restored buy fills it, and
// a bid that moves through a restored sell fills it as the maker.
func TestARestoredRestingOrderKeepsTrading(t *testing.T) {
	_, _, v2 := restoredAccount(t)
	var fills []market.Fill
	v2.Attach(func(ev *market.Event) {
		if ev.Kind == market.EventFill {
			fills = append(fills, ev.Fill)
		}
	})
	at := int64(2_000_000)
	observe := func(ev market.Event) {
		at++
		ev.Time, ev.Market = at, cond
		v2.ObserveMarket(&ev)
	}
	observe(market.Event{Kind: market.EventBook, Token: yes, Bids: []market.Level{lv("0.45", "100")}, Asks: []market.Level{lv("0.50", "100")}})
	observe(market.Event{Kind: market.EventLastTrade, Token: yes, Price: mic("0.44"), Size: mic("50"), Side: market.Sell})
	if len(fills) != 1 || fills[0].Side != market.Buy || fills[0].Price != mic("0.45") || fills[0].Size != mic("10") {
		t.Fatalf("a print through the restored buy: fills %+v, want the buy's 10 at 0.45", fills)
	}
	observe(market.Event{Kind: market.EventPriceChange, Token: yes,
		Changes: []market.LevelChange{{Token: yes, Side: market.Buy, Price: mic("0.56"), Size: mic("30")}}})
	if len(fills) != 2 || fills[1].Side != market.Sell || fills[1].Price != mic("0.55") || fills[1].Role != market.Maker {
		t.Fatalf("a bid through the restored sell: fills %+v, want the sell filled at 0.55 as the maker", fills)
	}
}

package clob_test

import (
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// place posts a limit order and fails the test on error.
func place(t *testing.T, c *clob.Client, a clob.OrderArgs) clob.Placement {
	t.Helper()
	p, err := c.PlaceOrder(ctxT(t, 10*time.Second), a)
	if err != nil {
		t.Fatalf("PlaceOrder(%+v): %v", a, err)
	}
	return p
}

// collect drains an iterator, failing the test on its error.
func collect[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatalf("iteration: %v", err)
		}
		out = append(out, v)
	}
	return out
}

// TestLocalMarketData exercises every market-data endpoint on a book with one bid
// (YES 0.40 × 10) and one ask (YES 0.50 × 10, from a NO bid at 0.50), then a trade.
func TestLocalMarketData(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 60*time.Second)
	maker, taker := l.client("md-maker"), l.client("md-taker")
	fed, fee, neg := l.market(fedSlug), l.market(feeSlug), l.market(negRiskSlug)
	yes, no := fed.Tokens[market.Yes], fed.Tokens[market.No]
	place(t, maker, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.40"), Size: d("10")})
	place(t, maker, clob.OrderArgs{Token: no, Side: market.Buy, Price: d("0.50"), Size: d("10")})

	if err := taker.OK(ctx); err != nil {
		t.Fatalf("OK: %v", err)
	}
	st, err := taker.ServerTime(ctx)
	if err != nil || time.Until(st).Abs() > 5*time.Second {
		t.Fatalf("ServerTime = %v, %v", st, err)
	}

	b, err := taker.Book(ctx, yes)
	if err != nil {
		t.Fatal(err)
	}
	if b.Market != fed.Condition || len(b.Bids) != 1 || len(b.Asks) != 1 || b.Bids[0].Price.String() != "0.4" ||
		b.Asks[0].Price.String() != "0.5" || b.TickSize.String() != "0.01" || b.MinOrderSize.String() != "5" || b.Hash == "" {
		t.Fatalf("Book = %+v", b)
	}
	mb, err := taker.MarketBook(ctx, no)
	if err != nil {
		t.Fatal(err)
	}
	if bid, _ := mb.BestBid(); bid.Price != 500_000 {
		t.Fatalf("NO book best bid = %v, want 0.5", bid)
	}
	if ask, _ := mb.BestAsk(); ask.Price != 600_000 {
		t.Fatalf("NO book best ask = %v, want 0.6 (the mirror of the YES bid)", ask)
	}
	books, err := taker.Books(ctx, []market.TokenID{yes, no})
	if err != nil || len(books) != 2 || books[0].AssetID != yes || books[1].AssetID != no {
		t.Fatalf("Books = %+v, %v", books, err)
	}
	if _, err := taker.Book(ctx, "123"); !is(err, market.CodeNoOrderbook) {
		t.Fatalf("unknown token: %v", err)
	}

	checks := []struct {
		name string
		get  func() (decimal.Decimal, error)
		want string
	}{
		{"Price BUY is the best bid", func() (decimal.Decimal, error) { return taker.Price(ctx, yes, market.Buy) }, "0.4"},
		{"Price SELL is the best ask", func() (decimal.Decimal, error) { return taker.Price(ctx, yes, market.Sell) }, "0.5"},
		{"Midpoint", func() (decimal.Decimal, error) { return taker.Midpoint(ctx, yes) }, "0.45"},
		{"Spread", func() (decimal.Decimal, error) { return taker.Spread(ctx, yes) }, "0.1"},
		{"TickSize", func() (decimal.Decimal, error) { return taker.TickSize(ctx, neg.Tokens[market.Yes]) }, "0.001"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			v, err := c.get()
			if err != nil || v.String() != c.want {
				t.Fatalf("= %v, %v; want %s", v, err, c.want)
			}
		})
	}
	if _, err := taker.Price(ctx, yes, market.Side(9)); !is(err, market.CodeInvalidSide) {
		t.Fatalf("invalid side: %v", err)
	}
	prices, err := taker.Prices(ctx, []clob.PriceRequest{{Token: yes, Side: market.Buy}, {Token: no, Side: market.Sell}})
	if err != nil || prices[yes][market.Buy].String() != "0.4" || prices[no][market.Sell].String() != "0.6" {
		t.Fatalf("Prices = %v, %v", prices, err)
	}
	mids, err := taker.Midpoints(ctx, []market.TokenID{yes, no})
	if err != nil || mids[yes].String() != "0.45" || mids[no].String() != "0.55" {
		t.Fatalf("Midpoints = %v, %v", mids, err)
	}
	spreads, err := taker.Spreads(ctx, []market.TokenID{yes, no})
	if err != nil || spreads[yes].String() != "0.1" || spreads[no].String() != "0.1" {
		t.Fatalf("Spreads = %v, %v", spreads, err)
	}
	negRisk, err := taker.NegRisk(ctx, neg.Tokens[market.No])
	if err != nil || !negRisk {
		t.Fatalf("NegRisk = %v, %v", negRisk, err)
	}
	rate, err := taker.FeeRate(ctx, fee.Tokens[market.Yes])
	if err != nil || rate != 100 {
		t.Fatalf("FeeRate = %v, %v", rate, err)
	}
	mp, err := taker.MarketParams(ctx, neg.Tokens[market.Yes])
	if err != nil || mp != (clob.MarketParams{TickSize: 1_000, NegRisk: true}) {
		t.Fatalf("MarketParams = %+v, %v", mp, err)
	}

	// A trade: the taker buys 5 YES at the ask.
	p, err := taker.PlaceMarketOrder(ctx, clob.MarketOrderArgs{Token: yes, Side: market.Buy, Amount: d("2.5")})
	if err != nil || p.Status != api.PlacementMatched || len(p.TradeIDs) != 1 {
		t.Fatalf("market buy: %+v, %v", p, err)
	}
	lt, err := taker.LastTradePrice(ctx, yes)
	if err != nil || lt.Price.String() != "0.5" || lt.Side != market.Buy {
		t.Fatalf("LastTradePrice = %+v, %v", lt, err)
	}
	lts, err := taker.LastTradesPrices(ctx, []market.TokenID{yes, no})
	if err != nil || len(lts) != 2 || lts[0].Price.String() != "0.5" {
		t.Fatalf("LastTradesPrices = %+v, %v", lts, err)
	}
	hist, err := taker.PricesHistory(ctx, clob.PriceHistoryParams{Market: fed.Condition, Fidelity: 1})
	if err != nil || len(hist) == 0 {
		t.Fatalf("PricesHistory = %v, %v", hist, err)
	}
	batch, err := taker.BatchPricesHistory(ctx, []clob.PriceHistoryParams{{Market: fed.Condition}, {Market: fee.Condition}})
	if err != nil || len(batch[fed.Condition]) == 0 || len(batch[fee.Condition]) == 0 {
		t.Fatalf("BatchPricesHistory = %v, %v", batch, err)
	}
}

// TestLocalMarketsAndBrowse exercises the market listings and browse endpoints.
func TestLocalMarketsAndBrowse(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 60*time.Second)
	c, err := clob.New(l.config(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := l.cat.NumMarkets()
	all := collect(t, c.Markets(ctx))
	if len(all) != n {
		t.Fatalf("Markets: %d, want %d", len(all), n)
	}
	fed := l.market(fedSlug)
	m, err := c.Market(ctx, fed.Condition)
	if err != nil || m.ConditionID != fed.Condition || len(m.Tokens) != 2 || m.MinimumTickSize.String() != "0.01" {
		t.Fatalf("Market = %+v, %v", m, err)
	}
	if _, err := c.Market(ctx, "0x00"); err == nil {
		t.Fatal("Market of a bad id succeeded")
	}
	if simple := collect(t, c.SimplifiedMarkets(ctx)); len(simple) != n {
		t.Fatalf("SimplifiedMarkets: %d, want %d", len(simple), n)
	}
	sampling := collect(t, c.SamplingMarkets(ctx))
	if len(sampling) == 0 || len(sampling) > n {
		t.Fatalf("SamplingMarkets: %d of %d markets", len(sampling), n)
	}
	for _, m := range sampling {
		if !m.AcceptingOrders {
			t.Fatalf("SamplingMarkets holds %s, which does not accept orders", m.ConditionID)
		}
	}
	if simple := collect(t, c.SamplingSimplifiedMarkets(ctx)); len(simple) != len(sampling) {
		t.Fatalf("SamplingSimplifiedMarkets: %d, want %d (SamplingMarkets)", len(simple), len(sampling))
	}

	page, err := c.BrowseMarketsPage(ctx, clob.BrowseParams{Status: "LIVE", Limit: 3})
	if err != nil || len(page.Markets) != 3 || page.Total < 3 || page.Markets[0].QuestionText == "" || len(page.Markets[0].Outcomes) != 2 {
		t.Fatalf("BrowseMarketsPage = %+v, %v", page, err)
	}
	if browsed := collect(t, c.BrowseMarkets(ctx, clob.BrowseParams{Limit: 5})); len(browsed) != n {
		t.Fatalf("BrowseMarkets iterated %d markets in pages of 5, want %d", len(browsed), n)
	}
	topic, err := c.WorldCupGames(ctx, "fr-CA")
	if err != nil || topic.Localization.RequestedLocale != "fr-CA" || topic.Localization.Locale != "fr" || len(topic.Sections) == 0 {
		t.Fatalf("WorldCupGames = %+v, %v", topic, err)
	}
	if _, err := c.StocksActive(ctx, ""); err != nil {
		t.Fatalf("StocksActive: %v", err)
	}
	rec, err := c.RecommendedMarkets(ctx, url.Values{"limit": {"3"}})
	if err != nil || len(rec.Markets) == 0 || len(rec.Markets) > 3 {
		t.Fatalf("RecommendedMarkets = %+v, %v", rec, err)
	}
	for name, get := range map[string]func() error{
		"BrowseStats":      func() error { _, err := c.BrowseStats(ctx); return err },
		"BrowseAgents":     func() error { _, err := c.BrowseAgents(ctx, nil); return err },
		"BrowseAgentStats": func() error { _, err := c.BrowseAgentStats(ctx); return err },
	} {
		if err := get(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	gb, err := c.Geoblock(ctx)
	if err != nil || gb.Blocked || gb.IP == "" {
		t.Fatalf("Geoblock = %+v, %v", gb, err)
	}
}

// TestLocalOrders exercises placing, reading and cancelling orders, with the
// catalog errors a program branches on.
func TestLocalOrders(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 60*time.Second)
	maker, taker := l.client("o-maker"), l.client("o-taker")
	fed := l.market(fedSlug)
	yes, no := fed.Tokens[market.Yes], fed.Tokens[market.No]

	bid := place(t, maker, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.404"), Size: d("10.019")}) // rounded to 0.40 × 10.01
	if bid.Status != api.PlacementLive || bid.OrderID != string(bid.ID) {
		t.Fatalf("bid placement = %+v", bid)
	}
	rec, err := maker.Order(ctx, bid.ID)
	if err != nil || rec.Price.String() != "0.4" || rec.OriginalSize.String() != "10.01" || rec.Status != "LIVE" || rec.Owner != maker.APIKey() {
		t.Fatalf("Order = %+v, %v", rec, err)
	}
	if _, err := taker.Order(ctx, bid.ID); !is(err, market.CodeUnknownOrder) {
		t.Fatalf("another wallet's order: %v", err)
	}

	exp := time.Now().Add(time.Hour)
	gtd := place(t, maker, clob.OrderArgs{Token: no, Side: market.Buy, Price: d("0.5"), Size: d("6"), Type: market.GTD, Expiration: exp, PostOnly: true})
	if rec, err := maker.Order(ctx, gtd.ID); err != nil || int64(rec.Expiration) != exp.Unix() || rec.OrderType != api.OrderType(market.GTD) {
		t.Fatalf("GTD order = %+v, %v", rec, err)
	}
	if _, err := maker.PlaceOrder(ctx, clob.OrderArgs{Token: no, Side: market.Buy, Price: d("0.61"), Size: d("5"), PostOnly: true}); !errors.Is(err, market.ErrPostOnlyCrosses) {
		t.Fatalf("crossing post-only: %v", err)
	}
	if _, err := maker.PlaceOrder(ctx, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.3"), Size: d("1")}); !errors.Is(err, market.ErrMinSize) {
		t.Fatalf("below the minimum size: %v", err)
	}
	if _, err := maker.PlaceOrder(ctx, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.3"), Size: d("100000")}); !errors.Is(err, market.ErrInsufficientBalance) {
		t.Fatalf("beyond the balance: %v", err)
	}

	// An order whose signed amounts break the tick: the service's tick-size error.
	s := signer(t, "o-maker")
	o, err := auth.BuildOrder(s.Address(), auth.OrderArgs{Token: yes, Side: market.Buy, Price: 405_000, Size: 10_000_000, Tick: 1_000})
	if err != nil {
		t.Fatal(err)
	}
	so, id, err := auth.SignOrder(s, auth.ExchangeDomain(56, l.exchange()), o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = maker.PostOrder(ctx, &clob.SignedOrder{SignedOrder: so, ID: id})
	if !errors.Is(err, market.ErrTickSize) {
		t.Fatalf("off-tick order: %v", err)
	}
	var ae *clob.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Method != "POST" || ae.Path != "/order" {
		t.Fatalf("APIError = %+v", ae)
	}

	// A second post of the same signed order is "Duplicated".
	sig, err := maker.CreateOrder(ctx, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.2"), Size: d("5")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := maker.PostOrder(ctx, sig); err != nil {
		t.Fatal(err)
	}
	if _, err := maker.PostOrder(ctx, sig); !errors.Is(err, market.ErrDuplicated) {
		t.Fatalf("second post: %v", err)
	}

	open := collect(t, maker.Orders(ctx, clob.OrderFilter{Market: fed.Condition}))
	if len(open) != 3 {
		t.Fatalf("Orders: %d, want 3", len(open))
	}
	if only := collect(t, maker.Orders(ctx, clob.OrderFilter{ID: gtd.ID})); len(only) != 1 || only[0].ID != gtd.ID {
		t.Fatalf("Orders by id = %+v", only)
	}

	// The taker sells into the bid: FOK for 4 shares at whatever the book gives.
	if _, err := taker.Split(ctx, clob.CTFRequest{ConditionID: fed.Condition, Size: d("20")}); err != nil {
		t.Fatal(err)
	}
	sell, err := taker.PlaceMarketOrder(ctx, clob.MarketOrderArgs{Token: yes, Side: market.Sell, Amount: d("4")})
	if err != nil || sell.Status != api.PlacementMatched || sell.MakingAmount.String() != "4" || sell.TakingAmount.String() != "1.6" {
		t.Fatalf("market sell = %+v, %v", sell, err)
	}
	if _, err := taker.PlaceMarketOrder(ctx, clob.MarketOrderArgs{Token: yes, Side: market.Sell, Amount: d("500")}); !errors.Is(err, market.ErrFOKNotFilled) {
		t.Fatalf("unfillable FOK: %v", err)
	}
	if _, err := taker.PlaceMarketOrder(ctx, clob.MarketOrderArgs{Token: yes, Side: market.Sell, Amount: d("5"), Price: d("0.9"), Type: market.FAK}); !errors.Is(err, market.ErrFAKNoMatch) {
		t.Fatalf("FAK without a match: %v", err)
	}
	trades := collect(t, taker.Trades(ctx, clob.TradeFilter{Market: fed.Condition}))
	if len(trades) != 1 || trades[0].TraderSide != "TAKER" || trades[0].Size.String() != "4" {
		t.Fatalf("taker trades = %+v", trades)
	}
	if mt := collect(t, maker.Trades(ctx, clob.TradeFilter{ID: trades[0].ID})); len(mt) != 1 || mt[0].TraderSide != "MAKER" {
		t.Fatalf("maker trades = %+v", mt)
	}
	if rec, _ := maker.Order(ctx, bid.ID); rec.SizeMatched.String() != "4" {
		t.Fatalf("bid after the fill: %+v", rec)
	}

	// A batch: two good orders and one beyond the balance.
	var batch []*clob.SignedOrder
	for _, a := range []clob.OrderArgs{
		{Token: yes, Side: market.Buy, Price: d("0.1"), Size: d("5")},
		{Token: yes, Side: market.Buy, Price: d("0.1"), Size: d("99999")},
		{Token: no, Side: market.Buy, Price: d("0.1"), Size: d("5")},
	} {
		o, err := maker.CreateOrder(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, o)
	}
	ps, err := maker.PostOrders(ctx, batch)
	if err != nil || len(ps) != 3 {
		t.Fatalf("PostOrders = %+v, %v", ps, err)
	}
	if ps[0].Err != nil || ps[2].Err != nil || !errors.Is(ps[1].Err, market.ErrInsufficientBalance) || !errors.As(ps[1].Err, &ae) || !ae.Batch {
		t.Fatalf("batch results: %v / %v / %v", ps[0].Err, ps[1].Err, ps[2].Err)
	}

	// Cancels.
	cr, err := maker.CancelOrder(ctx, ps[0].ID)
	if err != nil || !slices.Contains(cr.Canceled, ps[0].ID) {
		t.Fatalf("CancelOrder = %+v, %v", cr, err)
	}
	cr, err = maker.CancelOrder(ctx, ps[0].ID)
	if err != nil || cr.NotCanceled[ps[0].ID] != api.ReasonAlreadyCanceled {
		t.Fatalf("second cancel = %+v, %v", cr, err)
	}
	if _, err := maker.CancelOrder(ctx, "0x12"); !is(err, market.CodeInvalidOrderID) {
		t.Fatalf("cancel of a malformed id: %v", err)
	}
	cr, err = maker.CancelOrders(ctx, []market.OrderID{ps[2].ID, gtd.ID})
	if err != nil || len(cr.Canceled) != 2 {
		t.Fatalf("CancelOrders = %+v, %v", cr, err)
	}
	cr, err = maker.CancelMarketOrders(ctx, fed.Condition, "")
	if err != nil || len(cr.Canceled) != 2 { // the partly filled bid and the 0.2 bid
		t.Fatalf("CancelMarketOrders = %+v, %v", cr, err)
	}
	place(t, maker, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.1"), Size: d("5")})
	cr, err = maker.CancelAll(ctx)
	if err != nil || len(cr.Canceled) != 1 {
		t.Fatalf("CancelAll = %+v, %v", cr, err)
	}
	if left := collect(t, maker.Orders(ctx, clob.OrderFilter{})); len(left) != 0 {
		t.Fatalf("%d orders left after CancelAll", len(left))
	}

	// A neg-risk market's orders are signed for the neg-risk exchange.
	neg := l.market(negRiskSlug)
	np := place(t, maker, clob.OrderArgs{Token: neg.Tokens[market.Yes], Side: market.Buy, Price: d("0.123"), Size: d("5")})
	if np.Status != api.PlacementLive {
		t.Fatalf("neg-risk order = %+v", np)
	}
}

// TestLocalExchangeContractsAreDiscovered builds orders with a client configured
// without exchange contracts: it learns them from GET /exchanges/status, for the
// normal and the neg-risk exchange, and refuses a venue on another chain.
func TestLocalExchangeContractsAreDiscovered(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 30*time.Second)
	_ = l.client("discover")
	cfg := l.config(signer(t, "discover"))
	cfg.Exchange, cfg.NegRiskExchange = market.Address{}, market.Address{}
	c, err := clob.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	useDerivedKey(t, ctx, c)
	st, err := c.ExchangesStatus(ctx)
	if err != nil || st.ChainID != 56 || st.Exchange != server.DefaultExchange.String() || st.LiveMarkets == 0 {
		t.Fatalf("ExchangesStatus = %+v, %v", st, err)
	}
	for _, slug := range []string{fedSlug, negRiskSlug} {
		p, err := c.PlaceOrder(ctx, clob.OrderArgs{Token: l.market(slug).Tokens[market.Yes], Side: market.Buy, Price: d("0.2"), Size: d("5")})
		if err != nil || p.Status != api.PlacementLive {
			t.Fatalf("%s: %+v, %v", slug, p, err)
		}
	}
	cfg.ChainID = 97
	other, err := clob.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.DiscoverExchanges(ctx); err == nil {
		t.Fatal("a venue on chain 56 was accepted for chain 97")
	}
	if _, err := other.CreateOrder(ctx, clob.OrderArgs{Token: l.market(fedSlug).Tokens[market.Yes], Side: market.Buy, Price: d("0.2"), Size: d("5")}); !errors.Is(err, clob.ErrNoExchange) {
		t.Fatalf("order without a contract: %v", err)
	}
}

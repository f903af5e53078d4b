package strategy

import (
	"math"

	"github.com/pitbossdev/pitboss/market"
)

// Env is the typed environment every expression of a strategy file is compiled
// against and evaluated with. Expressions see:
//
//	yes, no        the current market's two tokens (Token)
//	market         its metadata (MarketInfo)
//	event          the event being handled (EventInfo)
//	time, inventory, upnl, rpnl, balance, reserved, mode, orders
//	               top-level names, from Account
//	params, indicators and vars of the file, by their names
//	markets.NAME   another market slot of the file: .yes, .no (Token), .market
//	event.markets, event.yes_sum, ...
//	               aggregates over the bound markets of the current market's
//	               neg-risk event (EventAgg)
//	feeds.NAME     a feed the agent binds to a real-time price (Feed), and its
//	               methods: feeds.NAME.change(60s), .vol(30m), ...
//	signals.NAME   a signal the agent binds to an outside source (a number)
//
// Prices, sizes and amounts are float64 inside expressions only (see
// docs/design/0030-strategy-numbers.md); results are converted back to exact
// micro-units with explicit rounding. A price that cannot be known (an empty side of
// the book, no trade yet) is NaN, which makes every comparison false and every
// quote using it withdrawn.
//
// An Env is owned by one Instance; its pointers stay fixed so the boxed value is made
// once, and the pointed-to values are rewritten for every evaluation.
type Env struct {
	Yes     *Token      `expr:"yes"`
	No      *Token      `expr:"no"`
	Market  *MarketInfo `expr:"market"`
	Event   *EventInfo  `expr:"event"`
	Account *Account    `expr:"@a"`
	Slots   *Slots      `expr:"@s"`
	Inputs  *Inputs     `expr:"@x"`
	Agg     *EventAgg   `expr:"@e"`
}

// Other is what expressions see of another market slot (markets.NAME): its tokens
// and metadata, filled exactly as the current market's are when the market is
// evaluated itself.
type Other struct {
	Yes    *Token      `expr:"yes"`
	No     *Token      `expr:"no"`
	Market *MarketInfo `expr:"market"`
}

// Feed is what expressions see of a feed (feeds.NAME): the last price of the
// underlying the agent binds the name to, and its time.
type Feed struct {
	Price float64 `expr:"price"` // last price; NaN if none yet, or older than the binding's staleness limit
	Time  int64   `expr:"time"`  // its time, Unix ms; 0 if none
}

// EventAgg are aggregates over the markets of the current market's neg-risk event
// that the agent binds (event.markets, event.yes_sum, ...). A sum is NaN unless
// every one of those markets has the figure it sums; every figure is NaN (markets
// 0) for a market that is not part of a neg-risk event.
type EventAgg struct {
	Markets    int64   `expr:"markets"`      // the bound markets of the event, this one included
	YesSum     float64 `expr:"yes_sum"`      // Σ yes.mid
	YesBidSum  float64 `expr:"yes_bid_sum"`  // Σ yes.bid: what selling one YES of each pays
	YesAskSum  float64 `expr:"yes_ask_sum"`  // Σ yes.ask: what buying one YES of each costs
	YesBidSize float64 `expr:"yes_bid_size"` // the least yes.bid_size among them
	YesAskSize float64 `expr:"yes_ask_size"` // the least yes.ask_size among them
}

// aggNames are EventAgg's names, read as event.NAME.
var aggNames = []string{"markets", "yes_sum", "yes_bid_sum", "yes_ask_sum", "yes_bid_size", "yes_ask_size"}

// Depth is the number of book levels for which depth and imbalance are given: index n
// of Token.BidDepth, AskDepth and Imbalance covers the best n levels, index 0 the whole
// book.
const Depth = 10

// Token is what expressions see of one outcome token of the current market. If the
// token's own book is empty, its book fields are derived from the complementary
// token's book (a bid at p for YES is an ask at 1−p for NO).
type Token struct {
	Bid        float64 `expr:"bid"`        // best bid price; NaN if none
	Ask        float64 `expr:"ask"`        // best ask price; NaN if none
	Mid        float64 `expr:"mid"`        // (bid+ask)/2; NaN unless two-sided
	Microprice float64 `expr:"microprice"` // (bid·ask_size + ask·bid_size)/(bid_size+ask_size); NaN unless two-sided
	Spread     float64 `expr:"spread"`     // ask − bid; NaN unless two-sided
	BidSize    float64 `expr:"bid_size"`   // shares at the best bid; 0 if none
	AskSize    float64 `expr:"ask_size"`   // shares at the best ask; 0 if none
	HasBid     bool    `expr:"has_bid"`
	HasAsk     bool    `expr:"has_ask"`
	TwoSided   bool    `expr:"two_sided"` // both sides present and not crossed

	// BidDepth[n] and AskDepth[n] are the shares on the best n levels (n = 0: all);
	// Imbalance[n] is (bid depth − ask depth)/(bid depth + ask depth) over them, in
	// [−1, 1], 0 for an empty book.
	BidDepth  [Depth + 1]float64 `expr:"bid_depth"`
	AskDepth  [Depth + 1]float64 `expr:"ask_depth"`
	Imbalance [Depth + 1]float64 `expr:"imbalance"`

	Last     float64 `expr:"last"`      // price of the last public trade; NaN if none
	LastSize float64 `expr:"last_size"` // its size; 0 if none
	LastSide string  `expr:"last_side"` // its taker side, "BUY" or "SELL"; "" if none
	LastTime int64   `expr:"last_time"` // its time, Unix ms; 0 if none

	Position float64 `expr:"position"`  // shares held
	AvgPrice float64 `expr:"avg_price"` // average cost per share, fees included; 0 if flat
	Cost     float64 `expr:"cost"`      // cost basis of the position
	UPnL     float64 `expr:"upnl"`      // position marked at mid (or the one side, or the last trade) minus cost
	RPnL     float64 `expr:"rpnl"`      // realized PnL, fees included
	Fees     float64 `expr:"fees"`      // fees paid

	OpenBuy  float64 `expr:"open_buy"`  // shares in this wallet's open BUY orders of this token
	OpenSell float64 `expr:"open_sell"` // shares in its open SELL orders
}

// MarketInfo is the current market's metadata.
type MarketInfo struct {
	Name     string  `expr:"name"`     // the binding's name (the strategy's slot name, or the agent's label)
	ID       string  `expr:"id"`       // condition id
	Tick     float64 `expr:"tick"`     // tick size
	MinSize  float64 `expr:"min_size"` // minimum order size in shares
	FeeBps   float64 `expr:"fee_bps"`  // fee rate in basis points
	Fee      float64 `expr:"fee"`      // fee rate as a fraction (fee_bps / 10000)
	End      int64   `expr:"end"`      // end date, Unix seconds; 0 if none
	EndsIn   float64 `expr:"ends_in"`  // seconds from the event to the end date; +Inf if none
	NegRisk  bool    `expr:"neg_risk"` // part of a neg-risk event
	Tradable bool    `expr:"tradable"` // active, accepting orders, not closed or resolved
	Resolved bool    `expr:"resolved"` // resolved
	YesWon   bool    `expr:"yes_won"`  // resolved with YES winning
}

// EventInfo describes the event being handled.
type EventInfo struct {
	// Kind is one of "book" (a snapshot or a level change), "trade" (a public print),
	// "tick_size", "resolved", "order" and "fill" (this wallet's), "timer".
	Kind  string  `expr:"kind"`
	Token string  `expr:"token"` // "YES" or "NO" when the event concerns one token of this market (resolved: the winner), else ""
	Side  string  `expr:"side"`  // trade: the taker's side; fill and order: ours
	Price float64 `expr:"price"` // trade, fill and order price; NaN otherwise
	Size  float64 `expr:"size"`  // trade and fill size; order size; 0 otherwise
	Fee   float64 `expr:"fee"`   // fill fee
	Time  int64   `expr:"time"`  // event time, Unix ms
}

// Account holds the names expressions see at top level.
type Account struct {
	Time      int64       `expr:"time"`      // event time, Unix ms (there is no now())
	Inventory float64     `expr:"inventory"` // yes.position − no.position: net YES exposure in this market
	UPnL      float64     `expr:"upnl"`      // yes.upnl + no.upnl
	RPnL      float64     `expr:"rpnl"`      // yes.rpnl + no.rpnl
	Balance   float64     `expr:"balance"`   // available collateral
	Reserved  float64     `expr:"reserved"`  // collateral locked by open buy orders
	Mode      string      `expr:"mode"`      // account mode: "normal", "close-only" or "banned"
	Orders    []OrderInfo `expr:"orders"`    // this wallet's open orders in this market, oldest first
}

// OrderInfo is one open order, as expressions see it (orders).
type OrderInfo struct {
	Token     string  `expr:"token"` // "YES" or "NO"
	Side      string  `expr:"side"`  // "BUY" or "SELL"
	Price     float64 `expr:"price"`
	Size      float64 `expr:"size"`
	Remaining float64 `expr:"remaining"`
	Type      string  `expr:"type"` // "GTC", "GTD", ...
	PostOnly  bool    `expr:"post_only"`
	Age       float64 `expr:"age"` // ms since it was created (event time)

	id      market.OrderID // for a deterministic order
	created int64
}

// topNames are the Account fields expressions see at top level.
var topNames = []string{"time", "inventory", "upnl", "rpnl", "balance", "reserved", "mode", "orders"}

// reservedNames are names the file may not use for params, indicators and vars.
var reservedNames = []string{"yes", "no", "market", "event", "markets", "feeds", "signals", "true", "false", "nil", "let", "if", "else", "in", "not", "and", "or", "matches", "contains", "startsWith", "endsWith"}

var nan = math.NaN()

// f converts exact micro-units to the float64 expressions see.
func f(m market.Micros) float64 { return float64(m) / 1e6 }

// fillBook sets the book fields of t from b, or from the mirror of b when mirror is
// set (b is then the complementary token's book). depth says whether to compute the
// depth and imbalance arrays.
func (t *Token) fillBook(b *market.Book, mirror, depth bool) {
	bids, asks := b.Bids, b.Asks
	if mirror {
		bids, asks = b.Asks, b.Bids
	}
	price := func(l market.Level) float64 {
		if mirror {
			return f(market.One - l.Price)
		}
		return f(l.Price)
	}
	t.HasBid, t.HasAsk = len(bids) > 0, len(asks) > 0
	t.Bid, t.Ask, t.BidSize, t.AskSize = nan, nan, 0, 0
	if t.HasBid {
		t.Bid, t.BidSize = price(bids[0]), f(bids[0].Size)
	}
	if t.HasAsk {
		t.Ask, t.AskSize = price(asks[0]), f(asks[0].Size)
	}
	t.TwoSided = t.HasBid && t.HasAsk && t.Bid < t.Ask
	t.Mid, t.Microprice, t.Spread = nan, nan, nan
	if t.HasBid && t.HasAsk {
		t.Mid = float64(t.Bid+t.Ask) / 2
		t.Spread = float64(t.Ask - t.Bid)
		if w := t.BidSize + t.AskSize; w > 0 {
			t.Microprice = float64(float64(t.Bid*t.AskSize)+float64(t.Ask*t.BidSize)) / w
		}
	}
	if depth {
		cumulate(&t.BidDepth, bids)
		cumulate(&t.AskDepth, asks)
		for n := range t.Imbalance {
			t.Imbalance[n] = imbalance(t.BidDepth[n], t.AskDepth[n])
		}
	} else {
		// the top level is cheap and is what the imbalance series samples
		t.BidDepth[1], t.AskDepth[1] = t.BidSize, t.AskSize
		t.Imbalance[1] = imbalance(t.BidSize, t.AskSize)
	}
}

// cumulate sets d[n] to the total size of the best n levels and d[0] to all of them,
// summing exact micro-units.
func cumulate(d *[Depth + 1]float64, lv []market.Level) {
	var sum market.Micros
	for n := 1; n <= Depth; n++ {
		if n <= len(lv) {
			sum += lv[n-1].Size
		}
		d[n] = f(sum)
	}
	for _, l := range lv[min(len(lv), Depth):] {
		sum += l.Size
	}
	d[0] = f(sum)
}

func imbalance(bid, ask float64) float64 {
	if bid+ask == 0 {
		return 0
	}
	return float64(bid-ask) / float64(bid+ask)
}

// clearBook marks every book field of t unknown.
func (t *Token) clearBook() {
	t.HasBid, t.HasAsk, t.TwoSided = false, false, false
	t.Bid, t.Ask, t.Mid, t.Microprice, t.Spread = nan, nan, nan, nan, nan
	t.BidSize, t.AskSize = 0, 0
	t.BidDepth, t.AskDepth, t.Imbalance = [Depth + 1]float64{}, [Depth + 1]float64{}, [Depth + 1]float64{}
}

// fillPosition sets the position fields of t from p (nil: flat), marking it at its
// payout once the market resolved (payout ≥ 0: 1 a winning share, 0 a losing one),
// else at the mid, else the one side of the book there is, else the last trade,
// else its cost.
func (t *Token) fillPosition(p *market.Position, payout market.Micros) {
	if p == nil {
		t.Position, t.AvgPrice, t.Cost, t.UPnL, t.RPnL, t.Fees = 0, 0, 0, 0, 0, 0
		return
	}
	t.Position, t.AvgPrice, t.Cost = f(p.Size), f(p.AvgPrice()), f(p.Cost)
	t.RPnL, t.Fees = f(p.Realized), f(p.Fees)
	mark := t.Mid
	switch {
	case payout >= 0:
		mark = f(payout)
	case !math.IsNaN(mark):
	case t.HasBid:
		mark = t.Bid
	case t.HasAsk:
		mark = t.Ask
	case !math.IsNaN(t.Last):
		mark = t.Last
	default:
		t.UPnL = 0
		return
	}
	t.UPnL = float64(t.Position*mark) - t.Cost
}

// fillLast sets the last-trade fields from the state's print of the token, if any.
func (t *Token) fillLast(lt market.LastTrade, ok bool) {
	if !ok {
		t.Last, t.LastSize, t.LastSide, t.LastTime = nan, 0, "", 0
		return
	}
	t.Last, t.LastSize, t.LastTime = f(lt.Price), f(lt.Size), lt.Time
	t.LastSide = sideName(lt.Side)
}

func sideName(s market.Side) string {
	switch s {
	case market.Buy:
		return "BUY"
	case market.Sell:
		return "SELL"
	}
	return ""
}

func outcomeName(o market.Outcome) string {
	if o == market.No {
		return "NO"
	}
	return "YES"
}

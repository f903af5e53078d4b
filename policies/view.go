package policies

import (
	"math"
	"math/bits"

	"github.com/pitbossdev/pitboss/market"
)

// Guard is one check of the chain. Check returns nil to let the intent go on to the
// next guard, or a denial. Guards run on the goroutine that evaluates, one at a
// time; they must not keep v or anything it points to after returning, and must not
// modify the state.
type Guard interface {
	Name() string
	Check(v *View) *Denied
}

// View is what a guard sees of one intent: the intent, the agent's state, the
// chain's context (geoblock, kill switch, configuration) and figures derived from
// the state, computed once per intent on first use. A View is valid only during the
// Check call it is passed to.
type View struct {
	// Intent is the intent being checked.
	Intent *market.Intent
	// State is the agent's state at this instant (read only).
	State *market.State
	// Replaces is the open order this intent replaces (its reservations do not
	// count against the new order), or nil.
	Replaces *market.Order
	// Geoblock is the current geoblock status.
	Geoblock Geoblock
	// Halted reports whether the kill switch is tripped.
	Halted bool
	// Config is the chain's resolved configuration (every limit set).
	Config *Config
	// Market is the market of Intent.Token (or Intent.Market when Token is empty),
	// nil when the agent does not know it.
	Market *market.Info
	// Outcome is Intent.Token's outcome in Market.
	Outcome market.Outcome
	// Notional is Intent.Price × Intent.Size (0 for intents that do not open).
	Notional market.Micros

	done            bool
	envReady        bool          // the custom guards' Env is filled for this intent
	held            market.Micros // shares of Intent.Token held
	openSells       market.Micros // remaining size of open sells of Intent.Token
	openBuys        market.Micros // remaining size of open buys of Intent.Token
	marketHeld      market.Micros // shares of both tokens of Market held
	marketOpenBuys  market.Micros // remaining size of open buys of both tokens of Market
	openOrders      int           // open orders, Replaces excluded
	openBuyNotional market.Micros // collateral of every open buy, Replaces excluded
	positionsValue  market.Micros // every open position at its mark (set by the chain)
	claims          market.Micros // resolved markets' positions at their payout (set by the chain)
	pending         *pending      // what the batch allowed before this intent
	keep            bool          // a re-check of Replaces, which stays (EvaluateKeeping)
	mb              *marketBooks  // Market's books and positions, when the chain keeps them
}

// books returns the books of Market's two tokens (nil when missing); Market must be
// set.
func (v *View) books() [2]*market.Book {
	if v.mb != nil {
		return v.mb.books
	}
	s, m := v.State, v.Market
	return [2]*market.Book{s.Books[m.Tokens[market.Yes]], s.Books[m.Tokens[market.No]]}
}

// positionSize returns the shares of token t held (State.PositionSize).
func (v *View) positionSize(t market.TokenID) market.Micros {
	if mb := v.mb; mb != nil {
		for o, tok := range mb.tokens {
			if tok == t {
				if p := mb.pos[o]; p != nil {
					return p.Size
				}
				return 0
			}
		}
	}
	return v.State.PositionSize(t)
}

func (v *View) reset(s *market.State, it *market.Intent, replaces *market.Order) {
	*v = View{Intent: it, State: s, Replaces: replaces, Geoblock: v.Geoblock, Halted: v.Halted, Config: v.Config, pending: v.pending}
}

// compute fills the aggregates in one pass over the open orders, then adds what the
// batch allowed before this intent.
func (v *View) compute() {
	if v.done {
		return
	}
	v.done = true
	s, it, m, p := v.State, v.Intent, v.Market, v.pending
	for _, o := range s.Orders {
		if o == v.Replaces || o.Status.Final() || p != nil && len(p.replaced) > 0 && p.isReplaced(o) {
			continue
		}
		v.openOrders++
		rem := o.Remaining()
		if o.Side == market.Buy {
			v.openBuyNotional += notional(o.Price, rem)
		}
		if o.Token == it.Token {
			if o.Side == market.Buy {
				v.openBuys += rem
			} else {
				v.openSells += rem
			}
		}
		if m != nil && o.Side == market.Buy && (o.Token == m.Tokens[market.Yes] || o.Token == m.Tokens[market.No]) {
			v.marketOpenBuys += rem
		}
	}
	v.held = v.positionSize(it.Token)
	if m != nil {
		// The intent's token is nearly always one of its market's: its holding is
		// not looked up twice.
		switch y, n := m.Tokens[market.Yes], m.Tokens[market.No]; it.Token {
		case y:
			v.marketHeld = v.held + v.positionSize(n)
		case n:
			v.marketHeld = v.positionSize(y) + v.held
		default:
			v.marketHeld = v.positionSize(y) + v.positionSize(n)
		}
	}
	if p != nil && p.added > 0 {
		v.openOrders += p.quotes
		v.openBuyNotional += p.notional
		v.openBuys += p.buys(it.Token)
		v.openSells += p.sells(it.Token)
		if m != nil {
			v.marketOpenBuys += p.buys(m.Tokens[market.Yes]) + p.buys(m.Tokens[market.No])
		}
	}
}

// Available returns the collateral a new buy may use: the available balance, plus
// what the replaced buy (and those replaced earlier in the batch) reserve, minus what
// the buys allowed earlier in the batch need.
func (v *View) Available() market.Micros {
	a := v.State.Balance
	if r := v.Replaces; r != nil && r.Side == market.Buy && !r.Status.Final() {
		a += notional(r.Price, r.Remaining()) // what State.Apply reserved for it
	}
	if p := v.pending; p != nil {
		a += p.freed - p.buyCost
	}
	return a
}

// PendingOrders returns how many orders the batch allowed before this intent.
func (v *View) PendingOrders() int {
	if v.pending == nil {
		return 0
	}
	return v.pending.orders
}

// Held returns the shares of the intent's token the agent holds.
func (v *View) Held() market.Micros { v.compute(); return v.held }

// OpenSells returns the shares of the intent's token already offered by open sell
// orders (Replaces excluded) and by sells allowed earlier in the batch: shares that a
// new sell cannot use.
func (v *View) OpenSells() market.Micros { v.compute(); return v.openSells }

// OpenBuys returns the remaining size of open buys of the intent's token, with the
// buys allowed earlier in the batch.
func (v *View) OpenBuys() market.Micros { v.compute(); return v.openBuys }

// MarketHeld returns the shares held of both tokens of the intent's market.
func (v *View) MarketHeld() market.Micros { v.compute(); return v.marketHeld }

// MarketOpenBuys returns the remaining size of open buys of both tokens of the
// intent's market.
func (v *View) MarketOpenBuys() market.Micros { v.compute(); return v.marketOpenBuys }

// OpenOrders returns the number of the agent's open orders, Replaces excluded, with
// the new quotes allowed earlier in the batch.
func (v *View) OpenOrders() int { v.compute(); return v.openOrders }

// OpenBuyNotional returns the collateral committed by every open buy order,
// Replaces excluded.
func (v *View) OpenBuyNotional() market.Micros { v.compute(); return v.openBuyNotional }

// PositionsValue returns the value of every position of an open market at its mark
// (market.State.Mark): the market risk max_gross_exposure bounds. Positions of
// resolved markets awaiting their redeem are not in it: their payout is certain,
// and equity counts it (docs/design/0161).
func (v *View) PositionsValue() market.Micros { v.compute(); return v.positionsValue }

// Closable returns the shares of the intent's token a new sell may offer: held
// minus what open sells already offer. A sell reduces a position when its size is at
// most Closable.
func (v *View) Closable() market.Micros {
	c := v.Held() - v.OpenSells()
	if c < 0 {
		return 0
	}
	return c
}

// Reduces reports whether the intent only reduces a position: a SELL of a token held,
// of at most Closable shares. A BUY of the complementary token is not reducing (the
// service and the exchange core treat it as opening), nor is any buy.
func (v *View) Reduces() bool {
	it := v.Intent
	return it.Side == market.Sell && it.Size > 0 && it.Size <= v.Closable()
}

// Mid returns the mid price of the intent's token: the mid of its own two-sided
// book, else one minus the complementary token's; ok=false when neither has one.
func (v *View) Mid() (market.Micros, bool) {
	if v.Market == nil {
		return 0, false
	}
	return bookMid(v.books(), v.Outcome)
}

// bookMid returns the mid of outcome o of a market from its two books (nil when
// missing, indexed by outcome): from its own two-sided book, else mirrored (1 − mid)
// from the complementary token's book — market.State.Mark's rule without its
// average-cost fallback.
func bookMid(books [2]*market.Book, o market.Outcome) (market.Micros, bool) {
	if b := books[o]; b != nil {
		if mid, ok := b.Mid(); ok {
			return mid, true
		}
	}
	if b := books[o.Other()]; b != nil {
		if mid, ok := b.Mid(); ok {
			return market.One - mid, true
		}
	}
	return 0, false
}

// notional is market.Notional with a fast path for products that fit in 64 bits
// (division by a constant instead of a 128-bit division); it returns 0 for the
// impossible overflow, as Position.Value does.
func notional(price, size market.Micros) market.Micros {
	if price >= 0 && size >= 0 {
		if hi, lo := bits.Mul64(uint64(price), uint64(size)); hi == 0 && lo <= math.MaxInt64 {
			return market.Micros(lo / uint64(market.One))
		}
	}
	n, _ := market.Notional(price, size)
	return n
}

// tokenLabel names the intent's token for people: its market's label and YES or NO
// (market.Info.TokenLabel), or the token id when the market is not known.
func (v *View) tokenLabel(it *market.Intent) string {
	if v.Market == nil {
		return string(it.Token)
	}
	return v.Market.TokenLabel(v.Outcome)
}

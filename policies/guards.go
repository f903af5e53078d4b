package policies

import (
	"fmt"
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

// allowed is the closed set of intent kinds the chain lets through. There is no
// withdrawal, transfer or any other way to move funds out of the venue; an intent
// of any other kind (or a kind added to market later without a decision here) is
// denied: default deny.
func allowedKind(k market.IntentKind) bool {
	switch k {
	case market.IntentQuote, market.IntentTake, market.IntentCancel,
		market.IntentCancelAll, market.IntentFlatten, market.IntentPause,
		market.IntentMerge, market.IntentRedeem:
		return true
	}
	return false
}

// placesOrders reports whether an intent of kind k sends orders to the venue
// (flattening does: marketable sells).
func placesOrders(k market.IntentKind) bool { return k.Opens() || k == market.IntentFlatten }

type allowlistGuard struct{ c *Chain }

func (allowlistGuard) Name() string { return GuardAllowlist }

func (g allowlistGuard) Check(v *View) *Denied {
	it := v.Intent
	if !allowedKind(it.Kind) {
		return g.c.denyKind
	}
	switch it.Kind {
	case market.IntentQuote, market.IntentTake:
		switch {
		case it.Token == "":
			return malformed("no token")
		case !it.Side.Valid():
			return malformed("invalid side")
		case !it.Type.Valid():
			return malformed("invalid order type")
		case it.Kind == market.IntentQuote && !it.Type.Rests():
			return malformed("a quote must be GTC or GTD, not " + it.Type.String())
		case it.Kind == market.IntentTake && it.Type.Rests():
			return malformed("a take must be FOK or FAK, not " + it.Type.String())
		case it.Kind == market.IntentTake && it.PostOnly:
			return malformed("a take cannot be post-only")
		case it.Price <= 0 || it.Price >= market.One:
			return malformed("price must be strictly between 0 and 1")
		case it.Size <= 0 || it.Size > market.MaxMicros:
			return malformed("size must be positive")
		}
	case market.IntentCancel:
		if it.Key == "" && it.OrderID == "" {
			return malformed("cancel names neither a quote key nor an order id")
		}
	case market.IntentMerge:
		return checkMerge(v)
	case market.IntentRedeem:
		return checkRedeem(v)
	}
	return nil
}

// checkMerge checks a merge: a known market and at most the complete sets held
// (the smaller of the two positions). A merge places no order and adds no
// exposure, so the other guards let it through.
func checkMerge(v *View) *Denied {
	it := v.Intent
	m := v.Market
	if it.Market == "" || m == nil {
		return malformed("merge names no known market")
	}
	if m.Resolved {
		return malformed("merge in resolved market " + m.Label() + ": redeem its tokens instead")
	}
	sets := market.Micros(0)
	if y, n := v.State.Positions[m.Tokens[market.Yes]], v.State.Positions[m.Tokens[market.No]]; y != nil && n != nil {
		sets = min(y.Size, n.Size)
	}
	switch {
	case it.Size <= 0:
		return malformed("merge size must be positive")
	case it.Size > sets:
		return malformed("merge of " + it.Size.String() + " sets: " + sets.String() + " complete sets held")
	}
	return nil
}

// checkRedeem checks a redeem: a known market that has resolved, where something is
// held (a losing position redeems too, for nothing). A redeem places no order and
// pays collateral into the same account (nothing leaves it: not a withdrawal), so
// the other guards let it through, as they do merges.
func checkRedeem(v *View) *Denied {
	it := v.Intent
	m := v.Market
	if it.Market == "" || m == nil {
		return malformed("redeem names no known market")
	}
	payout, held, resolved := v.State.Redeemable(m.Condition)
	switch {
	case !resolved:
		return &Denied{Guard: GuardAllowlist, Err: market.Errorf(market.CodeMarketNotResolved, string(m.Condition)),
			Reason: "redeem in market " + m.Label() + ": not resolved yet"}
	case held == 0:
		return &Denied{Guard: GuardAllowlist, Err: market.Errorf(market.CodeNothingToRedeem, string(m.Condition)),
			Reason: "redeem in market " + m.Label() + ": nothing held"}
	case it.Size != payout:
		return malformed("redeem expects " + it.Size.String() + ": the winning shares held pay " + payout.String())
	}
	return nil
}

func malformed(why string) *Denied {
	return &Denied{Guard: GuardAllowlist, Reason: "malformed intent: " + why, Err: ErrNotAllowed}
}

type killGuard struct{ c *Chain }

func (killGuard) Name() string { return GuardKillSwitch }

func (g killGuard) Check(v *View) *Denied {
	if v.Halted && v.Intent.Kind.Opens() {
		return g.c.denyHalted
	}
	return nil
}

type geoGuard struct{ c *Chain }

func (geoGuard) Name() string { return GuardGeoblock }

// Check denies placing orders from an unknown or blocked location and, from a
// close-only location, any order that does not reduce a position. Cancels, cancel-all
// and pauses always pass: they never add exposure. Flattening passes everywhere but
// a blocked location.
func (g geoGuard) Check(v *View) *Denied {
	k := v.Intent.Kind
	if !placesOrders(k) {
		return nil
	}
	switch v.Geoblock.Status {
	case GeoAllowed:
		return nil
	case GeoCloseOnly:
		if k == market.IntentFlatten || v.Reduces() {
			return nil
		}
		return &Denied{Guard: GuardGeoblock, Err: market.ErrGeoblocked,
			Reason: "close-only location " + v.Geoblock.where() + ": the order does not reduce a position"}
	case GeoBlocked:
		return g.c.denyGeoBlocked
	}
	if k == market.IntentFlatten { // unknown: only what reduces (the kill switch's way out)
		return nil
	}
	return g.c.denyGeoUnknown
}

type accountGuard struct{ c *Chain }

func (accountGuard) Name() string { return GuardAccountMode }

func (g accountGuard) Check(v *View) *Denied {
	k := v.Intent.Kind
	if !placesOrders(k) {
		return nil
	}
	switch v.State.Mode {
	case market.ModeNormal:
		return nil
	case market.ModeCloseOnly:
		if k == market.IntentFlatten || v.Reduces() {
			return nil
		}
		return g.c.denyCloseOnly
	}
	return g.c.denyBanned // banned, or a mode this package does not know: default deny
}

type marketGuard struct{}

func (marketGuard) Name() string { return GuardMarketState }

func (marketGuard) Check(v *View) *Denied {
	it := v.Intent
	if !placesOrders(it.Kind) || (it.Kind == market.IntentFlatten && it.Market == "") {
		return nil
	}
	m := v.Market
	switch {
	case m == nil:
		return denyMarketNotFound
	case m.Resolved:
		return denyResolved
	case !m.Tradable():
		return denyNotAccepting
	}
	return nil
}

var (
	denyMarketNotFound = deny(GuardMarketState, market.ErrMarketNotFound)
	denyResolved       = deny(GuardMarketState, market.ErrMarketResolved)
	denyNotAccepting   = deny(GuardMarketState, market.ErrMarketNotAccepting)
)

type preflightGuard struct{}

func (preflightGuard) Name() string { return GuardPreflight }

// Check runs the venue's own order checks before the order leaves, with the venue's
// catalog errors and in the exchange core's order (sandbox/exchange place): tick
// size, lot, minimum size (resting orders only), expiration, post-only crossing and
// balance (collateral for a buy including the worst-case fee; shares for a sell).
func (preflightGuard) Check(v *View) *Denied {
	it, m := v.Intent, v.Market
	if !it.Kind.Opens() {
		return nil
	}
	id := it.Key
	if id == "" {
		id = "(new)"
	}
	if !m.OnTick(it.Price) {
		return deny(GuardPreflight, market.Errorf(market.CodeTickSize, id, it.Price, m.TickSize))
	}
	if it.Size%market.Lot != 0 {
		return deny(GuardPreflight, market.Errorf(market.CodeAmountNotExact, it.Size))
	}
	if it.Type.Rests() && it.Size < m.MinSize { // as the exchange core: takes have no minimum
		return deny(GuardPreflight, market.Errorf(market.CodeMinSize, id, it.Size, m.MinSize))
	}
	if (it.Type == market.GTD) != (it.Expiration != 0) || it.Type == market.GTD && it.Expiration*1000 < v.State.Time {
		return denyExpiration
	}
	if it.PostOnly && crosses(v.books(), v.Outcome, it) {
		return denyPostOnly
	}
	if it.Side == market.Buy {
		if v.Notional+feeBound(v.Notional, m.FeeBps) > v.Available() {
			return denyBalance
		}
	} else if it.Size > v.Closable() {
		return denyBalance
	}
	return nil
}

var (
	denyExpiration = deny(GuardPreflight, market.ErrInvalidExpiration)
	denyPostOnly   = deny(GuardPreflight, market.ErrPostOnlyCrosses)
	denyBalance    = deny(GuardPreflight, market.ErrInsufficientBalance)
)

// feeBound is the largest fee an order of notional n can pay at bps basis points,
// rounded up: the service charges on min(p, 1−p) × size, never more than on p × size.
func feeBound(n market.Micros, bps uint32) market.Micros {
	b := market.Micros(bps)
	return n/10_000*b + (n%10_000*b+9_999)/10_000
}

// crosses reports whether it, an order of outcome o, would cross the books (nil
// when missing, indexed by outcome): pre-flight's post-only check.
func crosses(books [2]*market.Book, o market.Outcome, it *market.Intent) bool {
	opp, ok := bestOpposite(books, o, it.Side)
	return ok && (it.Side == market.Buy && it.Price >= opp || it.Side == market.Sell && it.Price <= opp)
}

// inBand reports whether price is within band of the mid of outcome o (bookMid):
// what price_band allows.
func inBand(books [2]*market.Book, o market.Outcome, price, band market.Micros) bool {
	mid, ok := bookMid(books, o)
	return ok && absDiff(price, mid) <= band
}

// bestOpposite returns the best price an order on side of outcome o would cross
// against: the best ask for a buy, the best bid for a sell, from the token's book or
// mirrored from the complementary token's.
func bestOpposite(books [2]*market.Book, o market.Outcome, side market.Side) (market.Micros, bool) {
	if b := books[o]; b != nil {
		if side == market.Buy {
			if l, ok := b.BestAsk(); ok {
				return l.Price, true
			}
		} else if l, ok := b.BestBid(); ok {
			return l.Price, true
		}
	}
	if b := books[o.Other()]; b != nil {
		if side == market.Buy {
			if l, ok := b.BestBid(); ok {
				return market.One - l.Price, true
			}
		} else if l, ok := b.BestAsk(); ok {
			return market.One - l.Price, true
		}
	}
	return 0, false
}

// funcGuard is a guard made of a name and a function; the limits are these.
type funcGuard struct {
	name  string
	check func(v *View) *Denied
}

func (g funcGuard) Name() string          { return g.name }
func (g funcGuard) Check(v *View) *Denied { return g.check(v) }

// limitGuards returns the risk limits in the order of Config's fields. Limits that
// bound exposure (position, market position, gross exposure) apply to buys only: a
// sell never adds exposure (pre-flight refuses one that exceeds the holding).
func limitGuards(c *Chain) []Guard {
	opens := func(f func(v *View, it *market.Intent, cfg *Config) *Denied) func(v *View) *Denied {
		return func(v *View) *Denied {
			if !v.Intent.Kind.Opens() {
				return nil
			}
			return f(v, v.Intent, v.Config)
		}
	}
	buys := func(f func(v *View, it *market.Intent, cfg *Config) *Denied) func(v *View) *Denied {
		return opens(func(v *View, it *market.Intent, cfg *Config) *Denied {
			if it.Side != market.Buy {
				return nil
			}
			return f(v, it, cfg)
		})
	}
	return []Guard{
		funcGuard{GuardOrderSize, opens(func(v *View, it *market.Intent, cfg *Config) *Denied {
			if it.Size > cfg.MaxOrderSize {
				return c.limitAmounts(GuardOrderSize, "order size %s exceeds max_order_size %s", false, "", it.Size, cfg.MaxOrderSize)
			}
			return nil
		})},
		funcGuard{GuardOrderNotional, opens(func(v *View, it *market.Intent, cfg *Config) *Denied {
			if v.Notional > cfg.MaxOrderNotional {
				return c.limitAmounts(GuardOrderNotional, "order notional %s exceeds max_order_notional %s", false, "", v.Notional, cfg.MaxOrderNotional)
			}
			return nil
		})},
		funcGuard{GuardPosition, buys(func(v *View, it *market.Intent, cfg *Config) *Denied {
			if p := v.Held() + v.OpenBuys() + it.Size; p > cfg.MaxPosition {
				return c.limitAmounts(GuardPosition, "position in %s would reach %s (held %s, open buys %s), above max_position %s",
					true, v.tokenLabel(it), p, v.Held(), v.OpenBuys(), cfg.MaxPosition)
			}
			return nil
		})},
		funcGuard{GuardMarketPos, buys(func(v *View, it *market.Intent, cfg *Config) *Denied {
			if p := v.MarketHeld() + v.MarketOpenBuys() + it.Size; p > cfg.MaxMarketPosition {
				return c.limitAmounts(GuardMarketPos, "position in market %s would reach %s shares, above max_market_position %s",
					true, v.Market.Label(), p, cfg.MaxMarketPosition)
			}
			return nil
		})},
		funcGuard{GuardGross, buys(func(v *View, it *market.Intent, cfg *Config) *Denied {
			if e := v.PositionsValue() + v.OpenBuyNotional() + v.Notional; e > cfg.MaxGrossExposure {
				return c.limitAmounts(GuardGross, "gross exposure would reach %s, above max_gross_exposure %s", false, "", e, cfg.MaxGrossExposure)
			}
			return nil
		})},
		funcGuard{GuardOpenOrders, opens(func(v *View, it *market.Intent, cfg *Config) *Denied {
			// Takes (FOK, FAK) never rest, so they do not count.
			if it.Kind == market.IntentQuote && v.OpenOrders()+1 > cfg.MaxOpenOrders {
				return c.limit(GuardOpenOrders, "%d open orders, max_open_orders is %d", v.OpenOrders(), cfg.MaxOpenOrders)
			}
			return nil
		})},
		funcGuard{GuardPriceBand, opens(func(v *View, it *market.Intent, cfg *Config) *Denied {
			mid, ok := v.Mid()
			if !ok {
				return c.limitAmounts(GuardPriceBand, "no two-sided book for %s to check the price band against", true, string(it.Token))
			}
			if d := absDiff(it.Price, mid); d > cfg.PriceBand {
				return c.limitAmounts(GuardPriceBand, "price %s is %s from the mid %s, beyond price_band %s", false, "", it.Price, d, mid, cfg.PriceBand)
			}
			return nil
		})},
		funcGuard{GuardRate, opens(func(v *View, it *market.Intent, cfg *Config) *Denied {
			if !v.keep && c.rate.full(v.State.Time, v.PendingOrders()) {
				return c.limit(GuardRate, "%d orders sent in the last 60s, max_orders_per_minute is %d", cfg.MaxOrdersPerMinute, cfg.MaxOrdersPerMinute)
			}
			return nil
		})},
	}
}

// limit returns the denial of a limit guard, its reason formatted from args. The
// last denial of each guard is kept with its arguments and returned again while
// they are equal (the same reason), so a limit that keeps denying, as
// max_market_position does for a quote the strategy keeps asking for, is formatted
// once (a Denied is never modified, and reused decisions share theirs already).
func (c *Chain) limit(guard, format string, args ...any) *Denied {
	l := c.lastLimit(guard)
	if l != nil && l.format == format && slices.Equal(l.args, args) {
		return l.d
	}
	d := &Denied{Guard: guard, Reason: fmt.Sprintf(format, args...), Err: ErrLimit}
	if l == nil {
		l = c.newLimit(guard)
	}
	l.format, l.args, l.d = format, append(l.args[:0], args...), d
	return d
}

// limitAmounts is limit for a reason formatted from an id (first, when withID)
// and amounts: it compares them with the last denial's without boxing them into
// arguments, so that a denial given again allocates nothing. The text is the one
// limit formats from the same values (ids have no String method).
func (c *Chain) limitAmounts(guard, format string, withID bool, id string, amounts ...market.Micros) *Denied {
	l := c.lastLimit(guard)
	if l != nil && l.format == format && l.withID == withID && l.id == id && slices.Equal(l.amounts, amounts) {
		return l.d
	}
	args := make([]any, 0, len(amounts)+1)
	if withID {
		args = append(args, id)
	}
	for _, a := range amounts {
		args = append(args, a)
	}
	d := &Denied{Guard: guard, Reason: fmt.Sprintf(format, args...), Err: ErrLimit}
	if l == nil {
		l = c.newLimit(guard)
	}
	l.format, l.args, l.d = format, l.args[:0], d
	l.withID, l.id, l.amounts = withID, id, append(l.amounts[:0], amounts...)
	return d
}

// lastLimit returns the last denial of guard, nil if it has none.
func (c *Chain) lastLimit(guard string) *lastLimit {
	for i := range c.limits {
		if c.limits[i].guard == guard {
			return &c.limits[i]
		}
	}
	return nil
}

func (c *Chain) newLimit(guard string) *lastLimit {
	c.limits = append(c.limits, lastLimit{guard: guard})
	return &c.limits[len(c.limits)-1]
}

// lastLimit is the last denial of a limit guard and what it was formatted from:
// args (limit), or an id and amounts (limitAmounts). Each format is given by one
// of the two, so equal formats mean the same kind of figures.
type lastLimit struct {
	guard, format string
	args          []any
	withID        bool
	id            string
	amounts       []market.Micros
	d             *Denied
}

func absDiff(a, b market.Micros) market.Micros {
	if a > b {
		return a - b
	}
	return b - a
}

// window counts event times of orders sent within the last 60 s. It holds at most
// cap times (the limit), so its memory is fixed at construction.
type window struct {
	ts      []int64
	head, n int
}

const minute = 60_000

func (w *window) add(t int64) {
	if len(w.ts) == 0 {
		return
	}
	if w.n < len(w.ts) {
		w.ts[(w.head+w.n)%len(w.ts)] = t
		w.n++
		return
	}
	w.ts[w.head] = t
	w.head = (w.head + 1) % len(w.ts)
}

// full drops times older than 60 s before now and reports whether the window, with
// extra orders about to be sent, holds its capacity.
func (w *window) full(now int64, extra int) bool {
	for w.n > 0 && w.ts[w.head] <= now-minute {
		w.head = (w.head + 1) % len(w.ts)
		w.n--
	}
	return w.n+extra >= len(w.ts)
}

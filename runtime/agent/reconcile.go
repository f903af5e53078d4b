package agent

import "github.com/pitbossdev/pitboss/market"

// Plan is what the reconciler does with one desired quote given the order that
// currently carries it.
type Plan uint8

// Plans.
const (
	PlanNone    Plan = iota // nothing wanted and nothing live
	PlanKeep                // the live order is close enough: leave it
	PlanPlace               // no live order: place one
	PlanReplace             // the live order is off: cancel it, then place the new one
	PlanCancel              // nothing wanted: cancel the live order
	PlanWait                // a request for this quote is in flight: decide again when it is answered
)

var planNames = [...]string{"none", "keep", "place", "replace", "cancel", "wait"}

// String returns a short lower-case name.
func (p Plan) String() string {
	if int(p) < len(planNames) {
		return planNames[p]
	}
	return "unknown"
}

// Live is what the reconciler knows of the order that carries a quote.
type Live struct {
	Token      market.TokenID
	Side       market.Side
	Price      market.Micros
	Remaining  market.Micros
	Type       market.OrderType
	PostOnly   bool
	Expiration int64 // Unix seconds, 0 if none
}

// PlanQuote decides what to do with desired quote want (nil: the quote is not
// wanted) given the live order (nil: none) and whether a request for it is in
// flight, at event time now (Unix ms) on a market with the given tick. It is the
// hysteresis of the reconciler, a pure function:
//
//   - a live order is kept while it is for the same token, side, type and
//     post-only flag, its price is within tolTicks ticks of the desired price, and
//     its remaining size is within sizeTol (a fraction in micro-units) of the
//     desired size;
//   - a GTD order is not replaced because the strategy recomputed its expiration
//     (that happens on every event), only when less than half of the lifetime the
//     strategy now wants remains, so that it is refreshed before it expires.
func PlanQuote(want *market.Intent, live *Live, inFlight bool, now int64, tick market.Micros, tolTicks int, sizeTol market.Micros) Plan {
	switch {
	case inFlight:
		return PlanWait
	case want == nil && live == nil:
		return PlanNone
	case want == nil:
		return PlanCancel
	case live == nil:
		return PlanPlace
	}
	if Close(want, live, now, tick, tolTicks, sizeTol) {
		return PlanKeep
	}
	return PlanReplace
}

// Close reports whether live is close enough to want to be kept (see PlanQuote).
func Close(want *market.Intent, live *Live, now int64, tick market.Micros, tolTicks int, sizeTol market.Micros) bool {
	if live.Token != want.Token || live.Side != want.Side || live.Type != want.Type || live.PostOnly != want.PostOnly {
		return false
	}
	d := live.Price - want.Price
	if d < 0 {
		d = -d
	}
	if tick <= 0 {
		tick = market.TickSizes[len(market.TickSizes)-1]
	}
	if d > market.Micros(tolTicks)*tick {
		return false
	}
	band, _ := market.MulDiv(want.Size, sizeTol, market.One)
	ds := live.Remaining - want.Size
	if ds < 0 {
		ds = -ds
	}
	if ds > band {
		return false
	}
	if want.Type == market.GTD && live.Expiration != 0 && want.Expiration != 0 {
		left := live.Expiration*1000 - now
		wanted := want.Expiration*1000 - now
		if left < wanted/2 {
			return false
		}
	}
	return true
}

// bucket is a token bucket in event time: rate tokens per second, at most burst.
type bucket struct {
	rate, burst int64
	tokens      int64 // in millitokens
	last        int64 // event time of the last refill, Unix ms
}

func newBucket(rate, burst int) bucket {
	return bucket{rate: int64(rate), burst: int64(burst), tokens: int64(burst) * 1000}
}

// take refills up to now and takes one token if there is one.
func (b *bucket) take(now int64) bool {
	if b.last == 0 || now < b.last {
		b.last = now
	}
	if dt := now - b.last; dt > 0 {
		b.tokens = min(b.burst*1000, b.tokens+dt*b.rate)
		b.last = now
	}
	if b.tokens >= 1000 {
		b.tokens -= 1000
		return true
	}
	return false
}

// FlattenPrice is the limit of a flattening FAK sell: slippage below the best bid,
// rounded down to the tick, never below one tick. ok is false without a bid.
func FlattenPrice(bestBid, slippage, tick market.Micros) (market.Micros, bool) {
	if bestBid <= 0 || tick <= 0 {
		return 0, false
	}
	p := bestBid - slippage
	p -= p % tick
	if p < tick {
		p = tick
	}
	return p, true
}

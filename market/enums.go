package market

import "fmt"

// Side is the direction of an order from its owner's point of view. The zero value is
// invalid, so an unset side never becomes a buy by accident.
type Side uint8

// Sides.
const (
	Buy  Side = 1
	Sell Side = 2
)

// String returns "BUY" or "SELL" (the wire spelling), or "Side(n)" for invalid values.
func (s Side) String() string {
	switch s {
	case Buy:
		return "BUY"
	case Sell:
		return "SELL"
	}
	return fmt.Sprintf("Side(%d)", uint8(s))
}

// Valid reports whether s is Buy or Sell.
func (s Side) Valid() bool { return s == Buy || s == Sell }

// Opposite returns the other side; the opposite of an invalid side is itself.
func (s Side) Opposite() Side {
	switch s {
	case Buy:
		return Sell
	case Sell:
		return Buy
	}
	return s
}

// ParseSide accepts "BUY" and "SELL" exactly (the wire spelling).
func ParseSide(s string) (Side, bool) {
	switch s {
	case "BUY":
		return Buy, true
	case "SELL":
		return Sell, true
	}
	return 0, false
}

// OrderType is the time-in-force of an order. The zero value is GTC, the service's
// default.
type OrderType uint8

// Order types.
const (
	GTC OrderType = iota // good till cancelled: rests on the book
	GTD                  // good till date: rests until its expiration passes
	FOK                  // fill or kill: fills completely at once or is rejected
	FAK                  // fill and kill: fills what it can at once, the rest is cancelled
)

var orderTypeNames = [...]string{"GTC", "GTD", "FOK", "FAK"}

// String returns the wire spelling ("GTC", "GTD", "FOK", "FAK").
func (t OrderType) String() string {
	if int(t) < len(orderTypeNames) {
		return orderTypeNames[t]
	}
	return fmt.Sprintf("OrderType(%d)", uint8(t))
}

// Valid reports whether t is one of the four order types.
func (t OrderType) Valid() bool { return int(t) < len(orderTypeNames) }

// Rests reports whether orders of this type can rest on the book (GTC, GTD).
func (t OrderType) Rests() bool { return t == GTC || t == GTD }

// ParseOrderType accepts the wire spellings, upper or lower case.
func ParseOrderType(s string) (OrderType, bool) {
	switch s {
	case "GTC", "gtc":
		return GTC, true
	case "GTD", "gtd":
		return GTD, true
	case "FOK", "fok":
		return FOK, true
	case "FAK", "fak":
		return FAK, true
	}
	return 0, false
}

// Outcome names one of the two tokens of a binary condition.
type Outcome uint8

// Outcomes. YES is outcome index 0, NO is outcome index 1, as on the service.
const (
	Yes Outcome = 0
	No  Outcome = 1
)

// String returns "YES" or "NO".
func (o Outcome) String() string {
	if o == No {
		return "NO"
	}
	if o == Yes {
		return "YES"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Other returns the complementary outcome.
func (o Outcome) Other() Outcome { return 1 - o }

// AccountMode is what an account may do. The zero value is normal trading.
type AccountMode uint8

// Account modes, as the service defines them.
const (
	ModeNormal    AccountMode = iota // everything allowed
	ModeCloseOnly                    // only orders that reduce an existing position
	ModeBanned                       // no orders at all
)

// String returns "normal", "close-only" or "banned".
func (m AccountMode) String() string {
	switch m {
	case ModeNormal:
		return "normal"
	case ModeCloseOnly:
		return "close-only"
	case ModeBanned:
		return "banned"
	}
	return fmt.Sprintf("AccountMode(%d)", uint8(m))
}

// TickSizes are the four tick sizes a market can have, in micro-units: 0.1, 0.01,
// 0.001 and 0.0001.
var TickSizes = [...]Micros{100_000, 10_000, 1_000, 100}

// ValidTick reports whether t is one of TickSizes.
func ValidTick(t Micros) bool {
	for _, v := range TickSizes {
		if v == t {
			return true
		}
	}
	return false
}

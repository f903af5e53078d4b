package market

import "unsafe"

// IntentKind says what an agent intends to do. The set is closed: there is no
// withdrawal, transfer or any other movement of funds out of the venue, by
// construction (see docs/design).
type IntentKind uint8

// Intent kinds. The zero value is invalid.
const (
	// IntentQuote declares a desired resting order identified by Key; the reconciler
	// places, replaces or keeps an order so that one live order matches it.
	IntentQuote IntentKind = iota + 1
	// IntentTake sends one immediate order (FOK or FAK).
	IntentTake
	// IntentCancel withdraws the quote identified by Key (or the order OrderID).
	IntentCancel
	// IntentCancelAll cancels every open order of the agent (of Market, if set).
	IntentCancelAll
	// IntentFlatten closes the agent's position in Market (every market if empty)
	// with marketable orders, after cancelling its open orders there.
	IntentFlatten
	// IntentPause stops opening positions until an operator resumes the agent.
	IntentPause
	// IntentMerge turns Size complete sets of Market (one YES and one NO each) back
	// into Size of collateral: it only reduces positions.
	IntentMerge
	// IntentRedeem collects a resolved Market's tokens held: the winning shares pay
	// one each in collateral of the same account, the losing ones are burned. Size is
	// the collateral the redeem is expected to pay (the winning shares held).
	IntentRedeem
)

var intentKindNames = [...]string{"invalid", "quote", "take", "cancel", "cancel_all", "flatten", "pause", "merge", "redeem"}

// String returns a short lower-case name ("quote", "take", ...).
func (k IntentKind) String() string {
	if int(k) < len(intentKindNames) {
		return intentKindNames[k]
	}
	return "unknown"
}

// Valid reports whether k is one of the defined kinds.
func (k IntentKind) Valid() bool { return k >= IntentQuote && int(k) < len(intentKindNames) }

// Opens reports whether an intent of this kind can place an order.
func (k IntentKind) Opens() bool { return k == IntentQuote || k == IntentTake }

// Intent is one thing a strategy wants done. Order fields (Token, Side, Price, Size,
// Type, PostOnly, Expiration) are meaningful for quotes and takes.
type Intent struct {
	Kind       IntentKind
	Key        string // quote id (for IntentQuote, IntentCancel) or rule name
	Market     ConditionID
	Token      TokenID
	Outcome    Outcome
	Side       Side
	Price      Micros
	Size       Micros
	Type       OrderType
	PostOnly   bool
	Expiration int64   // Unix seconds, GTD only
	OrderID    OrderID // IntentCancel of one specific order
	Reason     string  // why the strategy wants it (rule or quote name), for the audit trail
}

// Same reports whether it and o are equal in every field (*it == *o), comparing
// strings by their data pointer first: a strategy hands the same strings event
// after event, so the usual equal intent costs no call to compare bytes.
// TestSameComparesEveryField checks it against ==.
func (it *Intent) Same(o *Intent) bool {
	// The same bytes (string headers included: the same data) are the same
	// intent; otherwise (other string data, or padding bytes that differ) field
	// by field.
	if *(*intentBytes)(unsafe.Pointer(it)) == *(*intentBytes)(unsafe.Pointer(o)) {
		return true
	}
	return it.Price == o.Price && it.Size == o.Size && it.Kind == o.Kind && it.Side == o.Side && it.Outcome == o.Outcome &&
		it.Type == o.Type && it.PostOnly == o.PostOnly && it.Expiration == o.Expiration &&
		Same(it.Key, o.Key) && Same(it.Token, o.Token) && Same(it.Market, o.Market) && Same(it.OrderID, o.OrderID) &&
		Same(it.Reason, o.Reason)
}

// intentBytes is an Intent's memory.
type intentBytes [unsafe.Sizeof(Intent{})]byte

// Same reports whether a == b, without comparing bytes when both are the same
// string data (ids interned by a tape reader, strings a strategy hands again).
func Same[S ~string](a, b S) bool {
	return len(a) == len(b) && (unsafe.StringData(string(a)) == unsafe.StringData(string(b)) || a == b)
}

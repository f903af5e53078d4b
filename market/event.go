package market

// EventKind says what an Event carries.
type EventKind uint8

// Event kinds. The zero value is invalid.
const (
	EventBook        EventKind = iota + 1 // full book snapshot of one token (Bids, Asks)
	EventPriceChange                      // aggregate size at one or more levels changed (Changes)
	EventLastTrade                        // a trade printed on the public tape (Price, Size, Side)
	EventTickSize                         // the tick size changed (OldTick, NewTick)
	EventResolved                         // the market resolved (Winner)
	EventOrder                            // an order of this wallet changed (Order, OrderUpdate)
	EventFill                             // an order of this wallet traded (Fill)
	EventTimer                            // time advanced with no market data (Time only)
	EventFeed                             // a price of an underlying from a real-time feed (Name, Value)
	EventSignal                           // a value of an outside signal (Name, Value)
)

var eventKindNames = [...]string{"invalid", "book", "price_change", "last_trade_price", "tick_size_change", "market_resolved", "order", "fill", "timer", "feed", "signal"}

// String returns a short lower-case name ("book", "price_change", ...).
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "unknown"
}

// Level is one price level: the aggregate size resting at Price.
type Level struct {
	Price Micros
	Size  Micros
}

// LevelChange is the new aggregate size of one level of one token's book; Size zero
// removes the level. Side Buy is the bid side, Sell the ask side.
type LevelChange struct {
	Token TokenID
	Side  Side
	Price Micros
	Size  Micros
	// BestBid and BestAsk are the top of the book after this change (0 when a side
	// is empty).
	BestBid Micros
	BestAsk Micros
}

// OrderUpdate says what happened to an order in an EventOrder.
type OrderUpdate uint8

// Order updates, as on the service's user channel.
const (
	OrderPlacement    OrderUpdate = iota + 1 // accepted onto the book
	OrderUpdated                             // partially or completely matched
	OrderCancellation                        // cancelled or expired
)

// String returns the user-channel spelling (PLACEMENT, UPDATE, CANCELLATION).
func (u OrderUpdate) String() string {
	switch u {
	case OrderPlacement:
		return "PLACEMENT"
	case OrderUpdated:
		return "UPDATE"
	case OrderCancellation:
		return "CANCELLATION"
	}
	return "UNKNOWN"
}

// Event is one input of an agent: market data for a token, or news about the agent's
// own orders. It is a flat value so that the hot path does not allocate; only the
// fields that belong to Kind are meaningful.
//
// Books are best-first: Bids descending by price, Asks ascending. (Wire formats order
// levels differently; adapters convert.) Slices in an Event are owned by the producer
// until the consumer returns from handling it; a consumer that keeps them copies them.
type Event struct {
	Kind   EventKind
	Seq    uint64 // producer's sequence number; consecutive per connection when known, 0 otherwise
	Time   int64  // event time, Unix milliseconds, from the venue (never the consumer's clock)
	Market ConditionID
	Token  TokenID

	// EventBook.
	Bids, Asks []Level
	Hash       string // the venue's book hash, if any

	// EventPriceChange.
	Changes []LevelChange

	// EventLastTrade.
	Price Micros
	Size  Micros
	Side  Side // the taker's side

	// EventTickSize.
	OldTick, NewTick Micros

	// EventResolved.
	Winner TokenID

	// EventOrder.
	Order       Order
	OrderUpdate OrderUpdate

	// EventFill.
	Fill Fill

	// EventFeed: Name is the feed's symbol ("crypto:btcusdt") and Value its price.
	// EventSignal: Name is the signal's name and Value its number. These are
	// outside measurements that expressions read, never amounts of money, so they
	// are float64 (docs/design/0133-strategy-inputs.md).
	Name  string
	Value float64
}

package exchange

import (
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// EventKind says what an Event reports. The zero value is invalid. The numeric values
// are part of the event-log encoding and never change.
type EventKind uint8

// Event kinds. The fields each kind sets are listed in Event's documentation.
const (
	MarketCreated    EventKind = 1
	MarketUpdated    EventKind = 2
	MarketResolved   EventKind = 3
	OrderAccepted    EventKind = 4  // a Place passed validation; its reservation is made
	CommandRejected  EventKind = 5  // a command was refused; Code says why; nothing else changed
	OrderFilled      EventKind = 6  // a resting (maker) order traded against the taker
	TradeExecuted    EventKind = 7  // the taker's summary of one Place that matched
	OrderRested      EventKind = 8  // the (rest of the) taker order went onto the book
	OrderCancelled   EventKind = 9  // an open order was removed; Reason says why
	OrderExpired     EventKind = 10 // a GTD order's expiration passed
	BookChanged      EventKind = 11 // new aggregate size of one YES-book level
	BalanceChanged   EventKind = 12 // new available/reserved amounts of one balance
	Deposited        EventKind = 13
	Withdrawn        EventKind = 14
	PositionsSplit   EventKind = 15
	PositionsMerged  EventKind = 16
	Redeemed         EventKind = 17
	NonceIncremented EventKind = 18
	ModeChanged      EventKind = 19
	Transferred      EventKind = 20
	Converted        EventKind = 21
	Swapped          EventKind = 22
)

var eventKindNames = [...]string{"invalid", "market_created", "market_updated", "market_resolved",
	"order_accepted", "command_rejected", "order_filled", "trade_executed", "order_rested",
	"order_cancelled", "order_expired", "book_changed", "balance_changed", "deposited",
	"withdrawn", "positions_split", "positions_merged", "redeemed", "nonce_incremented", "mode_changed", "transferred", "converted", "swapped"}

// String returns a short lower-case name ("order_filled", ...).
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Reason says why an order left the book without being filled.
type Reason uint8

// Cancellation reasons.
const (
	ReasonNone      Reason = 0
	ReasonOwner     Reason = 1 // Cancel or CancelAll by the owner
	ReasonVenue     Reason = 2 // Cancel or CancelAll with the zero owner (the venue)
	ReasonSelfTrade Reason = 3 // self-trade prevention: the resting order met its owner's taker
	ReasonUnfilled  Reason = 4 // the unfilled rest of a FAK order
	ReasonNonce     Reason = 5 // IncrementNonce invalidated it
	ReasonMode      Reason = 6 // the owner became banned (all orders) or close-only (buys)
	ReasonClosed    Reason = 7 // the market was closed
	ReasonResolved  Reason = 8 // the market resolved
	ReasonExpired   Reason = 9 // GTD expiration (OrderExpired events)
)

var reasonNames = [...]string{"none", "owner", "venue", "self_trade", "unfilled", "nonce", "mode", "closed", "resolved", "expired"}

// String returns a short lower-case name ("self_trade", ...).
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// MarketFlags are a market's boolean state, packed for events.
type MarketFlags uint8

// Market flags.
const (
	FlagActive MarketFlags = 1 << iota
	FlagClosed
	FlagArchived
	FlagAcceptingOrders
	FlagNegRisk
	FlagResolved
)

// Event is one output of the engine. It is a flat value (no pointers besides strings
// the engine already holds), so producing one never allocates. Seq numbers start at 1
// and increase by one per event across the whole life of the engine, rejected commands
// included; Time is the engine clock when the event happened (Unix milliseconds).
//
// Fields by kind (the others are zero):
//
//	MarketCreated    Market, Token (YES), Other (NO), Tick, Size (min size), FeeBps, Flags
//	MarketUpdated    as MarketCreated, plus OldTick (the tick before; equal to Tick if unchanged)
//	MarketResolved   Market, Token (winning), Other (losing), Outcome (winning), Flags
//	OrderAccepted    Order, Owner, Market, Token, Outcome, Side, Type, PostOnly, Price, Size,
//	                 Expiration, Nonce, FeeBps, Status (Live), Amount (what was reserved:
//	                 collateral for a BUY, including the worst-case fee when the order
//	                 crosses; tokens for a SELL)
//	CommandRejected  Code (the catalog code), and what identifies the command: Order,
//	                 Owner, Market, Token, Side, Type, Price, Size, Amount
//	OrderFilled      Trade, Order, Owner, Market, Token, Outcome, Side, Price (the maker's own
//	                 price, in its token), Size (this fill), Amount (price × size in
//	                 collateral), Fee (makers pay none: 0), Matched, Remaining, Status
//	TradeExecuted    Trade, Order (taker), Owner, Market, Token, Outcome, Side, Type,
//	                 Price (at the first maker level, in the taker's token), Size (total
//	                 filled), Amount (total collateral paid or received before the fee),
//	                 Fee, Matched, Remaining, Status (final: Matched, Live or Canceled)
//	OrderRested      Order, Owner, Market, Token, Outcome, Side, Type, Price, Size, Matched,
//	                 Remaining, Expiration, Status (Live)
//	OrderCancelled   Order, Owner, Market, Token, Outcome, Side, Type, Price, Size, Matched,
//	                 Remaining (what was open), Reason, Status (Canceled)
//	OrderExpired     as OrderCancelled with Reason Expired and Status Expired
//	BookChanged      Market, Token (YES), Other (NO), Side (Buy: bid, Sell: ask, of the YES
//	                 book), Price, Size (new aggregate; 0 removes the level), BestBid and
//	                 BestAsk (YES book, after the command; 0 when a side is empty).
//	                 LevelChanges gives the same change for both tokens.
//	BalanceChanged   Owner, and Market, Token, Outcome for a token balance (empty Token:
//	                 collateral), Available, Reserved (after the command)
//	Deposited        Owner, Amount
//	Withdrawn        Owner, Amount
//	PositionsSplit   Owner, Market, Amount
//	PositionsMerged  Owner, Market, Amount
//	Redeemed         Owner, Market, Token (winning), Amount (winning tokens burned =
//	                 collateral paid), Size (losing tokens burned)
//	NonceIncremented Owner, Nonce (the new nonce)
//	ModeChanged      Owner, Mode
//	Transferred      Owner (payer), To (payee), Amount
//	Converted        Owner, Market (whose NO was converted), Token (that NO token), Amount
//	                 (NO tokens burned = YES tokens credited in each other unresolved
//	                 market of the event)
//	Swapped          Trade (the next trade number, shared with matches), Owner
//	                 (seller), To (buyer), Market, Token, Outcome, Size (tokens moved),
//	                 Amount (collateral paid), Price (Amount per share, in the token's
//	                 terms, truncated to the micro-unit)
//
// Within one command, events come in this order: expirations due at the command's time
// (each OrderExpired, then their BookChanged and BalanceChanged), then the command's own
// events, then one BookChanged per level it touched and one BalanceChanged per balance it
// touched (each once, with the final values, in the order first touched). A Place that
// matches emits OrderAccepted, then for each resting order met either OrderFilled or
// (self-trade prevention) OrderCancelled, then TradeExecuted, then OrderRested or (FAK
// rest) OrderCancelled.
type Event struct {
	Seq  uint64
	Time int64
	Kind EventKind

	Side     market.Side
	Outcome  market.Outcome
	Type     market.OrderType
	Status   market.OrderStatus
	Reason   Reason
	Mode     market.AccountMode
	Flags    MarketFlags
	PostOnly bool
	FeeBps   uint32

	Code   market.Code
	Market market.ConditionID
	Token  market.TokenID
	Other  market.TokenID
	Order  market.OrderID
	Owner  market.Address

	Trade      uint64 // trade number, 1, 2, ... of matches and swaps (the server renders its trade ids from it)
	Nonce      uint64
	Expiration int64

	Price     market.Micros
	Size      market.Micros
	Matched   market.Micros
	Remaining market.Micros
	Amount    market.Micros
	Fee       market.Micros
	Available market.Micros
	Reserved  market.Micros
	BestBid   market.Micros
	BestAsk   market.Micros
	Tick      market.Micros
	OldTick   market.Micros

	To market.Address // Transferred: the payee; Swapped: the buyer
}

// LevelChanges returns a BookChanged event as the change of the YES token's book and
// the mirrored change of the NO token's book (a YES bid at p is a NO ask at 1−p). ok is
// false for other kinds.
func (ev *Event) LevelChanges() (yes, no market.LevelChange, ok bool) {
	if ev.Kind != BookChanged {
		return yes, no, false
	}
	yes = market.LevelChange{Token: ev.Token, Side: ev.Side, Price: ev.Price, Size: ev.Size, BestBid: ev.BestBid, BestAsk: ev.BestAsk}
	no = market.LevelChange{Token: ev.Other, Side: ev.Side.Opposite(), Price: market.One - ev.Price, Size: ev.Size,
		BestBid: mirror(ev.BestAsk), BestAsk: mirror(ev.BestBid)}
	return yes, no, true
}

// Err returns the catalog error of a CommandRejected event with its code's message
// template (the rendered message with its arguments is the error Apply returned), or
// nil for other kinds.
func (ev *Event) Err() *market.Error {
	if ev.Kind != CommandRejected {
		return nil
	}
	s, ok := market.Lookup(ev.Code)
	if !ok {
		return &market.Error{Code: ev.Code, Status: 400, Message: string(ev.Code)}
	}
	return &market.Error{Code: ev.Code, Status: s.Status, Message: s.Template}
}

// mirror maps a YES price to the NO price (0 stays 0: an empty side).
func mirror(p market.Micros) market.Micros {
	if p == 0 {
		return 0
	}
	return market.One - p
}

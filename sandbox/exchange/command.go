package exchange

import (
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// CommandKind says what a Command does. The zero value is invalid. The numeric values
// are part of the binary encoding (see AppendBinary) and never change.
type CommandKind uint8

// Command kinds. The fields each kind reads are listed in Command's documentation.
const (
	CreateMarket   CommandKind = 1  // list a binary market (Market, Spec)
	UpdateMarket   CommandKind = 2  // change a market's parameters and flags (Market, Spec)
	Resolve        CommandKind = 3  // resolve a market to one outcome (Market, Winner)
	Deposit        CommandKind = 4  // credit collateral (Owner, Amount)
	Withdraw       CommandKind = 5  // debit available collateral (Owner, Amount)
	Split          CommandKind = 6  // collateral → YES + NO (Owner, Market, Amount)
	Merge          CommandKind = 7  // YES + NO → collateral (Owner, Market, Amount)
	Redeem         CommandKind = 8  // winning tokens → collateral, losing burned (Owner, Market)
	Place          CommandKind = 9  // place an order (Order, Owner, Token, Side, Type, PostOnly, Price, Size, Expiration, Nonce, FeeRateBps)
	Cancel         CommandKind = 10 // cancel one open order (Order, Owner)
	CancelAll      CommandKind = 11 // cancel open orders by owner, market and/or token (Owner, Market, Token)
	IncrementNonce CommandKind = 12 // bump the owner's exchange nonce, cancelling its orders (Owner)
	SetAccountMode CommandKind = 13 // set normal, close-only or banned (Owner, Mode)
	AdvanceTime    CommandKind = 14 // move the clock (Time only)
	Transfer       CommandKind = 15 // move available collateral to another account (Owner, To, Amount)
	Convert        CommandKind = 16 // neg-risk: NO of one market → YES of the event's other markets (Owner, Market, Amount)
	Swap           CommandKind = 17 // settle a negotiated (RFQ) trade: Size of Token from Owner to To, Amount of collateral from To to Owner
)

var commandKindNames = [...]string{"invalid", "create_market", "update_market", "resolve", "deposit", "withdraw",
	"split", "merge", "redeem", "place", "cancel", "cancel_all", "increment_nonce", "set_account_mode", "advance_time", "transfer", "convert", "swap"}

// String returns a short lower-case name ("place", "cancel_all", ...).
func (k CommandKind) String() string {
	if int(k) < len(commandKindNames) {
		return commandKindNames[k]
	}
	return "CommandKind(" + strconv.Itoa(int(k)) + ")"
}

// Valid reports whether k is one of the defined kinds.
func (k CommandKind) Valid() bool { return k >= CreateMarket && k <= Swap }

// Command is one input of the engine: a plain value, so that it can be journaled
// (AppendBinary), replayed and compared. Only the fields that belong to Kind are read;
// the others are ignored by Apply (but still encoded, so a decoded command is equal to
// the one that was encoded).
//
// Every command carries its time, Unix milliseconds, chosen by the caller (the server's
// clock, a backtest's recorded time). The engine clock never goes backwards: a command
// whose Time is earlier than the clock is applied at the clock's time.
//
// Fields by kind:
//
//	CreateMarket   Market (condition id), Spec (all fields)
//	UpdateMarket   Market, Spec (every field except Tokens, NegRisk and NegRiskID, which never change)
//	Resolve        Market, Winner
//	Deposit        Owner, Amount (collateral micro-units, > 0)
//	Withdraw       Owner, Amount
//	Split, Merge   Owner, Market, Amount (micro-units of collateral = micro-shares of each token)
//	Redeem         Owner, Market
//	Place          Order, Owner, Token, Side, Type, PostOnly, Price, Size, Expiration,
//	               Nonce, FeeRateBps; Market is optional and, when set, must be the token's market
//	Cancel         Order, Owner (the zero address cancels as the venue, whatever the owner)
//	CancelAll      Owner, Market, Token: each zero value means "any"
//	IncrementNonce Owner
//	SetAccountMode Owner, Mode
//	AdvanceTime    none besides Time
//	Transfer       Owner (payer), To (payee), Amount (available collateral)
//	Convert        Owner, Market (the market whose NO tokens are converted), Amount
//	Swap           Owner (seller), To (buyer), Token, Size (micro-shares, > 0), Amount
//	               (collateral the buyer pays, > 0)
//
// Place contract: Price is the limit in the order's own token (a BUY NO at 0.3 pays
// at most 0.3 per NO share), on the market's tick and strictly between 0 and 1. Size
// is in micro-shares, a positive multiple of market.Lot, for every order type:
// FOK and FAK orders are limit orders that never rest (a server converts a "market
// order" of a collateral amount into a worst price and a share size before calling
// the engine). A FOK fills Size completely or is rejected; a FAK fills what it can at
// once and the rest is cancelled. Expiration is Unix seconds, non-zero for GTD only.
// Nonce must equal the owner's current exchange nonce (see IncrementNonce).
// FeeRateBps is the fee rate the owner signed and must be at least the market's.
type Command struct {
	Kind CommandKind
	Time int64 // Unix milliseconds

	Owner  market.Address
	Market market.ConditionID
	Token  market.TokenID
	Order  market.OrderID

	Side       market.Side
	Type       market.OrderType
	PostOnly   bool
	Price      market.Micros
	Size       market.Micros
	Expiration int64 // Unix seconds; GTD only
	Nonce      uint64
	FeeRateBps uint32

	Amount market.Micros
	Winner market.Outcome
	Mode   market.AccountMode

	Spec MarketSpec

	To market.Address // Transfer: the payee; Swap: the buyer
}

// MarketSpec is the listing of a binary market: its two tokens, its descriptive text
// (kept so that a journal replay restores the whole catalogue entry) and its trading
// parameters and flags.
type MarketSpec struct {
	Tokens   [2]market.TokenID // indexed by market.Outcome: Tokens[market.Yes], Tokens[market.No]
	Question string
	Slug     string
	Outcomes [2]string // labels, e.g. "Yes", "No"
	EndDate  int64     // Unix seconds; 0 if none

	TickSize market.Micros // one of market.TickSizes
	MinSize  market.Micros // minimum size of resting (GTC, GTD) orders, micro-shares; 0 for none
	FeeBps   uint32        // taker fee rate, basis points, at most 10 000
	NegRisk  bool          // the market belongs to a neg-risk event (NegRiskID groups them)

	// NegRiskID groups the markets of one neg-risk event (the dialect's
	// negRiskMarketID): mutually exclusive questions of which exactly one resolves
	// YES, between which Convert moves positions. Empty: the market stands alone
	// (a neg-risk market without an id is then an ordinary binary market). Set only
	// with NegRisk.
	NegRiskID string

	Active          bool
	Closed          bool
	Archived        bool
	AcceptingOrders bool
}

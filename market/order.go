package market

// OrderStatus is the lifecycle state of an order.
type OrderStatus uint8

// Order statuses. Live orders rest on the book; the others are final.
const (
	StatusLive     OrderStatus = iota // resting (possibly partially matched)
	StatusMatched                     // completely filled
	StatusCanceled                    // cancelled by its owner, a heartbeat timeout or the venue
	StatusExpired                     // a GTD order whose expiration passed
	StatusRejected                    // never accepted
)

var statusNames = [...]string{"LIVE", "MATCHED", "CANCELED", "EXPIRED", "REJECTED"}

// String returns the wire spelling ("LIVE", "MATCHED", ...).
func (s OrderStatus) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "UNKNOWN"
}

// Final reports whether no further fills can happen.
func (s OrderStatus) Final() bool { return s != StatusLive }

// Order is a venue-neutral view of one order of one owner, expressed in the token the
// owner named (a BUY NO stays a BUY NO here, even though the engine rests it in the
// YES book). Amounts are micro-units; Size is the original size in shares.
type Order struct {
	ID         OrderID
	Owner      Address
	Market     ConditionID
	Token      TokenID
	Outcome    Outcome
	Side       Side
	Price      Micros
	Size       Micros
	Matched    Micros
	Type       OrderType
	PostOnly   bool
	Expiration int64 // Unix seconds; 0 means none (only GTD orders expire)
	CreatedAt  int64 // Unix milliseconds, from the venue's command clock
	Status     OrderStatus
}

// Remaining returns the size still open.
func (o *Order) Remaining() Micros { return o.Size - o.Matched }

// Role says whether a participant provided (maker) or took (taker) liquidity.
type Role uint8

// Roles.
const (
	Taker Role = iota + 1
	Maker
)

// String returns "TAKER" or "MAKER".
func (r Role) String() string {
	switch r {
	case Taker:
		return "TAKER"
	case Maker:
		return "MAKER"
	}
	return "UNKNOWN"
}

// Fill is one participant's share of a trade: what one of its orders bought or sold,
// at what price, for what fee. Price and Side are in the token of the order.
type Fill struct {
	Trade   TradeID
	Order   OrderID
	Owner   Address
	Market  ConditionID
	Token   TokenID
	Outcome Outcome
	Side    Side
	Role    Role
	Price   Micros
	Size    Micros
	Fee     Micros // collateral, charged on top of a buy or deducted from a sell
	Time    int64  // Unix milliseconds
}

// MakerFill is the part of a trade that one resting order provided.
type MakerFill struct {
	Order   OrderID
	Owner   Address
	Token   TokenID
	Outcome Outcome
	Side    Side
	Price   Micros // in the maker order's token
	Size    Micros
	Fee     Micros
}

// Trade is one match of a taker order against one or more resting orders. Price is the
// price in the taker's token at the first (best) maker level; Size is the taker's
// total matched size.
type Trade struct {
	ID         TradeID
	Market     ConditionID
	Token      TokenID // the taker's token
	Side       Side    // the taker's side
	Price      Micros
	Size       Micros
	TakerOrder OrderID
	Taker      Address
	TakerFee   Micros
	Makers     []MakerFill
	Time       int64 // Unix milliseconds
}

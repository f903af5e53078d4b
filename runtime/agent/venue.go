package agent

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/pitbossdev/pitboss/market"
)

// Venue is where the agent's orders go: the paper venue (dry run), the embedded
// exchange, or (phase B) the remote service. The agent declares what it consumes and
// nothing more. There is no method that moves funds out of the venue — no
// withdrawal, no transfer — by construction; a test reflects over this interface to
// keep it so.
//
// Calls may block (network round trips); the agent runs them on its executor
// goroutines, never on its loop, unless the venue is Synchronous. Errors are catalog
// errors of package market where the venue reports one (market.ErrDuplicated,
// market.ErrUnknownOrder, market.ErrInsufficientBalance, ...); any other error (a
// timeout, a lost connection) means the outcome is unknown.
//
// Idempotency: an order is first Prepared — given its id, deterministically, from
// the request, which carries a client id unique per placement — and then Submitted,
// as many times as needed. Submitting a prepared order that the venue already
// accepted must fail with market.ErrDuplicated (or return the order), never create
// a second one; the agent then looks the order up by its id.
type Venue interface {
	// Markets returns the trading metadata of the given markets, in order. An
	// unknown id is an error wrapping market.ErrMarketNotFound.
	Markets(ctx context.Context, ids []market.ConditionID) ([]market.Info, error)
	// Account returns the wallet's collateral, mode and token holdings, for startup
	// reconciliation.
	Account(ctx context.Context) (Account, error)
	// OpenOrders returns the wallet's open orders (every market), for startup
	// reconciliation.
	OpenOrders(ctx context.Context) ([]market.Order, error)
	// Order returns one order of the wallet by id, open or final. An order the
	// venue never accepted (or no longer knows) is market.ErrUnknownOrder.
	Order(ctx context.Context, id market.OrderID) (market.Order, error)
	// Prepare turns a request into the order the venue will receive (signed, for
	// the remote venue) and its id. The same request gives the same id. It does
	// not place anything.
	Prepare(ctx context.Context, req OrderRequest) (PreparedOrder, error)
	// Submit places a prepared order and returns its state after acceptance:
	// StatusLive when (the rest of) it rests, StatusMatched when it filled at once,
	// StatusCanceled when a FAK's rest was cancelled. A refusal is an error (a
	// catalog error). Fills are not reported here: they arrive as events (the Feed's
	// user channel, or a Simulator's emitter), exactly once.
	Submit(ctx context.Context, p *PreparedOrder) (market.Order, error)
	// Cancel cancels one open order of the wallet. An order that is no longer open
	// is an error wrapping market.ErrUnknownOrder (or the catalog's already
	// cancelled / already matched errors).
	Cancel(ctx context.Context, id market.OrderID) error
	// CancelAll cancels every open order of the wallet in market m (every market
	// when m is empty).
	CancelAll(ctx context.Context, m market.ConditionID) error
	// Heartbeat tells the venue the agent is alive. A venue that stops receiving
	// heartbeats cancels the wallet's open orders (the service does so after 10 s).
	Heartbeat(ctx context.Context) error
}

// Merger is a venue that merges complete sets: Merge burns size shares of each
// token of market m (one YES and one NO per set) for size of collateral, at once
// or not at all. The paper, embedded and remote venues implement it; on a venue
// that does not, a strategy's merge is refused and logged.
type Merger interface {
	Merge(ctx context.Context, m market.ConditionID, size market.Micros) error
}

// Redeemer is a venue that redeems a resolved market's tokens: Redeem pays the
// wallet one unit of collateral per winning share it holds in market m and burns the
// losing ones, at once or not at all; it fails with market.CodeMarketNotResolved
// before the resolution and market.CodeNothingToRedeem when nothing is held there.
// The paper, embedded and remote venues implement it; on a venue that does not, a
// strategy's redeem is refused and logged.
type Redeemer interface {
	Redeem(ctx context.Context, m market.ConditionID) error
}

// Account is the wallet as the venue sees it.
type Account struct {
	Address  market.Address
	Balance  market.Micros // available collateral
	Reserved market.Micros // collateral locked by open buy orders
	Mode     market.AccountMode
	// Positions are the token holdings (available and reserved together). Size is
	// always set; Cost, Realized and the other figures only by venues that keep a
	// cost basis (the paper venue); otherwise the agent keeps its own.
	Positions []market.Position
	// Basis is, for venues that keep no accounting of the agent's (the remote
	// venue), the cost basis the venue knows of each holding in Positions, by token:
	// what the agent adopts for a holding its checkpoint does not account for (one
	// bought by hand, a size that changed while the agent was away, a first start).
	// A holding missing here has no known cost.
	Basis map[market.TokenID]Basis
}

// Basis is the cost basis of one holding as a venue knows it.
type Basis struct {
	Cost market.Micros // the cost of the whole holding
	// Source says where Cost comes from, for the console and the audit trail
	// ("the data service's average price", "the wallet's trade history").
	Source string
}

// OrderRequest is one order the agent wants placed.
type OrderRequest struct {
	// ClientID is unique per placement for the life of the wallet's state directory
	// (the run number in the high 32 bits, a counter in the low ones). Venues derive
	// the order's salt, and therefore its id, from it.
	ClientID   uint64
	Market     market.ConditionID
	Token      market.TokenID
	Outcome    market.Outcome
	Side       market.Side
	Price      market.Micros
	Size       market.Micros
	Type       market.OrderType
	PostOnly   bool
	Expiration int64 // Unix seconds, GTD only
	// Time is the event time (Unix ms) of the decision. The paper venue's latency
	// model puts the order on its book a configurable delay after it.
	Time int64
}

// PreparedOrder is an order ready to submit, with its id. Payload is the venue's own
// form of the order (a signed order for the remote venue); the agent keeps it for
// resubmission and never looks inside.
type PreparedOrder struct {
	ID      market.OrderID
	Request OrderRequest
	Payload any
}

// Synchronous is implemented by venues whose calls complete in microseconds with no
// I/O (in-process venues). When Synchronous() is true the loop calls the venue
// directly instead of handing calls to its executor goroutines, which keeps the
// order of events deterministic and the tick-to-trade path short.
type Synchronous interface {
	Synchronous() bool
}

// LocalPreparer is implemented by a venue that is not Synchronous (its Submit goes
// over the network) but whose Prepare does no I/O and takes microseconds: the remote
// venue signs the order with a key in memory, from market parameters it already
// holds. When PrepareLocally() is true, the loop calls Prepare itself, before it
// hands the placement to an executor goroutine, so that the order's id is in the
// agent's bookkeeping — and in every checkpoint from then on, marked in flight —
// before the order can reach the venue. A crash between the post and its answer then
// leaves an id that the next start looks up, instead of an order it does not know.
// Prepare is called with a background context and must not block.
type LocalPreparer interface {
	PrepareLocally() bool
}

// Simulator is implemented by a venue that simulates the wallet's trading in the
// process (the paper venue): it watches the market and produces the wallet's order
// and fill events itself. The loop calls Attach once before anything else, then
// ObserveMarket for every feed event right after applying it to its state. The
// venue calls emit only from inside calls the loop makes (ObserveMarket, Submit,
// Cancel, ...); emitted events are copied and handled by the loop, in order, right
// after that call.
type Simulator interface {
	Attach(emit func(*market.Event))
	ObserveMarket(ev *market.Event)
}

// Persistent is implemented by venues whose state lives in the agent's process and
// must survive a restart with the agent's own bookkeeping (the paper venue's
// account). Snapshot is called on the loop, so that the venue's state and the
// agent's are saved at the same instant; Restore once at startup, before anything
// else.
type Persistent interface {
	Snapshot() ([]byte, error)
	Restore(data []byte) error
}

// DeriveOrderID is the order id of client id c of wallet w for in-process venues
// (paper, embedded), which have no signed order to take an id from: "0x" and the
// hex SHA-256 of the address and the big-endian client id — the shape of the
// service's order ids, and a pure function of the request, as Prepare needs.
func DeriveOrderID(w market.Address, c uint64) market.OrderID {
	var buf [28]byte
	copy(buf[:20], w[:])
	binary.BigEndian.PutUint64(buf[20:], c)
	h := sha256.Sum256(buf[:])
	var out [66]byte
	out[0], out[1] = '0', 'x'
	hex.Encode(out[2:], h[:])
	return market.OrderID(out[:])
}

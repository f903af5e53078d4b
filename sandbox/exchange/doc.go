// Package exchange is the exchange core of pitboss: binary markets with one
// price-time-priority order book each, a ledger of collateral and outcome tokens, and
// a clock, run as a deterministic state machine over Commands. The local exchange
// server, paper trading, dry runs, backtests and crash recovery all run on it.
//
// # Shape
//
// An Engine is created with New (or Restore from a snapshot) and driven by Apply, one
// Command at a time; each Apply returns the Events it produced (valid until the next
// call). Views (Levels, BestBid, Order, OpenOrders, Collateral, ...) read the state.
// The same command stream always yields the same events and the same state, byte for
// byte: the engine reads no clock (time arrives in each command), uses no randomness
// and does no I/O. A server journals every command it applies and recovers with
// Restore(snapshot) plus a replay of the commands journaled after it.
//
// An Engine is single-writer and not safe for concurrent use; the caller serializes
// Apply and the views. In steady state Apply does not allocate: orders, accounts and
// positions live in slabs indexed by int32, book levels are arrays indexed by price,
// events are flat values in a reused buffer. The exceptions are rejections (the
// returned *market.Error is built for the occasion) and the growth of tables when the
// number of live orders, accounts or known order ids reaches a new high.
//
// # Money
//
// Prices, sizes and collateral are market.Micros (6 decimals). Prices are on the
// market's tick, sizes multiples of market.Lot, so every price × size is an exact
// number of micro-units; nothing is rounded except the fee, which is rounded down.
// Conservation holds to the micro-unit: all collateral of all accounts (available and
// reserved, the fee account included) plus the collateral locked in outstanding
// complete sets equals deposits minus withdrawals. Check verifies this and every
// other invariant.
//
// # Books
//
// A market has one book, kept in YES prices: BUY YES at p is a bid at p, SELL YES an
// ask at p, BUY NO at q an ask at 1−q and SELL NO a bid at 1−q. The NO token's book is
// the mirror of the YES book. A match settles, for each side independently, as "a
// buyer pays collateral and receives its token, a seller delivers its token and
// receives collateral": two buyers (of YES and of NO) mint a complete set, two sellers
// merge one, and a buyer and a seller of the same token transfer it. The resting
// (maker) order's price sets the trade price; see docs/design/0010-exchange-core.md
// for fees, self-trade prevention, close-only, expirations and the other rules.
//
// # Errors
//
// Apply rejects a command with a *market.Error from the one catalog (exact messages of
// the service specification), so the embedded venue fails exactly like the remote one.
// Binary decoding and Restore return errors wrapping ErrEncoding or ErrInvariant.
package exchange

// Package paper is the dry-run venue: a paper account that trades against a mirror
// of the live book kept from the agent's market feed. No order ever leaves the
// process. It is also the fill model of backtests, so it is deterministic: it reads
// no clock (time is the event time of the feed), uses no randomness, and gives the
// same fills for the same events and orders.
//
// # The model
//
// Orders are validated like the venue validates them (market open, tick, lot,
// minimum size, expiration, post-only, balance, duplicates), with the same catalog
// errors. An order reaches the paper book Config.Latency of event time after the
// event that caused it (0: at once); until then it can be cancelled but not filled.
//
// On arrival an order that crosses the mirror book takes liquidity like a taker:
// level by level at the resting price, up to the visible size, paying the service's
// taker fee (market.TakerFee); what it takes is removed from the mirror until the
// feed next reports that level. FOK fills completely or is refused; FAK keeps what
// it filled and cancels the rest; post-only is refused when it would cross.
//
// What rests waits in a queue: its queue-ahead is the size visible at its price, on
// its side, when it arrived. A trade printed at that price (market.EventLastTrade of
// the order's own token) consumes the queue ahead first and then fills the order; a
// trade printed beyond the order's price (the taker swept through it) fills it at
// once. When the visible size at its level drops below the queue ahead (orders ahead
// were cancelled), the queue ahead shrinks to it. When the opposite side of the
// mirror moves through the order's price, the order fills against that size, as the
// venue would have matched it. Resting fills are maker fills at the order's price
// and pay no fee.
//
// Assumptions: the feed prints each trade for each token it concerns (the embedded
// feed and the service's market channel do), and a trade's print comes before the
// level change it causes. Several own orders at one level share each print in
// placement order.
//
// Markets resolve with market.EventResolved: open orders there are cancelled and the
// paper account's tokens stay until redeemed (Redeem: winning ones at 1, losing ones
// at 0), as on the venue, so dry-run PnL is real. GTD orders expire when event time passes their expiration.
//
// # Use
//
// A Venue implements agent.Venue, agent.Synchronous, agent.Simulator (the agent
// feeds it every market event) and agent.Persistent (the account survives restarts
// in the agent's checkpoint). It is not safe for concurrent use: the agent's loop
// calls it.
package paper

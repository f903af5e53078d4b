// Package remote is the agent's venue and feed on the remote service — the real
// service over HTTPS and WebSockets, or a `pitboss exchange` speaking its API: the
// runtime/agent interfaces over adapters/clob (REST) and adapters/wsfeed
// (WebSockets), for one wallet.
//
//   - Venue (agent.Venue, agent.LocalPreparer) prepares orders by signing them in
//     memory — the id, the order's EIP-712 digest, is known before anything is sent,
//     and the salt derives from the agent's client id — posts them with the client's
//     reconciliation (an open outcome is looked up by id, never blindly posted again),
//     reads markets, balances, holdings, open orders and single orders, cancels, and
//     keeps the service's heartbeat chain. Errors are the shared catalog's, except
//     outcomes that are open, which are ErrOutcomeUnknown and never a catalog error,
//     so that the agent looks the order up instead of placing another.
//   - Feed (agent.Feed) merges the market channel of the agent's tokens — or
//     another source of the same public data (FeedConfig.MarketData: a fleet's
//     fan-out, one venue subscription for every agent) — with the wallet's user
//     channel, and after every user-channel connection (and
//     periodically) replays through REST what the channel may have missed: fills
//     (each delivered once, by trade and order id), orders that matched more than
//     reported, orders that ended. The Venue's Account marks the cut the agent starts
//     from, so that fills already in the balances it read are never delivered again.
//   - Catalog reads market metadata without credentials: a dry run's paper venue
//     reads markets from it, and nothing it has can place an order.
//
// The composition root (runtime/wire) builds these from an agent file; it resolves
// the wallet and the API credentials, runs the geoblock check and chooses the rate
// budget. Nothing here moves funds: withdrawals live in adapters/clob/funding, which
// this package does not import. See docs/design/0085–0089.
package remote

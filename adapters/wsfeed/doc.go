// Package wsfeed is the WebSocket client of the service's market and user channels
// (the real service or `pitboss exchange`): it keeps the connections up, rebuilds
// order books, and delivers everything as market.Event.
//
// # Use
//
//	f, err := wsfeed.New(wsfeed.Config{
//		URL:     "ws://127.0.0.1:8080",
//		Assets:  []market.TokenID{yes, no},
//		User:    &api.APIKeyCreds{APIKey: k, Secret: s, Passphrase: p}, // optional
//		Handler: func(ev *market.Event) { ... },                           // copy what you keep
//	})
//	err = f.Run(ctx) // until ctx ends
//
// RunEmit(ctx, emit) is the same with the events handed to emit, the shape of
// runtime/agent's Feed (emit returning false stops the feed).
//
// # Guarantees
//
//   - Books are market.Book (best first, exact micro-units). Every asset's first
//     event after (re)connecting, after a gap and after a resync is an EventBook; no
//     price change is delivered for a book that is not current, so a stale book is
//     never presented as current. Feed.Book returns the current book or false.
//   - Gaps are detected with the per-asset "seq" numbers of the local exchange and
//     mismatches with the book hash it puts on price changes (docs/design/0071).
//     Either heals with a GET {BookURL}/book?token_id= resync; when a book fetched
//     that way does not line up with the stream (the REST answer raced the stream),
//     the feed asks the server for a fresh snapshot of the asset on the WebSocket.
//     An asset whose snapshot does not arrive within ResyncTimeout is fetched by
//     REST as well. Against a server without seq and hash (the stock service) none
//     of these checks can fire and the feed trusts the stream.
//   - A dropped connection is redialed with exponential backoff and jitter
//     (injectable randomness and sleep) and resubscribed with snapshots.
//   - Liveness: the feed sends the text frame PING every PingInterval and drops a
//     connection that delivered nothing (no frame, no PONG) for Watchdog. Reads use
//     no per-read deadline, which would close a coder/websocket connection.
//
// # Goroutines and back-pressure
//
// Run owns everything: per channel a session goroutine (dial, ping, watchdog) and,
// per connection, exactly one reader goroutine that decodes frames, updates books and
// calls the Handler. Handler calls are serialized across the channels. The Handler
// is the back-pressure: while it runs, the connection is not read; a handler that is
// too slow for the flow makes the server drop the connection as a slow consumer, and
// the feed reconnects and starts over from snapshots. Hand events to your own
// bounded queue if you need another policy.
//
// # User channel
//
// The user channel authenticates with API credentials in the subscribe message (in
// clear: the service's protocol). Order events become EventOrder (PLACEMENT, UPDATE,
// CANCELLATION) and trade events become one EventFill per fill of this key's orders.
// Credentials the server refuses stop Run with an error wrapping
// market.ErrUnauthorized; they are never logged. The user channel has no snapshot:
// after a reconnection, reconcile open orders over REST (GET /data/orders).
package wsfeed

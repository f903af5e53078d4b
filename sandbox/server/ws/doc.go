// Package ws serves the local exchange's WebSocket channels (`pitboss exchange`)
// from the engine host's event stream: the market channel (/ws/market), the user
// channel (/ws/user), RTDS (/ws/rtds), the sports channel (/ws/sports, which refuses
// every subscription: the local exchange has no sports data) and the catalogue's
// comments channel (/ws/comments). Frame shapes are in api/ws*.go; the protocol and
// its extensions are documented in docs/realtime.md and docs/design/0070–0072.
//
// # Wiring (for sandbox/server and cmd/pitboss)
//
//	hub, err := ws.New(ws.Config{
//		Source:      h,        // *host.Host: Subscribe + Read
//		Credentials: srv,      // LookupCredentials(key, secret, passphrase) (market.Address, bool)
//		TradeID:     tradeID,  // the same rendering of trade numbers as GET /data/trades
//		Describe:    describe, // optional: catalogue metadata of a market
//		Logger:      log,
//	})
//	go hub.Run(ctx)            // loads the books, serves until ctx ends, closes every connection
//	hub.Mount(clobMux)         // /ws/market, /ws/user, /ws/rtds, /ws/sports
//	catalogueMux.Handle("/ws/comments", hub.CommentsHandler())
//	hub.PublishComment(ev)     // the catalogue service, after storing a comment
//
// Run must be running for the handlers to accept connections (before its initial
// load they answer 503 "database error"); a *ws.Hub is safe for concurrent use.
//
// # How it works
//
// The hub subscribes to the host and keeps a mirror of every market: its metadata
// and the books of both its tokens, rebuilt from BookChanged events; it is loaded
// once with Host.Read while holding the hub's lock, so that it includes exactly the
// events up to the engine's Seq and the listener applies the later ones. Everything —
// applying a batch, fanning its frames out, a client's subscription with its
// snapshot — happens under that one lock, so a subscriber gets its snapshot and then
// every later change of the asset, never a change twice and never a gap. A gap in
// the host's stream (a batch the host could not publish) marks the mirror stale;
// Run then reloads it and re-sends every subscribed book.
//
// Per batch and market the hub sends last_trade_price frames (one per trade and
// token), tick_size_change, one price_change with the entries of both tokens (each
// token's last entry carrying the hash of its book after the frame), book
// re-sends when the minimum order size changed or a trade changed the book, and
// market_resolved. Order and trade events go to the user connections of the
// owner's address (a trade once per status: MATCHED, MINED, CONFIRMED); a new
// user subscription first gets its address's open orders (Config.Orders supplies
// what the REST API knows of an order: its key, creation time and trades). The RFQ
// desk's changes are not engine events: an RFQFeed (Config.RFQ, or the Credentials
// when they implement it, as the server does) hands the hub rfq_request and
// rfq_quote frames already encoded, and the trades of settled swaps, which go out
// as the engine's trades do (docs/design/0153-rfq.md). Every frame is
// encoded once and the same bytes are queued on every subscriber (RTDS envelopes
// differ only by the connection id).
//
// Every market-channel message that changes what a client knows of an asset carries
// "seq", the asset's sequence number, consecutive per asset (a client that sees a
// jump has missed something and resyncs); book frames carry the current number.
//
// # Slow consumers
//
// Each connection has a bounded outgoing queue (Config.QueueLen frames waiting,
// besides the one being written). Queuing never blocks the host's dispatcher: when
// a queue is full the connection is closed with status 1013 and reason
// ReasonSlowConsumer, so its client reconnects and resubscribes (with fresh
// snapshots). A writer stuck on a client that stopped reading is cut after
// Config.CloseGrace. Matching never waits for a client.
//
// # Cost of a fan-out
//
// Frames of the market channel's hot events (price_change, last_trade_price, book,
// best_bid_ask) are encoded by the hand-written encoders of api/ws_encode.go, once
// per event, into a scratch buffer, then copied once into the shared frame. Queuing
// a frame takes the connection's own small lock; the writer is woken (one channel
// send) only when it waits, and each wake-up takes every frame queued so far.
// Writes carry no deadline (no timer per write). Each frame is one WebSocket
// message and one socket write (coder/websocket flushes every message): for a book
// update delivered to N connections that is N write system calls, which dominate
// the hub's CPU (see docs/design/0127-ws-fanout-cost.md).
//
// # Goroutines
//
// Run owns the hub: it waits for every connection to finish before it returns.
// Each connection has three goroutines — the HTTP handler's (reading client
// messages), a writer draining the queue (every queued frame per wake-up), and a
// pinger (WebSocket ping every Config.PingInterval; no pong within
// Config.PongTimeout closes the connection) — and the handler returns only after
// the other two have stopped. Client text frames PING/ping are answered PONG/pong.
package ws

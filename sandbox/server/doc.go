// Package server is the CLOB service of the local exchange (`pitboss exchange`): the
// service's HTTP API (service-api.md, with the shapes the specification leaves "not
// shown" taken from the wire dialect) over the exchange core run by sandbox/host.
//
// # Wiring
//
//	st := server.NewState(server.StateConfig{})
//	h, _ := host.Open(ctx, host.Config{Dir: dir, Extensions: []host.Extension{st.Extension()}, Genesis: ..., AdmittedIDs: true})
//	srv, _ := server.New(h, st, server.Config{Catalog: cat, Clock: clock})
//	go h.Run(hostCtx)
//	go srv.Run(ctx)                       // heartbeat deadlines, rate-limit housekeeping
//	http.Serve(public, srv.Handler())     // at the root path: the L2 HMAC signs the path
//	http.Serve(internal, srv.InternalHandler())
//
// The WebSocket channels (sandbox/server/ws) are mounted through Config.Routes; they
// authenticate user-channel subscriptions with Server.LookupCredentials.
//
// # Requests
//
// Every route is a net/http ServeMux pattern with its method; the middleware chain is
// panic recovery → metrics → the per-IP sliding-window rate limit (500 per 60 s, /ok
// excluded) → the request-size limit → the route. Unknown paths are 404 {"error":
// "not found"}, known paths with another method 404 {"error": "method not allowed"}
// with Allow. Every error is {"error": "<message>"} with the specification's status
// and exact message (market.Errorf; api.WriteError).
//
// Authentication is adapters/auth's: L1 (EIP-712 ClobAuth with the configured chain)
// for creating and deriving API keys, L2 (HMAC over timestamp + method + path + raw
// body, a ±300 s window, constant-time comparisons, the address header must own the
// key) for everything private. Order signatures are verified in the handler's
// goroutine — in parallel across requests — before the order reaches the single
// engine goroutine; the order id is the order's EIP-712 digest. The duplicate check
// of that id runs there too (admission.go, docs/design/0169): open the host with
// AdmittedIDs so that the engine leaves it to the server.
//
// # State
//
// What must survive a restart besides the ledger — credentials, registered wallets,
// the waitlist and invitation codes, builder keys, heartbeats, and the records derived
// from the engine's events (orders with the API key and builder that placed them,
// trades, notifications, price history, net flows) — is the State, a host extension:
// its changes are journaled records beside the engine's commands and it is part of
// every snapshot (docs/design/0061-server-state.md). Secrets therefore reach the
// journal and snapshot files, which are mode 0600; they never reach logs.
//
// # Time
//
// One injected clock (Config.Clock, Unix ms) drives authentication windows, rate
// windows, heartbeat deadlines and the GTD safety margin; the host uses the same clock
// for command times and GTD expirations. Tests drive it without sleeping
// (CheckHeartbeats, host.Expire).
package server

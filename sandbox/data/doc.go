// Package data is the data service of the local exchange (`pitboss exchange`, its
// --data-addr listener): positions with cost basis and PnL, positions of one market
// across participants, activity and leaderboards, computed from the exchange's own
// ledger movements and trades.
//
// # Shape
//
// An [Index] is a sandbox/host Extension. The host calls its Observe with the events
// of every command, live and while it replays its journal, and snapshots it together
// with the engine; so the index is always consistent with the ledger (a test checks
// position sizes against the ledger after random flows), survives restarts, and
// needs no store of its own (docs/design/0091-data-index.md says why there is no
// SQLite). Index.Handler serves the HTTP API:
//
//	ix := data.New(data.Config{Catalog: cat, Exclude: []market.Address{feeAccount}})
//	h, _ := host.Open(ctx, host.Config{Extensions: []host.Extension{ix}, ...})
//	http.Serve(ln, ix.Handler())
//
// # Accounting
//
// Positions use market.Position's average-cost accounting, fed with amounts: a
// maker fill at its price, a taker fill at the collateral it actually paid or
// received over all the levels it swept (its average price), plus the taker fee; a
// split buys both tokens for half the collateral each; a merge sells them for half
// each; a redemption sells the winning token at 1 and the losing one at 0. Current
// prices: 1 or 0 once resolved, else the book's midpoint when the spread is at most
// 0.10, else the last trade, else the midpoint of a wide book; a token with no price
// is valued at its cost. docs/services.md lists every field's formula.
//
// # Concurrency
//
// The host's engine goroutine is the only writer; queries take a read lock for what
// they must copy and scan the append-only activity rows outside it, so a long query
// never holds up the engine.
package data

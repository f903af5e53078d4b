// Package host runs one sandbox/exchange.Engine for every local service of
// `pitboss exchange`: it owns the engine on a single goroutine (the single writer),
// journals every command it applies with sandbox/journal (group commit, write-ahead),
// publishes the resulting events to listeners once they are durable, snapshots now and
// then, and recovers on Open from the last snapshot plus the journal.
//
// # Use
//
//	h, err := host.Open(ctx, host.Config{Dir: dir, Genesis: createMarkets})
//	go h.Run(ctx)                                   // the engine goroutine; stops with ctx
//	res, err := h.Submit(ctx, exchange.Command{Kind: exchange.Deposit, Owner: a, Amount: 1e9})
//	// err: host failure (ctx, journal, closed); res.Err: the engine's rejection, if any
//	err = h.Read(ctx, func(e *exchange.Engine) { best, _ = e.BestBid(token) })
//	stop := h.Subscribe("ws", func(batch []exchange.Event) { ... })
//
// Everything that changes the ledger goes through Submit, SubmitBatch or Exec, so it is
// journaled and replayed. Exec is the general form: a function that runs on the engine
// goroutine, reads the engine and applies commands (Tx.Apply) and records of the
// host's extensions (Tx.Record) atomically with respect to every other request; it
// returns once everything it applied is durable.
//
// # Transactions
//
// Each Exec is all or nothing (docs/design/0131-transactions.md):
//
//	err := h.Exec(ctx, func(tx *host.Tx) error {
//		if !allowed { return errRefused }            // check first: nothing applied yet
//		if err := tx.Record("keys", rec); err != nil { return err }
//		if r := tx.Apply(deposit); r.Err != nil { return r.Err } // undoes the record too
//		return nil                                     // commit: one journal record
//	})
//
// If fn returns nil, its steps are journaled as one record (a crash keeps all or
// none). If fn returns an error or panics, or a step fails, nothing fn applied remains
// and nothing is journaled or published. A rejection by the engine is an outcome fn
// sees in Result.Err; it is only undone if fn returns an error. A rollback reloads the
// newest snapshot and the records after it, so check before the first step what can be
// checked. Config.FailStep and package hosttest inject a failure at any step.
//
// # Durability and ordering
//
//   - Every command passed to the engine by a committed request is journaled,
//     rejected or not (the engine's journal contract, docs/design/0011), before
//     Submit returns: Submit waits until the journal's group commit made it durable.
//     A host error from Submit (ctx, closed, journal) means the command may or may
//     not have been applied (like a network timeout).
//   - Listeners see every event exactly once, in engine order, in batches, only after
//     the commands that produced them are durable: a crash never retracts what a
//     listener saw. Reads (Read, Tx.Engine) see applied state, which may be up to one
//     journal sync ahead of what is durable ("read uncommitted").
//   - Open recovers the state from the newest snapshot and the journal after it. A
//     torn journal tail is cut by sandbox/journal with a log line, never replayed;
//     corruption of acknowledged data fails Open.
//   - Ephemeral mode (Config.Dir == "") keeps no files: everything is "durable" at
//     once and nothing survives the process. It keeps its newest snapshot and the
//     records since in memory (bounded by Config.SnapshotEvery), for rollbacks.
//
// # Extensions
//
// A service that must keep its own state durably (API credentials, notifications,
// bridge records) registers an Extension: its records are journaled in the same log as
// the engine's commands (Tx.Record), it observes every command's events on the engine
// goroutine (live and during replay), and its state is part of every snapshot. So one
// journal, one snapshot and one recovery cover the whole exchange, and the extension's
// state is always consistent with the engine's. The journal record envelope and the
// snapshot layout are in docs/design/0060-engine-host.md.
//
// # Goroutines and queues
//
// Run owns three goroutines: the engine loop (applies requests in arrival order,
// draining up to a batch of queued requests per iteration), the dispatcher (waits for
// durability and calls listeners) and the snapshot writer. Queues are bounded: a full
// request queue blocks Submit until there is room or its context ends (backpressure);
// a full publication queue blocks the engine loop until listeners catch up (events are
// never dropped). Listeners must therefore not block: copy what you need and return.
//
// # Time
//
// Commands whose Time is 0 get Config.Clock() (Unix ms; the wall clock if nil). The
// engine clock never goes backwards (the engine clamps). Run also checks every
// Config.ExpireEvery whether a GTD order's expiration has passed by the clock and, if
// so, applies an AdvanceTime command so that it expires without waiting for the next
// order; tests with an injected clock call Expire instead.
package host

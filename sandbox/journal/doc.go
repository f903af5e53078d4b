// Package journal is the durable command journal and snapshot store of the local
// exchange: a write-ahead log of opaque byte records with group commit, snapshots that
// bound it, and crash recovery. It knows nothing about the records it stores (the
// server encodes exchange commands into them), and its framing layer ([Writer],
// [Reader], [ScanFile]) is usable on its own for other append-only files such as
// market-data recordings.
//
// # Use
//
//	j, err := journal.Open(dir, journal.WithLogger(log))
//	snap, err := j.LatestSnapshot()            // or ErrNoSnapshot: start empty
//	state := decode(snap.Data)
//	err = j.Replay(snap.LSN, func(lsn uint64, rec []byte) error { return state.Apply(rec) })
//	// engine goroutine, per accepted command:
//	lsn, err := j.Append(encoded)              // cheap: copies into a buffer
//	// request goroutine, before acknowledging:
//	err = j.WaitDurable(ctx, lsn)
//	// now and then, from a consistent copy of the state at lsn:
//	err = j.WriteSnapshot(ctx, lsn, encodedState)
//	// shutdown:
//	err = j.Close(ctx)
//
// # Ordering and durability contract
//
//   - Append assigns LSNs 1, 2, 3, … in call order, without gaps (across restarts
//     too). With one appending goroutine, LSN order is the order in which the engine
//     applied the commands.
//   - A record is durable only when WaitDurable(ctx, lsn) has returned nil (or
//     DurableLSN() ≥ lsn). Records become durable in LSN order: when lsn is durable,
//     so is every record before it.
//   - After any crash (process kill, power loss), Open recovers exactly a prefix
//     1..n of the appended records, byte for byte, with n ≥ the last durable LSN.
//     Records in (durable, n] may or may not survive; records after n are gone.
//     Nothing else is ever replayed: a torn or corrupt tail is detected (CRC-32C and
//     LSN continuity per record) and truncated with a log line.
//
// # Effects of applied but not yet durable commands
//
// The engine applies command k before k is durable (it must, to keep appending in
// order). Anything derived from the state after k — the acknowledgement of k, fills,
// market data, user-channel events, even a GET that reads the book — may describe a
// command that a crash will undo. What the server can rely on:
//
//   - The recovered state is always a state the engine really passed through: a
//     later command is never recovered without every command before it, so a cancel
//     is never recovered without the order it cancels.
//   - Acknowledge a command only after WaitDurable for its LSN returned nil. Then
//     every acknowledged command survives; an unacknowledged one may survive too (a
//     client retrying an order it saw no answer for can find it already there, e.g.
//     as a duplicate).
//   - For published effects, hold each event until its command's LSN is durable: a
//     publisher that queues (lsn, event) in order and calls WaitDurable on the head
//     waits at most once per batch (batches complete in order, so the rest of the
//     batch returns immediately). Publishing before durability is a choice with a
//     cost: a crash can retract what subscribers saw.
//
// # Group commit
//
// One flusher goroutine, owned by the Journal, writes pending records as one batch
// (one write, one fdatasync) and, as soon as that sync returns, takes everything that
// was appended meanwhile as the next batch. Under load batches grow by themselves, so
// the cost of a sync is shared by every record that arrived during the previous one;
// idle, a single record is synced alone without waiting for company. Batches are
// bounded (WithMaxBatchBytes) and so are unwritten bytes (WithMaxPendingBytes: Append
// then blocks; nothing is dropped). A failed write or sync fails the journal for good
// (ErrFailed): after a failed fsync the kernel may have dropped the pages, so
// retrying could acknowledge lost records.
//
// # Files
//
// A directory holds LOCK (flock: one journal per directory), segment files
// <first LSN, 20 digits>.wal and snapshot files <LSN>.snap, all mode 0600 (records may
// carry secrets). Both are framed files (see [FileHeader] and [AppendFrame]): a
// 32-byte header with magic, kind, version, base sequence number and CRC, then frames
// of length, CRC-32C, LSN, write-group delta and payload. A segment is rotated once
// it exceeds WithSegmentSize; a new segment's header is written with its first batch,
// and the directory is synced before that batch counts as durable.
//
// # Recovery policy
//
// Torn tail versus corruption: every frame records the first LSN of the write group
// (batch) it was written in, and a batch is written only after the previous one was
// synced. Damage (bad CRC, short frame, out-of-sequence LSN) found in the last segment
// is a torn tail — cut at the last good record, logged, never replayed — when no
// CRC-valid frame of a later write group follows it. If one does, the damaged bytes
// had been synced before it was written: that is corruption of acknowledged data, and
// Open fails with a *CorruptError (errors.Is ErrCorrupt) without changing anything.
// Damage in any segment but the last is always corruption, since a segment is synced
// before the next one is created. Damage inside the last batch of the last segment
// cannot be told from a torn write and is cut (the recovered prefix then still holds
// everything acknowledged before that batch).
//
// Snapshots: Open uses the newest snapshot that verifies and whose successor records
// are all in the journal; a damaged one is renamed *.corrupt, logged, and the previous
// one is used (the journal is only pruned up to the oldest kept snapshot, so it still
// covers the fallback). Without a usable snapshot the journal must start at LSN 1.
//
// # Errors
//
// Sentinels: ErrClosed, ErrFailed, ErrLocked, ErrTooLarge, ErrUnknownLSN,
// ErrNoSnapshot, ErrCompacted, ErrSnapshotOrder, ErrCorrupt; typed: *CorruptError,
// *DamageError. None is a market catalog error; the server answers any journal
// failure with market.ErrDatabase.
package journal

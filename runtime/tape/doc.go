// Package tape is the market-data recording format of pitboss: what `pitboss record`
// writes and what `pitboss backtest --data` replays. A tape holds book snapshots,
// level changes, trades, tick-size changes and resolutions (market.Event values),
// each with the venue's time and the recorder's receive time, plus the metadata of
// the markets they belong to.
//
// # Format
//
// A tape is a framed file of package sandbox/journal (kind "TAPE"): every frame has
// a CRC-32C, a sequence number and the write group it was written in, so a torn tail
// (a write cut short by a kill or a crash) is told apart from corruption of data
// written earlier. Frames are sessions (JSON, one per start or resume of a
// recorder), markets (JSON, exact decimal strings) and blocks: a run of records,
// compressed with zstd as one unit. Each block decodes on its own (symbols are
// interned per block), so a tape can be cut after any block and continued.
// docs/backtests.md documents the layout for other readers; the format's version is
// Version, in every session.
//
// # Writing
//
//	w, resumed, err := tape.Append(path, tape.Session{Source: url, Tokens: ids}, tape.WriterOptions{})
//	err = w.Market(&info)               // before the market's events
//	err = w.Write(&ev, recvMillis)      // each event as received
//	err = w.Flush()                     // when the feed goes quiet
//	err = w.Close()
//
// Memory is bounded by the block size (WriterOptions.BlockBytes). A process killed at
// any moment loses at most the unsealed block; Append cuts the torn tail and
// continues the file with a new session. Create starts a new file; NewWriter writes
// to any io.Writer (tests, the bundled sample).
//
// # Reading
//
//	r, err := tape.Open(path, tape.ReaderOptions{})  // verifies, summarizes
//	sum := r.Summary()                               // markets, times, counts, torn tail
//	var rec tape.Record
//	for { err := r.Next(&rec); if err == io.EOF { break } … }
//
// Next decodes into the caller's Record and reuses its slices, so reading does not
// allocate in steady state. Damage in the middle of a file is an error wrapping
// journal.ErrCorrupt; a torn tail is reported in Summary.Torn and skipped.
//
// # Sets of files (rotation)
//
// OpenSet keeps a recording as a set of files under one prefix, cut by receive time
// (RotateOptions.Every, on UTC multiples) and/or size (RotateOptions.Size), with
// retention (RotateOptions.Keep); NewSetRecorder records into it. Files are named
// PREFIX-YYYYMMDDTHHMMSSZ.tape (SetFileName; name order is time order), each is a
// whole tape that replays alone — its session, every market's metadata and, after a
// cut, a snapshot of every book the recorder holds — and the set is locked as a
// whole. A cut file's session names the file it continues and the number of
// snapshots that follow (Session.Continues, Snapshots), so that runtime/backtest's
// OpenTapes replays a set as one stream. docs/design/0130 has the rules.
//
// Writers and Readers are not safe for concurrent use; each belongs to one
// goroutine. Nothing here reads the clock: receive times come from the caller.
package tape

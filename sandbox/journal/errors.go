package journal

import "errors"

// Sentinel errors of the journal. Compare with errors.Is: returned errors wrap them
// with detail. None of them is a market catalog error: the server reports any
// journal failure to its clients as market.ErrDatabase ("database error", 500).
var (
	// ErrClosed is returned by Append, WaitDurable and WriteSnapshot after Close.
	ErrClosed = errors.New("journal: closed")
	// ErrFailed is wrapped (together with the cause) by every error after a write or
	// sync of the journal failed. The journal stays failed: a failed fsync may have
	// dropped the data it was asked to flush, so retrying could acknowledge records
	// that are not on disk. Close it and Open again (recovery keeps the durable prefix).
	ErrFailed = errors.New("journal: failed")
	// ErrLocked means another journal (in this or another process) holds the directory.
	ErrLocked = errors.New("journal: directory is locked by another journal")
	// ErrTooLarge is returned by Append for a record over MaxRecordSize.
	ErrTooLarge = errors.New("journal: record too large")
	// ErrUnknownLSN is returned for an LSN that was never appended.
	ErrUnknownLSN = errors.New("journal: lsn not appended")
	// ErrNoSnapshot is returned by LatestSnapshot when there is none.
	ErrNoSnapshot = errors.New("journal: no snapshot")
	// ErrCompacted is returned by Replay when the records asked for were deleted
	// because a snapshot covers them.
	ErrCompacted = errors.New("journal: records compacted away")
	// ErrSnapshotOrder is returned by WriteSnapshot for an LSN not above the newest
	// snapshot's.
	ErrSnapshotOrder = errors.New("journal: snapshot not newer than the latest")
)

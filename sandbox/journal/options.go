package journal

import (
	"fmt"

	"go.uber.org/zap"
)

// SyncMode says how the flusher makes a written batch durable. The zero value is the
// safe default.
type SyncMode uint8

// Sync modes.
const (
	// SyncData syncs each batch with fdatasync(2) (fsync on systems without it):
	// data and the file size reach the disk, other metadata (mtime) may not. Default.
	SyncData SyncMode = iota
	// SyncFull syncs each batch with fsync(2).
	SyncFull
	// SyncNone never syncs: a batch is "durable" once write(2) returned, which
	// survives a crash of the process but not of the machine. For tests, benchmarks
	// of everything but the disk, and throwaway exchanges. Never for real balances.
	SyncNone
)

// String returns "data", "full" or "none".
func (m SyncMode) String() string {
	switch m {
	case SyncData:
		return "data"
	case SyncFull:
		return "full"
	case SyncNone:
		return "none"
	}
	return fmt.Sprintf("SyncMode(%d)", uint8(m))
}

// Defaults of the options.
const (
	DefaultSegmentSize     = 64 << 20
	DefaultMaxBatchBytes   = 1 << 20
	DefaultMaxPendingBytes = 64 << 20
	DefaultKeepSnapshots   = 2
	// MaxRecordSize is the largest record Append accepts (and the length a reader of
	// a journal segment trusts). Commands are a few hundred bytes; this is a guard,
	// not a budget.
	MaxRecordSize = 16 << 20
)

type options struct {
	log           *zap.Logger
	segmentSize   int64
	maxBatchBytes int
	maxPending    int
	keepSnapshots int
	sync          SyncMode
}

// Option configures Open.
type Option func(*options)

// WithLogger sets the logger for recovery findings (torn tails cut, snapshots
// skipped), segment rotation and failures. If nil or not given, nothing is logged.
// Records' contents are never logged.
func WithLogger(l *zap.Logger) Option { return func(o *options) { o.log = l } }

// WithSegmentSize sets the size at which the flusher starts a new segment file. A
// batch never spans two segments, so a segment can exceed it by one batch. If zero or
// not given, DefaultSegmentSize (64 MiB).
func WithSegmentSize(n int64) Option { return func(o *options) { o.segmentSize = n } }

// WithMaxBatchBytes bounds the bytes written (and synced) in one batch. Appends that
// arrive while a batch is being synced accumulate into the next batch up to this
// size, then into another. If zero or not given, DefaultMaxBatchBytes (1 MiB).
func WithMaxBatchBytes(n int) Option { return func(o *options) { o.maxBatchBytes = n } }

// WithMaxPendingBytes bounds the bytes appended but not yet written. Overflow policy:
// Append blocks until the flusher has written enough (backpressure on the appender;
// records are never dropped). If zero or not given, DefaultMaxPendingBytes (64 MiB).
func WithMaxPendingBytes(n int) Option { return func(o *options) { o.maxPending = n } }

// WithKeepSnapshots sets how many snapshots WriteSnapshot keeps (at least 1; keeping
// 2 or more lets recovery fall back when the newest is damaged). Journal segments
// wholly covered by the oldest kept snapshot are deleted. If zero or not given,
// DefaultKeepSnapshots (2).
func WithKeepSnapshots(n int) Option { return func(o *options) { o.keepSnapshots = n } }

// WithSync sets the sync mode. If not given, SyncData.
func WithSync(m SyncMode) Option { return func(o *options) { o.sync = m } }

func buildOptions(opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = zap.NewNop()
	}
	if o.segmentSize == 0 {
		o.segmentSize = DefaultSegmentSize
	}
	if o.maxBatchBytes == 0 {
		o.maxBatchBytes = DefaultMaxBatchBytes
	}
	if o.maxPending == 0 {
		o.maxPending = DefaultMaxPendingBytes
	}
	if o.keepSnapshots == 0 {
		o.keepSnapshots = DefaultKeepSnapshots
	}
	switch {
	case o.segmentSize < 0:
		return o, fmt.Errorf("journal: negative segment size %d", o.segmentSize)
	case o.maxBatchBytes < 0:
		return o, fmt.Errorf("journal: negative max batch bytes %d", o.maxBatchBytes)
	case o.maxPending < 0:
		return o, fmt.Errorf("journal: negative max pending bytes %d", o.maxPending)
	case o.keepSnapshots < 0:
		return o, fmt.Errorf("journal: negative snapshot count %d", o.keepSnapshots)
	case o.sync > SyncNone:
		return o, fmt.Errorf("journal: unknown sync mode %d", o.sync)
	}
	return o, nil
}

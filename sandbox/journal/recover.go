package journal

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// File names in a journal directory. LSNs are zero-padded to 20 digits so that
// lexical order is numeric order.
const (
	lockName      = "LOCK"
	segmentSuffix = ".wal"
	snapSuffix    = ".snap"
	tmpSuffix     = ".tmp"
	corruptSuffix = ".corrupt"
)

func segmentName(base uint64) string { return fmt.Sprintf("%020d%s", base, segmentSuffix) }
func snapshotName(lsn uint64) string { return fmt.Sprintf("%020d%s", lsn, snapSuffix) }

// parseName returns the LSN of a segment or snapshot file name.
func parseName(name, suffix string) (uint64, bool) {
	s, ok := strings.CutSuffix(name, suffix)
	if !ok || len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// Recovery reports what Open found and did.
type Recovery struct {
	// HasSnapshot says a snapshot was loaded; SnapshotLSN is its LSN (the state it
	// holds is the result of records 1..SnapshotLSN).
	HasSnapshot bool
	SnapshotLSN uint64
	// LastLSN is the last record recovered from the journal: Replay(SnapshotLSN, …)
	// delivers (SnapshotLSN, LastLSN]. It can be below SnapshotLSN only after the loss
	// of a journal tail that the snapshot still covers.
	LastLSN uint64
	// Segments is the number of segment files kept.
	Segments int
	// TruncatedBytes is the size of the torn tail cut from the last segment;
	// RemovedSegments counts last segments removed because their header was torn.
	TruncatedBytes  int64
	RemovedSegments int
	// CorruptSnapshots lists the snapshot files that failed verification, renamed
	// with a ".corrupt" suffix and skipped.
	CorruptSnapshots []string
	// RemovedTemp counts leftover temporary files (interrupted snapshot writes) deleted.
	RemovedTemp int
}

// Open opens (creating if needed) the journal in dir and recovers it:
//
//  1. takes an exclusive lock on the directory (ErrLocked if held);
//  2. deletes leftover temporary files of interrupted snapshot writes;
//  3. picks the newest snapshot that verifies (a damaged one is renamed *.corrupt,
//     logged and skipped) and whose successors are all in the journal;
//  4. reads every segment from the one holding the snapshot's successor on, checking
//     checksums and LSN continuity. A torn tail of the last segment (see ScanFile) is
//     truncated with a warning and never replayed; a last segment whose header is
//     torn is removed. Any other damage — in a segment that is not the last, or
//     followed by valid frames of a later write group — fails Open with a
//     *CorruptError (errors.Is ErrCorrupt) and changes nothing;
//  5. syncs the recovered tail, so that what Replay delivers is durable, and starts
//     the flusher.
//
// After Open, load LatestSnapshot, then Replay(snapshot LSN, apply) before appending:
// the next Append continues at Recovery().LastLSN+1 (or after the snapshot's LSN).
func Open(dir string, opts ...Option) (*Journal, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	j := &Journal{
		dir:  dir,
		o:    o,
		log:  o.log,
		lock: lock,
		kick: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	j.space.L = &j.mu
	if err := j.recover(); err != nil {
		j.closeCurrent()
		lock.Close()
		return nil, err
	}
	go j.run()
	return j, nil
}

// recover implements steps 2–5 of Open. It mutates the directory only once it has
// decided that recovery succeeds.
func (j *Journal) recover() error {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	var segs []segment
	var snaps []uint64
	var temps []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case !e.Type().IsRegular() || name == lockName || strings.HasSuffix(name, corruptSuffix):
		case strings.HasSuffix(name, tmpSuffix):
			temps = append(temps, name)
		case strings.HasSuffix(name, segmentSuffix):
			base, ok := parseName(name, segmentSuffix)
			if !ok || base == 0 {
				return fmt.Errorf("%w: unexpected segment file name %s", ErrCorrupt, name)
			}
			segs = append(segs, segment{base: base, path: filepath.Join(j.dir, name)})
		case strings.HasSuffix(name, snapSuffix):
			lsn, ok := parseName(name, snapSuffix)
			if !ok {
				return fmt.Errorf("%w: unexpected snapshot file name %s", ErrCorrupt, name)
			}
			snaps = append(snaps, lsn)
		}
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.base, b.base) })
	slices.Sort(snaps)

	// Step 3: the snapshot.
	var rec Recovery
	var corrupt []string
	kept := snaps
	for i := len(snaps) - 1; i >= 0; i-- {
		s := snaps[i]
		if len(segs) > 0 && segs[0].base > s+1 {
			break // the journal no longer holds the records right after s: older ones are worse
		}
		path := filepath.Join(j.dir, snapshotName(s))
		if _, err := readSnapshot(path, s); err != nil {
			j.log.Warn("journal: snapshot does not verify; falling back to the previous one",
				zap.String("path", path), zap.Error(err))
			corrupt = append(corrupt, path)
			kept = snaps[:i]
			continue
		}
		rec.HasSnapshot, rec.SnapshotLSN = true, s
		kept = snaps[:i+1]
		break
	}
	if !rec.HasSnapshot && len(segs) > 0 && segs[0].base != 1 {
		return &CorruptError{Path: segs[0].path, Evidence: -1, Seq: 1,
			Reason: fmt.Sprintf("no usable snapshot, and the journal starts at lsn %d", segs[0].base)}
	}

	// Step 4: the segments from the one holding SnapshotLSN+1 on.
	i0 := 0
	for i, s := range segs {
		if s.base <= rec.SnapshotLSN+1 {
			i0 = i
		}
	}
	type fix struct {
		path    string
		end     int64 // truncate to end; -1: remove
		dropped int64
		torn    *DamageError
	}
	var repair *fix
	var lastEnd int64
	continueLast := false // the last segment was scanned and can take more batches
	lastRec := rec.SnapshotLSN
	if len(segs) > 0 {
		lastRec = segs[i0].base - 1
	}
	for i := i0; i < len(segs); i++ {
		s := segs[i]
		isLast := i == len(segs)-1
		if i > i0 && s.base != lastRec+1 {
			return &CorruptError{Path: s.path, Evidence: -1, Seq: lastRec + 1,
				Reason: fmt.Sprintf("segment starts at lsn %d, want %d", s.base, lastRec+1)}
		}
		res, size, err := scanSegment(s)
		if err != nil {
			return err
		}
		if res.Torn != nil {
			if !isLast {
				return &CorruptError{Path: s.path, Offset: res.End, Seq: res.Torn.Seq, Evidence: -1,
					Reason: fmt.Sprintf("%v in a segment that is not the last (it was synced before the next one was created)", res.Torn.Err)}
			}
			end := res.End
			if end < FileHeaderSize {
				end = -1
			}
			repair = &fix{path: s.path, end: end, dropped: size - res.End, torn: res.Torn}
			if end < 0 {
				segs = segs[:i]
				break
			}
		}
		lastRec, lastEnd = res.Last, res.End
		continueLast = isLast
	}

	// Decided: apply the repairs.
	for _, name := range temps {
		path := filepath.Join(j.dir, name)
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		j.log.Info("journal: removed leftover temporary file", zap.String("path", path))
		rec.RemovedTemp++
	}
	for _, path := range corrupt {
		if err := os.Rename(path, path+corruptSuffix); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		rec.CorruptSnapshots = append(rec.CorruptSnapshots, path+corruptSuffix)
	}
	if repair != nil {
		if repair.end < 0 {
			if err := os.Remove(repair.path); err != nil {
				return fmt.Errorf("journal: %w", err)
			}
			rec.RemovedSegments++
			j.log.Warn("journal: removed the last segment: its header is torn and it holds no record of an earlier write group",
				zap.String("path", repair.path), zap.Int64("bytes", repair.dropped), zap.Error(repair.torn))
		} else {
			if err := truncateSync(repair.path, repair.end, j.o.sync); err != nil {
				return fmt.Errorf("journal: %w", err)
			}
			rec.TruncatedBytes = repair.dropped
			j.log.Warn("journal: truncated a torn tail; it is not replayed",
				zap.String("path", repair.path), zap.Int64("offset", repair.end),
				zap.Int64("dropped_bytes", repair.dropped), zap.Uint64("last_lsn", lastRec), zap.Error(repair.torn))
		}
	}
	if rec.HasSnapshot && lastRec < rec.SnapshotLSN {
		j.log.Warn("journal: the snapshot is ahead of the journal; records after the journal's end exist only in the snapshot",
			zap.Uint64("snapshot_lsn", rec.SnapshotLSN), zap.Uint64("journal_last_lsn", lastRec))
	}

	// Step 5: continue the last segment.
	if n := len(segs); n > 0 && continueLast {
		f, err := os.OpenFile(segs[n-1].path, os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		j.cur, j.curSize, j.curNext = f, lastEnd, lastRec+1
		if err := j.syncFile(f); err != nil {
			return fmt.Errorf("journal: sync recovered tail: %w", err)
		}
	}
	if len(temps) > 0 || len(corrupt) > 0 || repair != nil {
		if err := j.syncDir(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}

	rec.LastLSN = lastRec
	rec.Segments = len(segs)
	last := max(lastRec, rec.SnapshotLSN)
	j.next = last + 1
	j.durable.Store(last)
	j.segs = segs
	j.lastRec = lastRec
	j.snaps = kept
	j.recovery = rec
	j.log.Info("journal: recovered", zap.String("dir", j.dir),
		zap.Bool("snapshot", rec.HasSnapshot), zap.Uint64("snapshot_lsn", rec.SnapshotLSN),
		zap.Uint64("last_lsn", rec.LastLSN), zap.Int("segments", rec.Segments),
		zap.Int64("truncated_bytes", rec.TruncatedBytes))
	return nil
}

// scanSegment validates one segment file and returns its scan and size.
func scanSegment(s segment) (ScanResult, int64, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return ScanResult{}, 0, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ScanResult{}, 0, fmt.Errorf("journal: %w", err)
	}
	res, err := ScanFile(f, st.Size(), ScanOptions{Kind: KindJournal, Base: s.base, MaxPayload: MaxRecordSize})
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.Path = s.path
			return res, 0, ce
		}
		return res, 0, fmt.Errorf("journal: read %s: %w", s.path, err)
	}
	return res, st.Size(), nil
}

func truncateSync(path string, size int64, mode SyncMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil && mode != SyncNone {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Recovery returns what Open found and did.
func (j *Journal) Recovery() Recovery {
	r := j.recovery
	r.CorruptSnapshots = slices.Clone(r.CorruptSnapshots)
	return r
}

// Replay calls fn for every durable record with an LSN above after, in LSN order,
// reading the segment files. rec is only valid during the call. An error from fn stops
// Replay and is returned as is. Errors: ErrCompacted if records right after after were
// deleted (a snapshot covers them), a *CorruptError if a segment no longer reads back.
//
// Replay is meant for recovery (after Open, before the first Append) but is safe at
// any time: it delivers the records that were durable when it started. fn may call
// any method of the journal.
func (j *Journal) Replay(after uint64, fn func(lsn uint64, rec []byte) error) error {
	j.segMu.Lock()
	limit := j.lastRec
	if after >= limit {
		j.segMu.Unlock()
		return nil
	}
	i0 := -1
	for i, s := range j.segs {
		if s.base <= after+1 {
			i0 = i
		}
	}
	if i0 < 0 {
		oldest := uint64(0)
		if len(j.segs) > 0 {
			oldest = j.segs[0].base
		}
		j.segMu.Unlock()
		return fmt.Errorf("%w: records after lsn %d were deleted; the journal starts at %d", ErrCompacted, after, oldest)
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, s := range j.segs[i0:] {
		if s.base > limit {
			break
		}
		f, err := os.Open(s.path) // an open file survives a concurrent deletion
		if err != nil {
			j.segMu.Unlock()
			return fmt.Errorf("journal: %w", err)
		}
		files = append(files, f)
	}
	j.segMu.Unlock()

	want := after + 1
	for _, f := range files {
		rd, err := NewReader(f, KindJournal, MaxRecordSize)
		if err != nil {
			return &CorruptError{Path: f.Name(), Seq: want, Evidence: -1, Reason: err.Error()}
		}
		for want <= limit {
			fr, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return &CorruptError{Path: f.Name(), Offset: rd.Offset(), Seq: want, Evidence: -1, Reason: err.Error()}
			}
			if fr.Seq < want {
				continue
			}
			if fr.Seq != want {
				return &CorruptError{Path: f.Name(), Offset: rd.Offset(), Seq: want, Evidence: -1,
					Reason: fmt.Sprintf("found lsn %d", fr.Seq)}
			}
			if err := fn(fr.Seq, fr.Payload); err != nil {
				return err
			}
			want++
		}
	}
	if want <= limit {
		return &CorruptError{Seq: want, Evidence: -1, Reason: fmt.Sprintf("the journal ends before lsn %d", limit)}
	}
	return nil
}

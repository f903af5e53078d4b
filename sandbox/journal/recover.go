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

// recoveryPlan is what recovery decided, before it changes anything.
type recoveryPlan struct {
	rec          Recovery // counts describe the repairs to make
	segs         []segment
	kept         []uint64 // snapshots kept
	temps        []string
	corrupt      []string // snapshot files to set aside
	repair       *segmentRepair
	lastRec      uint64
	lastEnd      int64
	continueLast bool // the last segment was scanned and can take more batches
}

// segmentRepair cuts the torn tail of the last segment, or removes the segment.
type segmentRepair struct {
	path    string
	end     int64 // truncate to end; -1: remove the file
	dropped int64
	torn    *DamageError
}

// Inspect reports what Open would recover from dir and which repairs it would make
// (TruncatedBytes, RemovedSegments, RemovedTemp, CorruptSnapshots naming the files it
// would set aside), without changing anything. It takes no lock: on a journal being
// written, the batch in flight may be reported as a torn tail. For operators and
// tools, e.g. after Open failed with a *CorruptError, which Inspect returns too.
func Inspect(dir string) (Recovery, error) {
	p, err := planRecovery(dir, zap.NewNop())
	if err != nil {
		return Recovery{}, err
	}
	return p.rec, nil
}

// recover implements steps 2–5 of Open: plan, then repair and continue.
func (j *Journal) recover() error {
	p, err := planRecovery(j.dir, j.log)
	if err != nil {
		return err
	}
	return j.apply(p)
}

// planRecovery implements steps 2–4 of Open without changing the directory.
func planRecovery(dir string, log *zap.Logger) (*recoveryPlan, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	p := &recoveryPlan{}
	var segs []segment
	var snaps []uint64
	for _, e := range entries {
		name := e.Name()
		switch {
		case !e.Type().IsRegular() || name == lockName || strings.HasSuffix(name, corruptSuffix):
		case strings.HasSuffix(name, tmpSuffix):
			p.temps = append(p.temps, filepath.Join(dir, name))
		case strings.HasSuffix(name, segmentSuffix):
			base, ok := parseName(name, segmentSuffix)
			if !ok || base == 0 {
				return nil, fmt.Errorf("%w: unexpected segment file name %s", ErrCorrupt, name)
			}
			segs = append(segs, segment{base: base, path: filepath.Join(dir, name)})
		case strings.HasSuffix(name, snapSuffix):
			lsn, ok := parseName(name, snapSuffix)
			if !ok {
				return nil, fmt.Errorf("%w: unexpected snapshot file name %s", ErrCorrupt, name)
			}
			snaps = append(snaps, lsn)
		}
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.base, b.base) })
	slices.Sort(snaps)
	rec := &p.rec
	rec.RemovedTemp = len(p.temps)

	// Step 3: the snapshot.
	p.kept = snaps
	for i := len(snaps) - 1; i >= 0; i-- {
		s := snaps[i]
		if len(segs) > 0 && segs[0].base > s+1 {
			break // the journal no longer holds the records right after s: older ones are worse
		}
		path := filepath.Join(dir, snapshotName(s))
		if _, err := readSnapshot(path, s); err != nil {
			log.Warn("journal: snapshot does not verify; falling back to the previous one",
				zap.String("path", path), zap.Error(err))
			p.corrupt = append(p.corrupt, path)
			p.kept = snaps[:i]
			continue
		}
		rec.HasSnapshot, rec.SnapshotLSN = true, s
		p.kept = snaps[:i+1]
		break
	}
	rec.CorruptSnapshots = slices.Clone(p.corrupt)
	switch {
	case rec.HasSnapshot:
	case len(segs) > 0 && segs[0].base != 1:
		return nil, &CorruptError{Path: segs[0].path, Evidence: -1, Seq: 1,
			Reason: fmt.Sprintf("no usable snapshot, and the journal starts at lsn %d", segs[0].base)}
	case len(segs) == 0 && len(snaps) > 0:
		// Starting empty would silently drop the state the snapshots held.
		return nil, &CorruptError{Path: filepath.Join(dir, snapshotName(snaps[len(snaps)-1])), Evidence: -1,
			Reason: "no snapshot verifies and there is no journal to rebuild the state from"}
	}

	// Step 4: the segments from the one holding SnapshotLSN+1 on.
	i0 := 0
	for i, s := range segs {
		if s.base <= rec.SnapshotLSN+1 {
			i0 = i
		}
	}
	p.lastRec = rec.SnapshotLSN
	if len(segs) > 0 {
		p.lastRec = segs[i0].base - 1
	}
	for i := i0; i < len(segs); i++ {
		s := segs[i]
		isLast := i == len(segs)-1
		if i > i0 && s.base != p.lastRec+1 {
			return nil, &CorruptError{Path: s.path, Evidence: -1, Seq: p.lastRec + 1,
				Reason: fmt.Sprintf("segment starts at lsn %d, want %d", s.base, p.lastRec+1)}
		}
		res, size, err := scanSegment(s)
		if err != nil {
			return nil, err
		}
		if res.Torn != nil {
			if !isLast {
				return nil, &CorruptError{Path: s.path, Offset: res.End, Seq: res.Torn.Seq, Evidence: -1,
					Reason: fmt.Sprintf("%v in a segment that is not the last (it was synced before the next one was created)", res.Torn.Err)}
			}
			end := res.End
			if end < FileHeaderSize {
				end = -1
			}
			p.repair = &segmentRepair{path: s.path, end: end, dropped: size - res.End, torn: res.Torn}
			if end < 0 {
				rec.RemovedSegments++
				segs = segs[:i]
				break
			}
			rec.TruncatedBytes = p.repair.dropped
		}
		p.lastRec, p.lastEnd = res.Last, res.End
		p.continueLast = isLast
	}
	p.segs = segs
	rec.LastLSN = p.lastRec
	rec.Segments = len(segs)
	return p, nil
}

// apply makes the repairs of plan p, continues the last segment and sets the
// journal's state (step 5 of Open).
func (j *Journal) apply(p *recoveryPlan) error {
	rec := p.rec
	for _, path := range p.temps {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		j.log.Info("journal: removed leftover temporary file", zap.String("path", path))
	}
	rec.CorruptSnapshots = nil
	for _, path := range p.corrupt {
		if err := os.Rename(path, path+corruptSuffix); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		rec.CorruptSnapshots = append(rec.CorruptSnapshots, path+corruptSuffix)
	}
	if r := p.repair; r != nil {
		if r.end < 0 {
			if err := os.Remove(r.path); err != nil {
				return fmt.Errorf("journal: %w", err)
			}
			j.log.Warn("journal: removed the last segment: its header is torn and it holds no record of an earlier write group",
				zap.String("path", r.path), zap.Int64("bytes", r.dropped), zap.Error(r.torn))
		} else {
			if err := truncateSync(r.path, r.end, j.o.sync); err != nil {
				return fmt.Errorf("journal: %w", err)
			}
			j.log.Warn("journal: truncated a torn tail; it is not replayed",
				zap.String("path", r.path), zap.Int64("offset", r.end),
				zap.Int64("dropped_bytes", r.dropped), zap.Uint64("last_lsn", p.lastRec), zap.Error(r.torn))
		}
	}
	if rec.HasSnapshot && p.lastRec < rec.SnapshotLSN {
		j.log.Warn("journal: the snapshot is ahead of the journal; records after the journal's end exist only in the snapshot",
			zap.Uint64("snapshot_lsn", rec.SnapshotLSN), zap.Uint64("journal_last_lsn", p.lastRec))
	}

	// Continue the last segment; sync it so that what Replay delivers is durable.
	if n := len(p.segs); n > 0 && p.continueLast {
		f, err := os.OpenFile(p.segs[n-1].path, os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		j.cur, j.curSize, j.curNext = f, p.lastEnd, p.lastRec+1
		if err := j.syncFile(f); err != nil {
			return fmt.Errorf("journal: sync recovered tail: %w", err)
		}
	}
	if len(p.temps) > 0 || len(p.corrupt) > 0 || p.repair != nil {
		if err := j.syncDir(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}

	last := max(p.lastRec, rec.SnapshotLSN)
	j.next = last + 1
	j.durable.Store(last)
	j.segs = p.segs
	j.lastRec = p.lastRec
	j.snaps = p.kept
	j.snapCount.Store(int32(len(j.snaps)))
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

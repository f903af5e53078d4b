package journal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"
)

// Snapshot is a saved state: Data is the result of applying records 1..LSN. The
// journal does not interpret Data.
type Snapshot struct {
	LSN  uint64
	Data []byte
}

// A snapshot file is a framed file of kind KindSnapshot whose header base is the
// snapshot's LSN, holding exactly one frame (Seq = LSN) whose payload is the state:
// the frame's CRC-32C covers the data.

// readSnapshot reads and verifies the snapshot file at path, which must hold LSN lsn.
func readSnapshot(path string, lsn uint64) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	h, err := ParseFileHeader(b, KindSnapshot)
	if err != nil {
		return nil, err
	}
	if h.Base != lsn {
		return nil, fmt.Errorf("%w: snapshot header says lsn %d, file name %d", ErrBadHeader, h.Base, lsn)
	}
	f, n, err := ParseFrame(b[FileHeaderSize:], 0)
	if err != nil {
		return nil, err
	}
	switch {
	case f.Seq != lsn || f.Group != lsn:
		return nil, fmt.Errorf("%w: snapshot frame has lsn %d, want %d", ErrBadFrame, f.Seq, lsn)
	case FileHeaderSize+n != len(b):
		return nil, fmt.Errorf("%w: %d bytes after the snapshot frame", ErrBadFrame, len(b)-FileHeaderSize-n)
	}
	return f.Payload, nil
}

// LatestSnapshot returns the newest snapshot (the one recovered by Open, or the last
// one written since), read back from disk and verified. Errors: ErrNoSnapshot if there
// is none; a read or verification error (the file changed after it was verified).
func (j *Journal) LatestSnapshot() (Snapshot, error) {
	j.snapMu.Lock()
	defer j.snapMu.Unlock()
	if len(j.snaps) == 0 {
		return Snapshot{}, ErrNoSnapshot
	}
	lsn := j.snaps[len(j.snaps)-1]
	data, err := readSnapshot(filepath.Join(j.dir, snapshotName(lsn)), lsn)
	if err != nil {
		return Snapshot{}, fmt.Errorf("journal: snapshot %d: %w", lsn, err)
	}
	return Snapshot{LSN: lsn, Data: data}, nil
}

// WriteSnapshot stores data as the state after records 1..lsn. It first waits until
// lsn is durable (so the journal always reaches every snapshot), then writes the file
// atomically: a temporary file, fsync, rename, fsync of the directory. A crash at any
// point leaves either the previous snapshots or the new one, never a partial file
// under a snapshot name. Afterwards it keeps the newest KeepSnapshots snapshots and
// deletes the journal segments wholly covered by the oldest one kept.
//
// lsn must have been appended and be above the newest snapshot's (ErrSnapshotOrder);
// lsn 0 (a state before any record) is allowed for an empty journal. WriteSnapshot
// calls are serialized; appends continue meanwhile. Errors: ErrClosed, ErrUnknownLSN,
// ErrSnapshotOrder, ErrTooLarge (over 4 GiB), ctx.Err(), the journal's failure, or an
// I/O error (the new snapshot is then absent and the old ones intact).
func (j *Journal) WriteSnapshot(ctx context.Context, lsn uint64, data []byte) error {
	if uint64(len(data)) > MaxPayload {
		return fmt.Errorf("%w: snapshot of %d bytes", ErrTooLarge, len(data))
	}
	j.snapMu.Lock()
	defer j.snapMu.Unlock()
	j.mu.Lock()
	err := j.appendErr()
	next := j.next
	j.mu.Unlock()
	switch {
	case err != nil:
		return err
	case lsn >= next:
		return fmt.Errorf("%w: snapshot at %d (last appended %d)", ErrUnknownLSN, lsn, next-1)
	case len(j.snaps) > 0 && lsn <= j.snaps[len(j.snaps)-1]:
		return fmt.Errorf("%w: %d ≤ %d", ErrSnapshotOrder, lsn, j.snaps[len(j.snaps)-1])
	}
	if err := j.WaitDurable(ctx, lsn); err != nil {
		return err
	}
	path := filepath.Join(j.dir, snapshotName(lsn))
	if err := j.writeFileAtomic(path, lsn, data); err != nil {
		return fmt.Errorf("journal: write snapshot: %w", err)
	}
	j.snaps = append(j.snaps, lsn)
	j.snapCount.Store(int32(len(j.snaps)))
	j.log.Info("journal: snapshot written", zap.String("path", path), zap.Uint64("lsn", lsn), zap.Int("bytes", len(data)))
	return j.prune()
}

func (j *Journal) writeFileAtomic(path string, lsn uint64, data []byte) (err error) {
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	buf := AppendFileHeader(make([]byte, 0, FileHeaderSize+FrameHeaderSize), FileHeader{Kind: KindSnapshot, Base: lsn})
	buf = appendFrameHeader(buf, lsn, lsn, data) // data is written after it, not copied
	if _, err = f.Write(buf); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if j.o.sync != SyncNone {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return j.syncDir()
}

// prune keeps the newest keepSnapshots snapshots and deletes the segments wholly
// covered by the oldest kept one (never the segment being written). j.snapMu is held.
func (j *Journal) prune() error {
	var errs []error
	for len(j.snaps) > j.o.keepSnapshots {
		path := filepath.Join(j.dir, snapshotName(j.snaps[0]))
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
			break
		}
		j.snaps = j.snaps[1:]
	}
	j.snapCount.Store(int32(len(j.snaps)))
	oldest := j.snaps[0]
	j.segMu.Lock()
	var removed []string
	for len(j.segs) > 1 && j.segs[1].base <= oldest+1 {
		if err := os.Remove(j.segs[0].path); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
			break
		}
		removed = append(removed, j.segs[0].path)
		j.segs = j.segs[1:]
	}
	j.segMu.Unlock()
	if len(removed) > 0 {
		j.log.Info("journal: deleted segments covered by a snapshot", zap.Strings("paths", removed), zap.Uint64("snapshot_lsn", oldest))
	}
	if err := j.syncDir(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("journal: pruning after snapshot %d: %w", j.snaps[len(j.snaps)-1], errs[0])
	}
	return nil
}

package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func stateAt(lsn uint64) []byte { return []byte(fmt.Sprintf("state after %d records", lsn)) }

func snapshotT(t testing.TB, j *Journal, lsn uint64) {
	t.Helper()
	if err := j.WriteSnapshot(context.Background(), lsn, stateAt(lsn)); err != nil {
		t.Fatalf("WriteSnapshot(%d): %v", lsn, err)
	}
}

func wantSnapshot(t testing.TB, j *Journal, lsn uint64) {
	t.Helper()
	s, err := j.LatestSnapshot()
	if err != nil {
		t.Fatalf("LatestSnapshot: %v", err)
	}
	if s.LSN != lsn || !bytes.Equal(s.Data, stateAt(lsn)) {
		t.Fatalf("snapshot at %d (%q), want %d", s.LSN, s.Data, lsn)
	}
}

func files(dir, suffix string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	return m
}

func TestSnapshotPlusJournalRecoversTheState(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir)
	if _, err := j.LatestSnapshot(); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("LatestSnapshot of a new journal: %v", err)
	}
	appendN(t, j, 1, 100)
	snapshotT(t, j, 60)
	wantSnapshot(t, j, 60)
	appendN(t, j, 101, 120)
	closeT(t, j)

	j = openT(t, dir)
	if r := j.Recovery(); !r.HasSnapshot || r.SnapshotLSN != 60 || r.LastLSN != 120 {
		t.Fatalf("Recovery = %+v", r)
	}
	wantSnapshot(t, j, 60)
	wantRange(t, replayAll(t, j, 60), 61, 120)
	if lsn, _ := j.Append(record(121)); lsn != 121 {
		t.Fatalf("next lsn %d", lsn)
	}
}

func TestSnapshotArgumentsAreChecked(t *testing.T) {
	j := openT(t, t.TempDir())
	t.Run("an empty journal can snapshot its initial state", func(t *testing.T) {
		snapshotT(t, j, 0)
		wantSnapshot(t, j, 0)
	})
	appendN(t, j, 1, 10)
	t.Run("an lsn not yet appended is refused", func(t *testing.T) {
		if err := j.WriteSnapshot(context.Background(), 11, nil); !errors.Is(err, ErrUnknownLSN) {
			t.Fatalf("err = %v", err)
		}
	})
	snapshotT(t, j, 5)
	t.Run("an lsn not above the newest snapshot is refused", func(t *testing.T) {
		for _, lsn := range []uint64{5, 4} {
			if err := j.WriteSnapshot(context.Background(), lsn, nil); !errors.Is(err, ErrSnapshotOrder) {
				t.Fatalf("lsn %d: err = %v", lsn, err)
			}
		}
	})
	t.Run("the snapshot waits for its lsn to be durable", func(t *testing.T) {
		lsn, _ := j.Append(record(11))
		snapshotT(t, j, lsn)
		if j.DurableLSN() < lsn {
			t.Fatalf("snapshot at %d written with DurableLSN %d", lsn, j.DurableLSN())
		}
	})
}

func TestSnapshotRetentionDeletesCoveredSegments(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, WithSegmentSize(1<<10), WithKeepSnapshots(2))
	for lsn := uint64(10); lsn <= 200; lsn += 10 {
		appendN(t, j, lsn-9, lsn)
		if lsn%50 == 0 {
			snapshotT(t, j, lsn)
		}
	}
	if n := len(files(dir, snapSuffix)); n != 2 {
		t.Fatalf("%d snapshot files, want 2", n)
	}
	segs := readLayout(t, dir)
	if segs[0].base > 151 {
		t.Fatalf("first segment starts at %d: the oldest kept snapshot (150) is no longer covered", segs[0].base)
	}
	if len(segs) > 1 && segs[1].base <= 151 {
		t.Fatalf("segment %s is wholly covered by snapshot 150 but kept", segs[0].name)
	}
	if err := j.Replay(0, func(uint64, []byte) error { return nil }); !errors.Is(err, ErrCompacted) {
		t.Fatalf("Replay(0) after compaction: %v, want ErrCompacted", err)
	}
	wantRange(t, replayAll(t, j, 150), 151, 200)
	if st := j.Stats(); st.Snapshots != 2 || st.Segments != len(segs) {
		t.Fatalf("stats = %+v, %d segments on disk", st, len(segs))
	}
	closeT(t, j)

	j = openT(t, dir)
	wantSnapshot(t, j, 200)
	wantRange(t, replayAll(t, j, 200), 201, 200)
}

func TestSnapshotFallsBackWhenTheNewestIsCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(path string)
	}{
		{"bit flip in the state", func(p string) { flipFile(p, -3) }},
		{"bit flip in the header", func(p string) { flipFile(p, 17) }},
		{"truncated", func(p string) { fi, _ := os.Stat(p); os.Truncate(p, fi.Size()-1) }},
		{"empty", func(p string) { os.Truncate(p, 0) }},
		{"trailing bytes", func(p string) { appendFile(filepath.Dir(p), filepath.Base(p), []byte{0}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j := openT(t, dir, WithSegmentSize(1<<10))
			appendN(t, j, 1, 40)
			snapshotT(t, j, 20)
			snapshotT(t, j, 40)
			appendN(t, j, 41, 50)
			closeT(t, j)
			newest := filepath.Join(dir, snapshotName(40))
			tc.damage(newest)

			core, logs := observer.New(zapcore.InfoLevel)
			j = openT(t, dir, WithLogger(zap.New(core)))
			r := j.Recovery()
			if !r.HasSnapshot || r.SnapshotLSN != 20 || len(r.CorruptSnapshots) != 1 || r.LastLSN != 50 {
				t.Fatalf("Recovery = %+v", r)
			}
			if logs.FilterMessageSnippet("falling back").Len() != 1 {
				t.Fatalf("no log line: %v", logs.All())
			}
			if _, err := os.Stat(newest + corruptSuffix); err != nil {
				t.Fatalf("the damaged snapshot was not set aside: %v", err)
			}
			wantSnapshot(t, j, 20)
			wantRange(t, replayAll(t, j, 20), 21, 50)
			snapshotT(t, j, 50) // the set-aside file does not count as a snapshot
			closeT(t, j)
		})
	}
}

func TestSnapshotCorruptWithoutCoverageFailsOpen(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, WithSegmentSize(1<<10), WithKeepSnapshots(1))
	for lsn := uint64(1); lsn <= 100; lsn += 5 {
		appendN(t, j, lsn, lsn+4)
	}
	snapshotT(t, j, 100)
	closeT(t, j)
	if segs := readLayout(t, dir); segs[0].base == 1 {
		t.Fatal("the snapshot did not compact the journal")
	}
	flipFile(filepath.Join(dir, snapshotName(100)), -1)
	before := snapshotFiles(t, dir)
	if _, err := Open(dir); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open: %v, want ErrCorrupt (no snapshot, journal does not start at 1)", err)
	}
	if changed := diffFiles(before, snapshotFiles(t, dir)); changed != "" {
		t.Fatalf("a failed Open changed %s", changed)
	}
}

func TestInspectPredictsRepairsWithoutMakingThem(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir)
	appendN(t, j, 1, 30)
	snapshotT(t, j, 10)
	snapshotT(t, j, 20)
	closeT(t, j)
	flipFile(filepath.Join(dir, snapshotName(20)), -2)
	os.WriteFile(filepath.Join(dir, snapshotName(30)+tmpSuffix), []byte("partial"), 0o600)
	segs := readLayout(t, dir)
	appendFile(dir, segs[0].name, []byte("torn tail"))
	before := snapshotFiles(t, dir)

	r, err := Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if changed := diffFiles(before, snapshotFiles(t, dir)); changed != "" {
		t.Fatalf("Inspect changed %s", changed)
	}
	want := Recovery{HasSnapshot: true, SnapshotLSN: 10, LastLSN: 30, Segments: 1, TruncatedBytes: 9, RemovedTemp: 1,
		CorruptSnapshots: []string{filepath.Join(dir, snapshotName(20))}}
	if fmt.Sprint(r) != fmt.Sprint(want) {
		t.Fatalf("Inspect = %+v\nwant      %+v", r, want)
	}
	j = openT(t, dir)
	got := j.Recovery()
	want.CorruptSnapshots[0] += corruptSuffix
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Open recovered %+v\nwant           %+v", got, want)
	}
}

func TestSnapshotCorruptWithoutAnyJournalFailsOpen(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir)
	snapshotT(t, j, 0) // an initial state, before any record
	closeT(t, j)
	flipFile(filepath.Join(dir, snapshotName(0)), -1)
	if _, err := Open(dir); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open: %v, want ErrCorrupt rather than an empty state", err)
	}
}

func TestSnapshotLeftoverTempFileIsRemoved(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir)
	appendN(t, j, 1, 10)
	snapshotT(t, j, 5)
	closeT(t, j)
	// A crash in the middle of WriteSnapshot(10) leaves its temporary file.
	tmp := filepath.Join(dir, snapshotName(10)+tmpSuffix)
	os.WriteFile(tmp, stateAt(10)[:7], 0o600)
	j = openT(t, dir)
	if r := j.Recovery(); r.RemovedTemp != 1 || r.SnapshotLSN != 5 {
		t.Fatalf("Recovery = %+v", r)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("temporary file still there: %v", err)
	}
	snapshotT(t, j, 10)
}

func TestSnapshotAheadOfALostJournalTail(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir)
	appendN(t, j, 1, 20)
	snapshotT(t, j, 20)
	closeT(t, j)
	// The disk loses the journal's last five records, not the snapshot.
	segs := readLayout(t, dir)
	os.Truncate(filepath.Join(dir, segs[0].name), segs[0].frames[15].off)

	core, logs := observer.New(zapcore.WarnLevel)
	j = openT(t, dir, WithLogger(zap.New(core)))
	if r := j.Recovery(); r.SnapshotLSN != 20 || r.LastLSN != 15 {
		t.Fatalf("Recovery = %+v", r)
	}
	if logs.FilterMessageSnippet("ahead of the journal").Len() != 1 {
		t.Fatalf("log = %v", logs.All())
	}
	wantRange(t, replayAll(t, j, 20), 21, 20)
	appendN(t, j, 21, 30)
	closeT(t, j)
	j = openT(t, dir)
	wantSnapshot(t, j, 20)
	wantRange(t, replayAll(t, j, 20), 21, 30)
}

// flipFile flips one bit of the file at off (negative: from the end).
func flipFile(path string, off int64) {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0x08
	if err := os.WriteFile(path, b, 0o600); err != nil {
		panic(err)
	}
}

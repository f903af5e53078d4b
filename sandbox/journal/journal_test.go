package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// record returns the deterministic payload of LSN lsn used across these tests, of
// a length that varies with lsn (1..300 bytes).
func record(lsn uint64) []byte {
	n := int(lsn*131%300) + 1
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(lsn>>((i%8)*8)) ^ byte(i*29)
	}
	return b
}

func openT(t testing.TB, dir string, opts ...Option) *Journal {
	t.Helper()
	j, err := Open(dir, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { j.Close(context.Background()) })
	return j
}

func closeT(t testing.TB, j *Journal) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := j.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// appendN appends records for LSNs from..to and waits for the last to be durable.
func appendN(t testing.TB, j *Journal, from, to uint64) {
	t.Helper()
	for lsn := from; lsn <= to; lsn++ {
		got, err := j.Append(record(lsn))
		if err != nil {
			t.Fatalf("Append %d: %v", lsn, err)
		}
		if got != lsn {
			t.Fatalf("Append returned lsn %d, want %d", got, lsn)
		}
	}
	if err := j.WaitDurable(context.Background(), to); err != nil {
		t.Fatalf("WaitDurable %d: %v", to, err)
	}
}

// replayAll returns the LSNs Replay(after) delivers, checking each payload.
func replayAll(t testing.TB, j *Journal, after uint64) []uint64 {
	t.Helper()
	var lsns []uint64
	err := j.Replay(after, func(lsn uint64, rec []byte) error {
		if !bytes.Equal(rec, record(lsn)) {
			return fmt.Errorf("lsn %d: payload differs", lsn)
		}
		lsns = append(lsns, lsn)
		return nil
	})
	if err != nil {
		t.Fatalf("Replay(%d): %v", after, err)
	}
	return lsns
}

func wantRange(t testing.TB, got []uint64, from, to uint64) {
	t.Helper()
	if from > to {
		if len(got) != 0 {
			t.Fatalf("replayed %d records (%d..), want none", len(got), got[0])
		}
		return
	}
	if uint64(len(got)) != to-from+1 || got[0] != from || got[len(got)-1] != to {
		first, last := uint64(0), uint64(0)
		if len(got) > 0 {
			first, last = got[0], got[len(got)-1]
		}
		t.Fatalf("replayed %d records %d..%d, want %d..%d", len(got), first, last, from, to)
	}
}

// checkNoLeak fails if goroutines started during the test are still running.
func checkNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func TestLSNsAreConsecutiveAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir)
	appendN(t, j, 1, 50)
	if got := j.LastLSN(); got != 50 {
		t.Fatalf("LastLSN = %d", got)
	}
	closeT(t, j)

	j = openT(t, dir)
	if r := j.Recovery(); r.LastLSN != 50 || r.HasSnapshot || r.TruncatedBytes != 0 {
		t.Fatalf("Recovery = %+v", r)
	}
	wantRange(t, replayAll(t, j, 0), 1, 50)
	appendN(t, j, 51, 60)
	closeT(t, j)

	j = openT(t, dir)
	wantRange(t, replayAll(t, j, 0), 1, 60)
	wantRange(t, replayAll(t, j, 42), 43, 60)
	wantRange(t, replayAll(t, j, 60), 61, 60)
}

func TestWaitDurable(t *testing.T) {
	j := openT(t, t.TempDir())
	lsn, err := j.Append([]byte("order"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("appended record becomes durable", func(t *testing.T) {
		if err := j.WaitDurable(context.Background(), lsn); err != nil {
			t.Fatal(err)
		}
		if j.DurableLSN() < lsn {
			t.Fatalf("DurableLSN %d < %d after WaitDurable", j.DurableLSN(), lsn)
		}
	})
	t.Run("lsn zero is always durable", func(t *testing.T) {
		if err := j.WaitDurable(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an lsn never appended is an error", func(t *testing.T) {
		if err := j.WaitDurable(context.Background(), lsn+1); !errors.Is(err, ErrUnknownLSN) {
			t.Fatalf("err = %v, want ErrUnknownLSN", err)
		}
	})
	t.Run("a cancelled context ends the wait", func(t *testing.T) {
		j2 := openT(t, t.TempDir())
		// Stall the flusher before it marks the batch durable: it takes segMu then.
		j2.segMu.Lock()
		defer j2.segMu.Unlock()
		lsn, err := j2.Append([]byte("order"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := j2.WaitDurable(ctx, lsn); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestConcurrentAppendersAndWaiters(t *testing.T) {
	checkNoLeak(t)
	dir := t.TempDir()
	j := openT(t, dir)
	const writers, each = 8, 100
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	var mu sync.Mutex
	seen := map[uint64][]byte{}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				rec := []byte(fmt.Sprintf("writer %d record %d", w, i))
				lsn, err := j.Append(rec)
				if err == nil {
					err = j.WaitDurable(context.Background(), lsn)
				}
				if err != nil {
					errc <- err
					return
				}
				if j.DurableLSN() < lsn {
					errc <- fmt.Errorf("lsn %d acknowledged but DurableLSN is %d", lsn, j.DurableLSN())
					return
				}
				mu.Lock()
				seen[lsn] = rec
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	st := j.Stats()
	if st.Records != writers*each || st.DurableLSN != writers*each || st.Batches == 0 || st.Batches > st.Records {
		t.Fatalf("stats = %+v", st)
	}
	closeT(t, j)
	j = openT(t, dir)
	n := 0
	err := j.Replay(0, func(lsn uint64, rec []byte) error {
		if !bytes.Equal(seen[lsn], rec) {
			return fmt.Errorf("lsn %d: %q, acknowledged %q", lsn, rec, seen[lsn])
		}
		n++
		return nil
	})
	if err != nil || n != writers*each {
		t.Fatalf("replayed %d records: %v", n, err)
	}
	closeT(t, j)
}

func TestSegmentsRotateAtTheConfiguredSize(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, WithSegmentSize(2<<10))
	for lsn := uint64(1); lsn <= 300; lsn += 10 { // batches of 10 records
		appendN(t, j, lsn, lsn+9)
	}
	st := j.Stats()
	if st.Segments < 10 {
		t.Fatalf("%d segments for ~50 KiB at 2 KiB each", st.Segments)
	}
	closeT(t, j)
	segs, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	for _, p := range segs {
		fi, _ := os.Stat(p)
		if fi.Size() > 2<<10+10*(FrameHeaderSize+300) {
			t.Errorf("%s is %d bytes, more than one batch over the limit", p, fi.Size())
		}
	}
	j = openT(t, dir, WithSegmentSize(2<<10))
	wantRange(t, replayAll(t, j, 0), 1, 300)
	wantRange(t, replayAll(t, j, 155), 156, 300)
}

func TestCloseFlushesPendingRecordsAndStopsTheFlusher(t *testing.T) {
	checkNoLeak(t)
	dir := t.TempDir()
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for lsn := uint64(1); lsn <= 1000; lsn++ {
		if _, err := j.Append(record(lsn)); err != nil {
			t.Fatal(err)
		}
	}
	closeT(t, j)
	if _, err := j.Append([]byte("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if err := j.WriteSnapshot(context.Background(), 1000, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("WriteSnapshot after Close: %v, want ErrClosed", err)
	}
	if err := j.WaitDurable(context.Background(), 1000); err != nil {
		t.Fatalf("WaitDurable after Close of a flushed lsn: %v", err)
	}
	if err := j.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	j = openT(t, dir)
	wantRange(t, replayAll(t, j, 0), 1, 1000)
	closeT(t, j)
}

func TestDirectoryLockExcludesASecondJournal(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir)
	if _, err := Open(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	closeT(t, j)
	j2 := openT(t, dir)
	closeT(t, j2)
}

func TestFilesAreOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "j")
	j := openT(t, dir)
	appendN(t, j, 1, 3)
	if err := j.WriteSnapshot(context.Background(), 3, []byte("state")); err != nil {
		t.Fatal(err)
	}
	closeT(t, j)
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fi, _ := e.Info()
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", e.Name(), fi.Mode().Perm())
		}
	}
}

func TestAppendRejectsOversizedRecords(t *testing.T) {
	j := openT(t, t.TempDir())
	if _, err := j.Append(make([]byte, MaxRecordSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if lsn, err := j.Append(nil); err != nil || lsn != 1 {
		t.Fatalf("empty record: lsn %d, %v", lsn, err)
	}
}

func TestBackpressureBoundsPendingBytes(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, WithMaxPendingBytes(4<<10), WithMaxBatchBytes(1<<10))
	var maxPending int
	for lsn := uint64(1); lsn <= 2000; lsn++ {
		if _, err := j.Append(record(lsn)); err != nil {
			t.Fatal(err)
		}
		j.mu.Lock()
		maxPending = max(maxPending, j.pendingBytes)
		j.mu.Unlock()
	}
	if maxPending > 4<<10 {
		t.Fatalf("pending bytes reached %d, bound 4096", maxPending)
	}
	if err := j.WaitDurable(context.Background(), 2000); err != nil {
		t.Fatal(err)
	}
	if st := j.Stats(); st.MaxBatchRecords*uint64(FrameHeaderSize) > 1<<10+FrameHeaderSize+300 {
		t.Fatalf("a batch of %d records exceeds 1 KiB", st.MaxBatchRecords)
	}
	closeT(t, j)
	j = openT(t, dir)
	wantRange(t, replayAll(t, j, 0), 1, 2000)
}

func TestWriteFailureFailsTheJournalForGood(t *testing.T) {
	checkNoLeak(t)
	core, logs := observer.New(zapcore.ErrorLevel)
	j, err := Open(t.TempDir(), WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, j, 1, 5)
	// The flusher is idle (WaitDurable returned); break its file under it.
	j.cur.Close()
	lsn, err := j.Append(record(6))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.WaitDurable(context.Background(), lsn); !errors.Is(err, ErrFailed) {
		t.Fatalf("WaitDurable: %v, want ErrFailed", err)
	}
	if _, err := j.Append(record(7)); !errors.Is(err, ErrFailed) {
		t.Fatalf("Append after failure: %v, want ErrFailed", err)
	}
	if j.DurableLSN() != 5 {
		t.Fatalf("DurableLSN = %d, want 5", j.DurableLSN())
	}
	if logs.FilterMessageSnippet("write failed").Len() != 1 {
		t.Fatalf("no error logged: %v", logs.All())
	}
	if err := j.Close(context.Background()); !errors.Is(err, ErrFailed) {
		t.Fatalf("Close: %v, want ErrFailed", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"negative segment size", WithSegmentSize(-1)},
		{"negative batch size", WithMaxBatchBytes(-1)},
		{"negative pending bytes", WithMaxPendingBytes(-1)},
		{"negative snapshot count", WithKeepSnapshots(-1)},
		{"unknown sync mode", WithSync(SyncMode(9))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Open(t.TempDir(), tc.opt); err == nil {
				t.Fatal("Open accepted an invalid option")
			}
		})
	}
}

func TestSyncModes(t *testing.T) {
	for _, m := range []SyncMode{SyncData, SyncFull, SyncNone} {
		t.Run(m.String(), func(t *testing.T) {
			dir := t.TempDir()
			j := openT(t, dir, WithSync(m), WithSegmentSize(1<<10))
			appendN(t, j, 1, 40)
			closeT(t, j)
			j = openT(t, dir, WithSync(m))
			wantRange(t, replayAll(t, j, 0), 1, 40)
		})
	}
}

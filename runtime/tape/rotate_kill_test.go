package tape

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// rotateKillChildEnv, when set to a set prefix, turns the test binary into a
// recorder that writes a rotating set until it is killed; rotateKillClockEnv is
// its receive clock's start (Unix ms).
const (
	rotateKillChildEnv = "PITBOSS_TAPE_ROTATE_KILL_CHILD"
	rotateKillClockEnv = "PITBOSS_TAPE_ROTATE_KILL_CLOCK"
)

func init() {
	if prefix := os.Getenv(rotateKillChildEnv); prefix != "" {
		os.Exit(rotateKillChild(prefix))
	}
}

// rotateKillChild records synthetic events through a Recorder over a Set cut every
// 8 KiB, flushing small blocks, until the parent kills it (or a minute passes).
func rotateKillChild(prefix string) int {
	t, err := strconv.ParseInt(os.Getenv(rotateKillClockEnv), 10, 64)
	if err != nil {
		return 2
	}
	set, _, err := OpenSet(prefix, Session{Feeds: genFeeds, Signals: genSignals, Source: "rotate kill test", Started: t}, WriterOptions{BlockBytes: 512, NoSync: true},
		RotateOptions{Size: 8 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	rec, err := NewSetRecorder(set, RecorderConfig{Now: func() int64 { t++; return t }, FlushEvery: time.Millisecond})
	if err != nil {
		return 4
	}
	return recordUntilKilled(rec, func(int) int64 { return t }, 5)
}

// TestKilledRotatingRecorderResumes kills a process recording a rotating set
// (SIGKILL) at several moments; each time every file of the set opens alone, with
// its market, and the next recorder continues the newest file (or starts a new one
// when it is full).
func TestKilledRotatingRecorderResumes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	prefix := filepath.Join(t.TempDir(), "killed")
	var records int64
	resumed := false
	for round := range 3 {
		clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixMilli() + int64(round)*3_600_000
		before := countFiles(t, prefix)
		killWhen(t, round, []string{rotateKillChildEnv + "=" + prefix, rotateKillClockEnv + "=" + strconv.FormatInt(clock, 10)},
			func() bool { return countFiles(t, prefix) >= before+2 }) // the child has cut at least once
		files, err := SetFiles(prefix)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, f := range files {
			sum, err := Summarize(f)
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, f, err)
			}
			if sum.Records > 0 && (len(sum.Markets) != 1 || sum.Markets[0].Condition != condA) {
				t.Fatalf("round %d: %s has events but markets %+v", round, f, sum.Markets)
			}
			for _, s := range sum.Sessions {
				resumed = resumed || s.Resumed
			}
			total += sum.Records
		}
		if total <= records {
			t.Fatalf("round %d: %d records (had %d)", round, total, records)
		}
		records = total
	}
	if !resumed {
		t.Fatal("no restart continued the newest file")
	}
}

func countFiles(t *testing.T, prefix string) int {
	files, err := SetFiles(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

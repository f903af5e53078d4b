package tape

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
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
	set, _, err := OpenSet(prefix, Session{Source: "rotate kill test", Started: t}, WriterOptions{BlockBytes: 512, NoSync: true},
		RotateOptions{Size: 8 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	rec, err := NewSetRecorder(set, RecorderConfig{Now: func() int64 { t++; return t }, FlushEvery: time.Millisecond})
	if err != nil {
		return 4
	}
	go rec.Run(context.Background()) //nolint:errcheck // the process is killed
	info := infoA()
	rec.Market(&info)
	deadline := time.Now().Add(time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		ev := market.Event{Kind: market.EventLastTrade, Seq: uint64(i), Time: t, Market: condA,
			Token: yesA, Price: market.Micros(400_000 + i%100*1000), Size: market.One, Side: market.Buy}
		rec.Event(&ev)
	}
	return 5
}

// TestKilledRotatingRecorderResumes kills a process recording a rotating set
// (SIGKILL) at several moments; each time every file of the set opens alone, with
// its market, and the next recorder continues the newest file (or starts a new one
// when it is full).
func TestKilledRotatingRecorderResumes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(t.TempDir(), "killed")
	var records int64
	resumed := false
	for round := range 3 {
		cmd := exec.Command(exe, "-test.run=^$")
		clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixMilli() + int64(round)*3_600_000
		cmd.Env = append(os.Environ(), rotateKillChildEnv+"="+prefix, rotateKillClockEnv+"="+strconv.FormatInt(clock, 10))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		before := countFiles(t, prefix)
		deadline := time.Now().Add(30 * time.Second)
		for countFiles(t, prefix) < before+2 { // the child has cut at least once
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: the child did not rotate", round)
			}
			time.Sleep(time.Millisecond)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		var ee *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &ee) {
			t.Fatalf("round %d: the child ended by itself: %v", round, err)
		}
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

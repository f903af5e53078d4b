package tape

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// killChildEnv, when set to a file path, turns the test binary into a recorder that
// appends to that tape until it is killed.
const killChildEnv = "PITBOSS_TAPE_KILL_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(killChildEnv); path != "" {
		os.Exit(killChild(path))
	}
	os.Exit(m.Run())
}

// killChild records synthetic events through a Recorder, flushing small blocks,
// until the parent kills it (or a minute passes).
func killChild(path string) int {
	w, _, err := Append(path, Session{Feeds: genFeeds, Signals: genSignals, Source: "kill test"}, WriterOptions{BlockBytes: 512, NoSync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	t := int64(1_700_000_000_000)
	rec, err := NewRecorder(w, RecorderConfig{Now: func() int64 { t++; return t }, FlushEvery: time.Millisecond})
	if err != nil {
		return 3
	}
	return recordUntilKilled(rec, func(i int) int64 { return 1_700_000_000_000 + int64(i) }, 4)
}

// recordUntilKilled runs rec and feeds it market A's metadata and then trades (the
// i-th at venue time at(i)) until the parent kills the process; it returns code if
// a minute passes first.
func recordUntilKilled(rec *Recorder, at func(i int) int64, code int) int {
	go rec.Run(context.Background()) //nolint:errcheck // the process is killed
	info := infoA()
	rec.Market(&info)
	deadline := time.Now().Add(time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		ev := market.Event{Kind: market.EventLastTrade, Seq: uint64(i), Time: at(i), Market: condA,
			Token: yesA, Price: market.Micros(400_000 + i%100*1000), Size: market.One, Side: market.Buy}
		rec.Event(&ev)
	}
	return code
}

// killWhen starts the test binary as a child with env added, waits until ready
// reports true (at most 30 s), kills it with SIGKILL and checks that it did not end
// by itself.
func killWhen(t *testing.T, round int, env []string, ready func() bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the child did not get there", round)
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
}

// TestKilledRecorderLeavesAReadableTape kills a recording process (SIGKILL) at
// several moments; each time the file opens as a valid tape, and the next recorder
// continues it.
func TestKilledRecorderLeavesAReadableTape(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	path := filepath.Join(t.TempDir(), "killed.tape")
	var records int64
	for round, size := range []int64{2_000, 20_000, 60_000} {
		before := int64(0)
		if fi, err := os.Stat(path); err == nil {
			before = fi.Size()
		}
		killWhen(t, round, []string{killChildEnv + "=" + path}, func() bool {
			fi, err := os.Stat(path)
			return err == nil && fi.Size() >= before+size
		})
		sum, err := Summarize(path)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(sum.Sessions) != round+1 || sum.Records <= records {
			t.Fatalf("round %d: %d sessions, %d records (had %d)", round, len(sum.Sessions), sum.Records, records)
		}
		records = sum.Records
	}
}

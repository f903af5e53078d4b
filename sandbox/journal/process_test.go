package journal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// crashChildEnv, when set to a directory, turns the test binary into the crash
// test's child: it appends to the journal in that directory until killed, printing
// each LSN to stdout once WaitDurable returned nil for it.
const crashChildEnv = "PITBOSS_JOURNAL_CRASH_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(m.Run())
}

// crashChild is the body of the child process. It never returns normally before
// its safety deadline: the parent kills it with SIGKILL.
func crashChild(dir string) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return code
	}
	j, err := Open(dir, WithSegmentSize(64<<10), WithKeepSnapshots(2))
	if err != nil {
		return fail(2, err)
	}
	ctx := context.Background()
	acks := make(chan uint64, 256)
	var out sync.Mutex
	for range 16 { // concurrent waiters, as request goroutines of the server
		go func() {
			for lsn := range acks {
				if err := j.WaitDurable(ctx, lsn); err != nil {
					os.Exit(fail(3, err))
				}
				out.Lock()
				os.Stdout.WriteString(strconv.FormatUint(lsn, 10) + "\n")
				out.Unlock()
			}
		}()
	}
	snaps := make(chan uint64, 1)
	go func() {
		for lsn := range snaps {
			if err := j.WriteSnapshot(ctx, lsn, stateAt(lsn)); err != nil {
				os.Exit(fail(4, err))
			}
		}
	}()
	deadline := time.Now().Add(60 * time.Second) // in case the parent dies first
	for lsn := j.LastLSN() + 1; ; lsn++ {
		got, err := j.Append(record(lsn))
		if err != nil || got != lsn {
			return fail(5, fmt.Errorf("append %d: got %d, %v", lsn, got, err))
		}
		acks <- lsn
		if lsn%1500 == 0 {
			select {
			case snaps <- lsn:
			default:
			}
			if time.Now().After(deadline) {
				return fail(6, fmt.Errorf("not killed within a minute"))
			}
		}
	}
}

// TestCrashKillRecoversEveryAcknowledgedRecord runs the journal in a child process
// under load, kills it with SIGKILL at a different point each round, and checks that
// every LSN the child reported durable is recovered, byte for byte, either from the
// snapshot or from the journal.
func TestCrashKillRecoversEveryAcknowledgedRecord(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	dir := t.TempDir()
	rounds := []int{300, 4000, 1, 2500}
	if testing.Short() {
		rounds = rounds[:2]
	}
	var maxAck uint64
	for round, killAfter := range rounds {
		acked := runAndKill(t, dir, killAfter)
		maxAck = max(maxAck, acked)

		j, err := Open(dir)
		if err != nil {
			t.Fatalf("round %d: Open after kill: %v", round, err)
		}
		last := uint64(0)
		snap, err := j.LatestSnapshot()
		switch {
		case err == nil:
			if !bytes.Equal(snap.Data, stateAt(snap.LSN)) {
				t.Fatalf("round %d: snapshot %d holds %q", round, snap.LSN, snap.Data)
			}
			last = snap.LSN
		case err != ErrNoSnapshot:
			t.Fatalf("round %d: LatestSnapshot: %v", round, err)
		}
		err = j.Replay(last, func(lsn uint64, rec []byte) error {
			if lsn != last+1 || !bytes.Equal(rec, record(lsn)) {
				return fmt.Errorf("lsn %d after %d, payload intact: %v", lsn, last, bytes.Equal(rec, record(lsn)))
			}
			last = lsn
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: Replay: %v", round, err)
		}
		if last < maxAck {
			t.Fatalf("round %d: lsn %d was acknowledged but recovery ends at %d", round, maxAck, last)
		}
		r := j.Recovery()
		t.Logf("round %d: killed after %d acks (max acked %d); recovered snapshot %d + journal to %d, cut %d torn bytes",
			round, killAfter, maxAck, r.SnapshotLSN, last, r.TruncatedBytes)
		if err := j.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// runAndKill starts the child on dir, kills it with SIGKILL once it has acknowledged
// killAfter records (or after a few seconds), and returns the highest LSN it
// acknowledged, counting every line it wrote before it died.
func runAndKill(t *testing.T, dir string, killAfter int) uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill := func() {
		if !killed {
			killed = true
			cmd.Process.Kill() // SIGKILL
		}
	}
	stop := make(chan struct{})
	defer func() {
		close(stop)
		kill()
		cmd.Wait()
	}()
	lines := make(chan uint64, 1024)
	scanErr := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			n, err := strconv.ParseUint(sc.Text(), 10, 64)
			if err != nil {
				scanErr <- fmt.Errorf("child wrote %q", sc.Text())
				return
			}
			select {
			case lines <- n:
			case <-stop:
				return
			}
		}
		scanErr <- sc.Err()
	}()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	var maxAck uint64
	n := 0
	for {
		select {
		case lsn, ok := <-lines:
			if !ok {
				if err := <-scanErr; err != nil {
					t.Fatal(err)
				}
				cmd.Wait()
				if !killed {
					t.Fatalf("child exited by itself: %v\n%s", cmd.ProcessState, stderr.String())
				}
				if n == 0 {
					t.Fatalf("child acknowledged nothing\n%s", stderr.String())
				}
				return maxAck
			}
			maxAck = max(maxAck, lsn)
			if n++; n == killAfter {
				kill()
			}
		case <-timer.C:
			kill()
		}
	}
}

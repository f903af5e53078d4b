package natsbus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestSweepQueueRunsEveryJobAndHandsEachResultOnce(t *testing.T) {
	s := startServer(t, "")
	coord := connectRole(t, s, RoleSupervisor, "coordinator")
	q, err := coord.EnsureSweepQueue(ctxT(t, 10*time.Second), SweepQueueConfig{AckWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []SweepJob
	for i := range 20 {
		jobs = append(jobs, SweepJob{Key: fmt.Sprintf("p%d", i), Data: []byte(fmt.Sprint(i))})
	}
	if err := q.Submit(ctxT(t, 10*time.Second), "sw1", jobs); err != nil {
		t.Fatal(err)
	}
	// Two workers of two goroutines each, on their own connections.
	var mu sync.Mutex
	ran := map[string]int{}
	for w := range 2 {
		wq, err := connectRole(t, s, RoleSupervisor, fmt.Sprint("worker", w)).OpenSweepQueue(ctxT(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		runBG(t, func(ctx context.Context) error {
			return wq.Work(ctx, 2, nil, func(_ context.Context, task *SweepTask) ([]byte, error) {
				mu.Lock()
				ran[task.Key]++
				mu.Unlock()
				if task.Sweep != "sw1" || task.Delivery != 1 {
					t.Errorf("task %+v", task)
				}
				return append([]byte("r"), task.Data...), nil
			})
		})
	}
	got := map[string]string{}
	err = q.Results(ctxT(t, 20*time.Second), "sw1", func(key string, data []byte) bool {
		if _, dup := got[key]; dup {
			t.Errorf("result of %s handed twice", key)
		}
		got[key] = string(data)
		return len(got) == len(jobs)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if k := fmt.Sprintf("p%d", i); got[k] != fmt.Sprint("r", i) || ran[k] != 1 {
			t.Fatalf("job %s: result %q, ran %d times", k, got[k], ran[k])
		}
	}
	if err := q.Forget(ctxT(t, 5*time.Second), "sw1"); err != nil {
		t.Fatal(err)
	}
	if err := q.Submit(ctxT(t, 5*time.Second), "bad.id", jobs[:1]); err == nil {
		t.Fatal("a sweep id with a dot was accepted")
	}
}

// A job whose worker vanished without acknowledging it is delivered again once the
// ack wait passed; a second result of one job (a worker that was only slow) is
// stored once and handed once.
func TestAnAbandonedJobIsDeliveredAgainAndCountedOnce(t *testing.T) {
	s := startServer(t, "")
	coord := connectRole(t, s, RoleSupervisor, "coordinator")
	q, err := coord.EnsureSweepQueue(ctxT(t, 10*time.Second), SweepQueueConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Submit(ctxT(t, 10*time.Second), "sw2", []SweepJob{{Key: "a", Data: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	// The first worker takes the job and dies: its connection closes, no ack.
	dead := connectRole(t, s, RoleSupervisor, "dead")
	dq, err := dead.OpenSweepQueue(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dq.cons.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	dead.Close()
	took := time.Now()
	wq, err := connectRole(t, s, RoleSupervisor, "alive").OpenSweepQueue(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	deliveries := make(chan uint64, 4)
	runBG(t, func(ctx context.Context) error {
		return wq.Work(ctx, 1, nil, func(_ context.Context, task *SweepTask) ([]byte, error) {
			deliveries <- task.Delivery
			return []byte("second"), nil
		})
	})
	select {
	case d := <-deliveries:
		if d != 2 || time.Since(took) < 900*time.Millisecond {
			t.Fatalf("delivery %d after %s; want the second, after the ack wait", d, time.Since(took))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the abandoned job was not delivered again")
	}
	first := ""
	if err := q.Results(ctxT(t, 10*time.Second), "sw2", func(key string, data []byte) bool { first = key + "=" + string(data); return true }); err != nil || first != "a=second" {
		t.Fatalf("result %q (%v)", first, err)
	}
	// The slow first worker publishes its result late: a duplicate.
	if _, err := coord.js.Publish(ctxT(t, 5*time.Second), SubjectSweepResults+".sw2.a", []byte("first"),
		jetstream.WithMsgID("sw2.a")); err != nil {
		t.Fatal(err)
	}
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	q.Results(ctx, "sw2", func(key string, data []byte) bool { got = append(got, key+"="+string(data)); return false })
	if len(got) != 1 || got[0] != "a=second" {
		t.Fatalf("results %v, want one: a=second", got)
	}
	info, err := q.res.Info(ctxT(t, 5*time.Second))
	if err != nil || info.State.Msgs != 1 {
		t.Fatalf("results stream holds %d messages (%v), want 1", info.State.Msgs, err)
	}
}

func TestBlobsAreStoredOnceByContentAndChecked(t *testing.T) {
	s := startServer(t, "")
	q, err := connectRole(t, s, RoleSupervisor, "c").EnsureSweepQueue(ctxT(t, 10*time.Second), SweepQueueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	content := bytes.Repeat([]byte("tape bytes "), 300_000) // several chunks
	a, b := filepath.Join(dir, "a.tape"), filepath.Join(dir, "b.tape")
	os.WriteFile(a, content, 0o644)
	os.WriteFile(b, content, 0o644)
	ctx := ctxT(t, 20*time.Second)
	d1, n, err := q.PutBlob(ctx, a)
	if err != nil || n != int64(len(content)) {
		t.Fatal(n, err)
	}
	sum := sha256.Sum256(content)
	if d1 != hex.EncodeToString(sum[:]) {
		t.Fatalf("digest %s", d1)
	}
	info1, _ := q.blobs.GetInfo(ctx, BlobName(d1))
	d2, _, err := q.PutBlob(ctx, b) // same content, other name: not stored again
	if err != nil || d2 != d1 {
		t.Fatal(d2, err)
	}
	if info2, _ := q.blobs.GetInfo(ctx, BlobName(d1)); info2.NUID != info1.NUID {
		t.Fatal("the same content was stored twice")
	}
	out := filepath.Join(dir, "fetched")
	if err := q.FetchBlob(ctx, d1, out); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, content) {
		t.Fatal("fetched content differs")
	}
	// An object whose content does not match its name is refused, and nothing is left.
	wrong := strings.Repeat("0", 64)
	if _, err := q.blobs.PutBytes(ctx, BlobName(wrong), []byte("not it")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := q.FetchBlob(ctx, wrong, bad); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Fatalf("fetch of a mismatching blob: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(left)
	if len(left) != 3 {
		t.Fatalf("files left: %v", left)
	}
	if _, err := connectRole(t, startServer(t, ""), RoleSupervisor, "w").OpenSweepQueue(ctxT(t, 5*time.Second)); err != ErrNoSweepQueue {
		t.Fatalf("open on a server without a queue: %v", err)
	}
}

// Takers counts the workers taking jobs: none before a worker starts, one or more
// while a worker waits for a job or runs one (its every slot busy).
func TestSweepTakersCountsTheWorkers(t *testing.T) {
	s := startServer(t, "")
	q, err := connectRole(t, s, RoleSupervisor, "coordinator").EnsureSweepQueue(ctxT(t, 10*time.Second), SweepQueueConfig{AckWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := q.Takers(ctxT(t, 5*time.Second)); err != nil || n != 0 {
		t.Fatalf("takers before any worker: %d, %v", n, err)
	}
	wq, err := connectRole(t, s, RoleSupervisor, "worker").OpenSweepQueue(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	running, release := make(chan struct{}), make(chan struct{})
	runBG(t, func(ctx context.Context) error {
		return wq.Work(ctx, 1, nil, func(ctx context.Context, _ *SweepTask) ([]byte, error) {
			close(running)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return []byte("r"), nil
		})
	})
	waitTakers := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			n, err := q.Takers(ctxT(t, 5*time.Second))
			if err == nil && n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("takers %s: %d, %v", what, n, err)
			}
		}
	}
	waitTakers("while the worker waits for a job")
	if err := q.Submit(ctxT(t, 5*time.Second), "sw", []SweepJob{{Key: "p0", Data: []byte("0")}}); err != nil {
		t.Fatal(err)
	}
	<-running
	waitTakers("while its only slot runs a job")
	close(release)
}

package backtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// memQueue is a Queue in memory whose Results runs the jobs it holds on a
// JobRunner, as workers would, handing the first job's result twice (a job that
// ran on two workers).
type memQueue struct {
	runner   *JobRunner
	mu       sync.Mutex
	jobs     map[string][]QueuedJob
	forgot   []string
	delivery uint64
}

func (q *memQueue) Submit(_ context.Context, sweep string, jobs []QueuedJob) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.jobs == nil {
		q.jobs = map[string][]QueuedJob{}
	}
	q.jobs[sweep] = append(q.jobs[sweep], jobs...)
	return nil
}

func (q *memQueue) Results(ctx context.Context, sweep string, fn func(key string, data []byte) bool) error {
	q.mu.Lock()
	jobs := q.jobs[sweep]
	q.jobs[sweep] = nil
	q.mu.Unlock()
	for i, j := range jobs {
		res, err := q.runner.Run(ctx, j.Data, max(q.delivery, 1))
		if err != nil {
			return err
		}
		if i == 0 && fn(j.Key, res) {
			return nil
		}
		if fn(j.Key, res) {
			return nil
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (q *memQueue) Forget(_ context.Context, sweep string) error {
	q.forgot = append(q.forgot, sweep)
	return nil
}

// blobOf describes the file at path, and fetch serves the files so described.
func blobOf(t *testing.T, files map[string]string, path string) Blob {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	d := hex.EncodeToString(sum[:])
	files[d] = path
	return Blob{Name: path, Digest: d, Size: int64(len(b))}
}

func TestARemoteSweepGivesTheLocalTable(t *testing.T) {
	agentPath, _ := filepath.Abs(quoterAgent)
	spec, st, axes := sweepOf(t, agentPath, "half_spread=0.01:0.03:0.01", "size=5:10:5")
	src := sample(t)
	files := map[string]string{}
	fetched := map[string]int{}
	runner := &JobRunner{Build: "b1", Fetch: func(_ context.Context, b Blob) (string, error) {
		fetched[b.Digest]++
		if p := files[b.Digest]; p != "" {
			return p, nil
		}
		return "", fmt.Errorf("no blob %s", b.Digest)
	}}
	base := RemoteBase{Build: "b1", Agent: blobOf(t, files, agentPath), Strategy: blobOf(t, files, spec.Strategy.File),
		Tapes: []Blob{blobOf(t, files, filepath.Join("..", "..", SamplePath))}}
	first, _, _ := src.Span()
	for _, folds := range []int{0, 2} {
		t.Run(fmt.Sprint("folds=", folds), func(t *testing.T) {
			cfg := SweepConfig{Base: Config{Spec: spec, Source: src, Strategy: st, To: first + 2*3_600_000}, Axes: axes,
				Metric: MetricSharpe, Folds: folds}
			local, err := Sweep(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			q := &memQueue{runner: runner}
			cfg.Pool = &RemotePool{Base: base, Queue: q, ID: "s1"}
			remote, err := Sweep(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			local.WriteText(&a, 0)
			remote.WriteText(&b, 0)
			ja, _ := local.MarshalIndent()
			jb, _ := remote.MarshalIndent()
			if a.String() != b.String() || !bytes.Equal(ja, jb) {
				t.Fatalf("remote table differs from the local one:\n%s\n%s", a.String(), b.String())
			}
			if strings.Contains(a.String(), "failed") {
				t.Fatalf("a run failed:\n%s", a.String())
			}
		})
	}
	// The tape is opened once per runner; the files are read per job.
	if n := fetched[base.Tapes[0].Digest]; n == 0 {
		t.Fatal("the tape was never fetched")
	}
}

func TestAWorkerRefusesWhatItCannotRunFaithfully(t *testing.T) {
	agentPath, _ := filepath.Abs(quoterAgent)
	spec := loadAgent(t, agentPath)
	files := map[string]string{}
	base := RemoteBase{Build: "b1", Agent: blobOf(t, files, agentPath), Strategy: blobOf(t, files, spec.Strategy.File),
		Tapes: []Blob{blobOf(t, files, filepath.Join("..", "..", SamplePath))}}
	fetch := func(_ context.Context, b Blob) (string, error) { return files[b.Digest], nil }
	rows := func(r *JobRunner, delivery uint64) *Row {
		q := &memQueue{runner: r, delivery: delivery}
		row := &Row{Index: 0, Point: Point{{Name: "size", Value: "5"}}, From: 1_700_000_000_000, To: 1_700_001_000_000}
		if err := (&RemotePool{Base: base, Queue: q, ID: "s"}).Run(context.Background(), []*Row{row}, func() {}); err != nil {
			t.Fatal(err)
		}
		return row
	}
	// Each refusal is also told to the worker (Refused), whose operator must act.
	var refusals []string
	refused := func(reason string) { refusals = append(refusals, reason) }
	if r := rows(&JobRunner{Build: "b2", Fetch: fetch, Refused: refused}, 1); !strings.Contains(r.Err, "same build") {
		t.Fatalf("another build ran the job: %+v", r)
	}
	if r := rows(&JobRunner{Build: "b1", Fetch: fetch, Refused: refused}, MaxDeliveries+1); !strings.Contains(r.Err, "abandoned") {
		t.Fatalf("a job handed out %d times ran: %+v", MaxDeliveries+1, r)
	}
	if r := rows(&JobRunner{Build: "b1", Fetch: fetch, Refused: refused}, MaxDeliveries); r.Err != "" || r.Summary.Fills == 0 && r.Summary.Periods == 0 {
		t.Fatalf("a job on its last delivery did not run: %+v", r)
	}
	if len(refusals) != 2 || !strings.Contains(refusals[0], "same build") || !strings.Contains(refusals[1], "abandoned") {
		t.Fatalf("refusals told to the worker: %q", refusals)
	}
}

package natsbus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Sweeps on several machines (docs/backtests.md, docs/design/0131): a coordinator
// puts a sweep's points on a JetStream work queue as jobs and the files they read
// in an object store, content-addressed; workers pull jobs, run them and publish
// each job's result on a results stream, which the coordinator reads. This file
// is the transport: jobs and results are opaque bytes, blobs are files.
//
// Delivery: a job is acknowledged only after its result is stored, and a worker
// signals progress every third of the ack wait while it runs a job, so a job whose
// worker dies (or loses its connection) is delivered again once the ack wait has
// passed. A job may therefore run more than once; its results carry one message
// id (sweep and key), so the stream stores the first within its duplicate window,
// and Results hands each key to the coordinator once.
const (
	// SweepJobsStream is the work queue (work-queue retention: a job is removed
	// when a worker acknowledges it).
	SweepJobsStream = "PITBOSS_SWEEP_JOBS"
	// SweepResultsStream keeps the results (ResultAge).
	SweepResultsStream = "PITBOSS_SWEEP_RESULTS"
	// SweepWorkers is the durable pull consumer every worker shares.
	SweepWorkers = "sweep-workers"
	// BlobBucket is the object store of content-addressed files.
	BlobBucket = "pitboss-blobs"
	// SubjectSweepJobs and SubjectSweepResults start the subjects of a sweep's
	// jobs and results: "<prefix>.<sweep>.<key>".
	SubjectSweepJobs    = Prefix + ".sweep.jobs"
	SubjectSweepResults = Prefix + ".sweep.results"
)

// SweepQueueConfig tunes the sweep queue. The zero value is usable.
type SweepQueueConfig struct {
	// AckWait is how long a job may go without word from the worker running it
	// before it is given to another. If zero, 30 s. Workers signal progress every
	// third of it.
	AckWait time.Duration
	// ResultAge is how long results (and jobs nobody took) are kept. If zero, 24 h.
	ResultAge time.Duration
	// Replicas of the streams and the object store on a cluster. If zero, 1.
	Replicas int
}

// SweepQueue is the work queue, results stream and blob store of sweeps. Its
// methods are safe for concurrent use.
type SweepQueue struct {
	bus   *Bus
	jobs  jetstream.Stream
	res   jetstream.Stream
	cons  jetstream.Consumer
	blobs jetstream.ObjectStore
}

// EnsureSweepQueue creates the streams, the workers' consumer and the object store
// (a coordinator's role: it may create streams), or updates them to cfg.
func (b *Bus) EnsureSweepQueue(ctx context.Context, cfg SweepQueueConfig) (*SweepQueue, error) {
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	if cfg.ResultAge <= 0 {
		cfg.ResultAge = 24 * time.Hour
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	q := &SweepQueue{bus: b}
	dup := min(time.Hour, cfg.ResultAge)
	var err error
	if q.jobs, err = b.ensureStream(ctx, jetstream.StreamConfig{
		Name: SweepJobsStream, Description: "pitboss sweep points waiting for a worker",
		Subjects: []string{SubjectSweepJobs + ".>"}, Retention: jetstream.WorkQueuePolicy,
		MaxAge: cfg.ResultAge, Duplicates: dup, Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("natsbus: sweep jobs stream: %w", err)
	}
	if q.res, err = b.ensureStream(ctx, jetstream.StreamConfig{
		Name: SweepResultsStream, Description: "pitboss sweep results",
		Subjects: []string{SubjectSweepResults + ".>"}, Retention: jetstream.LimitsPolicy,
		MaxAge: cfg.ResultAge, Duplicates: dup, Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("natsbus: sweep results stream: %w", err)
	}
	if q.cons, err = q.jobs.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: SweepWorkers, Description: "pitboss sweep workers", FilterSubject: SubjectSweepJobs + ".>",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: cfg.AckWait, MaxDeliver: -1, Replicas: cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("natsbus: sweep workers' consumer: %w", err)
	}
	if q.blobs, err = b.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: BlobBucket, Description: "pitboss files by content (tapes, agent and strategy files)",
		Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("natsbus: blob store: %w", err)
	}
	return q, nil
}

// ErrNoSweepQueue is returned by OpenSweepQueue when no coordinator has created
// the queue yet.
var ErrNoSweepQueue = errors.New("natsbus: no sweep queue on this server yet (a `pitboss backtest --sweep … --nats` creates it)")

// OpenSweepQueue binds to the queue a coordinator created (a worker's role).
func (b *Bus) OpenSweepQueue(ctx context.Context) (*SweepQueue, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	q := &SweepQueue{bus: b}
	var err error
	if q.jobs, err = b.js.Stream(ctx, SweepJobsStream); err == nil {
		if q.res, err = b.js.Stream(ctx, SweepResultsStream); err == nil {
			if q.cons, err = q.jobs.Consumer(ctx, SweepWorkers); err == nil {
				q.blobs, err = b.js.ObjectStore(ctx, BlobBucket)
			}
		}
	}
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
		errors.Is(err, jetstream.ErrBucketNotFound):
		return nil, ErrNoSweepQueue
	case err != nil:
		return nil, fmt.Errorf("natsbus: sweep queue: %w", err)
	}
	return q, nil
}

// sweepToken reports whether s can be a sweep id or job key: 1 to 64 of
// [A-Za-z0-9_-] (no dots or wildcards: each is one subject token).
func sweepToken(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func checkSweep(sweep, key string) error {
	if !sweepToken(sweep) || key != "" && !sweepToken(key) {
		return fmt.Errorf("natsbus: invalid sweep id or job key %q %q (1-64 of A-Z a-z 0-9 _ -)", sweep, key)
	}
	return nil
}

// BlobName returns the object name of content with SHA-256 digest hex.
func BlobName(digest string) string { return "sha256-" + digest }

// PutBlob stores the file at path under its SHA-256 digest unless the store holds
// it already, and returns the digest (hex) and the size.
func (q *SweepQueue) PutBlob(ctx context.Context, path string) (digest string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	if size, err = io.Copy(h, f); err != nil {
		return "", 0, err
	}
	digest = hex.EncodeToString(h.Sum(nil))
	if info, err := q.blobs.GetInfo(ctx, BlobName(digest)); err == nil && info.Size == uint64(size) {
		return digest, size, nil
	} else if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return "", 0, fmt.Errorf("natsbus: blob %s: %w", filepath.Base(path), err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", 0, err
	}
	if _, err := q.blobs.Put(ctx, jetstream.ObjectMeta{Name: BlobName(digest), Description: filepath.Base(path)}, f); err != nil {
		return "", 0, fmt.Errorf("natsbus: storing %s: %w", filepath.Base(path), err)
	}
	return digest, size, nil
}

// FetchBlob writes the blob of digest to dst (through a temporary file in dst's
// directory, renamed once its SHA-256 is checked).
func (q *SweepQueue) FetchBlob(ctx context.Context, digest, dst string) error {
	obj, err := q.blobs.Get(ctx, BlobName(digest))
	if err != nil {
		return fmt.Errorf("natsbus: blob %s: %w", digest, err)
	}
	defer obj.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing to remove
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), obj)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("natsbus: blob %s: %w", digest, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return fmt.Errorf("natsbus: blob %s: the content's digest is %s", digest, got)
	}
	return os.Rename(tmp.Name(), dst)
}

// SweepJob is one job of a sweep: its key (unique within the sweep) and payload.
type SweepJob struct {
	Key  string
	Data []byte
}

// Submit queues the jobs of sweep. Submitting a job again within the queue's
// duplicate window (an hour at most) is a no-op.
func (q *SweepQueue) Submit(ctx context.Context, sweep string, jobs []SweepJob) error {
	for _, j := range jobs {
		if err := checkSweep(sweep, j.Key); err != nil {
			return err
		}
		if _, err := q.bus.js.Publish(ctx, SubjectSweepJobs+"."+sweep+"."+j.Key, j.Data,
			jetstream.WithMsgID(sweep+"."+j.Key)); err != nil {
			return fmt.Errorf("natsbus: queueing job %s: %w", j.Key, err)
		}
	}
	return nil
}

// Results hands fn each key's first result of sweep, in the order the results
// were stored, until fn reports done (Results returns nil) or ctx ends.
func (q *SweepQueue) Results(ctx context.Context, sweep string, fn func(key string, data []byte) (done bool)) error {
	if err := checkSweep(sweep, ""); err != nil {
		return err
	}
	prefix := SubjectSweepResults + "." + sweep + "."
	c, err := q.res.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{prefix + ">"}})
	if err != nil {
		return fmt.Errorf("natsbus: sweep results: %w", err)
	}
	seen := map[string]bool{}
	for {
		m, err := c.Next(jetstream.FetchContext(ctx))
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, jetstream.ErrNoMessages) || isTimeout(err):
			continue
		case err != nil:
			return fmt.Errorf("natsbus: sweep results: %w", err)
		}
		key := strings.TrimPrefix(m.Subject(), prefix)
		if seen[key] {
			continue
		}
		seen[key] = true
		if fn(key, m.Data()) {
			return nil
		}
	}
}

// Forget removes what the queue still holds of sweep: jobs nobody took (a
// coordinator that gives up) and results.
func (q *SweepQueue) Forget(ctx context.Context, sweep string) error {
	if err := checkSweep(sweep, ""); err != nil {
		return err
	}
	ctx, cancel := q.bus.withTimeout(ctx)
	defer cancel()
	if err := q.jobs.Purge(ctx, jetstream.WithPurgeSubject(SubjectSweepJobs+"."+sweep+".>")); err != nil {
		return fmt.Errorf("natsbus: forgetting sweep %s: %w", sweep, err)
	}
	if err := q.res.Purge(ctx, jetstream.WithPurgeSubject(SubjectSweepResults+"."+sweep+".>")); err != nil {
		return fmt.Errorf("natsbus: forgetting sweep %s: %w", sweep, err)
	}
	return nil
}

// SweepTask is a job as a worker receives it.
type SweepTask struct {
	Sweep, Key string
	Data       []byte
	// Delivery counts the times the job was handed out, this one included (more
	// than 1: a worker died or gave it back while running it).
	Delivery uint64
}

// Takers reports how many workers take jobs now: the workers' pull requests
// waiting for a job plus the jobs handed out and not yet answered (a worker busy
// with its every slot has no request waiting). Zero while jobs are queued: no
// worker is there to take them.
func (q *SweepQueue) Takers(ctx context.Context) (int, error) {
	info, err := q.cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("natsbus: sweep workers: %w", err)
	}
	return info.NumWaiting + info.NumAckPending, nil
}

// Work runs jobs on n goroutines (at least 1) until ctx ends, then waits for them.
// run returns a job's result, published before the job is acknowledged; an error
// gives the job back to the queue, to be delivered again after a pause. A job
// being run when ctx ends is given back at once.
func (q *SweepQueue) Work(ctx context.Context, n int, log *zap.Logger, run func(ctx context.Context, t *SweepTask) ([]byte, error)) error {
	if log == nil {
		log = zap.NewNop()
	}
	var wg sync.WaitGroup
	for range max(n, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				m, err := q.cons.Next(jetstream.FetchContext(ctx))
				switch {
				case ctx.Err() != nil:
					return
				case errors.Is(err, jetstream.ErrNoMessages) || isTimeout(err):
					continue
				case err != nil:
					log.Warn("sweep queue", zap.Error(err))
					select {
					case <-ctx.Done():
					case <-time.After(time.Second):
					}
					continue
				}
				q.handle(ctx, m, log, run)
			}
		}()
	}
	wg.Wait()
	return nil
}

// handle runs one job, signalling progress meanwhile, and publishes its result.
func (q *SweepQueue) handle(ctx context.Context, m jetstream.Msg, log *zap.Logger, run func(context.Context, *SweepTask) ([]byte, error)) {
	rest, _ := strings.CutPrefix(m.Subject(), SubjectSweepJobs+".")
	sweep, key, _ := strings.Cut(rest, ".")
	t := &SweepTask{Sweep: sweep, Key: key, Data: m.Data()}
	if md, err := m.Metadata(); err == nil {
		t.Delivery = md.NumDelivered
	}
	ackWait := 30 * time.Second
	if ci, err := q.cons.Info(ctx); err == nil && ci.Config.AckWait > 0 {
		ackWait = ci.Config.AckWait
	}
	beat := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // progress: the job is not given to another worker while this one lives
		defer wg.Done()
		tk := time.NewTicker(ackWait / 3)
		defer tk.Stop()
		for {
			select {
			case <-beat:
				return
			case <-tk.C:
				_ = m.InProgress()
			}
		}
	}()
	res, err := run(ctx, t)
	close(beat)
	wg.Wait()
	switch {
	case ctx.Err() != nil:
		_ = m.Nak() // stopping: another worker takes it now
		return
	case err != nil:
		log.Warn("sweep job given back", zap.String("sweep", sweep), zap.String("key", key), zap.Error(err))
		_ = m.NakWithDelay(5 * time.Second)
		return
	}
	if _, err := q.bus.js.Publish(ctx, SubjectSweepResults+"."+sweep+"."+key, res, jetstream.WithMsgID(sweep+"."+key)); err != nil {
		log.Warn("sweep result not stored; the job is given back", zap.String("key", key), zap.Error(err))
		_ = m.Nak()
		return
	}
	if err := m.DoubleAck(ctx); err != nil {
		// The result is stored: a second run's result is a duplicate, dropped.
		log.Warn("sweep job not acknowledged", zap.String("key", key), zap.Error(err))
	}
}

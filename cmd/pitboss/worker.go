package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/runtime/backtest"
)

func init() {
	register(command{name: "worker", summary: "run the points of sweeps that `pitboss backtest --sweep … --nats` put on a NATS work queue", run: runWorker})
}

const workerUsage = `--nats URL [flags]

Pulls sweep points from the work queue of the NATS server at URL, runs each as
pitboss backtest would (the agent and strategy files and the recordings come from
the server's object store, fetched once per worker and kept in --cache), and
publishes the results; the coordinator (pitboss backtest --sweep … --nats URL)
prints the table. Runs until interrupted: a point being run then goes back to the
queue at once; a worker that dies has its point given to another once --ack-wait
of the coordinator has passed. Coordinator and workers must run the same pitboss
build (a worker of another build reports the point failed rather than guess).

  pitboss worker --nats nats://10.0.0.5:4222 --nats-creds sweep.creds`

func runWorker(ctx context.Context, args []string, io stdio) error {
	defer backtest.BatchGC()() // a batch run: see BatchGC
	fs := newFlagSet("worker", workerUsage, io)
	natsURL := fs.String("nats", "", "the NATS server at `URL` (nats://host:4222[,…]; JetStream on)")
	natsCreds := fs.String("nats-creds", "", "credentials: a pitboss endpoint `FILE` or a NATS .creds file (0600)")
	parallel := fs.Int("parallel", 0, "points at once, one per core (default: every core the process may use, GOMAXPROCS)")
	cache := fs.String("cache", "", "where fetched files are kept, by content (default: the user cache directory's pitboss/blobs)")
	quiet := fs.Bool("q", false, "log only problems, not each point")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *natsURL == "" && *natsCreds == "" && io.getenv(natsbus.EnvURL) == "" && io.getenv(natsbus.EnvFile) == "" {
		return usagef("give --nats URL")
	}
	if *parallel < 0 {
		return usagef("--parallel must not be negative")
	}
	n := *parallel
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	ep, err := natsEndpoint(io, *natsURL, *natsCreds)
	if err != nil {
		return err // a usage error naming the flag
	}
	dir := *cache
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no cache directory (give --cache): %w", err)
		}
		dir = filepath.Join(base, "pitboss", "blobs")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	log, err := supervisorLogger(io.stderr, "text")
	if err != nil {
		return err
	}
	if *quiet {
		log = log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	}
	bus, err := natsbus.Connect(ctx, ep, natsbus.ConnectOptions{Name: "pitboss worker", Logger: log})
	if err != nil {
		return err
	}
	defer bus.Close()
	var q *natsbus.SweepQueue
	for waited := false; ; waited = true {
		if q, err = bus.OpenSweepQueue(ctx); err == nil {
			break
		}
		if !errors.Is(err, natsbus.ErrNoSweepQueue) {
			return noJetStream(err, ep)
		}
		if !waited {
			log.Info("waiting for a coordinator to create the sweep queue")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	c := &blobCache{dir: dir, q: q, log: log}
	runner := &backtest.JobRunner{Build: buildID(), Fetch: c.fetch, Refused: func(reason string) {
		log.Warn("point refused", zap.String("reason", reason)) // a warning: -q shows it
	}}
	log.Info("worker ready", zap.Int("parallel", n), zap.String("cache", dir), zap.Stringer("nats", ep))
	return q.Work(ctx, n, log, func(ctx context.Context, t *natsbus.SweepTask) ([]byte, error) {
		log.Info("point started", zap.String("sweep", t.Sweep), zap.String("key", t.Key), zap.Uint64("delivery", t.Delivery))
		start := time.Now()
		res, err := runner.Run(ctx, t.Data, t.Delivery)
		if err == nil {
			log.Info("point done", zap.String("sweep", t.Sweep), zap.String("key", t.Key), zap.Duration("took", time.Since(start)))
		}
		return res, err
	})
}

// blobCache keeps fetched files in dir, named by their digest, each fetched once
// (a digest being fetched is waited for by the other jobs that need it).
type blobCache struct {
	dir string
	q   *natsbus.SweepQueue
	log *zap.Logger
	mu  sync.Mutex
	inf map[string]*sync.Mutex
}

func (c *blobCache) fetch(ctx context.Context, b backtest.Blob) (string, error) {
	c.mu.Lock()
	if c.inf == nil {
		c.inf = map[string]*sync.Mutex{}
	}
	m := c.inf[b.Digest]
	if m == nil {
		m = new(sync.Mutex)
		c.inf[b.Digest] = m
	}
	c.mu.Unlock()
	m.Lock()
	defer m.Unlock()
	path := filepath.Join(c.dir, natsbus.BlobName(b.Digest))
	if fi, err := os.Stat(path); err == nil && fi.Size() == b.Size {
		return path, nil
	}
	start := time.Now()
	if err := c.q.FetchBlob(ctx, b.Digest, path); err != nil {
		return "", err
	}
	c.log.Info("fetched", zap.String("file", filepath.Base(b.Name)), zap.String("sha256", b.Digest[:16]),
		zap.Int64("bytes", b.Size), zap.Duration("took", time.Since(start)))
	return path, nil
}

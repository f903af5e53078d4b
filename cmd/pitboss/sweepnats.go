package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/runtime/backtest"
)

// Sweeps on several machines: `pitboss backtest --sweep … --nats URL` is the
// coordinator, `pitboss worker --nats URL` a worker (worker.go). The transport is
// natsbus.SweepQueue; what a job holds and how a worker runs it is runtime/backtest's
// (RemotePool, JobRunner).

// natsEndpoint is the NATS endpoint of --nats URL and --nats-creds FILE (a pitboss
// endpoint file or a NATS .creds file); without --nats-creds, PITBOSS_NATS_FILE or
// the PITBOSS_NATS_* variables give the credentials (any of them: PITBOSS_NATS_USER
// and _PASSWORD alone with --nats, say), --nats the URL. Its errors are usage errors
// that name the flag at fault: a missing or loose --nats-creds file, no URL.
func natsEndpoint(io stdio, url, creds string) (natsbus.Endpoint, error) {
	var ep natsbus.Endpoint
	var err error
	switch {
	case creds != "":
		if _, serr := os.Stat(creds); serr != nil {
			var pe *fs.PathError
			if errors.As(serr, &pe) {
				serr = pe.Err
			}
			return ep, usagef("--nats-creds %s: %v", creds, serr)
		}
		if ep, err = fleetEndpoint(url, creds); err != nil && !errors.Is(err, natsbus.ErrNoURL) {
			return ep, usagef("--nats-creds: %s", userMessage(err))
		}
	default: // none of the variables set: an endpoint of --nats alone
		if ep, err = natsbus.EndpointFromEnv(io.getenv); err != nil && !errors.Is(err, natsbus.ErrNoURL) {
			return natsbus.Endpoint{}, usagef("the PITBOSS_NATS_* variables: %s", userMessage(err))
		}
		if url != "" {
			ep.URL = url
		}
	}
	if err := ep.Validate(); errors.Is(err, natsbus.ErrNoURL) && creds != "" {
		return ep, usagef("give --nats URL: %s holds no server address", creds)
	} else if errors.Is(err, natsbus.ErrNoURL) {
		return ep, usagef("give --nats URL (nats://host:4222)")
	} else if err != nil {
		return ep, usagef("--nats: %s", userMessage(err))
	}
	return ep, nil
}

// noJetStream adds to err what to do when nothing answered a JetStream request
// (natsbus.NotReady's "no responders", which a server without JetStream answers for
// ever): a sweep's queue lives in JetStream, so the server must run it.
func noJetStream(err error, ep natsbus.Endpoint) error {
	if err != nil && natsbus.NotReady(err, 0) && !natsbus.NotReady(err, time.Hour) {
		return fmt.Errorf("%w: JetStream does not answer on %s — sweeps need a NATS server with JetStream enabled (nats-server -js; docs/backtests.md)", err, ep.SafeURL())
	}
	return err
}

// buildID names this build for sweep jobs: a worker of another build refuses them
// (its results could differ). A build from a clean commit is its version, commit
// and platform; any other build (modified tree, no version control) adds the
// digest of the executable, since two such builds of one commit may differ.
func buildID() string {
	id := runtime.GOOS + "/" + runtime.GOARCH
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return id + exeDigest()
	}
	id = bi.Main.Version + vcsSuffix(bi, ok) + " " + id
	clean := false
	for _, s := range bi.Settings {
		if s.Key == "vcs.modified" && s.Value == "false" {
			clean = true
		}
	}
	if !clean {
		id += exeDigest()
	}
	return id
}

func exeDigest() string {
	path, err := os.Executable()
	if err != nil {
		return " (executable unknown)"
	}
	f, err := os.Open(path)
	if err != nil {
		return " (executable unreadable)"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return " (executable unreadable)"
	}
	return " sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// sweepQueue adapts natsbus.SweepQueue to backtest.Queue.
type sweepQueue struct{ q *natsbus.SweepQueue }

func (s sweepQueue) Submit(ctx context.Context, sweep string, jobs []backtest.QueuedJob) error {
	out := make([]natsbus.SweepJob, len(jobs))
	for i, j := range jobs {
		out[i] = natsbus.SweepJob{Key: j.Key, Data: j.Data}
	}
	return s.q.Submit(ctx, sweep, out)
}

func (s sweepQueue) Results(ctx context.Context, sweep string, fn func(key string, data []byte) bool) error {
	return s.q.Results(ctx, sweep, fn)
}

func (s sweepQueue) Forget(ctx context.Context, sweep string) error { return s.q.Forget(ctx, sweep) }

// newSweepID returns a random sweep id.
func newSweepID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}

// remoteBase stores the sweep's files in the queue's blob store (each once, by
// content) and describes the base run around them.
func remoteBase(ctx context.Context, q *natsbus.SweepQueue, agentPath, strategyPath string, tapes []string, cfg *backtest.Config) (backtest.RemoteBase, error) {
	put := func(path string) (backtest.Blob, error) {
		d, n, err := q.PutBlob(ctx, path)
		return backtest.Blob{Name: path, Digest: d, Size: n}, err
	}
	b := backtest.RemoteBase{Build: buildID(), Latency: cfg.Latency, Balance: cfg.Balance, FeeBps: cfg.FeeBps, Report: cfg.Report}
	var err error
	if b.Agent, err = put(agentPath); err != nil {
		return b, err
	}
	if b.Strategy, err = put(strategyPath); err != nil {
		return b, err
	}
	for _, t := range tapes {
		bl, err := put(t)
		if err != nil {
			return b, err
		}
		b.Tapes = append(b.Tapes, bl)
	}
	if len(tapes) == 0 && cfg.Source != nil {
		if _, ok := cfg.Source.(*backtest.SimSource); !ok {
			return b, fmt.Errorf("backtest: this data cannot be sent to workers")
		}
	}
	return b, nil
}

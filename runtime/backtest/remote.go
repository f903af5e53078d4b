package backtest

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// A sweep on several machines (docs/backtests.md, docs/design/0131): the
// coordinator describes the sweep's base as data — the agent and strategy files
// and the recordings by content, the run's settings — and sends one job per point
// through a queue (adapters/natsbus on JetStream, wired by cmd/pitboss); a worker
// rebuilds the run from the job, with the files fetched by their digest, runs it
// with RunRow, the code a local sweep runs, and answers the row's Summary. So the
// table is the local sweep's, byte for byte, on workers of the same build and
// architecture (float arithmetic may differ in the last bit across architectures).

// jobFormat is the version of the job and result encodings.
const jobFormat = 1

// Blob is a file known by its content: its SHA-256 (hex) and size, and the name it
// had on the coordinator (for messages).
type Blob struct {
	Name   string `json:"name"`
	Digest string `json:"sha256"`
	Size   int64  `json:"size"`
}

// SimData is synthetic flow (NewSimSource) as data: the seed, the period, the
// number of synthetic markets and the participants' configuration (the YAML of
// --sim-config, empty for the defaults).
type SimData struct {
	Seed     uint64        `json:"seed"`
	Duration time.Duration `json:"duration"`
	Start    int64         `json:"start,omitempty"` // Unix ms; 0: sim.DefaultTapeStart
	Markets  int           `json:"markets"`
	Config   []byte        `json:"config,omitempty"`
}

// Source returns the flow.
func (d *SimData) Source() (*SimSource, error) {
	tc := sim.TapeConfig{Seed: d.Seed, Duration: d.Duration, Start: d.Start}
	start := d.Start
	if start == 0 {
		start = sim.DefaultTapeStart
	}
	tc.Markets = sim.SyntheticMarkets(d.Markets, start/1000)
	if len(d.Config) > 0 {
		var err error
		if tc.Sim, err = sim.ParseConfig(d.Config); err != nil {
			return nil, err
		}
	}
	return NewSimSource(tc)
}

// RemoteBase is a sweep's base run as data: what Config holds, with the files by
// content. Exactly one of Tapes and Sim is set.
type RemoteBase struct {
	// Build names the coordinator's pitboss build; a worker of another build
	// refuses the job (its results could differ).
	Build    string        `json:"build"`
	Agent    Blob          `json:"agent"`
	Strategy Blob          `json:"strategy"`
	Tapes    []Blob        `json:"tapes,omitempty"` // replayed in this order, as one stream
	Sim      *SimData      `json:"sim,omitempty"`
	Latency  time.Duration `json:"latency,omitempty"`
	Balance  market.Micros `json:"balance,omitempty"`
	FeeBps   *uint32       `json:"fee_bps,omitempty"`
	Report   report.Config `json:"report"`
}

// pointJob is one job: the base and the row to fill.
type pointJob struct {
	Format int        `json:"format"`
	Base   RemoteBase `json:"base"`
	Row    Row        `json:"row"`
}

// jobResult is a job's answer (gob: floats, NaN included, travel bit for bit).
type jobResult struct {
	Format  int
	Summary report.Summary
	Err     string
}

// Queue carries a sweep's jobs to workers and their results back
// (natsbus.SweepQueue, adapted by cmd/pitboss). Keys are unique within a sweep.
type Queue interface {
	Submit(ctx context.Context, sweep string, jobs []QueuedJob) error
	// Results hands fn each key's first result until fn reports done.
	Results(ctx context.Context, sweep string, fn func(key string, data []byte) (done bool)) error
	// Forget drops what the queue still holds of the sweep.
	Forget(ctx context.Context, sweep string) error
}

// QueuedJob is a job as the Queue carries it.
type QueuedJob struct {
	Key  string
	Data []byte
}

// RemotePool is a Pool whose points run on workers elsewhere (JobRunner), through
// Queue: one job per row, under the sweep id ID; each row's result is taken once,
// however many times its job ran.
type RemotePool struct {
	Base  RemoteBase
	Queue Queue
	ID    string // the sweep's id: letters, digits, '-' and '_'
}

// Run implements Pool.
func (p *RemotePool) Run(ctx context.Context, rows []*Row, done func()) error {
	jobs := make([]QueuedJob, len(rows))
	byKey := make(map[string]*Row, len(rows))
	for i, r := range rows {
		key := fmt.Sprintf("f%d-p%d", r.Fold, r.Index)
		if r.Test {
			key = fmt.Sprintf("f%d-t%d", r.Fold, r.Index)
		}
		data, err := json.Marshal(pointJob{Format: jobFormat, Base: p.Base, Row: *r})
		if err != nil {
			return err
		}
		jobs[i] = QueuedJob{Key: key, Data: data}
		byKey[key] = r
	}
	if err := p.Queue.Submit(ctx, p.ID, jobs); err != nil {
		return err
	}
	left := len(rows)
	err := p.Queue.Results(ctx, p.ID, func(key string, data []byte) bool {
		r := byKey[key]
		if r == nil {
			return false // a row of an earlier fold
		}
		delete(byKey, key)
		var res jobResult
		if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&res); err != nil || res.Format != jobFormat {
			r.Err = fmt.Sprintf("unreadable result from a worker (format %d): %v", res.Format, err)
		} else {
			r.Summary, r.Err = res.Summary, res.Err
		}
		done()
		left--
		return left == 0
	})
	// What the queue still holds of the sweep is dropped: the results read, and
	// the jobs nobody took when the sweep gave up (it leaves no work behind).
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ferr := p.Queue.Forget(fctx, p.ID)
	if err != nil {
		return err
	}
	return ferr
}

// MaxDeliveries bounds the times a job is handed out: a point that every worker
// running it died on (a crash, memory) is reported failed rather than handed out
// for ever.
const MaxDeliveries = 5

// JobRunner runs jobs on a worker. Fetch returns the local path of a blob's
// content (fetching it once). Sources are opened once per set of tapes and shared
// by the jobs that replay them. A JobRunner is safe for concurrent use.
type JobRunner struct {
	Build string // this worker's build (compared with the job's)
	Fetch func(ctx context.Context, b Blob) (path string, err error)
	// Refused, if set, is told why a job was answered without being run (a job
	// it cannot read, another build's, one handed out too often): the row's
	// failure, which the coordinator shows, but which the worker's operator has
	// to fix (a worker that refuses every point is useless until then).
	Refused func(reason string)

	mu      sync.Mutex
	sources map[string]Source
}

// Run runs the job data (its delivery counts the times it was handed out) and
// returns the result to publish. An error means the job could not be attempted
// here (a blob could not be fetched, ctx ended): it should go back to the queue.
func (r *JobRunner) Run(ctx context.Context, data []byte, delivery uint64) ([]byte, error) {
	var j pointJob
	row := &j.Row
	refused := true
	switch err := json.Unmarshal(data, &j); {
	case err != nil || j.Format != jobFormat:
		row.Err = fmt.Sprintf("this worker cannot read the job (format %d, want %d)", j.Format, jobFormat)
	case j.Base.Build != r.Build:
		row.Err = fmt.Sprintf("the worker runs pitboss %s, the coordinator %s: run the same build on both", r.Build, j.Base.Build)
	case delivery > MaxDeliveries:
		row.Err = fmt.Sprintf("abandoned after %d deliveries: every worker that ran it stopped before the end", MaxDeliveries)
	default:
		refused = false
		if err := r.run(ctx, &j); err != nil {
			return nil, err
		}
	}
	if refused && r.Refused != nil {
		r.Refused(row.Err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(jobResult{Format: jobFormat, Summary: row.Summary, Err: row.Err}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// run builds the point's run and runs it into j.Row; failures of the run itself
// (as a local sweep would have them) go into the row.
func (r *JobRunner) run(ctx context.Context, j *pointJob) error {
	b := &j.Base
	read := func(bl Blob) ([]byte, error) {
		path, err := r.Fetch(ctx, bl)
		if err != nil {
			return nil, err
		}
		return os.ReadFile(path)
	}
	agentSrc, err := read(b.Agent)
	if err != nil {
		return err
	}
	stratSrc, err := read(b.Strategy)
	if err != nil {
		return err
	}
	fail := func(err error) error { j.Row.Err = err.Error(); return nil }
	paths, err := r.fetchTapes(ctx, b.Tapes)
	if err != nil {
		return err
	}
	src, err := r.source(b, paths)
	if err != nil {
		return fail(err)
	}
	// The strategy file was checked on the coordinator; here it comes as content.
	exists := func(string) (fs.FileInfo, error) { return nil, nil }
	spec, err := agents.Options{Stat: exists, Getenv: func(string) string { return "" }}.Parse(b.Agent.Name, agentSrc)
	if err != nil {
		return fail(err)
	}
	st, err := spec.ParseStrategy(stratSrc)
	if err != nil {
		return fail(err)
	}
	if st, err = j.Row.Point.apply(st); err != nil {
		return fail(err)
	}
	RunRow(ctx, Config{Spec: spec, Strategy: st, Source: src, Latency: b.Latency, Balance: b.Balance, FeeBps: b.FeeBps,
		Report: b.Report}, st, &j.Row)
	return nil
}

// fetchTapes returns the local paths of the tapes.
func (r *JobRunner) fetchTapes(ctx context.Context, tapes []Blob) ([]string, error) {
	paths := make([]string, len(tapes))
	for i, t := range tapes {
		p, err := r.Fetch(ctx, t)
		if err != nil {
			return nil, err
		}
		paths[i] = p
	}
	return paths, nil
}

// source opens the job's data: the synthetic flow, or the tapes at paths, opened
// once per set of tapes (a Source is safe for concurrent use).
func (r *JobRunner) source(b *RemoteBase, paths []string) (Source, error) {
	if b.Sim != nil {
		return b.Sim.Source()
	}
	if len(paths) == 0 {
		return nil, errors.New("the job names no market data")
	}
	var key strings.Builder
	for _, t := range b.Tapes {
		key.WriteString(t.Digest + ",")
	}
	r.mu.Lock()
	src := r.sources[key.String()]
	r.mu.Unlock()
	if src != nil {
		return src, nil
	}
	var err error
	if len(paths) == 1 {
		src, err = OpenTape(paths[0])
	} else {
		src, err = OpenTapes(paths)
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.sources == nil {
		r.sources = map[string]Source{}
	}
	r.sources[key.String()] = src
	r.mu.Unlock()
	return src, nil
}

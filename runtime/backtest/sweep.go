package backtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/strategy"
)

// Axis is one swept parameter and its values (text, in the strategy file's
// notation).
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// ParseSweeps expands --sweep arguments (NAME=FROM:TO:STEP, bools as NAME=any) with
// the strategy's own parameter rules (strategy.SweepValues). A parameter may be
// swept once; the grid is the product of the axes, at most MaxPoints points.
func ParseSweeps(st *strategy.Strategy, args []string) ([]Axis, error) {
	var axes []Axis
	seen := map[string]bool{}
	points := 1
	for _, a := range args {
		name, values, err := st.SweepValues(a)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("sweep: parameter %s is swept twice", name)
		}
		seen[name] = true
		points *= len(values)
		if points > MaxPoints {
			return nil, fmt.Errorf("sweep: more than %d points", MaxPoints)
		}
		axes = append(axes, Axis{Name: name, Values: values})
	}
	return axes, nil
}

// MaxPoints bounds a sweep's grid.
const MaxPoints = 10_000

// Metric names a figure of the report's Summary that sweeps sort by.
type Metric string

// Metrics a sweep can sort by. Higher is better except for MetricDrawdown and
// MetricBrier.
const (
	MetricPnL          Metric = "pnl"
	MetricReturn       Metric = "return"
	MetricSharpe       Metric = "sharpe"
	MetricSortino      Metric = "sortino"
	MetricDrawdown     Metric = "max_drawdown"
	MetricWinRate      Metric = "win_rate"
	MetricProfitFactor Metric = "profit_factor"
	MetricFills        Metric = "fills"
	MetricVolume       Metric = "volume"
	MetricBrier        Metric = "brier"
)

// Metrics lists the metrics, for help texts.
var Metrics = []Metric{MetricPnL, MetricReturn, MetricSharpe, MetricSortino, MetricDrawdown, MetricWinRate,
	MetricProfitFactor, MetricFills, MetricVolume, MetricBrier}

// ParseMetric accepts a metric's name.
func ParseMetric(s string) (Metric, error) {
	for _, m := range Metrics {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown metric %q (one of %s)", s, strings.Join(names, ", "))
}

// Value returns the metric of s as a float where greater is better (drawdown and
// Brier negated) and NaN when undefined.
func (m Metric) Value(s *report.Summary) float64 {
	switch m {
	case MetricPnL:
		return float64(s.PnL)
	case MetricReturn:
		return float64(s.Return)
	case MetricSharpe:
		return float64(s.Sharpe)
	case MetricSortino:
		return float64(s.Sortino)
	case MetricDrawdown:
		return -float64(s.MaxDrawdown)
	case MetricWinRate:
		return float64(s.WinRate)
	case MetricProfitFactor:
		return float64(s.ProfitFactor)
	case MetricFills:
		return float64(s.Fills)
	case MetricVolume:
		return float64(s.Volume)
	case MetricBrier:
		return -float64(s.Brier)
	}
	return math.NaN()
}

// SweepConfig configures a sweep: Base run over every point of the grid.
type SweepConfig struct {
	// Base is the run every point starts from; its Strategy (or the agent file's)
	// gets each point's values. Progress and Logger are ignored.
	Base Config
	// Axes are the swept parameters (ParseSweeps).
	Axes []Axis
	// Metric sorts the table (best first). If empty, MetricPnL.
	Metric Metric
	// Workers bounds the runs in parallel. If zero, GOMAXPROCS.
	Workers int
	// Folds, if positive, makes the sweep a walk-forward: [From, To] is cut into
	// Folds+1 equal periods; for each fold the grid is run on one period ("fit"),
	// the best point by Metric is run on the next ("test"), and the table shows
	// each fold's choice with its out-of-sample result.
	Folds int
	// Done, if set, is called after each run (from worker goroutines, serialized)
	// with the runs finished and the total, for a progress display.
	Done func(done, total int)
	// Pool, if set, runs the points instead of this process (RemotePool: workers
	// on other machines); Workers is then not used. The table is the same.
	Pool Pool
}

// Pool runs the points of a sweep somewhere else than in this process.
type Pool interface {
	// Run fills in every row its run's Summary, or Err when the run failed: the
	// run of the sweep's Base with the row's Point values over [From, To], as
	// RunRow makes it. done is called after each row, serialized. Only ctx's end
	// (or the pool's failure) is an error.
	Run(ctx context.Context, rows []*Row, done func()) error
}

// Point is one sweep point: the swept parameters' values, in axis order.
type Point []report.Param

// apply returns st with the point's values.
func (p Point) apply(st *strategy.Strategy) (*strategy.Strategy, error) {
	over := make([]strategy.Override, len(p))
	for j, kv := range p {
		over[j] = strategy.Override{Name: kv.Name, Value: kv.Value, File: "--sweep"}
	}
	s, err := st.With(over)
	if err != nil {
		return nil, fmt.Errorf("sweep point %s: %w", p, err)
	}
	return s, nil
}

// String returns "name=value name=value".
func (p Point) String() string {
	parts := make([]string, len(p))
	for i, kv := range p {
		parts[i] = kv.Name + "=" + kv.Value
	}
	return strings.Join(parts, " ")
}

// Row is one run of a sweep.
type Row struct {
	// Index is the point's position in the grid (the last axis varies fastest).
	Index int   `json:"index"`
	Point Point `json:"point"`
	// Fold and Test are set in a walk-forward: the fold (1-based), and whether
	// the row is that fold's out-of-sample run of its best point.
	Fold int  `json:"fold,omitempty"`
	Test bool `json:"test,omitempty"`
	// From and To are the period run (Unix ms).
	From    int64          `json:"from_ms"`
	To      int64          `json:"to_ms"`
	Summary report.Summary `json:"summary"`
	// Err is the run's failure, if any (the row then has no summary).
	Err string `json:"error,omitempty"`
}

// SweepResult is a sweep's table.
type SweepResult struct {
	Metric Metric `json:"metric"`
	Axes   []Axis `json:"axes"`
	// Rows are the runs, best first by Metric (rows without the metric, then
	// failed ones, last; ties by grid index). In a walk-forward: per fold, the
	// test row first, then the fold's fit rows best first.
	Rows []Row `json:"rows"`
	// Folds is the number of walk-forward folds (0: a plain sweep);
	// OutOfSample sums the test rows' PnL.
	Folds       int          `json:"folds,omitempty"`
	OutOfSample report.Money `json:"out_of_sample_pnl"`
}

// grid returns every point of the axes' product, the last axis fastest.
func grid(axes []Axis) []Point {
	pts := []Point{{}}
	for _, ax := range axes {
		var next []Point
		for _, p := range pts {
			for _, v := range ax.Values {
				q := append(append(Point(nil), p...), report.Param{Name: ax.Name, Value: v})
				next = append(next, q)
			}
		}
		pts = next
	}
	return pts
}

// job is one run of a sweep.
type job struct {
	row      *Row
	strategy *strategy.Strategy
}

// Sweep runs cfg.Base at every point of the grid, in parallel, and returns the
// table. The result does not depend on the number of workers or on scheduling: each
// run is deterministic and rows are sorted by (metric, index).
func Sweep(ctx context.Context, cfg SweepConfig) (*SweepResult, error) {
	if cfg.Base.Spec == nil || cfg.Base.Source == nil {
		return nil, errors.New("backtest: an agent file and market data are required")
	}
	if cfg.Metric == "" {
		cfg.Metric = MetricPnL
	}
	if _, err := ParseMetric(string(cfg.Metric)); err != nil {
		return nil, err
	}
	base := cfg.Base.Strategy
	if base == nil {
		var err error
		if base, err = cfg.Base.Spec.LoadStrategy(); err != nil {
			return nil, err
		}
	}
	points := grid(cfg.Axes)
	strats, err := compilePoints(base, points, cfg.Workers)
	if err != nil {
		return nil, err
	}
	res := &SweepResult{Metric: cfg.Metric, Axes: cfg.Axes, Folds: max(cfg.Folds, 0)}
	from, to := spanOf(cfg.Base.Source, cfg.Base.From, cfg.Base.To)
	if cfg.Folds <= 0 {
		rows := make([]Row, len(points))
		jobs := make([]job, len(points))
		for i := range points {
			rows[i] = Row{Index: i, Point: points[i], From: from, To: to}
			jobs[i] = job{row: &rows[i], strategy: strats[i]}
		}
		if err := runJobs(ctx, &cfg, jobs); err != nil {
			return nil, err
		}
		sortRows(rows, cfg.Metric)
		res.Rows = rows
		return res, nil
	}
	// Walk-forward.
	if to <= from {
		return nil, errors.New("backtest: a walk-forward needs the data's time span (give --from and --to)")
	}
	seg := (to - from + 1) / int64(cfg.Folds+1)
	if seg <= 0 {
		return nil, fmt.Errorf("backtest: %d folds do not fit in the period", cfg.Folds)
	}
	for k := 0; k < cfg.Folds; k++ {
		fitFrom := from + int64(k)*seg
		fitTo := fitFrom + seg - 1
		testTo := fitTo + seg
		if k == cfg.Folds-1 {
			testTo = to
		}
		rows := make([]Row, len(points))
		jobs := make([]job, len(points))
		for i := range points {
			rows[i] = Row{Index: i, Point: points[i], Fold: k + 1, From: fitFrom, To: fitTo}
			jobs[i] = job{row: &rows[i], strategy: strats[i]}
		}
		if err := runJobs(ctx, &cfg, jobs); err != nil {
			return nil, err
		}
		sortRows(rows, cfg.Metric)
		best := rows[0]
		test := Row{Index: best.Index, Point: best.Point, Fold: k + 1, Test: true, From: fitTo + 1, To: testTo}
		if best.Err == "" {
			if err := runJobs(ctx, &cfg, []job{{row: &test, strategy: strats[best.Index]}}); err != nil {
				return nil, err
			}
			res.OutOfSample += test.Summary.PnL
		} else {
			test.Err = "no point could be fitted: " + best.Err
		}
		res.Rows = append(res.Rows, test)
		res.Rows = append(res.Rows, rows...)
	}
	return res, nil
}

// compilePoints returns base with each point's values (Point.apply), compiled on
// at most workers goroutines (zero: GOMAXPROCS), or the error of the first point
// in grid order that has one. Compiling is a few per cent of a sweep's work: done
// one point after the other it would be the part of a parallel sweep that does
// not get faster with more cores.
func compilePoints(base *strategy.Strategy, points []Point, workers int) ([]*strategy.Strategy, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	strats := make([]*strategy.Strategy, len(points))
	errs := make([]error, len(points))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(points)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(points); i = int(next.Add(1) - 1) {
				strats[i], errs[i] = points[i].apply(base)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return strats, nil
}

// runJobs runs jobs on cfg.Pool, or on at most cfg.Workers goroutines, all of them
// owned and waited for here. A failed run is recorded in its row; only ctx's end
// is an error.
func runJobs(ctx context.Context, cfg *SweepConfig, jobs []job) error {
	var mu sync.Mutex
	done := 0
	finished := func() {
		if cfg.Done != nil {
			mu.Lock()
			done++
			cfg.Done(done, len(jobs))
			mu.Unlock()
		}
	}
	if cfg.Pool != nil {
		rows := make([]*Row, len(jobs))
		for i := range jobs {
			rows[i] = jobs[i].row
		}
		if err := cfg.Pool.Run(ctx, rows, finished); err != nil {
			return err
		}
		return ctx.Err()
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(jobs))
	next := make(chan *job)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				RunRow(ctx, cfg.Base, j.strategy, j.row)
				finished()
			}
		}()
	}
	for i := range jobs {
		select {
		case next <- &jobs[i]:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}

// RunRow runs base with strategy st (the sweep's strategy with row's point values)
// over row's period, and records the run's Summary, or its failure, in row: one
// point of a sweep, as this process or a worker elsewhere runs it.
func RunRow(ctx context.Context, base Config, st *strategy.Strategy, row *Row) {
	c := base
	c.Strategy, c.From, c.To = st, row.From, row.To
	c.Progress, c.Logger = nil, nil
	r, err := Run(ctx, c)
	if err != nil {
		row.Err = err.Error()
	} else {
		row.Summary = r.Report.Summary
	}
}

// sortRows orders rows best first by m: defined values descending, then undefined,
// then failed runs; ties by grid index.
func sortRows(rows []Row, m Metric) {
	rank := func(r *Row) int {
		switch {
		case r.Err != "":
			return 2
		case math.IsNaN(m.Value(&r.Summary)):
			return 1
		}
		return 0
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := &rows[i], &rows[j]
		ra, rb := rank(a), rank(b)
		if ra != rb {
			return ra < rb
		}
		if ra == 0 {
			va, vb := m.Value(&a.Summary), m.Value(&b.Summary)
			if va != vb {
				return va > vb
			}
		}
		return a.Index < b.Index
	})
}

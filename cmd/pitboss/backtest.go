package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/backtest"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/runtime/wire"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

func init() {
	register(command{name: "backtest", summary: "replay a recording or synthetic flow through an agent and report (metrics, HTML, CSV, sweeps)", run: runBacktest})
}

const backtestUsage = `[flags] --data FILE|DIR|GLOB... | --sim SEED  AGENT.yaml

Replays market data through the agent the file describes — the same strategy,
guards, reconciler and paper venue (fill model) as its dry run — and reports PnL,
return, Sharpe, Sortino, drawdown, win rate, profit factor, turnover, fills, fees,
exposure, per-market and per-day results, round trips, settlement PnL, Brier scores
where the strategy declares a probability, the guards' denials, kill-switch trips,
halts and flattens, buy-and-hold and do-nothing baselines, and warnings where the
figures mean little. --html adds price charts with every fill and the agent's
quotes. Event time is the only clock: the same inputs give the same report, byte
for byte.

  pitboss backtest --data agents/examples/testdata/sample.tape agents/examples/quoter/agent.yaml
  pitboss backtest --sim 7 --duration 12h --html report.html --csv fills.csv agents/examples/quoter/agent.yaml
  pitboss backtest --data rec.tape --sweep half_spread=0.01:0.05:0.01 --sweep size=5:20:5 --metric sharpe AGENT.yaml

Subcommands:
  compare   print (and with --html render) saved runs side by side: parameters, metrics, differences

--data may be given several times, and may name a directory (every *.tape file in
it) or a quoted glob ('recs/rain-*.tape'): the files, in name order within each
--data and in flag order across them, are replayed as one stream — a recording
rotated by pitboss record --rotate-every/--rotate-size replays exactly as one file
of the same stream. Their markets are the union of the files' metadata; --from and
--to apply across the files; files out of time order are an error.

Times (--from, --to) are RFC 3339 ("2024-05-01T12:00:00Z"), a date (UTC) or Unix
milliseconds.

--save NAME keeps the run's JSON report under the runs directory (--runs-dir;
default $XDG_DATA_HOME/pitboss/backtests, i.e. ~/.local/share/pitboss/backtests)
as NAME.json, for pitboss backtest compare.`

func runBacktest(ctx context.Context, args []string, io stdio) error {
	defer backtest.BatchGC()() // a batch run: see BatchGC
	if len(args) > 0 && args[0] == "compare" {
		return runBacktestCompare(args[1:], io)
	}
	fs := newFlagSet("backtest", backtestUsage, io)
	var data multiFlag
	fs.Var(&data, "data", "a recording made by pitboss record: a file, a directory of *.tape files or a glob (repeatable: replayed in order as one stream)")
	simSeed := fs.String("sim", "", "replay synthetic flow from sandbox/sim with this seed instead of a recording")
	duration := fs.Duration("duration", 6*time.Hour, "with --sim: how much event time to simulate")
	simMarkets := fs.Int("sim-markets", 4, "with --sim: the number of synthetic markets")
	simConfig := fs.String("sim-config", "", "with --sim: a sandbox/sim YAML configuration of the participants (docs/sim.md)")
	fromS := fs.String("from", "", "start of the replay (event time); default: the data's start")
	toS := fs.String("to", "", "end of the replay (event time, inclusive); default: the data's end")
	latency := fs.Duration("latency", 0, "an order reaches the paper book this long (event time) after the event that caused it")
	feeBps := fs.Int("fee-bps", -1, "taker fee rate in basis points for every market; -1: each market's own rate")
	balance := fs.String("balance", "1000", "starting collateral of the paper account")
	asJSON := fs.Bool("json", false, "print the report (or the sweep table) as JSON on stdout instead of text")
	htmlOut := fs.String("html", "", "write the self-contained HTML report to this file")
	csvOut := fs.String("csv", "", "write every fill as CSV to this file")
	jsonOut := fs.String("out", "", "write the JSON report to this file as well")
	title := fs.String("title", "", "the report's title (default: the agent and the data)")
	save := fs.String("save", "", "keep the run's JSON report as NAME in the runs directory, for pitboss backtest compare (1-64 of A-Z a-z 0-9 . _ -)")
	runsDir := fs.String("runs-dir", "", "with --save: the runs directory (default: $XDG_DATA_HOME/pitboss/backtests)")
	brierHorizon := fs.Duration("brier-horizon", report.DefaultBrierHorizon, "score the forecast this long before each resolution (the report's Brier score; docs/backtests.md)")
	var sweeps multiFlag
	fs.Var(&sweeps, "sweep", "sweep a strategy parameter: NAME=FROM:TO:STEP (repeatable; the grid is every combination)")
	metric := fs.String("metric", "pnl", "sort the sweep by: "+metricNames())
	top := fs.Int("top", 20, "with --sweep: print the best N rows (0: all)")
	parallel := fs.Int("parallel", 0, "with --sweep: runs at once, one per core (default: every core the process may use, GOMAXPROCS)")
	workers := fs.Int("workers", 0, "with --sweep: the older name of --parallel")
	folds := fs.Int("walk-forward", 0, "with --sweep: N folds — fit each period, report the best point on the next")
	quiet := fs.Bool("q", false, "no progress bar")
	natsURL := fs.String("nats", "", "with --sweep: put the points on the work queue of the NATS server at `URL` (nats://host:4222[,…]; JetStream on), for pitboss worker processes anywhere to run")
	natsCreds := fs.String("nats-creds", "", "with --nats: credentials, a pitboss endpoint `FILE` or a NATS .creds file (0600)")
	ackWait := fs.Duration("ack-wait", 30*time.Second, "with --nats: a point whose worker gave no sign of life for this long goes to another worker")
	logPath := fs.String("log", "", "write the agent's log (event time, one line per decision that acts, order and fill) to this file")
	logLevel := fs.String("log-level", "info", "with --log: debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("name one agent file")
	}
	if (len(data) == 0) == (*simSeed == "") {
		return usagef("give either --data FILE or --sim SEED")
	}
	from, err := parseEventTime(*fromS)
	if err != nil {
		return usagef("--from: %v", err)
	}
	to, err := parseEventTime(*toS)
	if err != nil {
		return usagef("--to: %v", err)
	}
	if from != 0 && to != 0 && to < from {
		return usagef("--to is before --from")
	}
	bal, err := market.ParseMicros(*balance)
	if err != nil || bal <= 0 {
		return usagef("--balance must be a positive decimal amount, not %q", *balance)
	}
	if *save != "" {
		if err := report.ValidRunName(*save); err != nil {
			return usagef("--save: %v", err)
		}
	}
	if *brierHorizon <= 0 {
		return usagef("--brier-horizon must be positive")
	}
	if *latency < 0 || *feeBps < -1 || *feeBps > 10_000 || *top < 0 || *parallel < 0 || *workers < 0 || *folds < 0 {
		return usagef("--latency, --top, --parallel and --walk-forward must not be negative; --fee-bps is -1 or 0 to 10000")
	}
	if *parallel != 0 && *workers != 0 && *parallel != *workers {
		return usagef("--workers is the older name of --parallel: give one of them")
	}
	*parallel = max(*parallel, *workers)
	m, err := backtest.ParseMetric(*metric)
	if err != nil {
		return usagef("--metric: %v", err)
	}
	if *folds > 0 && len(sweeps) == 0 {
		return usagef("--walk-forward needs at least one --sweep")
	}
	if (*natsURL != "" || *natsCreds != "") && len(sweeps) == 0 {
		return usagef("--nats sends a sweep's points to workers: give at least one --sweep")
	}
	switch {
	case *parallel != 0 && len(sweeps) == 0:
		return usagef("--parallel runs a sweep's points at once: give at least one --sweep (a single run keeps to one core)")
	case *parallel != 0 && (*natsURL != "" || *natsCreds != ""):
		return usagef("with --nats the points run on pitboss worker processes: give --parallel to each worker")
	}
	if len(sweeps) > 0 {
		// These write one run's report or log; a sweep has many runs and writes none
		// of them (it used to ignore them silently, leaving no file or an empty one).
		for _, f := range []struct{ name, value string }{{"html", *htmlOut}, {"csv", *csvOut}, {"out", *jsonOut}, {"log", *logPath}} {
			if f.value != "" {
				return usagef("--%s writes one run's report or log: a sweep has many (--json prints the sweep's table as JSON; run its best point without --sweep for the rest)", f.name)
			}
		}
	}
	if *ackWait < time.Second {
		return usagef("--ack-wait must be at least 1s")
	}

	path := fs.Arg(0)
	spec, err := agents.Options{Getenv: io.getenv}.Load(path)
	if err != nil {
		return agentProblems(io, "backtest", path, err)
	}
	var src backtest.Source
	var files []string            // the recordings, for workers
	var simData *backtest.SimData // or the synthetic flow
	if len(data) > 0 {
		files, err = backtest.DataFiles(data)
		if err != nil {
			return err
		}
		if len(files) == 1 {
			ts, err := backtest.OpenTape(files[0])
			if err != nil {
				return err
			}
			src = ts
		} else {
			ts, err := backtest.OpenTapes(files)
			if err != nil {
				return err
			}
			src = ts
		}
	} else {
		seed, err := strconv.ParseUint(*simSeed, 10, 64)
		if err != nil {
			return usagef("--sim takes a seed (a non-negative integer), not %q", *simSeed)
		}
		if *duration <= 0 || *simMarkets <= 0 {
			return usagef("--duration and --sim-markets must be positive")
		}
		tc := sim.TapeConfig{Seed: seed, Duration: *duration}
		if from != 0 {
			tc.Start = from
		}
		tc.Markets = sim.SyntheticMarkets(*simMarkets, startOr(tc.Start)/1000)
		simData = &backtest.SimData{Seed: seed, Duration: *duration, Start: tc.Start, Markets: *simMarkets}
		if *simConfig != "" {
			if tc.Sim, err = sim.LoadConfig(*simConfig); err != nil {
				return err
			}
			if simData.Config, err = os.ReadFile(*simConfig); err != nil {
				return err
			}
		}
		if src, err = backtest.NewSimSource(tc); err != nil {
			return err
		}
	}
	cfg := backtest.Config{Spec: spec, Source: src, From: from, To: to, Latency: *latency, Balance: bal, Title: *title,
		Report: report.Config{BrierHorizon: *brierHorizon}}
	if *feeBps >= 0 {
		f := uint32(*feeBps)
		cfg.FeeBps = &f
	}
	showProgress := !*quiet && isTerminal(io.stderr)
	if *logPath != "" {
		lvl, err := zapcore.ParseLevel(*logLevel)
		if err != nil {
			return usagef("--log-level must be debug, info, warn or error, not %q", *logLevel)
		}
		f, err := os.Create(*logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		if cfg.Logger, err = wire.NewLogger(f, wire.LogText, lvl, true); err != nil {
			return err
		}
	}

	if len(sweeps) > 0 {
		if *save != "" {
			return usagef("--save keeps one run's report: a sweep has many (save its best point with --sweep left out)")
		}
		st, err := spec.LoadStrategy()
		if err != nil {
			return err
		}
		axes, err := backtest.ParseSweeps(st, sweeps)
		if err != nil {
			return usagef("%v", err)
		}
		cfg.Strategy = st
		sc := backtest.SweepConfig{Base: cfg, Axes: axes, Metric: m, Workers: *parallel, Folds: *folds}
		if *natsURL != "" || *natsCreds != "" {
			pool, done, err := natsPool(ctx, io, *natsURL, *natsCreds, *ackWait, path, spec.Strategy.File, files, simData, &cfg)
			if err != nil {
				return err
			}
			defer done()
			sc.Pool = pool
		}
		var bar *progressBar
		if showProgress {
			bar = newProgressBar(io.stderr, "runs")
			sc.Done = func(done, total int) { bar.set(int64(done), int64(total)) }
			defer bar.stop()
		}
		res, err := backtest.Sweep(ctx, sc)
		bar.stop()
		if err != nil {
			return err
		}
		if *asJSON {
			b, err := res.MarshalIndent()
			if err != nil {
				return err
			}
			if _, err = io.stdout.Write(b); err != nil {
				return err
			}
		} else if err := res.WriteText(io.stdout, *top); err != nil {
			return err
		}
		if msg := res.Failed(); msg != "" {
			return fmt.Errorf("every point of the sweep failed (the first: %s)", msg)
		}
		return nil
	}

	var prog backtest.Progress
	cfg.Progress = &prog
	var bar *progressBar
	if showProgress {
		bar = newProgressBar(io.stderr, "events")
		bar.follow(func() (int64, int64) { return prog.Done(), prog.Total() })
	}
	res, err := backtest.Run(ctx, cfg)
	bar.stop()
	if err != nil {
		return err
	}
	rep := res.Report
	js, err := rep.MarshalIndent()
	if err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := os.WriteFile(*jsonOut, js, 0o644); err != nil {
			return err
		}
	}
	if *htmlOut != "" {
		if err := writeFileWith(*htmlOut, rep.WriteHTML); err != nil {
			return err
		}
	}
	savedAs := ""
	if *save != "" {
		dir, err := backtestRunsDir(*runsDir, io.getenv)
		if err != nil {
			return err
		}
		if savedAs, _, err = report.SaveRun(dir, *save, rep); err != nil {
			return err
		}
	}
	if *csvOut != "" {
		if err := writeFileWith(*csvOut, rep.WriteFillsCSV); err != nil {
			return err
		}
	}
	if *asJSON {
		_, err = io.stdout.Write(js)
		return err
	}
	if err := rep.WriteText(io.stdout); err != nil {
		return err
	}
	for _, f := range []struct{ what, path string }{{"html", *htmlOut}, {"csv", *csvOut}, {"json", *jsonOut}, {"saved (" + *save + ")", savedAs}} {
		if f.path != "" {
			fmt.Fprintf(io.stdout, "%s report: %s\n", f.what, f.path)
		}
	}
	return nil
}

// natsPool connects to the NATS server of --nats, stores the sweep's files and
// returns the pool that sends its points to workers; done closes the connection.
func natsPool(ctx context.Context, io stdio, url, creds string, ackWait time.Duration, agentPath, strategyPath string,
	tapes []string, simData *backtest.SimData, cfg *backtest.Config) (*backtest.RemotePool, func(), error) {
	ep, err := natsEndpoint(io, url, creds)
	if err != nil {
		return nil, nil, err // a usage error naming the flag
	}
	bus, err := natsbus.Connect(ctx, ep, natsbus.ConnectOptions{Name: "pitboss backtest"})
	if err != nil {
		return nil, nil, err
	}
	q, err := bus.EnsureSweepQueue(ctx, natsbus.SweepQueueConfig{AckWait: ackWait})
	if err != nil {
		bus.Close()
		return nil, nil, noJetStream(err, ep)
	}
	base, err := remoteBase(ctx, q, agentPath, strategyPath, tapes, cfg)
	if err != nil {
		bus.Close()
		return nil, nil, err
	}
	base.Sim = simData
	id := newSweepID()
	fmt.Fprintf(io.stderr, "sweep %s: points queued on %s for pitboss worker processes\n", id, ep.String())
	wctx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchWorkers(wctx, io, q, ep.SafeURL())
	}()
	done := func() {
		stop()
		<-watched
		bus.Close()
	}
	return &backtest.RemotePool{Base: base, Queue: sweepQueue{q}, ID: id}, done, nil
}

// noWorkerAfter is how long a coordinator waits before it looks whether any
// worker takes its points (a variable for tests).
var noWorkerAfter = 15 * time.Second

// watchWorkers tells the user, once, when noWorkerAfter after the points were
// queued no worker takes them (none waiting for a point, none running one, in
// three looks a second apart): the sweep waits for one silently otherwise. It
// returns when ctx ends.
func watchWorkers(ctx context.Context, io stdio, q *natsbus.SweepQueue, url string) {
	wait := noWorkerAfter
	for looks := 0; looks < 3; looks++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if n, err := q.Takers(ctx); err != nil || n > 0 {
			return
		}
		wait = time.Second
	}
	fmt.Fprintf(io.stderr, "sweep: no pitboss worker takes the points on %s: start one (pitboss worker --nats %s) on any machine that reaches it; the sweep waits for it (Ctrl-C withdraws the points)\n",
		url, url)
}

// agentProblems prints an agent file's problems (as pitboss check would) and
// returns exit status 1; other errors are returned as they are.
func agentProblems(io stdio, cmd, path string, err error) error {
	var probs agents.Problems
	if errors.As(err, &probs) {
		for _, p := range probs {
			fmt.Fprintln(io.stderr, p.String())
		}
		fmt.Fprintf(io.stderr, "pitboss %s: %d problem(s) in %s (see pitboss check)\n", cmd, len(probs), path)
		return &exitError{code: 1}
	}
	return err
}

func startOr(t int64) int64 {
	if t == 0 {
		return sim.DefaultTapeStart
	}
	return t
}

func metricNames() string {
	names := make([]string, len(backtest.Metrics))
	for i, m := range backtest.Metrics {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// parseEventTime reads RFC 3339, a date (UTC midnight) or Unix milliseconds; "" is 0.
func parseEventTime(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms <= 0 {
			return 0, fmt.Errorf("%q is not a positive Unix time in milliseconds", s)
		}
		return ms, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.UnixMilli() <= 0 {
				return 0, fmt.Errorf("%q is before 1970", s)
			}
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("%q is not RFC 3339, a date or Unix milliseconds", s)
}

// writeFileWith creates path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// multiFlag is a repeatable string flag.
type multiFlag []string

// String implements flag.Value.
func (m *multiFlag) String() string { return strings.Join(*m, " ") }

// Set implements flag.Value.
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// isTerminal reports whether w is a terminal (progress bars go only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressBar draws a one-line progress bar on a terminal, redrawn at most five
// times a second by its own goroutine (owned: stop ends and waits for it). A nil
// *progressBar does nothing.
type progressBar struct {
	w     io.Writer
	unit  string
	mu    sync.Mutex
	done  int64
	total int64
	get   func() (int64, int64)
	quit  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	start time.Time
}

func newProgressBar(w io.Writer, unit string) *progressBar {
	p := &progressBar{w: w, unit: unit, quit: make(chan struct{}), start: time.Now()}
	p.wg.Add(1)
	go p.loop()
	return p
}

// follow makes the bar poll get for its figures.
func (p *progressBar) follow(get func() (done, total int64)) {
	p.mu.Lock()
	p.get = get
	p.mu.Unlock()
}

func (p *progressBar) set(done, total int64) {
	p.mu.Lock()
	p.done, p.total = done, total
	p.mu.Unlock()
}

func (p *progressBar) loop() {
	defer p.wg.Done()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			fmt.Fprint(p.w, "\r\033[K")
			return
		case <-t.C:
			p.draw()
		}
	}
}

func (p *progressBar) draw() {
	p.mu.Lock()
	done, total, get := p.done, p.total, p.get
	p.mu.Unlock()
	if get != nil {
		done, total = get()
	}
	el := time.Since(p.start).Truncate(100 * time.Millisecond)
	if total <= 0 {
		fmt.Fprintf(p.w, "\r\033[K%d %s  %s", done, p.unit, el)
		return
	}
	const width = 30
	frac := min(float64(done)/float64(total), 1)
	n := int(frac * width)
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %3.0f%%  %d/%d %s  %s", strings.Repeat("#", n), strings.Repeat(".", width-n),
		frac*100, done, total, p.unit, el)
}

// stop erases the bar and waits for its goroutine.
func (p *progressBar) stop() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		close(p.quit)
		p.wg.Wait()
	})
}

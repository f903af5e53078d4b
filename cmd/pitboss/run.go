package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/alert"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

func init() {
	register(command{name: "run", summary: "run an agent (dry run on the embedded venue unless the file and --live say otherwise)", run: runRun})
}

const runUsage = `[flags] AGENT.yaml

Runs the agent the file describes until Ctrl-C (or --duration, or --events), showing
what it does: one line per decision that acts, per order and per fill, and a
position/PnL line when positions change (at least every 5 min); a summary at the
end. Ctrl-C cancels the agent's open orders, saves its state and exits 0 (1 when
the strategy failed).

The state directory keeps what the next run continues from: the kill switch, a
strategy failure, positions, open orders, the paper account and the clock.
--fresh starts over (the old checkpoint is kept as agent.json.prev).

--record FILE writes the stream the agent consumes — its markets' books and
trades, its feeds' prices, its signals' values, in order, with their times — to a
new tape; pitboss backtest --data FILE replays exactly what the run saw.

Dry run is the default: orders go to a paper account that mirrors the embedded
market (or, with venue: remote, the remote venue's market data), and nothing needs
a key. Going live needs dry_run: false in the file AND --live here; on the remote
venue a live run unlocks the wallet and finds (or creates) its API credentials.`

func runRun(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("run", runUsage, io)
	live := fs.Bool("live", false, "confirm a live run (the file must say dry_run: false too)")
	duration := fs.Duration("duration", 0, "stop after this long (event time with --clock sim); 0: until Ctrl-C")
	events := fs.Uint64("events", 0, "stop after this many market events; 0: no limit")
	format := fs.String("log-format", "text", "text (a live view for people) or json (zap, one object per line)")
	level := fs.String("log-level", "", "debug, info, warn or error (default: the file's log_level)")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus metrics on this address (e.g. 127.0.0.1:9464); empty: off")
	clock := fs.String("clock", "wall", "wall (the market runs in real time) or sim (as fast as possible, deterministic)")
	seed := fs.Uint64("seed", 1, "seed of the embedded market's flow")
	speed := fs.Int("speed", 1, "with --clock wall: run the embedded market this many times faster than real time")
	stateDir := fs.String("state-dir", "", "state directory (default: the file's state_dir)")
	balance := fs.String("balance", "1000", "starting collateral of the paper (or live embedded) account")
	latency := fs.Duration("latency", 0, "paper venue: an order reaches the book this long (event time) after the event that caused it")
	leave := fs.Bool("leave-orders", false, "on stop, leave open orders on the venue instead of cancelling them")
	auditPath := fs.String("audit", "", "append every guard decision, order, fill and kill-switch event to this file (JSON lines)")
	resumeKill := fs.String("resume-after-kill", "", "clear a tripped kill switch at start, with this `reason` in the audit trail (the state directory's checkpoint keeps it tripped until then)")
	clearFailure := fs.Bool("clear-failure", false, "clear a strategy failure the state directory kept (after fixing the strategy), at start, with an audit record")
	fresh := fs.Bool("fresh", false, "start from an empty paper account and clock: the state directory's checkpoint is set aside as agent.json.prev (not for a live remote run)")
	record := fs.String("record", "", "record the stream the agent consumes (its markets' data, feed prices, signal values) to this new tape file, for pitboss backtest --data")
	supervised := fs.Bool("supervised", false, "run as a member of a fleet (started by pitboss supervise; NATS from the PITBOSS_NATS_* environment)")
	orderTrace := fs.String("order-trace", "", "with --supervised: append a JSON line (pid, op, wall-clock start and end) for every order-changing venue call to this `file` (checks that two processes never traded one wallet at once)")
	var lf liveFlags
	lf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("name one agent file")
	}
	opt := wire.Options{Live: *live, Seed: *seed, Speed: *speed, Events: *events, StateDir: *stateDir,
		Latency: *latency, LeaveOrders: *leave, ResumeAfterKill: *resumeKill, ClearFailure: *clearFailure, Fresh: *fresh, Record: *record,
		Getenv: io.getenv}
	switch *clock {
	case "wall":
		opt.Clock = wire.ClockWall
	case "sim":
		opt.Clock = wire.ClockSim
		opt.Duration = *duration
	default:
		return usagef("--clock must be wall or sim, not %q", *clock)
	}
	var logFormat wire.LogFormat
	switch *format {
	case "text":
		logFormat = wire.LogText
	case "json":
		logFormat = wire.LogJSON
	default:
		return usagef("--log-format must be text or json, not %q", *format)
	}
	b, err := market.ParseMicros(*balance)
	if err != nil || b <= 0 {
		return usagef("--balance must be a positive decimal amount, not %q", *balance)
	}
	opt.Balance = b
	if *duration < 0 || *latency < 0 || *speed <= 0 {
		return usagef("--duration and --latency must not be negative, --speed must be positive")
	}
	if *supervised && *resumeKill != "" {
		return usagef("--resume-after-kill is not for a supervised agent: pitboss ctl resume-after-kill AGENT --reason TEXT")
	}
	if *supervised && (*clearFailure || *fresh) {
		return usagef("--clear-failure and --fresh are not for a supervised agent: pitboss ctl resume AGENT clears a failure")
	}
	if !*supervised && *orderTrace != "" {
		return usagef("--order-trace is for a supervised agent (pitboss supervise passes it from the fleet file's args)")
	}
	if *supervised && *metricsAddr != "" {
		// One scrape target per supervisor, not a port per agent (docs/design/0125).
		return usagef("--metrics-addr is not served with --supervised: the agent's metrics are exported by its supervisor (the fleet file's metrics_addr)")
	}

	path := fs.Arg(0)
	spec, err := agents.Options{Getenv: io.getenv}.Load(path)
	if err != nil {
		var probs agents.Problems
		if errors.As(err, &probs) {
			for _, p := range probs {
				fmt.Fprintln(io.stderr, p.String())
			}
			fmt.Fprintf(io.stderr, "pitboss run: %d problem(s) in %s (see pitboss check)\n", len(probs), path)
			return &exitError{code: 1}
		}
		return err
	}
	lvl := zapcore.InfoLevel
	name := string(spec.LogLevel)
	if *level != "" {
		name = *level
	}
	if name != "" {
		if lvl, err = zapcore.ParseLevel(name); err != nil {
			return usagef("--log-level must be debug, info, warn or error, not %q", name)
		}
	}
	log, err := wire.NewLogger(io.stdout, logFormat, lvl, opt.Clock == wire.ClockSim)
	if err != nil {
		return err
	}
	// With JSON logs stdout is for the log records alone (one JSON object a line,
	// for jq); the text for people — the header, the summary — goes to stderr.
	human := io.stdout
	if logFormat == wire.LogJSON {
		human = io.stderr
	}
	defer log.Sync() //nolint:errcheck // nothing to do about a failed flush of stdout
	opt.Logger = log

	reg := prometheus.NewRegistry()
	if !*supervised { // a supervised agent's metrics are RunSupervised's, under its fleet id
		m, err := wire.NewMetrics(reg, market.AgentID(spec.Name))
		if err != nil {
			return err
		}
		opt.Metrics = m
	}

	var wg sync.WaitGroup
	if *auditPath != "" {
		af, err := wire.OpenAuditFile(*auditPath)
		if err != nil {
			return err
		}
		opt.Audit = af
		actx, stopAudit := context.WithCancel(context.Background())
		var auditErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			auditErr = af.Run(actx)
		}()
		// Deferred before the agent runs, so it runs after the agent has stopped:
		// everything the agent audited is written.
		defer func() {
			stopAudit()
			wg.Wait()
			if auditErr != nil {
				fmt.Fprintf(io.stderr, "pitboss run: audit file: %v\n", auditErr)
			}
		}()
	}

	closeSecrets, err := lf.apply(io, spec, &opt)
	if err != nil {
		return err
	}
	defer closeSecrets()
	if *supervised {
		if *orderTrace != "" {
			f, err := os.OpenFile(*orderTrace, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				return fmt.Errorf("--order-trace: %w", err)
			}
			defer f.Close()
			opt.OrderTrace = f
		}
		if len(spec.Alerts.Webhooks) > 0 {
			log.Info("the agent file's alerts are for standalone runs: the fleet file's alerts apply")
		}
		return wire.RunSupervised(ctx, spec, opt)
	}
	alerts, stopAlerts, err := startAlerts(ctx, io, spec.Alerts.Config, spec.Name, log)
	if err != nil {
		return err
	}
	defer stopAlerts() // after the agent stopped: its last alerts are flushed
	if alerts != nil {
		opt.Audit = &alertAudit{next: opt.Audit, s: alerts, agent: spec.Name, fills: alerts.Wants(alert.Fill)}
	}
	r, err := wire.BuildContext(ctx, spec, opt)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := registerRemote(reg, r); err != nil {
		return err
	}

	if *metricsAddr != "" {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
		served := make(chan struct{})
		go func() {
			defer close(served)
			_ = srv.Serve(ln) // returns at Shutdown
		}()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			<-served
		}()
		fmt.Fprintf(human, "metrics on http://%s/metrics\n", ln.Addr())
	}

	header(human, r, opt, *duration, *events)
	runCtx := ctx
	if *duration > 0 && opt.Clock == wire.ClockWall {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if alerts != nil {
		wctx, stopWatch := context.WithCancel(context.Background())
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			watchAgentAlerts(wctx, alerts, r.Agent, opt.Clock == wire.ClockWall, 5*time.Second)
		}()
		defer func() { stopWatch(); <-watched }()
	}
	start := time.Now()
	runDone, statusDone := make(chan struct{}), make(chan error, 1)
	go func() { statusDone <- r.KeepStatusFile(runDone) }() // for pitboss status; ends after Run
	err = r.Agent.Run(runCtx)
	close(runDone)
	if serr := <-statusDone; serr != nil {
		fmt.Fprintf(io.stderr, "pitboss run: status file not written: %v\n", serr)
	}
	summary(human, r, time.Since(start))
	if s := r.Agent.Status(); err == nil && s.Failed {
		fmt.Fprintf(io.stderr, "pitboss run: the strategy failed (see above); it places no orders until the failure is cleared:\n"+
			"  fix the strategy, then: pitboss run --clear-failure %s\n", path)
		return &exitError{code: 1}
	}
	return err
}

// header prints what is about to run.
func header(w io.Writer, r *wire.Runnable, opt wire.Options, d time.Duration, events uint64) {
	var stop []string
	if d > 0 {
		stop = append(stop, "after "+d.String())
	}
	if events > 0 {
		stop = append(stop, fmt.Sprintf("after %d events", events))
	}
	stop = append(stop, "on Ctrl-C")
	if r.Remote != nil {
		remoteHeader(w, r, strings.Join(stop, " or "))
		return
	}
	mode := "DRY RUN: orders go to a paper account, nothing leaves this process"
	if !r.DryRun {
		mode = "LIVE on the embedded venue (in-process engine; no real money)"
	}
	fmt.Fprintf(w, "pitboss run: agent %s, %s\n", r.Spec.Name, mode)
	fmt.Fprintf(w, "  wallet %s (paper address of %s), strategy %s\n", r.Wallet, r.Spec.Wallet, r.Spec.Strategy.File)
	for _, b := range r.Bindings {
		fmt.Fprintf(w, "  market %s: %q (tick %s, min size %s, fee %d bps)\n", b.Name, b.Info.Question, b.Info.TickSize, b.Info.MinSize, b.Info.FeeBps)
	}
	clock := "wall clock"
	if opt.Clock == wire.ClockSim {
		clock = "simulated clock (as fast as possible)"
	}
	fmt.Fprintf(w, "  embedded market, %s, seed %d; state in %s; stops %s\n", clock, opt.Seed, r.StateDir, strings.Join(stop, " or "))
	stateLine(w, r)
}

// stateLine says what the run continues from: nothing, an earlier run's state
// (what carries over, and how to start over), or a fresh start.
func stateLine(w io.Writer, r *wire.Runnable) {
	cp := r.Previous
	switch {
	case r.SetAside != "":
		fmt.Fprintf(w, "  fresh start: the previous state is kept as %s\n", r.SetAside)
	case cp == nil:
		fmt.Fprintf(w, "  first run with this state directory\n")
	default:
		what := "positions, open orders, the kill switch"
		if r.DryRun {
			what = "the paper account, " + what
		}
		var notes []string
		if cp.Time > 0 {
			notes = append(notes, "last event "+time.UnixMilli(cp.Time).UTC().Format(time.RFC3339))
		}
		if cp.Failed != "" {
			first, _, _ := strings.Cut(cp.Failed, "\n")
			notes = append(notes, "STRATEGY FAILED: "+first)
		}
		if cp.Paused {
			notes = append(notes, "paused")
		}
		note := ""
		if len(notes) > 0 {
			note = " (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintf(w, "  continuing after run %d%s: %s carry over (--fresh starts over)\n", cp.Runs, note, what)
	}
}

// summary prints the final figures.
func summary(w io.Writer, r *wire.Runnable, took time.Duration) {
	s := r.Agent.Status()
	c := s.Counts
	fmt.Fprintf(w, "\nsummary: agent %s (%s), run %d, %s\n", s.Agent, map[bool]string{true: "dry run", false: "live"}[s.DryRun], s.Runs, took.Round(time.Millisecond))
	if s.Time > 0 {
		fmt.Fprintf(w, "  last event at %s (event time)\n", time.UnixMilli(s.Time).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "  events %d, intents %d, denials %d, orders %d, cancels %d, rejects %d, fills %d\n",
		c.Events, c.Intents, c.Denials, c.Orders, c.Cancels, c.Rejects, c.Fills)
	fmt.Fprintf(w, "  equity %s, pnl %s (realized %s, unrealized %s, fees %s), balance %s\n",
		s.Equity, s.PnL, s.Realized, s.Unrealized, s.Fees, s.Balance)
	names := map[market.ConditionID]string{}
	for _, b := range r.Bindings {
		names[b.Info.Condition] = b.Name
	}
	for _, p := range s.Positions {
		if p.Size == 0 && p.Realized == 0 {
			continue
		}
		where := names[p.Market]
		if where == "" {
			where = "token " + string(p.Token)
		}
		fmt.Fprintf(w, "  position %s %s: %s @%s, mark %s, realized %s, unrealized %s\n",
			where, p.Outcome, p.Size, p.AvgPrice, p.Mark, p.Realized, p.Unrealized)
	}
	state, failure := string(s.State), ""
	switch {
	case s.Halted:
		state += "; kill switch tripped: " + s.Reason + ` (it stays tripped across restarts; to clear it: pitboss run --resume-after-kill "REASON" …)`
	case s.Failed:
		state += "; STRATEGY FAILED (it stays failed across restarts; after fixing the strategy: pitboss run --clear-failure …)"
		failure = "    " + strings.ReplaceAll(s.Reason, "\n", "\n    ") + "\n"
	case s.Reason != "":
		state += " (" + s.Reason + ")"
	}
	fmt.Fprintf(w, "  state %s; open orders %d; checkpoint in %s/%s\n%s", state, s.OpenOrders, r.StateDir, agent.CheckpointFile, failure)
}

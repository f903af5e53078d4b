package backtest

import (
	"bytes"
	"context"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

func loadAgent(tb testing.TB, path string) *agents.Spec {
	tb.Helper()
	spec, err := agents.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return spec
}

// busyFlow is a livelier market than the sim's defaults: the maker requotes every
// 100 ms and noise traders arrive every 250 ms (about 15 events a second), closer
// to an active market's feed than the quiet default (about 1.3 a second).
func busyFlow() sim.Params {
	return sim.Params{MakerRefresh: 100 * time.Millisecond, NoiseEvery: 250 * time.Millisecond}
}

func synthTapeWith(tb testing.TB, cfg sim.TapeConfig) *TapeSource {
	return simTape(tb, "synthetic", cfg, func(src Source) Source { return src })
}

// simTape writes the flow of cfg, as shape makes it, as a tape named name in memory.
func simTape(tb testing.TB, name string, cfg sim.TapeConfig, shape func(Source) Source) *TapeSource {
	tb.Helper()
	src, err := NewSimSource(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := WriteTape(context.Background(), &buf, shape(src), tape.WriterOptions{}); err != nil {
		tb.Fatal(err)
	}
	ts, err := TapeBytes(name, buf.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	return ts
}

// cpuTime returns the CPU time (user and system) the process has used so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBacktest replays a synthetic tape through the quoter example: tape
// decoding, the agent loop, the strategy, the guards, the reconciler and the paper
// venue, and the report's collector. Besides events/s (wall time) it reports
// cpu-ns/event, the process's CPU time per event: on a shared machine it moves far
// less with the neighbours' load than wall time (with -cpu 1 it is the one core's
// work, the garbage collector's included).
//
// Its reference is the decode-only pass over the same tape (the Source's Events
// with an emit that does nothing: zstd and record decoding, what any consumer of
// the tape pays), run in every iteration right before the backtest, so that both
// see the same machine at the same moment (readPasses of it, so that it is not a
// blink the neighbours' load can distort). read-events/s is that pass's rate and
// read-ratio the backtest's events/s divided by it (1 would mean the pipeline
// costs nothing beyond reading its input); read-cpu-ratio is the same from CPU
// times, which gives the backtest no credit for decoding on another core.
func BenchmarkBacktest(b *testing.B) {
	// One market (every event reaches the agent), an active one.
	benchBacktest(b, synthTapeWith(b, busyTape()))
}

// busyTape is BenchmarkBacktest's flow: two hours of one busy synthetic market.
func busyTape() sim.TapeConfig {
	return sim.TapeConfig{Seed: 7, Duration: 2 * time.Hour,
		Markets: sim.SyntheticMarkets(1, sim.DefaultTapeStart/1000), Sim: sim.Config{Defaults: busyFlow()}}
}

// BenchmarkBacktestServiceTape is BenchmarkBacktest over the same flow as the
// service's market channel reports it, so as a recording made by pitboss record
// holds it: after every trade the channel sends the book of each of the market's
// tokens in full (docs/design/0172; /work/shared/spec wire dialect §5.3, "book — on
// subscribe and whenever a trade changes the book", and sandbox/server/ws, which
// sends them after the batch's prints and price changes). The synthetic tape of
// BenchmarkBacktest has only the prints and price changes. Same metrics, same
// reference (decode-only over this tape).
func BenchmarkBacktestServiceTape(b *testing.B) {
	benchBacktest(b, serviceTape(b, busyTape()))
}

// serviceTape is the flow of cfg with a book snapshot of both of a market's tokens
// after each group of events that holds a trade (a group: consecutive events of one
// market at one time, what one command of the sim makes), written as a tape.
func serviceTape(tb testing.TB, cfg sim.TapeConfig) *TapeSource {
	return simTape(tb, "synthetic, as the service reports it", cfg, func(src Source) Source { return withBookAfterTrades{src} })
}

// withBookAfterTrades is a Source that adds, after each group of events with a
// trade, an EventBook of each token of the group's market, read from the books its
// events built (see serviceTape).
type withBookAfterTrades struct{ Source }

func (s withBookAfterTrades) Events(ctx context.Context, emit func(ev *market.Event) bool) error {
	var books market.FoldedBooks
	var traded market.ConditionID // the market of the current group, when it traded
	var at int64                  // the current group's time
	var seq uint64
	flush := func() bool {
		ok := books.Snapshots(at, func(ev *market.Event) bool {
			if ev.Market != traded {
				return true
			}
			seq++
			ev.Seq = seq
			return emit(ev)
		})
		traded = ""
		return ok
	}
	return s.Source.Events(ctx, func(ev *market.Event) bool {
		if traded != "" && (ev.Time != at || ev.Market != traded) && !flush() {
			return false
		}
		books.Apply(ev)
		at = ev.Time
		if ev.Kind == market.EventLastTrade {
			traded = ev.Market
		}
		seq++
		ev.Seq = seq
		return emit(ev)
	})
}

// benchBacktest replays src through the quoter example: see BenchmarkBacktest.
func benchBacktest(b *testing.B, src *TapeSource) {
	const readPasses = 4
	spec := loadAgent(b, "../../agents/examples/quoter/agent.yaml")
	b.ReportAllocs()
	var events, read int64
	var wall, cpu, readWall, readCPU time.Duration
	for b.Loop() {
		b.StopTimer() // the reference is not the benchmark's time, bytes or allocations
		t0, c0 := time.Now(), cpuTime(b)
		for range readPasses {
			if err := src.Events(context.Background(), func(*market.Event) bool { read++; return true }); err != nil {
				b.Fatal(err)
			}
		}
		t1, c1 := time.Now(), cpuTime(b)
		b.StartTimer()
		res, err := Run(context.Background(), Config{Spec: spec, Source: src})
		if err != nil {
			b.Fatal(err)
		}
		t2, c2 := time.Now(), cpuTime(b)
		events += res.Report.Run.Events
		readWall, readCPU = readWall+t1.Sub(t0), readCPU+c1-c0
		wall, cpu = wall+t2.Sub(t1), cpu+c2-c1
	}
	rate, readRate := float64(events)/wall.Seconds(), float64(read)/readWall.Seconds()
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "cpu-ns/event")
	b.ReportMetric(readRate, "read-events/s")
	b.ReportMetric(rate/readRate, "read-ratio")
	b.ReportMetric((float64(readCPU)/float64(read))/(float64(cpu)/float64(events)), "read-cpu-ratio")
}

// BenchmarkSweep runs a 16-point sweep (the quoter over the bundled sample, 4 × 4
// values of half_spread and size) once one run at a time and once on GOMAXPROCS
// workers, in every iteration, and reports parallel-ratio, the parallel sweep's
// wall time divided by the serial one's (the same runs, measured in the same
// iteration), and its inverse, speedup; cpu-ratio is the parallel sweep's CPU time
// over the serial one's (1: running points at once costs no extra work, so on N
// idle cores the wall time falls N-fold; on a machine other work keeps busy, the
// wall-time ratio shows what was left over). Run it with -cpu N for N cores. Both
// sweeps run with the collector's target the CLI gives batch runs (BatchGC, unless
// GOGC is set: GOGC=100 measures the default's). gcs/sweep is the collector's
// cycles per sweep (both kinds): what a point allocates decides how often the
// collector marks, and while it marks with no idle core every pointer write pays
// its barrier (design 0174, 0175).
func BenchmarkSweep(b *testing.B) {
	defer BatchGC()() // as pitboss backtest and pitboss worker run sweeps
	spec, st, axes := sweepOf(b, quoterAgent, "half_spread=0.01:0.04:0.01", "size=5:20:5")
	src := sample(b)
	workers := runtime.GOMAXPROCS(0)
	var serial, parallel, serialCPU, parallelCPU time.Duration
	var sweeps int
	gc0 := gcCycles()
	for b.Loop() {
		for _, w := range []int{1, workers} {
			t0, c0 := time.Now(), cpuTime(b)
			res, err := Sweep(context.Background(), SweepConfig{Base: Config{Spec: spec, Source: src, Strategy: st}, Axes: axes, Workers: w})
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Rows) != 16 || res.Rows[0].Err != "" {
				b.Fatalf("%d rows, first %q", len(res.Rows), res.Rows[0].Err)
			}
			wall, cpu := time.Since(t0), cpuTime(b)-c0
			sweeps++
			if w == 1 {
				serial, serialCPU = serial+wall, serialCPU+cpu
			} else {
				parallel, parallelCPU = parallel+wall, parallelCPU+cpu
			}
		}
	}
	b.ReportMetric(parallel.Seconds()/serial.Seconds(), "parallel-ratio")
	b.ReportMetric(serial.Seconds()/parallel.Seconds(), "speedup")
	b.ReportMetric(parallelCPU.Seconds()/serialCPU.Seconds(), "cpu-ratio")
	b.ReportMetric(float64(workers), "workers")
	b.ReportMetric(float64(gcCycles()-gc0)/float64(sweeps), "gcs/sweep")
}

// gcCycles returns the collector's cycles so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

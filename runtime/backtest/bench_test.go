package backtest

import (
	"bytes"
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/agents"
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
	tb.Helper()
	src, err := NewSimSource(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := WriteTape(context.Background(), &buf, src, tape.WriterOptions{}); err != nil {
		tb.Fatal(err)
	}
	ts, err := TapeBytes("synthetic", buf.Bytes())
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
func BenchmarkBacktest(b *testing.B) {
	spec := loadAgent(b, "../../agents/examples/quoter/agent.yaml")
	// One market (every event reaches the agent), an active one.
	src := synthTapeWith(b, sim.TapeConfig{Seed: 7, Duration: 2 * time.Hour,
		Markets: sim.SyntheticMarkets(1, sim.DefaultTapeStart/1000), Sim: sim.Config{Defaults: busyFlow()}})
	b.ReportAllocs()
	var events int64
	cpu0 := cpuTime(b)
	for b.Loop() {
		res, err := Run(context.Background(), Config{Spec: spec, Source: src})
		if err != nil {
			b.Fatal(err)
		}
		events += res.Report.Run.Events
	}
	cpu := cpuTime(b) - cpu0
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "cpu-ns/event")
}

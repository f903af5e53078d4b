package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// BenchmarkStep measures one sim action (a maker requote, a noise or informed
// arrival, a news jump…) together with applying its commands to an in-process
// engine: the sim's cost inside a backtest. Four default markets, after ten
// simulated minutes of warm-up. Reports commands/s and engine events/s.
func BenchmarkStep(b *testing.B) {
	e := newEngine(b, 4)
	s := New(Config{Start: t0}, 1)
	s.AdvanceTo(t0+600_000, e, nil)
	var cmds []exchange.Command
	var nCmds, nEvents int
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		due, _ := s.Next()
		cmds, _ = s.Step(due, e, cmds[:0])
		for i := range cmds {
			evs, _ := e.Apply(&cmds[i])
			s.Observe(evs)
			nEvents += len(evs)
		}
		nCmds += len(cmds)
	}
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(nCmds)/sec, "commands/s")
	b.ReportMetric(float64(nEvents)/sec, "events/s")
}

var errEnough = errors.New("enough")

// BenchmarkTape measures the synthetic tape: one op is one public market event
// (market.Event, what a backtest feeds an agent), sim, engine and conversion
// included. Reports market events/s and the engine commands/s behind them.
func BenchmarkTape(b *testing.B) {
	var nCmds int
	cfg := TapeConfig{Seed: 1, Duration: 10_000 * time.Hour, Raw: func(*exchange.Command, []exchange.Event) { nCmds++ }}
	b.ReportAllocs()
	n := 0
	start := time.Now()
	_, err := RunTape(context.Background(), cfg, func(*market.Event) error {
		if n++; n >= b.N {
			return errEnough
		}
		return nil
	})
	if !errors.Is(err, errEnough) {
		b.Fatal(err)
	}
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(n)/sec, "events/s")
	b.ReportMetric(float64(nCmds)/sec, "commands/s")
}

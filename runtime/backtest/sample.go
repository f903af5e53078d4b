package backtest

import (
	"context"
	"io"
	"time"

	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// SamplePath is where the bundled sample recording lives, relative to the
// repository's root: four hours of synthetic flow on two markets, the second of which
// resolves after three hours. `pitboss backtest --data` on it needs no network.
const SamplePath = "agents/examples/testdata/sample.tape"

// SampleConfig is the synthetic flow the sample recording is made of (seed 8, from
// sim.DefaultTapeStart).
func SampleConfig() sim.TapeConfig {
	start := int64(sim.DefaultTapeStart)
	mkts := sim.SyntheticMarkets(2, start/1000)
	return sim.TapeConfig{
		Seed: 8, Start: start, Duration: 4 * time.Hour, Markets: mkts,
		Sim: sim.Config{Markets: []sim.MarketConfig{
			{Market: mkts[0].Market},
			{Market: mkts[1].Market, Params: sim.Params{ResolveAt: start + 3*time.Hour.Milliseconds()}},
		}},
	}
}

// WriteSample writes the sample recording to w. The same build always writes the
// same bytes (a test checks the bundled file against it).
func WriteSample(ctx context.Context, w io.Writer) (tape.WriterStats, error) {
	src, err := NewSimSource(SampleConfig())
	if err != nil {
		return tape.WriterStats{}, err
	}
	return WriteTape(ctx, w, src, tape.WriterOptions{})
}

package backtest

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/runtime/wire"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// TestInlineFeedAndRepeatedPassesGiveTheSameResults runs every example over the
// sample, and the quoter over a simulated flow with latency, once with the events
// handed over through the agent's queue (a dry run's way) and every pass walked in
// full, and once as a backtest runs (inline, passes that repeat the last one
// repeated): the reports, the fills and the debug log of every decision, order
// and fill must be the same, byte for byte.
func TestInlineFeedAndRepeatedPassesGiveTheSameResults(t *testing.T) {
	simSrc, err := NewSimSource(sim.TapeConfig{Seed: 3, Duration: time.Hour, Markets: sim.SyntheticMarkets(2, sim.DefaultTapeStart/1000)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []string{"quoter", "meanrev", "momentum", "arb"} {
		for _, data := range []struct {
			name    string
			src     Source
			latency time.Duration
		}{{"sample", sample(t), 0}, {"sim", simSrc, 300 * time.Millisecond}} {
			if data.name == "sim" && ex != "quoter" {
				continue
			}
			t.Run(ex+"/"+data.name, func(t *testing.T) {
				var out [2][4][]byte
				for i, slow := range []bool{true, false} {
					var log bytes.Buffer
					lg, err := wire.NewLogger(&log, wire.LogText, zapcore.DebugLevel, true)
					if err != nil {
						t.Fatal(err)
					}
					cfg := Config{Spec: loadAgent(t, filepath.Join("..", "..", "agents", "examples", ex, "agent.yaml")),
						Source: data.src, Latency: data.latency, Logger: lg, viaQueue: slow, fullPasses: slow}
					r := render(t, run(t, cfg))
					lg.Sync()
					out[i] = [4][]byte{r[0], r[1], r[2], log.Bytes()}
				}
				if len(out[0][3]) == 0 {
					t.Fatal("nothing logged")
				}
				for k, what := range []string{"json report", "html report", "fills", "log"} {
					if !bytes.Equal(out[0][k], out[1][k]) {
						t.Errorf("the %s differs between the slow and the fast paths (%d and %d bytes)", what, len(out[0][k]), len(out[1][k]))
					}
				}
			})
		}
	}
}

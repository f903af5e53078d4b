package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/runtime/backtest"
)

// TestEveryExampleFinishesABacktestOfTheSample runs each example agent through a
// backtest of its bundled sample recording (the strategy-input examples, which read
// feeds, signals and a neg-risk event, replay the inputs sample; the others the
// market sample) — the agent loop, guards, reconciler,
// flattening and paper venue of a dry run — and requires it to finish, well within
// a deadline (the meanrev example used to livelock there: its kill switch flattened
// into a bid the paper venue had already taken).
func TestEveryExampleFinishesABacktestOfTheSample(t *testing.T) {
	root := filepath.Join("..", "..")
	inputExamples := map[string]bool{"eventarb": true, "underlying": true}
	dirs, err := os.ReadDir(filepath.Join(root, "agents", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		file := filepath.Join(root, "agents", "examples", d.Name(), "agent.yaml")
		if _, err := os.Stat(file); err != nil {
			continue
		}
		n++
		t.Run(d.Name(), func(t *testing.T) {
			spec, err := agents.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			sample := backtest.SamplePath
			if inputExamples[d.Name()] {
				sample = backtest.InputsSamplePath
			}
			src, err := backtest.OpenTape(filepath.Join(root, sample))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			done := make(chan error, 1)
			var res *backtest.Result
			go func() {
				var err error
				res, err = backtest.Run(ctx, backtest.Config{Spec: spec, Source: src})
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(3 * time.Minute):
				t.Fatal("the backtest did not finish, nor stop when its context ended")
			}
			if res.Report.Run.Events == 0 || res.Status.Counts.Events == 0 {
				t.Fatalf("no event replayed: %+v", res.Report.Run)
			}
			if res.Status.State == "failed" {
				t.Fatalf("the agent failed: %s", res.Status.Reason)
			}
		})
	}
	if n != 6 {
		t.Fatalf("%d example agents, want the six (arb, eventarb, meanrev, momentum, quoter, underlying)", n)
	}
}

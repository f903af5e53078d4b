package backtest

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

const inputsAgent = "testdata/inputs/agent.yaml"

// TestRecordedRunWithFeedsAndSignalsBacktestsToItsFills runs an agent that reads a
// feed (the embedded venue's synthetic price process) and a signal (pushed from
// outside while it runs, at moments the run does not control) as `pitboss run
// --clock sim --record` does, then backtests the recording: the backtest makes the
// dry run's fills — same orders, trades, prices, sizes, fees and times — and two
// backtests of it write byte-identical reports.
func TestRecordedRunWithFeedsAndSignalsBacktestsToItsFills(t *testing.T) {
	spec := loadAgent(t, inputsAgent)
	rec := filepath.Join(t.TempDir(), "run.tape")
	var dry fills
	r, err := wire.Build(spec, wire.Options{Clock: wire.ClockSim, Seed: 3, Duration: 40 * time.Minute, StateDir: t.TempDir(),
		RuntimeDir: t.TempDir(), Audit: &dry, Record: rec, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Signals == nil {
		t.Fatal("no signal hub")
	}
	// The outside world: a model value now and then, from its own goroutine.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			if err := r.Signals.Push("model", 0.3+0.05*float64(i%8)); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
		}
	}()
	if err := r.Agent.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	r.Close()

	src, err := OpenTape(rec)
	if err != nil {
		t.Fatal(err)
	}
	var feeds, signals int
	if err := src.Events(context.Background(), func(ev *market.Event) bool {
		switch ev.Kind {
		case market.EventFeed:
			feeds++
		case market.EventSignal:
			signals++
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if feeds < 2000 || signals < 3 {
		t.Fatalf("the recording holds %d feed prices and %d signal values: too few to show anything", feeds, signals)
	}
	rep := run(t, Config{Spec: spec, Source: src})
	sameFills(t, dry.list, rep)
	again := run(t, Config{Spec: spec, Source: src})
	a, b := render(t, rep), render(t, again)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("two backtests of the recording wrote different reports (part %d)", i)
		}
	}
	t.Logf("%d identical fills; %d feed prices and %d signal values recorded", len(dry.list), feeds, signals)
}

// TestInputExamplesBacktestOnTheBundledSample: the underlying and eventarb
// examples load and check (feeds bound, slots, parameters), and backtest on the
// bundled recording with inputs making fills; eventarb's legs go out together
// (every candidate gets a fill) and underlying quotes only once its feed has a
// price (none of its fills before the first price).
func TestInputExamplesBacktestOnTheBundledSample(t *testing.T) {
	src, err := OpenTape(filepath.Join("..", "..", InputsSamplePath))
	if err != nil {
		t.Fatal(err)
	}
	var firstPrice int64
	_ = src.Events(context.Background(), func(ev *market.Event) bool {
		if ev.Kind == market.EventFeed {
			firstPrice = ev.Time
			return false
		}
		return true
	})
	for _, name := range []string{"underlying", "eventarb"} {
		spec := loadAgent(t, filepath.Join("..", "..", "agents", "examples", name, "agent.yaml"))
		if _, err := spec.LoadStrategy(); err != nil {
			t.Fatal(err)
		}
		rep := run(t, Config{Spec: spec, Source: src})
		if len(rep.Fills) < 5 {
			t.Fatalf("%s made %d fills on the sample", name, len(rep.Fills))
		}
		tokens := map[string]bool{}
		for _, f := range rep.Fills {
			tokens[string(f.Market)] = true
			if name == "underlying" && f.Time < firstPrice {
				t.Fatalf("underlying filled at %d, before the feed's first price at %d", f.Time, firstPrice)
			}
		}
		if name == "eventarb" && len(tokens) != 3 {
			t.Fatalf("eventarb filled in %d of the 3 candidates", len(tokens))
		}
		t.Logf("%s: %d fills, pnl %v", name, len(rep.Fills), rep.Summary.PnL)
	}
}

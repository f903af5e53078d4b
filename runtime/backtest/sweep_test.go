package backtest

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/strategy"
)

// sweepOf loads the agent file at path and its strategy, and parses the sweep args.
func sweepOf(tb testing.TB, path string, args ...string) (*agents.Spec, *strategy.Strategy, []Axis) {
	tb.Helper()
	spec := loadAgent(tb, path)
	st, err := spec.LoadStrategy()
	if err != nil {
		tb.Fatal(err)
	}
	axes, err := ParseSweeps(st, args)
	if err != nil {
		tb.Fatal(err)
	}
	return spec, st, axes
}

func TestSweepRunsTheGridSortedByTheMetric(t *testing.T) {
	spec, st, axes := sweepOf(t, quoterAgent, "half_spread=0.01:0.03:0.01", "size=5:10:5")
	src := sample(t)
	first, _, _ := src.Span()
	var out [2][]byte
	for i, workers := range []int{1, 3} {
		calls := 0
		base := Config{Spec: spec, Source: src, Strategy: st, To: first + 3_600_000} // an hour keeps -race quick
		res, err := Sweep(context.Background(), SweepConfig{Base: base, Axes: axes,
			Metric: MetricSharpe, Workers: workers, Done: func(done, total int) { calls++ }})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 6 || calls != 6 {
			t.Fatalf("%d rows, %d progress calls, want 6", len(res.Rows), calls)
		}
		seen := map[int]bool{}
		for j, r := range res.Rows {
			if r.Err != "" {
				t.Fatalf("row %d failed: %s", j, r.Err)
			}
			seen[r.Index] = true
			if j > 0 {
				a, b := MetricSharpe.Value(&res.Rows[j-1].Summary), MetricSharpe.Value(&r.Summary)
				if !math.IsNaN(b) && (math.IsNaN(a) || a < b) {
					t.Fatalf("row %d (%v) ranks below row %d (%v)", j-1, a, j, b)
				}
			}
		}
		if len(seen) != 6 {
			t.Fatalf("grid points %v", seen)
		}
		// The point's values are the swept parameters, in axis order.
		if p := res.Rows[0].Point; len(p) != 2 || p[0].Name != "half_spread" || p[1].Name != "size" {
			t.Fatalf("point %v", p)
		}
		if out[i], err = res.MarshalIndent(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Fatal("one worker and three give different tables")
	}
}

func TestSweepPointEqualsASingleRun(t *testing.T) {
	spec, src := loadAgent(t, quoterAgent), sample(t)
	st, _ := spec.LoadStrategy()
	axes, err := ParseSweeps(st, []string{"half_spread=0.03:0.03:0.01"})
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := src.Span()
	to := first + 3_600_000
	res, err := Sweep(context.Background(), SweepConfig{Base: Config{Spec: spec, Source: src, To: to}, Axes: axes})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := st.WithParams(map[string]string{"half_spread": "0.03"})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, Config{Spec: spec, Source: src, Strategy: alone, To: to})
	a, _ := json.Marshal(res.Rows[0].Summary)
	b, _ := json.Marshal(r.Summary)
	if !bytes.Equal(a, b) {
		t.Fatalf("sweep row %s\nsingle run %s", a, b)
	}
}

func TestWalkForwardFitsOnePeriodAndTestsTheNext(t *testing.T) {
	spec, src := loadAgent(t, momentumAgent), sample(t)
	st, _ := spec.LoadStrategy()
	axes, err := ParseSweeps(st, []string{"size=10:30:10"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Sweep(context.Background(), SweepConfig{Base: Config{Spec: spec, Source: src}, Axes: axes, Folds: 2, Metric: MetricPnL})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2*(1+3) || res.Folds != 2 {
		t.Fatalf("%d rows, want 8", len(res.Rows))
	}
	var oos float64
	for fold := 0; fold < 2; fold++ {
		test, best := res.Rows[fold*4], res.Rows[fold*4+1]
		if !test.Test || test.Fold != fold+1 || best.Test {
			t.Fatalf("fold %d rows %+v %+v", fold+1, test, best)
		}
		if test.Point.String() != best.Point.String() {
			t.Errorf("fold %d tests %s, but fitted %s best", fold+1, test.Point, best.Point)
		}
		if test.From != best.To+1 || test.To <= test.From {
			t.Errorf("fold %d: fit [%d, %d], test [%d, %d]", fold+1, best.From, best.To, test.From, test.To)
		}
		oos += float64(test.Summary.PnL)
	}
	if float64(res.OutOfSample) != oos {
		t.Errorf("out-of-sample %s, rows sum to %v", res.OutOfSample, oos)
	}
	var txt bytes.Buffer
	if err := res.WriteText(&txt, 0); err != nil {
		t.Fatal(err)
	}
	if s := txt.String(); !strings.Contains(s, "fold 2") || !strings.Contains(s, "test") {
		t.Errorf("table:\n%s", s)
	}
}

func TestSweepArgumentsAreChecked(t *testing.T) {
	st, err := loadAgent(t, quoterAgent).LoadStrategy()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown parameter", []string{"nope=1:2:1"}, "no parameter"},
		{"twice", []string{"size=5:10:5", "size=1:2:1"}, "swept twice"},
		{"outside the range", []string{"half_spread=0.001:0.01:0.001"}, "half_spread"},
		{"too many points", []string{"size=1:1000:1", "max_inventory=1:100:1"}, "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseSweeps(st, tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := ParseMetric("pnl"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMetric("luck"); err == nil {
		t.Fatal("unknown metric accepted")
	}
}

func TestSweepStopsWithItsContext(t *testing.T) {
	spec, src := loadAgent(t, quoterAgent), sample(t)
	st, _ := spec.LoadStrategy()
	axes, _ := ParseSweeps(st, []string{"size=1:20:1"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Sweep(ctx, SweepConfig{Base: Config{Spec: spec, Source: src}, Axes: axes, Workers: 1}); err == nil {
		t.Fatal("a cancelled sweep returned a table")
	}
}

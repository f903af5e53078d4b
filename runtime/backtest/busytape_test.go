package backtest

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

// The tapes of BenchmarkBacktest and BenchmarkBacktestServiceTape as files, for
// measuring a whole pitboss backtest over them (docs/benchmarks.md):
//
//	go test ./runtime/backtest -run TestBenchmarkTapesAsFiles -args -busy-tape $PWD/busy.tape -service-tape $PWD/service.tape
//
// (the test runs in its package directory: give absolute paths)
var (
	busyTapeOut    = flag.String("busy-tape", "", "TestBenchmarkTapesAsFiles writes BenchmarkBacktest's tape to this file")
	serviceTapeOut = flag.String("service-tape", "", "TestBenchmarkTapesAsFiles writes BenchmarkBacktestServiceTape's tape to this file")
)

// TestBenchmarkTapesAsFiles writes the benchmarks' tapes to files (-busy-tape,
// -service-tape) and checks that each file replays, event for event, the flow the
// benchmark replays. Without the flags it checks the same on the flow's first ten
// minutes, written to a temporary directory (the whole flow takes half a minute
// under the race detector).
func TestBenchmarkTapesAsFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		out   string
		shape func(Source) Source
	}{
		{"busy", *busyTapeOut, func(src Source) Source { return src }},
		{"service", *serviceTapeOut, func(src Source) Source { return withBookAfterTrades{src} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, cfg, least := c.out, busyTape(), 50_000
			if path == "" {
				path = filepath.Join(t.TempDir(), c.name+".tape")
				cfg.Duration, least = 10*time.Minute, 5_000
			}
			src, err := NewSimSource(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := WriteTape(context.Background(), &buf, c.shape(src), tape.WriterOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			file, err := OpenTape(path)
			if err != nil {
				t.Fatal(err)
			}
			want := collect(t, c.shape(src))
			got := collect(t, file)
			if len(got) != len(want) || len(want) < least {
				t.Fatalf("%s: %d events, the benchmark's flow %d", path, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s: event %d is %+v, the benchmark's %+v", path, i, got[i], want[i])
				}
			}
			t.Logf("%s: %d events, %d bytes", path, len(got), buf.Len())
		})
	}
}

// collect returns src's events (copies: a source may reuse its event).
func collect(t *testing.T, src Source) []market.Event {
	t.Helper()
	var evs []market.Event
	err := src.Events(context.Background(), func(ev *market.Event) bool {
		e := *ev
		e.Changes = append([]market.LevelChange(nil), ev.Changes...)
		e.Bids = append([]market.Level(nil), ev.Bids...)
		e.Asks = append([]market.Level(nil), ev.Asks...)
		evs = append(evs, e)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

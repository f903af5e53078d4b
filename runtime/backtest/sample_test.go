package backtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

// TestBundledSampleIsReproducible checks that the bundled sample recording is what
// WriteSample makes (PITBOSS_UPDATE_GOLDEN=1 rewrites it), so it can always be
// regenerated from code.
func TestBundledSampleIsReproducible(t *testing.T) {
	var buf bytes.Buffer
	stats, err := WriteSample(context.Background(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", SamplePath)
	checkBundled(t, path, buf.Bytes(), stats)
	src, err := OpenTape(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := src.Summary(); len(s.Markets) != 2 || s.Records != stats.Records || s.Torn != nil {
		t.Fatalf("summary %+v", s)
	}
}

// TestBundledInputsSampleIsReproducible: the bundled recording with inputs is what
// WriteInputsSample makes (PITBOSS_UPDATE_GOLDEN=1 rewrites it); it holds the
// event's three markets with their neg-risk id and a price every second.
func TestBundledInputsSampleIsReproducible(t *testing.T) {
	var buf bytes.Buffer
	stats, err := WriteInputsSample(context.Background(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", InputsSamplePath)
	checkBundled(t, path, buf.Bytes(), stats)
	src, err := OpenTape(path)
	if err != nil {
		t.Fatal(err)
	}
	s := src.Summary()
	if len(s.Markets) != 3 || s.Records != stats.Records || s.Torn != nil {
		t.Fatalf("summary %+v", s)
	}
	for _, m := range s.Markets {
		if !m.NegRisk || m.NegRiskID != InputsSampleEvent {
			t.Fatalf("market %+v is not in the event", m)
		}
	}
	feeds := 0
	_ = src.Events(context.Background(), func(ev *market.Event) bool {
		if ev.Kind == market.EventFeed && ev.Name == "crypto:btcusdt" {
			feeds++
		}
		return true
	})
	if feeds != 7200 {
		t.Fatalf("%d prices, want one a second for 2 h", feeds)
	}
}

// checkBundled compares the bundled recording at path with what the code writes
// (PITBOSS_UPDATE_GOLDEN=1 rewrites it first).
func checkBundled(t *testing.T, path string, want []byte, stats tape.WriterStats) {
	t.Helper()
	if os.Getenv("PITBOSS_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d records, %d bytes (%d raw)", path, stats.Records, len(want), stats.RawBytes)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (PITBOSS_UPDATE_GOLDEN=1 writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what the code writes (PITBOSS_UPDATE_GOLDEN=1 rewrites it)", path)
	}
}

package backtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
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
	if os.Getenv("PITBOSS_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d records, %d bytes (%d raw)", path, stats.Records, buf.Len(), stats.RawBytes)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (PITBOSS_UPDATE_GOLDEN=1 writes it)", err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s differs from WriteSample's output (PITBOSS_UPDATE_GOLDEN=1 rewrites it)", path)
	}
	src, err := OpenTape(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := src.Summary(); len(s.Markets) != 2 || s.Records != stats.Records || s.Torn != nil {
		t.Fatalf("summary %+v", s)
	}
}

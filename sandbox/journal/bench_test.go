package journal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// benchRecord is a realistic command: a signed order is about 150 bytes in a compact
// binary encoding.
var benchRecord = func() []byte {
	b := make([]byte, 150)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}()

// BenchmarkAppendDurable: many goroutines (as the server's request handlers) each
// append a record and wait until it is durable; the default sync mode (fdatasync)
// on the benchmark's temporary directory. Reports records/s and the mean number of
// records per batch (per fdatasync).
func BenchmarkAppendDurable(b *testing.B) {
	for _, par := range []int{1, 8, 32, 128} {
		b.Run(fmt.Sprintf("waiters=%d", par*runtimeProcs()), func(b *testing.B) {
			j, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close(context.Background())
			before := j.Stats()
			b.ReportAllocs()
			b.SetParallelism(par)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					lsn, err := j.Append(benchRecord)
					if err == nil {
						err = j.WaitDurable(ctx, lsn)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			after := j.Stats()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			if n := after.Batches - before.Batches; n > 0 {
				b.ReportMetric(float64(after.Records-before.Records)/float64(n), "records/batch")
			}
		})
	}
}

// BenchmarkAppend: the engine goroutine's cost of Append alone (no waiting); the
// flusher writes and syncs in the background. Sustained beyond the disk's bandwidth,
// Append is throttled by the pending-bytes bound, which this measures too.
func BenchmarkAppend(b *testing.B) {
	j, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	var lsn uint64
	for i := 0; i < b.N; i++ {
		if lsn, err = j.Append(benchRecord); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if err := j.WaitDurable(context.Background(), lsn); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReplay: recovery speed, records read back (CRC-checked) per second.
func BenchmarkReplay(b *testing.B) {
	dir := b.TempDir()
	j, err := Open(dir, WithSync(SyncNone))
	if err != nil {
		b.Fatal(err)
	}
	const n = 200_000
	for i := 0; i < n; i++ {
		j.Append(benchRecord)
	}
	j.Close(context.Background())
	j, err = Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		count := 0
		if err := j.Replay(0, func(uint64, []byte) error { count++; return nil }); err != nil || count != n {
			b.Fatalf("replayed %d: %v", count, err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkSyncLatency measures the disk under the benchmark's temporary directory:
// an appending write of the given size followed by fdatasync, as the flusher does.
// Reports the median and 99th percentile.
func BenchmarkSyncLatency(b *testing.B) {
	for _, size := range []int{170, 4 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "probe"), os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, size)
			lat := make([]time.Duration, 0, b.N)
			var off int64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := f.WriteAt(buf, off); err != nil {
					b.Fatal(err)
				}
				if err := datasync(f); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				off += int64(size)
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

package host_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// BenchmarkSubmit measures Submit from 32 parallel goroutines (b.SetParallelism(16)
// on 2 CPUs): each applies a resting order, journaled, and waits for durability. It
// reports commands/s and the journal's records per sync; "sync=none" isolates the
// host from the disk.
func BenchmarkSubmit(b *testing.B) {
	for _, mode := range []struct {
		name string
		sync journal.SyncMode
	}{{"sync=data", journal.SyncData}, {"sync=none", journal.SyncNone}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h, err := host.Open(ctx, host.Config{Dir: b.TempDir(), Genesis: genesis, Sync: mode.sync, SnapshotEvery: -1, ExpireEvery: -1})
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- h.Run(ctx) }()
			defer func() { cancel(); <-done }()
			var funded []exchange.Command
			for i := range 64 {
				funded = append(funded, deposit(market.Address{1, byte(i)}, 1e12))
			}
			if _, err := h.SubmitBatch(ctx, funded); err != nil {
				b.Fatal(err)
			}
			var n, g atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				owner := market.Address{1, byte(g.Add(1) % 64)}
				for pb.Next() {
					i := n.Add(1)
					cmd := place(fmt.Sprintf("b%d", i), owner, market.Buy, market.Micros(10_000*(1+i%40)), 5*market.One)
					if res, err := h.Submit(ctx, cmd); err != nil || res.Err != nil {
						b.Errorf("submit: %v %v", err, res.Err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commands/s")
			if st := h.Stats().Journal; st.Batches > 0 {
				b.ReportMetric(float64(st.Records)/float64(st.Batches), "records/sync")
			}
		})
	}
}

package host_test

import (
	"context"
	"errors"
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

// BenchmarkRollback measures the cost of undoing a failed transaction (a reload of
// the newest snapshot and the records after it, docs/design/0131) for a store of
// 64 funded accounts and `orders` resting orders, all still in the journal (no
// snapshot yet, the worst case up to SnapshotEvery records).
func BenchmarkRollback(b *testing.B) {
	for _, orders := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("records=%d", orders), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h, err := host.Open(ctx, host.Config{Dir: b.TempDir(), Genesis: genesis, Sync: journal.SyncNone, SnapshotEvery: -1, ExpireEvery: -1})
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- h.Run(ctx) }()
			defer func() { cancel(); <-done }()
			var cmds []exchange.Command
			for i := range 64 {
				cmds = append(cmds, deposit(market.Address{1, byte(i)}, 1e12))
			}
			for i := range orders {
				cmds = append(cmds, place(fmt.Sprintf("r%d", i), market.Address{1, byte(i % 64)}, market.Buy, market.Micros(10_000*(1+i%40)), 5*market.One))
			}
			if _, err := h.SubmitBatch(ctx, cmds); err != nil {
				b.Fatal(err)
			}
			failed := errors.New("fail")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := h.Exec(ctx, func(tx *host.Tx) error {
					tx.Apply(deposit(market.Address{2}, market.One))
					return failed
				})
				if !errors.Is(err, failed) {
					b.Fatal(err)
				}
			}
		})
	}
}

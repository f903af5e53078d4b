package ws_test

import (
	"context"
	"fmt"
	"io"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

// BenchmarkFanout: one book update (an order resting on a new level) delivered to
// 100 subscribed WebSocket connections over loopback. Each iteration places one
// order and waits until all 100 clients have read the price_change frame; the
// latency of an iteration is from the command's submission to the last client's
// read (engine, host dispatch, hub encoding once, 100 queues, 100 writers, 100
// client readers, all on the same machine). Reports p50-ns and p99-ns of that, and
// cpu-ns/op: the whole process's CPU time (server and clients) per update, which
// does not depend on the neighbours sharing the machine the way latencies do.
//
// The goroutines carry pprof labels, so that a CPU profile separates the sides:
// side=server (host, hub, HTTP server, connection writers), side=client (the 100
// readers) and side=bench (the submitting loop):
//
//	go test -run '^$' -bench 'BenchmarkFanout$' -benchtime 3000x -cpuprofile cpu.out ./sandbox/server/ws/
//	go tool pprof -tags cpu.out
func BenchmarkFanout(b *testing.B) { benchFanout(b, 100) }

// BenchmarkWideFanout is BenchmarkFanout with 500 connections (not matched by
// -bench BenchmarkFanout, so that the benchmark stays quick to run).
func BenchmarkWideFanout(b *testing.B) {
	b.Run("conns=500", func(b *testing.B) { benchFanout(b, 500) })
}

func benchFanout(b *testing.B, conns int) {
	var f *fixture
	pprof.Do(context.Background(), pprof.Labels("side", "server"), func(context.Context) {
		f = newFixture(b, ws.Config{PingInterval: -1})
	})
	// Each reader counts the frames it read; the reader that completes an
	// iteration (the last read of the update) records the time and wakes the
	// benchmark.
	var count atomic.Int64
	var lastAt atomic.Int64
	done := make(chan struct{}, 1)
	var wg sync.WaitGroup
	b.Cleanup(wg.Wait) // runs last: after every connection is closed
	pprof.Do(context.Background(), pprof.Labels("side", "client"), func(context.Context) {
		for range conns {
			c := dial(b, f.srv.WS+"/ws/market")
			subscribeMarket(c, f.m.Yes)
			c.next() // the snapshot
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					_, r, err := c.c.Reader(context.Background())
					if err != nil {
						return
					}
					if _, err := io.Copy(io.Discard, r); err != nil {
						return
					}
					if count.Add(1)%int64(conns) == 0 {
						lastAt.Store(time.Now().UnixNano())
						done <- struct{}{}
					}
				}
			}()
		}
	})
	lat := make([]time.Duration, 0, b.N)
	cpu0, cpuOK := processCPU()
	b.ReportAllocs()
	b.ResetTimer()
	pprof.Do(context.Background(), pprof.Labels("side", "bench"), func(context.Context) {
		for i := range b.N {
			px := market.Micros(100_000 + (i%30)*10_000) // 0.10 .. 0.39: never crosses
			cmd := place(fmt.Sprint("f", i), alice, f.m.Yes, market.Buy, px.String(), "1")
			t0 := time.Now()
			f.host.Apply(cmd)
			<-done
			lat = append(lat, time.Duration(lastAt.Load()-t0.UnixNano()))
		}
	})
	b.StopTimer()
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkHubBatch: the throughput of the whole pipeline for a random flow, one
// command per batch, with one connection subscribed to both tokens (engine, test
// host dispatch, hub mirror, hashes, encoding, queues and socket writes).
func BenchmarkHubBatch(b *testing.B) {
	f := newFixture(b, ws.Config{PingInterval: -1, QueueLen: 1 << 20})
	c := dial(b, f.srv.WS+"/ws/market")
	subscribeMarket(c, f.m.Yes, f.m.No)
	c.next()
	c.next()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, _, err := c.c.Read(ctx); err != nil {
				return
			}
		}
	}()
	defer cancel()
	fl := wstest.NewFlow(7, []wstest.Market{f.m}, []market.Address{alice, bob, carol})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f.host.Apply(fl.Next())
	}
	f.host.Flush()
}

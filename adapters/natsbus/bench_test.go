package natsbus

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// percentile returns the p-th percentile (0 < p <= 100) of sorted ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds))*p/100+0.5) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// BenchmarkFanout measures market-data fan-out inside one process: one Fanout
// publishes price changes of one token, N MarketFeeds (each on its own in-process
// connection, as N agent processes would each have their own) decode them, check
// their sequence and hand them to a consumer. Latency is from Publish to the
// consumer, over every delivery. Events are paced at one per millisecond at most (1,000/s,
// far above a real token's rate; sleeps, so the publisher does not hog a core) so that the figure is latency, not queueing.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) { benchFanout(b, n) })
	}
}

func benchFanout(b *testing.B, n int) {
	s := startServer(b, "")
	pub := connectRole(b, s, RoleSupervisor, "fanout")
	f, err := pub.NewFanout(FanoutConfig{})
	if err != nil {
		b.Fatal(err)
	}
	runBG(b, f.Run)
	publishBook(b, f, tokYes)

	sent := make([]atomic.Int64, b.N+1) // publish time (ns since start) by event Seq
	start := time.Now()
	lat := make([][]time.Duration, n)
	var got, synced atomic.Int64
	for i := 0; i < n; i++ {
		bus := connectRole(b, s, RoleAgent, fmt.Sprintf("agent-%d", i))
		feed, err := bus.NewMarketFeed(MarketFeedConfig{Tokens: []market.TokenID{tokYes}, Subscriber: fmt.Sprint(i)})
		if err != nil {
			b.Fatal(err)
		}
		lat[i] = make([]time.Duration, 0, b.N)
		i := i
		runBG(b, func(ctx context.Context) error {
			return feed.Run(ctx, func(ev *market.Event) error {
				if ev.Kind == market.EventBook {
					synced.Add(1)
				}
				if ev.Kind == market.EventPriceChange && ev.Seq > 0 {
					lat[i] = append(lat[i], time.Since(start)-time.Duration(sent[ev.Seq].Load()))
					got.Add(1)
				}
				return nil
			})
		})
	}
	waitFor(b, 10*time.Second, "feeds to sync", func() bool { return synced.Load() == int64(n) })
	ev := market.Event{Kind: market.EventPriceChange, Market: cond1, Token: tokYes,
		Changes: []market.LevelChange{{Token: tokYes, Side: market.Buy, Price: 490_000, Size: market.One}}}
	b.ReportAllocs()
	b.ResetTimer()
	next := time.Now()
	for i := 1; i <= b.N; i++ {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(time.Millisecond)
		ev.Seq = uint64(i)
		ev.Changes[0].Size = market.Micros(i%100+1) * market.Lot
		sent[i].Store(int64(time.Since(start)))
		if err := f.Publish(&ev); err != nil {
			b.Fatal(err)
		}
	}
	want := int64(b.N * n)
	deadline := time.Now().Add(30 * time.Second)
	for got.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	if got.Load() < want {
		b.Fatalf("%d of %d deliveries", got.Load(), want)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(percentile(all, 50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(percentile(all, 99).Nanoseconds()), "p99-ns")
}

// BenchmarkControlRoundTrip measures one control request to one agent and its reply
// (in-process connections; the handler does nothing).
func BenchmarkControlRoundTrip(b *testing.B) {
	s := startServer(b, "")
	ctl := connectRole(b, s, RoleSupervisor, "ctl")
	agent := connectRole(b, s, RoleAgent, "agent")
	srv, err := agent.ServeAgentControl("a1", func(context.Context, ControlRequest) (AgentState, error) { return StateRunning, nil })
	if err != nil {
		b.Fatal(err)
	}
	runBG(b, srv.Run)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := ctl.Control(ctx, ControlRequest{Op: OpStatus, Target: "a1", ID: "bench"}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 99).Nanoseconds()), "p99-ns")
}

// BenchmarkAuditAppend measures storing audit records with the stream's
// acknowledgement (the embedded server fsyncs every write): one record per call,
// and batches of 16 pipelined records.
func BenchmarkAuditAppend(b *testing.B) {
	rec := func() AuditRecord {
		in := market.Intent{Kind: market.IntentQuote, Key: "bid", Token: tokYes, Side: market.Buy, Price: 515_000, Size: 10 * market.One}
		return AuditRecord{Kind: AuditIntent, Time: 1700000000000, Intent: NewIntentRecord(&in)}
	}
	b.Run("one", func(b *testing.B) {
		s := startServer(b, "")
		sup := connectRole(b, s, RoleSupervisor, "sup")
		if err := sup.EnsureAudit(context.Background(), AuditConfig{}); err != nil {
			b.Fatal(err)
		}
		log, _ := sup.AuditLog("bench", wallet1, "")
		ctx := context.Background()
		lat := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r := rec()
			t0 := time.Now()
			if _, err := log.Append(ctx, &r); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(percentile(lat, 99).Nanoseconds()), "p99-ns")
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("batch=16", func(b *testing.B) {
		s := startServer(b, "")
		sup := connectRole(b, s, RoleSupervisor, "sup")
		if err := sup.EnsureAudit(context.Background(), AuditConfig{}); err != nil {
			b.Fatal(err)
		}
		log, _ := sup.AuditLog("bench", wallet1, "")
		ctx := context.Background()
		batch := make([]AuditRecord, 16)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for j := range batch {
				batch[j] = rec()
			}
			if err := log.AppendBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(16*b.N)/b.Elapsed().Seconds(), "records/s")
	})
}

// BenchmarkBudgetAcquire measures one grant of the fleet request budget (a publish
// with acknowledgement to the budget stream, file storage with fsync).
func BenchmarkBudgetAcquire(b *testing.B) {
	s := startServer(b, "")
	sup := connectRole(b, s, RoleSupervisor, "sup")
	g, err := sup.EnsureBudget(context.Background(), BudgetConfig{Limit: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Acquire(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFrame(b *testing.B) {
	ev := market.Event{Kind: market.EventPriceChange, Seq: 1, Time: 1700000000000, Market: cond1, Token: tokYes,
		Changes: []market.LevelChange{{Token: tokYes, Side: market.Buy, Price: 490_000, Size: 10 * market.One, BestBid: 490_000, BestAsk: 520_000}}}
	buf, err := AppendFrame(nil, FrameHeader{Epoch: 1, Seq: 1}, &ev)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		var err error
		for i := 0; i < b.N; i++ {
			if buf, err = AppendFrame(buf[:0], FrameHeader{Epoch: 1, Seq: uint64(i)}, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		var out market.Event
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := DecodeFrame(buf, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

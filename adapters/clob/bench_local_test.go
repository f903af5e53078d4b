package clob_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/market"
)

// BenchmarkCreateOrder measures building and signing a limit order with the
// market parameters cached (the EIP-712 digest and the ECDSA signature dominate).
func BenchmarkCreateOrder(b *testing.B) {
	l, stop, err := openLocal(zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	l.t = b
	c := l.client("bench-create")
	ctx := context.Background()
	a := clob.OrderArgs{Token: l.market(fedSlug).Tokens[market.Yes], Side: market.Buy, Price: d("0.42"), Size: d("10")}
	if _, err := c.CreateOrder(ctx, a); err != nil { // warms the parameter cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CreateOrder(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPostOrder measures posting signed orders to the local exchange over
// loopback, one at a time (sign, post, the exchange's matching and journal without
// fsync, the answer): orders/s and the p99 latency of one post.
func BenchmarkPostOrder(b *testing.B) {
	l, stop, err := openLocal(zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	l.t = b
	c := l.client("bench-post")
	ctx := context.Background()
	yes := l.market(fedSlug).Tokens[market.Yes]
	a := clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.01"), Size: d("5")}
	if _, err := c.CreateOrder(ctx, a); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	start := time.Now()
	n := 0
	for b.Loop() {
		t0 := time.Now()
		o, err := c.CreateOrder(ctx, a)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.PostOrder(ctx, o); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		n++
		if n%1000 == 0 { // keep the paper balance: 1000 orders × 0.05 = 50
			if _, err := c.CancelAll(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "orders/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

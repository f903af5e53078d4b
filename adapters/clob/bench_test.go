package clob

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
)

// BenchmarkBudgetAcquire measures taking a slot of a budget that never makes the
// caller wait (the bookkeeping cost of every CLOB request), alone and contended.
func BenchmarkBudgetAcquire(b *testing.B) {
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		bu := NewBudget(BudgetConfig{Rate: 1e12, Burst: 1 << 30})
		b.ReportAllocs()
		for b.Loop() {
			if err := bu.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		bu := NewBudget(BudgetConfig{Rate: 1e12, Burst: 1 << 30})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := bu.Acquire(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkRequest measures the client's own cost of one request to a loopback
// server that answers at once: budget, URL, headers, send, read, decode.
func BenchmarkRequest(b *testing.B) {
	srv := loopback(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`1700000000`))
	}))
	c := mustNew(b, Config{CLOBURL: srv.URL, Budget: NewBudget(BudgetConfig{Rate: 1e12, Burst: 1 << 30})})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ServerTime(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBook measures decoding a book answer of 2×levels levels and
// converting it to a best-first market.Book.
func BenchmarkDecodeBook(b *testing.B) {
	for _, levels := range []int{10, 100} {
		b.Run(fmt.Sprint(levels), func(b *testing.B) {
			var sb strings.Builder
			sb.WriteString(`{"market":"0x01","asset_id":"1","timestamp":"1700000000000","hash":"","bids":[`)
			for i := range levels {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `{"price":"0.%04d","size":"%d.5"}`, 100+i, 10+i)
			}
			sb.WriteString(`],"asks":[`)
			for i := range levels {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `{"price":"0.%04d","size":"%d.25"}`, 9000-i, 10+i)
			}
			sb.WriteString(`],"min_order_size":5,"tick_size":"0.0001","neg_risk":false,"last_trade_price":"0.5"}`)
			body := []byte(sb.String())
			c := &Client{}
			s := &service{name: ServiceCLOB}
			cl := &call{method: "GET", path: "/book"}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var ob api.OrderBook
				if err := c.decode(s, cl, body, &ob); err != nil {
					b.Fatal(err)
				}
				if _, err := ob.Book(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

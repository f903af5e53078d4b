package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// benchOrder is one pre-signed POST /order request.
type benchOrder struct {
	w    *wallet
	body []byte
}

// BenchmarkPostOrder measures authenticated, signature-verified POST /order over
// loopback HTTP with durability on (journal group commit with fdatasync) from 16, 64
// and 256 parallel clients (goroutines with keep-alive connections): 64 funded
// wallets trade a mix of buys and sells of both outcomes around the mid of three
// markets, so about half the orders match on arrival. Orders are signed before the
// timer starts (signing is the client's cost); each request's L2 HMAC is computed in
// the timed loop. It reports orders/s, the CPU time of the whole process (clients
// included) per order, and the journal's records and microseconds per sync, and
// fails if fewer than 95% of the orders were accepted. The last variant syncs
// nothing (journal.SyncNone: durable against a process crash only) to show what the
// server does when the disk is not the limit; the target is for the durable ones.
func BenchmarkPostOrder(b *testing.B) {
	for _, v := range []struct {
		clients int
		sync    journal.SyncMode
	}{{16, journal.SyncData}, {64, journal.SyncData}, {256, journal.SyncData}, {64, journal.SyncNone}} {
		name := fmt.Sprintf("clients=%d", v.clients)
		if v.sync == journal.SyncNone {
			name += ",sync=none"
		}
		b.Run(name, func(b *testing.B) { benchPostOrder(b, v.clients, v.sync) })
	}
}

func benchPostOrder(b *testing.B, clients int, sync journal.SyncMode) {
	e := newEnv(b, func(_ *Config, h *host.Config) {
		h.Dir, h.Sync, h.SnapshotEvery = b.TempDir(), sync, -1
	})
	markets := []market.Info{e.mkt("rain-in-lisbon-tomorrow"), e.mkt("acme-stock-up"), e.mkt("will-mexico-beat-south-africa")}
	const nWallets = 64
	wallets := make([]*wallet, nWallets)
	var setup []exchange.Command
	for i := range wallets {
		wallets[i] = e.register(newWallet(b, fmt.Sprintf("bench-%d", i)))
		setup = append(setup, exchange.Command{Kind: exchange.Deposit, Owner: wallets[i].addr, Amount: 10_000_000 * share})
		for _, m := range markets {
			setup = append(setup, exchange.Command{Kind: exchange.Split, Owner: wallets[i].addr, Market: m.Condition, Amount: 1_000_000 * share})
		}
	}
	if _, err := e.h.SubmitBatch(context.Background(), setup); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	orders := make([]benchOrder, b.N)
	for i := range orders {
		w := wallets[i%nWallets]
		m := markets[rng.IntN(len(markets))]
		side := market.Buy
		if rng.IntN(2) == 0 {
			side = market.Sell
		}
		price := market.Micros(450_000 + 10_000*rng.IntN(11))
		body, _ := e.order(w, m, m.Tokens[rng.IntN(2)], side, price, market.Micros(5+rng.IntN(20))*share, orderOpts{})
		orders[i] = benchOrder{w: w, body: body}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	url := e.pub.URL + "/order"
	ts := e.clock.now() / 1000
	var next, ok, failed atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			o := &orders[next.Add(1)-1]
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(o.body))
			if err := o.w.l2.SignHTTP(req, o.body, ts, nil); err != nil {
				b.Error(err)
				return
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				ok.Add(1)
			} else {
				failed.Add(1)
			}
		}
	})
	b.StopTimer()
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/order")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
	if n := ok.Load() + failed.Load(); n > 0 && float64(ok.Load()) < 0.95*float64(n) {
		b.Fatalf("only %d of %d orders were accepted", ok.Load(), n)
	}
	st := e.h.Stats().Journal
	if st.Batches > 0 {
		b.ReportMetric(float64(st.Records)/float64(st.Batches), "records/sync")
		b.ReportMetric(float64(st.SyncTime.Microseconds())/float64(st.Batches), "us/sync")
	}
}

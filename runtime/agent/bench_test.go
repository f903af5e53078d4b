package agent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/embedded"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/wire"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/strategy"
)

// handFeed hands its emit function to the benchmark, which calls it as a feed's
// reader goroutine would.
type handFeed chan func(*market.Event) bool

func (f handFeed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	f <- emit
	<-ctx.Done()
	return nil
}

// signalVenue is the embedded venue, timing each Submit.
type signalVenue struct {
	*embedded.Venue
	submitted chan time.Time
}

func (v signalVenue) Submit(ctx context.Context, p *agent.PreparedOrder) (market.Order, error) {
	v.submitted <- time.Now()
	return v.Venue.Submit(ctx, p)
}

// BenchmarkTickToTrade measures the agent's reaction time: from a market event
// handed to the agent's feed callback to the order it causes handed to the embedded
// venue (Submit), through the whole loop — state update, the example quoter strategy
// (smoothing off, so every event moves its quote), the policy chain with the
// example's guards, the reconciler (each event is a re-price: cancel, then place) —
// on the in-process exchange. ns/op is the mean latency; p99-ns its 99th
// percentile.
func BenchmarkTickToTrade(b *testing.B) {
	x, err := embedded.New(embedded.Config{Start: 1_700_000_000_000}, &embedded.ScriptFlow{Listing: []exchange.Command{
		{Kind: exchange.CreateMarket, Market: cond, Spec: exchange.MarketSpec{Tokens: [2]market.TokenID{yes, no}, Slug: "m",
			TickSize: 10_000, MinSize: 5 * market.One, Active: true, AcceptingOrders: true}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.Fund(wallet, 1_000_000*market.One); err != nil {
		b.Fatal(err)
	}
	st, err := strategy.Load("../../agents/examples/quoter/strategy.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if st, err = st.WithParams(map[string]string{"smooth": "1", "vol_mult": "0"}); err != nil {
		b.Fatal(err)
	}
	inst, err := st.NewInstance([]strategy.Binding{{Name: "m", Market: cond}})
	if err != nil {
		b.Fatal(err)
	}
	g, err := wire.NewGuards(policies.Config{MaxOrderSize: 25 * market.One, MaxOrderNotional: 15 * market.One,
		MaxOpenOrders: 6, MaxOrdersPerMinute: policies.MaxOrdersPerMinuteLimit},
		policies.WithAddress(wallet), policies.WithGeoblock(policies.Geoblock{Status: policies.GeoAllowed}))
	if err != nil {
		b.Fatal(err)
	}
	v := signalVenue{Venue: x.Venue(wallet), submitted: make(chan time.Time, 64)}
	feed := make(handFeed, 1)
	cfg := baseConfig()
	cfg.Reconcile = agent.ReconcileConfig{ReplacesPerSecond: 1 << 30, ReplaceBurst: 1 << 30}
	cfg.StatusInterval, cfg.CheckpointInterval = time.Hour, time.Hour
	a, err := agent.New(cfg, agent.Deps{Venue: v, Feed: feed, Decider: inst, Guards: g})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}()

	emit := <-feed
	// Two books ten ticks apart: every event moves the quoter's bid and its NO bid.
	books := [2]market.Event{book(0, "0.40", "0.45"), book(0, "0.50", "0.55")}
	now := int64(1_700_000_000_000)
	tick := func(i int) time.Duration {
		now += 100
		ev := &books[i%2]
		ev.Time = now
		t0 := time.Now()
		emit(ev)
		return (<-v.submitted).Sub(t0)
	}
	for i := range 200 { // warm up: first quotes, maps and slices at their working size
		tick(i)
		<-v.submitted
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, tick(i))
		<-v.submitted // the second order of the same event (its NO quote)
	}
	b.StopTimer()
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(lat)), "ns/op")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

package backtest

import (
	"context"
	"io"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// InputsSamplePath is where the bundled recording with inputs lives, relative to
// the repository's root: two hours of synthetic flow on the three candidate markets
// of one neg-risk event (fair values starting at 0.5, 0.3 and 0.2), with the
// synthetic price of crypto:btcusdt (sim.Prices) every second beside them. The
// examples "underlying" and "eventarb" backtest on it without a network.
const InputsSamplePath = "agents/examples/testdata/inputs.tape"

// InputsSampleEvent is the neg-risk id of the sample's event.
const InputsSampleEvent = "0x7069746b6f73732d73616d706c652d6576656e74000000000000000000000000"

// InputsSampleFeed is the feed the sample records.
var InputsSampleFeed = market.FeedSymbol{Source: market.FeedCrypto, Symbol: "btcusdt"}

// InputsSampleConfig is the synthetic flow of the sample (seed 11, from
// sim.DefaultTapeStart).
func InputsSampleConfig() sim.TapeConfig {
	start := int64(sim.DefaultTapeStart)
	mkts := sim.SyntheticMarkets(3, start/1000)
	fairs := []market.Micros{500_000, 300_000, 200_000}
	cfg := sim.TapeConfig{Seed: 11, Start: start, Duration: 2 * time.Hour, Markets: mkts}
	for i := range mkts {
		mkts[i].Spec.NegRisk, mkts[i].Spec.NegRiskID = true, InputsSampleEvent
		mkts[i].Spec.Question = []string{"Who wins? Candidate A", "Who wins? Candidate B", "Who wins? Candidate C"}[i]
		cfg.Sim.Markets = append(cfg.Sim.Markets, sim.MarketConfig{Market: mkts[i].Market, Params: sim.Params{Fair: fairs[i]}})
	}
	return cfg
}

// WriteInputsSample writes the sample recording with inputs to w: the sim's
// market events with the price process's events merged in time order (a price
// before the market events of its millisecond). The same build always writes the
// same bytes (a test checks the bundled file against it).
func WriteInputsSample(ctx context.Context, w io.Writer) (tape.WriterStats, error) {
	cfg := InputsSampleConfig()
	src, err := NewSimSource(cfg)
	if err != nil {
		return tape.WriterStats{}, err
	}
	tw, err := tape.NewWriter(w, tape.Session{Source: src.Name() + " + sim prices seed=11", Tool: "pitboss backtest",
		Feeds: []string{InputsSampleFeed.String()}}, tape.WriterOptions{BlockSpan: -1})
	if err != nil {
		return tape.WriterStats{}, err
	}
	for _, m := range src.Markets() {
		if err := tw.Market(&m); err != nil {
			return tw.Stats(), err
		}
	}
	prices := sim.NewPrices(cfg.Seed, cfg.Start, []market.FeedSymbol{InputsSampleFeed})
	end := cfg.Start + cfg.Duration.Milliseconds()
	var pevs []market.Event
	var werr error
	pricesUntil := func(t int64) {
		for werr == nil && prices.Next() <= t && prices.Next() < end {
			pevs = prices.Step(pevs[:0])
			for i := range pevs {
				if werr = tw.Write(&pevs[i], pevs[i].Time); werr != nil {
					return
				}
			}
		}
	}
	err = src.Events(ctx, func(ev *market.Event) bool {
		pricesUntil(ev.Time)
		if werr == nil {
			werr = tw.Write(ev, ev.Time)
		}
		return werr == nil
	})
	if err == nil {
		pricesUntil(end - 1)
		err = werr
	}
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	return tw.Stats(), err
}

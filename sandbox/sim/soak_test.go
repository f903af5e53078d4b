package sim

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// TestSoak runs a week of flow in eight markets (two makers each, resolutions on
// the way) with the engine's invariants checked every 20,000 commands. It takes
// about a minute; run it with PITBOSS_SIM_SOAK=1 go test -run Soak ./sandbox/sim.
func TestSoak(t *testing.T) {
	if testing.Short() || os.Getenv("PITBOSS_SIM_SOAK") == "" {
		t.Skip("set PITBOSS_SIM_SOAK=1 (and not -short) to run the week-long soak")
	}
	markets := SyntheticMarkets(8, 0)
	var mcs []MarketConfig
	for i, c := range markets {
		mc := MarketConfig{Market: c.Market}
		if i%3 == 0 {
			mc.ResolveAt = t0 + int64(i+1)*20*3_600_000
		}
		mcs = append(mcs, mc)
	}
	var commands, rejected int
	start := time.Now()
	sum, err := RunTape(context.Background(), TapeConfig{
		Seed: 99, Duration: 7 * 24 * time.Hour, CheckEvery: 20_000, Markets: markets,
		Sim: Config{Defaults: Params{Makers: 2, NewsEvery: 10 * time.Minute}, Markets: mcs},
		Raw: func(c *exchange.Command, evs []exchange.Event) {
			commands++
			if len(evs) > 0 && evs[len(evs)-1].Kind == exchange.CommandRejected {
				rejected++
			}
		},
	}, func(*market.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d commands (%d rejected) in %s", commands, rejected, time.Since(start))
	if rejected*1000 > commands {
		t.Errorf("%d of %d commands rejected", rejected, commands)
	}
	for i, m := range sum.Markets {
		t.Logf("market %d: %d trades, fair %s–%s, resolved %v", i, m.Trades, m.FairMin, m.FairMax, m.Resolved)
		if m.FairMin <= 0 || m.FairMax >= market.One || m.Trades == 0 {
			t.Errorf("market %d: fair %s–%s, %d trades", i, m.FairMin, m.FairMax, m.Trades)
		}
	}
}

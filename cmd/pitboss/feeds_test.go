package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// feedAgentFile writes an agent file quoting market cond of the venue at base
// with the underlying example's strategy, its feed spot bound to crypto:btcusdt.
func feedAgentFile(t *testing.T, base, cond string) string {
	t.Helper()
	strat, err := filepath.Abs("../../agents/examples/underlying/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	binding := fmt.Sprintf("feeds:\n  spot: {symbol: crypto:btcusdt, stale: 10s}\nstrategy:\n  file: %s\n  params: {strike: 100000, half_spread: 0.02}\n", strat)
	return remoteAgentFile(t, t.TempDir(), "feeder", remoteVenue{base, base, base, base}, false, cond, binding, "")
}

// feedEvents returns the feed events of a tape.
func feedEvents(t *testing.T, path string) []market.Event {
	t.Helper()
	r, err := tape.Open(path, tape.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []market.Event
	if err := tape.ReadAll(r, func(rec *tape.Record) error {
		if rec.Type == tape.RecordEvent && rec.Event.Kind == market.EventFeed {
			out = append(out, rec.Event)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkSimPrices checks that evs (crypto:btcusdt, in order) are consecutive prices
// of the embedded venue's process for seed and origin: each the price of a step
// at or before its time (by less than the step: a price is stamped with the
// stream's time when that is later), one step after the other.
func checkSimPrices(t *testing.T, evs []market.Event, seed uint64, origin int64) {
	t.Helper()
	if len(evs) < 3 {
		t.Fatalf("%d prices", len(evs))
	}
	p := sim.NewPrices(seed, origin, []market.FeedSymbol{{Source: market.FeedCrypto, Symbol: "btcusdt"}})
	step := func() market.Event { return p.Step(nil)[0] }
	cur := step()
	for cur.Time+sim.PriceStep <= evs[0].Time {
		cur = step()
	}
	for i, ev := range evs {
		if i > 0 {
			cur = step()
		}
		if ev.Name != "crypto:btcusdt" || ev.Value != cur.Value || ev.Time < cur.Time || ev.Time >= cur.Time+sim.PriceStep {
			t.Fatalf("price %d: %+v, the process has %v at %d", i, ev, cur.Value, cur.Time)
		}
	}
}

// TestFeedsOfTheLocalExchange (issue 19, items 2 and 4): `pitboss exchange --sim`
// serves the synthetic prices on /ws/rtds. An agent on the remote venue with a
// feed reads them — the prices the embedded venue produces for the same seed and
// start (sim.NewPrices, as embedded.New uses it) — and its recording shows it;
// `pitboss record --feeds` records them beside the books, and two backtests of a
// feed-driven strategy over that recording write byte-identical reports.
func TestFeedsOfTheLocalExchange(t *testing.T) {
	origin := time.Now().Add(-time.Minute).UnixMilli()
	base, cond := recordVenue(t, "--sim-prices-origin", strconv.FormatInt(origin, 10))
	agent := feedAgentFile(t, base, cond)
	env := map[string]string{"PITBOSS_TEST_WALLET": walletKey("feeder")}

	// The agent on the remote venue.
	run := filepath.Join(t.TempDir(), "run.tape")
	code, stdout, stderr := runCLIEnv(t, env, "run", "--duration", "4s", "--record", run, "--state-dir", t.TempDir(), agent)
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, stdout, stderr)
	}
	checkSimPrices(t, feedEvents(t, run), 4, origin)

	// The recorder.
	rec := filepath.Join(t.TempDir(), "rec.tape")
	code, stdout, stderr = runCLI(t, "record", "-q", "--venue", base, "--feeds", "crypto:btcusdt", "--out", rec, "--duration", "4s", "--no-sync", cond)
	if code != 0 || recordedRE.FindStringSubmatch(stdout) == nil {
		t.Fatalf("record: code %d\n%s\n%s", code, stdout, stderr)
	}
	checkSimPrices(t, feedEvents(t, rec), 4, origin)
	sum, err := tape.Summarize(rec)
	if err != nil || len(sum.Sessions) != 1 || len(sum.Sessions[0].Feeds) != 1 || sum.Sessions[0].Feeds[0] != "crypto:btcusdt" {
		t.Fatalf("summary %+v %v", sum, err)
	}

	// Two backtests of the feed-driven strategy over the recording.
	var reports []string
	for i := range 2 {
		code, stdout, stderr = runCLIEnv(t, env, "backtest", "-q", "--json", "--data", rec, agent)
		if code != 0 {
			t.Fatalf("backtest %d: code %d\n%s\n%s", i, code, stdout, stderr)
		}
		reports = append(reports, stdout)
	}
	if reports[0] != reports[1] {
		t.Fatal("two backtests of the same recording differ")
	}
	var r report.Report
	if err := json.Unmarshal([]byte(reports[0]), &r); err != nil {
		t.Fatal(err)
	}
	sent := int64(-1)
	for _, c := range r.Run.Activity {
		if c.Name == "orders sent" {
			sent = int64(c.Value)
		}
	}
	if sent <= 0 { // the strategy's quote prices are NaN, so nothing is sent, without the feed's price
		t.Fatalf("the backtest sent %d orders: %+v", sent, r.Run.Activity)
	}
}

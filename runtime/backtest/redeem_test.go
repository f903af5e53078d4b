package backtest

import (
	"context"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/report"
)

// resolvedAtEnd is a Source that resolves every market of its data, to the winning
// outcome, a second after the data's last event.
type resolvedAtEnd struct {
	Source
	winner market.Outcome
}

func (s resolvedAtEnd) Events(ctx context.Context, emit func(ev *market.Event) bool) error {
	var last int64
	if err := s.Source.Events(ctx, func(ev *market.Event) bool { last = ev.Time; return emit(ev) }); err != nil {
		return err
	}
	for _, m := range s.Markets() {
		w := m.Tokens[s.winner]
		if !emit(&market.Event{Kind: market.EventResolved, Time: last + 1000, Market: m.Condition, Token: w, Winner: w}) {
			return nil
		}
	}
	return nil
}

// TestBacktestRedeemsAfterResolution: a strategy that bids for YES on the bundled
// sample and redeems its tokens when the market resolves (do: redeem) ends the run
// with every token redeemed: won, the collateral gained by the redeem is the winning
// shares held (the agent's balance is its equity, with nothing left held); lost, the
// redeem pays nothing and the tokens are gone too. The report shows the redeem as an
// event (text, JSON and HTML) and settles the market's PnL at the resolution, as
// without a redeem.
func TestBacktestRedeemsAfterResolution(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string { return writeIn(t, dir, name, src) }
	write("holder.yaml", `name: holder
description: bids for YES at the touch, and redeems the tokens once the market resolved
quotes:
  bid:
    side: BUY
    price: yes.bid
    size: 5
    when: yes.two_sided && yes.position < 5
rules:
  collect:
    on: resolved
    when: market.resolved
    do: redeem
`)
	agentPath := writeAgent(t, dir, "holder")
	spec := loadAgent(t, agentPath)
	for _, w := range []market.Outcome{market.Yes, market.No} {
		res, err := Run(context.Background(), Config{Spec: spec, Source: resolvedAtEnd{sample(t), w}})
		if err != nil {
			t.Fatal(err)
		}
		rep, st := res.Report, res.Status
		var redeems []report.Mark
		for _, e := range rep.Events {
			if e.Kind == report.MarkRedeem {
				redeems = append(redeems, e)
			}
		}
		var traded *report.MarketReport
		for i := range rep.Markets {
			if rep.Markets[i].Fills > 0 {
				traded = &rep.Markets[i]
			}
		}
		if traded == nil || len(redeems) != 1 || redeems[0].Market != traded.Condition {
			t.Fatalf("%s won: redeem events %+v, want one in the market traded", w, redeems)
		}
		var held market.Micros // YES bought (the strategy never sells)
		for _, f := range rep.Fills {
			if f.Outcome == "YES" && f.Side == "BUY" {
				held += market.Micros(f.Size)
			}
		}
		if held <= 0 || traded.Yes != 0 {
			t.Fatalf("%s won: %s YES bought, %s left in the report's ledger after the resolution", w, held, traded.Yes)
		}
		paid := held
		if w == market.No {
			paid = 0
		}
		if want := "tokens → " + paid.String() + " collateral (rule collect)"; redeems[0].Reason != want {
			t.Errorf("%s won: redeem event %q, want %q", w, redeems[0].Reason, want)
		}
		for _, p := range st.Positions {
			if p.Size != 0 {
				t.Fatalf("%s won: position %+v left after the redeem", w, p)
			}
		}
		// Nothing held: equity is collateral, and the redeem paid the winning shares.
		if st.Equity != st.Balance || st.Reserved != 0 {
			t.Fatalf("%s won: equity %s, balance %s, reserved %s", w, st.Equity, st.Balance, st.Reserved)
		}
		if !traded.Resolved || market.Micros(rep.Summary.PnL) != st.Equity-market.Micros(rep.Summary.StartEquity) {
			t.Errorf("%s won: report PnL %s, agent's equity %s from %s", w, rep.Summary.PnL, st.Equity, rep.Summary.StartEquity)
		}
		shows(t, rep, redeems[0].Reason)
	}
}

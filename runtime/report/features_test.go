package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// scheduled is a Forecaster whose probability of YES depends on the script's
// event time: before switch, then after.
type scheduled struct {
	st            *market.State
	at            int64
	before, after float64
}

func (f *scheduled) Forecast(market.ConditionID) (float64, bool) {
	if f.st.Time < f.at {
		return f.before, true
	}
	return f.after, true
}

// fillAs is a fill of either token with the key of its order.
func (s *script) fillAs(at int64, o market.Outcome, side market.Side, role market.Role, price, size, fee, key string) {
	s.seq++
	tok := yes
	if o == market.No {
		tok = no
	}
	f := market.Fill{Trade: market.TradeID("t" + string(rune('0'+s.seq))), Order: "o", Market: cond, Token: tok,
		Outcome: o, Side: side, Role: role, Price: dec(price), Size: dec(size), Fee: dec(fee), Time: t0 + at}
	s.c.Fill(&f, key)
	s.apply(market.Event{Kind: market.EventFill, Time: t0 + at, Market: cond, Token: tok, Fill: f})
}

// eventfulRun crosses midnight UTC (at t0 + 6,400 s), has three round trips of
// each ending (a sell, a flatten after a kill switch, a resolution), denials of
// two guards, a forecast that changes, and a resume. Every figure the tests below
// check is worked out beside the step that makes it.
func eventfulRun(t testing.TB) *Report {
	fc := &scheduled{at: t0 + 4_000_000, before: 0.6, after: 0.8}
	s := newScript(t, Config{From: t0, To: t0 + 3*3_600_000, Forecaster: fc}, "1000")
	fc.st = &s.st
	s.book(0, "0.40", "0.42")
	s.book(1000, "0.40", "0.42") // first sample with a book: buy and hold enters (YES at 0.42, NO at 0.60)
	s.fillAs(2000, market.Yes, market.Buy, market.Taker, "0.42", "100", "0", "entry")
	s.book(600_000, "0.50", "0.52")
	s.fillAs(600_001, market.Yes, market.Sell, market.Maker, "0.50", "100", "0", "ask") // round trip 1: +8
	s.c.Deny(t0+700_000, "price_band", "price 0.61 is 0.11 from the mid", cond)
	s.c.Deny(t0+750_000, "max_position", "position 120 above 110", cond)
	s.c.Deny(t0+800_000, "price_band", "price 0.62 is 0.12 from the mid", cond)
	s.fillAs(900_000, market.Yes, market.Buy, market.Maker, "0.50", "50", "0", "bid") // day 1 ends at 983 + 50 × 0.51
	s.book(7_000_000, "0.30", "0.32")                                                 // day 2
	s.c.Mark(Mark{Time: t0 + 7_000_500, Kind: MarkKillSwitch, Reason: "daily loss", Actions: TripActions(true, true, true)})
	s.c.Mark(Mark{Time: t0 + 7_000_500, Kind: MarkFlatten, Market: cond, Reason: "kill switch"})
	s.fillAs(7_000_600, market.Yes, market.Sell, market.Taker, "0.30", "50", "0.1", "flatten/will-it-rain YES") // round trip 2: −10.1
	s.c.Mark(Mark{Time: t0 + 7_050_000, Kind: MarkResume, Reason: "operator"})
	s.fillAs(7_100_000, market.No, market.Buy, market.Maker, "0.65", "20", "0", "bid_no") // round trip 3: −13 at the resolution
	s.fillAs(7_200_000, market.Yes, market.Buy, market.Maker, "0.33", "10", "0", "bid")   // round trip 4: +6.7 at the resolution
	s.c.Forecast(cond, 0.8)
	s.resolve(9_000_000, yes)
	s.st.Time = t0 + 3*3_600_000
	r := s.c.Finish(&s.st, Run{Agent: "test", Data: "script", Events: 11})
	r.Title = "eventful run"
	return r
}

func TestRoundTripsOfAnEventfulRun(t *testing.T) {
	r := eventfulRun(t)
	want := []struct {
		outcome, reason, pnl, entry, exit string
		entryAt, exitAt                   int64
	}{
		{"YES", "sell ask", "8", "0.42", "0.5", 2000, 600_001},
		{"YES", "flatten (kill switch)", "-10.1", "0.5", "0.3", 900_000, 7_000_600},
		{"YES", ExitResolved, "6.7", "0.33", "1", 7_200_000, 9_000_000}, // settled in token order
		{"NO", ExitResolved, "-13", "0.65", "0", 7_100_000, 9_000_000},
	}
	if len(r.RoundTrips) != len(want) {
		t.Fatalf("%d round trips: %+v", len(r.RoundTrips), r.RoundTrips)
	}
	for i, w := range want {
		rt := r.RoundTrips[i]
		if rt.Outcome != w.outcome || rt.ExitReason != w.reason || rt.PnL != Money(dec(w.pnl)) || rt.EntryPrice != Money(dec(w.entry)) ||
			rt.ExitPrice != Money(dec(w.exit)) || rt.Entry != t0+w.entryAt || rt.Exit != t0+w.exitAt || rt.DurationMs != w.exitAt-w.entryAt ||
			rt.Slug != "will-it-rain" {
			t.Errorf("round trip %d: %+v, want %+v", i, rt, w)
		}
	}
	if s := r.Summary; s.RoundTrips != 4 || s.AvgHoldMs != (598_001+6_100_600+1_800_000+1_900_000)/4 {
		t.Errorf("summary: %d round trips, held %d ms on average", s.RoundTrips, s.AvgHoldMs)
	}
}

func TestDaysSplitAtMidnightUTC(t *testing.T) {
	r := eventfulRun(t)
	if len(r.Days) != 2 {
		t.Fatalf("days %+v", r.Days)
	}
	d1, d2 := r.Days[0], r.Days[1]
	// Day 1: +8 realized; 50 YES held at the mid 0.51 (983 + 25.5). Day 2: −10.1,
	// −13 and +6.7 realized; the end equity is all cash (991.6).
	if d1.Date != "2023-11-14" || d1.StartEquity != Money(dec("1000")) || d1.EndEquity != Money(dec("1008.5")) ||
		d1.Realized != Money(dec("8")) || d1.Fills != 3 || d1.Volume != Money(dec("117")) || d1.Trades != 1 || float64(d1.WinRate) != 1 {
		t.Errorf("day 1 %+v", d1)
	}
	if d2.Date != "2023-11-15" || d2.StartEquity != d1.EndEquity || d2.EndEquity != Money(dec("991.6")) || d2.PnL != Money(dec("-16.9")) ||
		d2.Realized != Money(dec("-16.4")) || d2.Fills != 3 || d2.Fees != Money(dec("0.1")) || d2.Trades != 3 {
		t.Errorf("day 2 %+v", d2)
	}
	if d1.PnL+d2.PnL != r.Summary.PnL {
		t.Errorf("the days' PnL %s + %s is not the run's %s", d1.PnL, d2.PnL, r.Summary.PnL)
	}
}

func TestDenialsAreCountedByGuard(t *testing.T) {
	r := eventfulRun(t)
	if len(r.Denials) != 2 || r.Summary.Denials != 3 {
		t.Fatalf("denials %+v (summary %d)", r.Denials, r.Summary.Denials)
	}
	pb, mp := r.Denials[0], r.Denials[1]
	if pb.Guard != "price_band" || pb.Count != 2 || pb.First != t0+700_000 || pb.Last != t0+800_000 ||
		pb.Reason != "price 0.61 is 0.11 from the mid" || pb.LastReason != "price 0.62 is 0.12 from the mid" ||
		len(pb.Markets) != 1 || pb.Markets[0].Slug != "will-it-rain" || pb.Markets[0].Count != 2 {
		t.Errorf("price_band %+v", pb)
	}
	if mp.Guard != "max_position" || mp.Count != 1 || mp.First != mp.Last || mp.LastReason != "" {
		t.Errorf("max_position %+v", mp)
	}
}

func TestEventsAndHalts(t *testing.T) {
	r := eventfulRun(t)
	var kinds []string
	for _, e := range r.Events {
		kinds = append(kinds, e.Kind)
	}
	if strings.Join(kinds, ",") != "kill_switch,flatten,resume,resolved" || r.Summary.KillSwitchTrips != 1 {
		t.Fatalf("events %v, %d trips", kinds, r.Summary.KillSwitchTrips)
	}
	if e := r.Events[0]; strings.Join(e.Actions, ",") != "cancel_all,flatten,halt" || !e.Halts() {
		t.Errorf("trip %+v", e)
	}
	if e := r.Events[3]; e.Reason != "YES won" || e.Slug != "will-it-rain" || e.Time != t0+9_000_000 {
		t.Errorf("resolution %+v", e)
	}
	if got := haltPeriods(r.Events, t0+10_800_000); len(got) != 1 || got[0] != [2]int64{t0 + 7_000_500, t0 + 7_050_000} {
		t.Errorf("halted %v", got)
	}
	if _, ok := haltedAtEnd(r.Events); ok {
		t.Error("halted at the end after a resume")
	}
}

func TestBrierScoresAtTheHorizonAndOverTime(t *testing.T) {
	r := eventfulRun(t)
	s := r.Summary
	// The forecast is sampled when events arrive: 0.6 from t0+1 s, 0.8 from the
	// first event after t0+4,000 s (t0+7,000 s). The market resolves YES at
	// t0+9,000 s; one hour before (t0+5,400 s) 0.6 was in force.
	timeAvg := (0.16*(7_000_000-1000) + 0.04*(9_000_000-7_000_000)) / (9_000_000 - 1000)
	for _, x := range []struct {
		name      string
		got, want float64
	}{
		{"at the horizon", float64(s.Brier), 0.16},
		{"last", float64(s.BrierLast), 0.04},
		{"time-averaged", float64(s.BrierTimeAvg), timeAvg},
		{"market forecast at the horizon", float64(r.Markets[0].ForecastHorizon), 0.6},
	} {
		if math.Abs(x.got-x.want) > 1e-9 {
			t.Errorf("Brier %s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if s.Forecasts != 1 || s.ForecastsLast != 1 || s.ForecastsAvg != 1 || s.BrierHorizonMs != 3_600_000 {
		t.Errorf("counts %+v", s)
	}
}

func TestBaselines(t *testing.T) {
	r := eventfulRun(t)
	if len(r.Baselines) != 3 {
		t.Fatalf("baselines %+v", r.Baselines)
	}
	// Do nothing keeps 1000. Buy and hold YES: 2380.95 shares at 0.42 (999.999),
	// paid 1 each at the resolution. NO: 1666.66 at 0.60 (999.996), paid nothing.
	for i, w := range []struct{ name, end string }{
		{BaselineNothing, "1000"}, {BaselineHoldYes, "2380.951"}, {BaselineHoldNo, "0.004"},
	} {
		b := r.Baselines[i]
		if b.Name != w.name || b.EndEquity != Money(dec(w.end)) || b.PnL != b.EndEquity-Money(dec("1000")) {
			t.Errorf("baseline %d: %+v, want %s ending at %s", i, b, w.name, w.end)
		}
	}
	if p := r.Equity[len(r.Equity)-1]; p.Hold != Money(dec("2380.951")) || p.HoldNo != Money(dec("0.004")) {
		t.Errorf("last point's baselines %s, %s", p.Hold, p.HoldNo)
	}
}

func TestWarnings(t *testing.T) {
	r := eventfulRun(t)
	if len(r.Warnings) != 2 || !strings.HasPrefix(r.Warnings[0], "only 4 trades") ||
		!strings.HasPrefix(r.Warnings[1], "Sharpe and Sortino are annualized from 180 returns of 1m") {
		t.Errorf("warnings %q", r.Warnings)
	}
	k := knownRun(t, Config{})
	for _, want := range []string{"only 3 trades", "only 1 return periods", "no forecast 1h before a resolution"} {
		found := false
		for _, w := range k.Warnings {
			found = found || strings.HasPrefix(w, want)
		}
		if !found {
			t.Errorf("no warning %q in %q", want, k.Warnings)
		}
	}
	// A kill switch that halts to the end, and nothing resolved.
	s := newScript(t, Config{From: t0, To: t0 + 100_000}, "100")
	s.book(1000, "0.40", "0.42")
	s.c.Mark(Mark{Time: t0 + 50_000, Kind: MarkKillSwitch, Reason: "max drawdown", Actions: TripActions(true, false, true)})
	s.book(100_000, "0.40", "0.42")
	r = s.c.Finish(&s.st, Run{})
	want := []string{"no fill: the strategy never traded", "no market resolved during the run: no Brier score",
		"the agent was halted from 2023-11-14 22:14:10 UTC to the end (50.00% of the run: kill switch, max drawdown)"}
	if len(r.Warnings) != len(want) {
		t.Fatalf("warnings %q", r.Warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(r.Warnings[i], w) {
			t.Errorf("warning %d %q, want %q", i, r.Warnings[i], w)
		}
	}
}

// TestPricesAreInYesTerms: the band is the better of the YES book and the NO
// book's mirror, and the agent's quotes in the NO token appear as YES quotes.
func TestPricesAreInYesTerms(t *testing.T) {
	s := newScript(t, Config{From: t0, To: t0 + 10_000, Points: 10}, "100")
	s.apply(market.Event{Kind: market.EventBook, Time: t0 + 1000, Market: cond, Token: yes,
		Bids: []market.Level{{Price: dec("0.40"), Size: market.One}}, Asks: []market.Level{{Price: dec("0.46"), Size: market.One}}})
	// The NO book offers at 0.58 (a YES bid of 0.42) and bids 0.55 (a YES ask of 0.45).
	s.apply(market.Event{Kind: market.EventBook, Time: t0 + 1000, Market: cond, Token: no,
		Bids: []market.Level{{Price: dec("0.55"), Size: market.One}}, Asks: []market.Level{{Price: dec("0.58"), Size: market.One}}})
	s.st.Orders["a"] = &market.Order{ID: "a", Market: cond, Token: yes, Outcome: market.Yes, Side: market.Buy, Price: dec("0.39"), Size: market.One}
	s.st.Orders["b"] = &market.Order{ID: "b", Market: cond, Token: no, Outcome: market.No, Side: market.Buy, Price: dec("0.52"), Size: market.One}
	s.book(5000, "0.40", "0.46")
	r := s.c.Finish(&s.st, Run{})
	ps := r.Markets[0].Prices
	last := ps[len(ps)-1]
	if last.Bid != Money(dec("0.42")) || last.Ask != Money(dec("0.45")) || last.Mid != Money(dec("0.435")) ||
		last.Buy != Money(dec("0.39")) || last.Sell != Money(dec("0.48")) {
		t.Fatalf("price sample %+v", last)
	}
}

func TestOpenRoundTripIsMarkedAtTheEnd(t *testing.T) {
	s := newScript(t, Config{}, "100")
	s.book(1000, "0.40", "0.42")
	s.fillAs(2000, market.Yes, market.Buy, market.Taker, "0.42", "10", "0", "take")
	s.fillAs(3000, market.Yes, market.Sell, market.Maker, "0.45", "4", "0", "ask")
	s.book(4000, "0.50", "0.52")
	r := s.c.Finish(&s.st, Run{})
	if len(r.RoundTrips) != 1 {
		t.Fatalf("round trips %+v", r.RoundTrips)
	}
	// 4 sold at 0.45 (+0.12), 6 held at the mid 0.51 (+0.54); exit price the
	// average of both, (1.8 + 3.06) / 10.
	rt := r.RoundTrips[0]
	if rt.ExitReason != ExitOpen || rt.PnL != Money(dec("0.66")) || rt.Sold != Money(dec("4")) || rt.ExitPrice != Money(dec("0.486")) ||
		rt.Exit != t0+4000 || rt.MaxSize != Money(dec("10")) || rt.EntryBy != "take" {
		t.Fatalf("open round trip %+v", rt)
	}
}

// TestGoldenEventfulReport pins the JSON, text, HTML and CSV of the eventful run,
// with every new section. Rewrite with PITBOSS_UPDATE_GOLDEN=1 after an intended
// change, and read the diff.
func TestGoldenEventfulReport(t *testing.T) {
	txt := checkGolden(t, eventfulRun(t), "eventful")
	// Every section is there.
	for _, want := range []string{"warnings", "baselines", "events (kill switch", "denials by guard", "per day (UTC)", "round trips (4)",
		"flatten (kill switch)", "2023-11-15"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
}

// TestHTMLMarksEveryFillAndTrip: one fill marker per fill on the price chart,
// carrying its trade id, and the kill switch marked on every time chart.
func TestHTMLMarksEveryFillAndTrip(t *testing.T) {
	r := eventfulRun(t)
	var h bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	if n := strings.Count(page, `class="fill-mark"`); n != len(r.Fills) {
		t.Errorf("%d fill markers for %d fills", n, len(r.Fills))
	}
	for _, f := range r.Fills {
		if !strings.Contains(page, `data-trade="`+string(f.Trade)+`"`) {
			t.Errorf("no marker of trade %s", f.Trade)
		}
	}
	charts := strings.Count(page, `<svg id="`)
	if n := strings.Count(page, `class="mark mark-kill_switch"`); n != charts || charts != 5 {
		t.Errorf("%d kill-switch marks on %d charts, want one on each of 5", n, charts)
	}
	if !strings.Contains(page, `class="halted"`) {
		t.Error("the halted period is not shaded")
	}
}

package backtest

import (
	"context"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// sliceSource is a Source over events in memory (tests).
type sliceSource struct {
	markets []market.Info
	events  []market.Event
}

func (s *sliceSource) Name() string           { return "slice" }
func (s *sliceSource) Markets() []market.Info { return s.markets }
func (s *sliceSource) Span() (int64, int64, int64) {
	if len(s.events) == 0 {
		return 0, 0, 0
	}
	return s.events[0].Time, s.events[len(s.events)-1].Time, int64(len(s.events))
}
func (s *sliceSource) Events(ctx context.Context, emit func(ev *market.Event) bool) error {
	for i := range s.events {
		if !emit(&s.events[i]) {
			return nil
		}
	}
	return nil
}

func lv(p, s market.Micros) market.Level {
	return market.Level{Price: p * 10_000, Size: s * market.One}
}

func TestWindowFoldsWhatComesBeforeFrom(t *testing.T) {
	const c, y, n = market.ConditionID("0xc"), market.TokenID("y"), market.TokenID("n")
	src := &sliceSource{events: []market.Event{
		{Kind: market.EventBook, Time: 100, Market: c, Token: y, Bids: []market.Level{lv(40, 10)}, Asks: []market.Level{lv(45, 5)}},
		{Kind: market.EventLastTrade, Time: 110, Market: c, Token: y, Price: 450_000, Size: market.One, Side: market.Buy},
		{Kind: market.EventPriceChange, Time: 120, Market: c, Token: y, Changes: []market.LevelChange{
			{Token: y, Side: market.Buy, Price: 410_000, Size: 3 * market.One},
			{Token: n, Side: market.Sell, Price: 590_000, Size: 3 * market.One}}},
		{Kind: market.EventTickSize, Time: 130, Market: c, Token: y, OldTick: 10_000, NewTick: 1_000},
		{Kind: market.EventPriceChange, Time: 200, Market: c, Token: y, Changes: []market.LevelChange{
			{Token: y, Side: market.Sell, Price: 450_000, Size: 0}}},
		{Kind: market.EventLastTrade, Time: 300, Market: c, Token: y, Price: 410_000, Size: market.One, Side: market.Sell},
		{Kind: market.EventLastTrade, Time: 301, Market: c, Token: y, Price: 410_000, Size: market.One, Side: market.Sell},
	}}
	for _, tc := range []struct {
		name     string
		from, to int64
		want     []market.Event
	}{
		{"everything", 0, 0, src.events},
		{"up to 300", 0, 300, src.events[:6]},
		{"from 150: snapshots of the folded books at 150, the tick change as it happened", 150, 300, []market.Event{
			src.events[3],
			{Kind: market.EventBook, Time: 150, Market: c, Token: y, Bids: []market.Level{lv(41, 3), lv(40, 10)}, Asks: []market.Level{lv(45, 5)}},
			{Kind: market.EventBook, Time: 150, Market: c, Token: n, Asks: []market.Level{lv(59, 3)}},
			src.events[4], src.events[5]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &window{src: src, from: tc.from, to: tc.to}
			var got []market.Event
			if err := w.Events(context.Background(), func(ev *market.Event) bool {
				got = append(got, cloneEv(*ev))
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d events, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				if !reflect.DeepEqual(norm(got[i]), norm(tc.want[i])) {
					t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], tc.want[i])
				}
			}
			if !w.reached {
				t.Error("the window was not reached")
			}
		})
	}
}

func cloneEv(ev market.Event) market.Event {
	ev.Bids = append([]market.Level(nil), ev.Bids...)
	ev.Asks = append([]market.Level(nil), ev.Asks...)
	ev.Changes = append([]market.LevelChange(nil), ev.Changes...)
	return ev
}

func norm(ev market.Event) market.Event {
	if len(ev.Bids) == 0 {
		ev.Bids = nil
	}
	if len(ev.Asks) == 0 {
		ev.Asks = nil
	}
	if len(ev.Changes) == 0 {
		ev.Changes = nil
	}
	return ev
}

func TestFeedDeliversOnlyTheBoundMarkets(t *testing.T) {
	spec := loadAgent(t, quoterAgent) // binds one market of the sample's two
	src := sample(t)
	r := run(t, Config{Spec: spec, Source: src})
	_, _, total := src.Span()
	if r.Run.Events <= 0 || r.Run.Events >= total {
		t.Fatalf("%d events delivered of %d recorded on two markets", r.Run.Events, total)
	}
	if len(r.Markets) != 1 || r.Markets[0].Condition != src.Markets()[0].Condition {
		t.Fatalf("markets %+v", r.Markets)
	}
}

func TestFilterKeepsEveryEventOfTheBoundMarketsInAnyOrder(t *testing.T) {
	bound := market.Info{Condition: "0xbound", Tokens: [2]market.TokenID{"11", "12"}}
	p := &parts{infos: []market.Info{bound}}
	keep := p.filter().keep
	// Alternating markets, repeats, token-only events: the answer never depends on
	// the event before.
	tests := []struct {
		ev   market.Event
		want bool
	}{
		{market.Event{Market: "0xbound"}, true},
		{market.Event{Market: "0xbound"}, true},
		{market.Event{Market: "0xother"}, false},
		{market.Event{Market: "0xother"}, false},
		{market.Event{Market: "0xbound"}, true},
		{market.Event{Token: "12"}, true},
		{market.Event{Token: "99"}, false},
		{market.Event{Winner: "11"}, true},
		{market.Event{Market: "0xother"}, false},
		{market.Event{Token: "11"}, true},
		{market.Event{Market: "0xbound"}, true},
	}
	for i, tc := range tests {
		if got := keep(&tc.ev); got != tc.want {
			t.Errorf("event %d %+v: kept %v, want %v", i, tc.ev, got, tc.want)
		}
	}
}

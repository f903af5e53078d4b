package backtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// BenchmarkBacktestServiceTape's tape is the synthetic flow's events, in order, with
// each group of events that holds a trade followed by the book of both of its
// market's tokens as those events left them, at the group's time.
func TestServiceTapeAddsTheBooksAfterEachTrade(t *testing.T) {
	cfg := busyTape()
	cfg.Duration = 10 * time.Minute
	var plain, shaped []market.Event
	collect := func(dst *[]market.Event) func(ev *market.Event) bool {
		return func(ev *market.Event) bool {
			c := *ev
			c.Bids, c.Asks, c.Changes = slices.Clone(ev.Bids), slices.Clone(ev.Asks), slices.Clone(ev.Changes)
			*dst = append(*dst, c)
			return true
		}
	}
	if err := synthTapeWith(t, cfg).Events(context.Background(), collect(&plain)); err != nil {
		t.Fatal(err)
	}
	if err := serviceTape(t, cfg).Events(context.Background(), collect(&shaped)); err != nil {
		t.Fatal(err)
	}
	added := map[int]bool{} // the indexes in shaped of the snapshots added
	i, trades := 0, 0
	for j := 0; j < len(shaped); j++ {
		ev := &shaped[j]
		if i < len(plain) && ev.Kind == plain[i].Kind && ev.Time == plain[i].Time && ev.Token == plain[i].Token &&
			len(ev.Bids) == len(plain[i].Bids) && len(ev.Changes) == len(plain[i].Changes) {
			i++
			if ev.Kind == market.EventLastTrade {
				trades++
			}
			continue
		}
		// An added snapshot: right after a trade of its market at the same time, as
		// the pair YES, NO.
		prev := &shaped[j-1]
		if ev.Kind != market.EventBook || j+1 >= len(shaped) || shaped[j+1].Kind != market.EventBook ||
			ev.Time != prev.Time || ev.Market != prev.Market || plain[i-1].Kind == market.EventBook {
			t.Fatalf("event %d (%s at %d) is neither the synthetic tape's next event nor a snapshot after a trade", j, ev.Kind, ev.Time)
		}
		added[j], added[j+1] = true, true
		j++
	}
	if i != len(plain) || len(added) == 0 || trades == 0 {
		t.Fatalf("%d of %d synthetic events found in order, %d snapshots added, %d trades", i, len(plain), len(added), trades)
	}
	// The snapshots are the books the events before them built.
	var fold market.FoldedBooks
	for j := range shaped {
		ev := &shaped[j]
		if added[j] {
			fold.Snapshots(ev.Time, func(want *market.Event) bool {
				if want.Token == ev.Token && (!slices.Equal(want.Bids, ev.Bids) || !slices.Equal(want.Asks, ev.Asks)) {
					t.Fatalf("event %d: the snapshot of %s is not the book the events before it built", j, ev.Token)
				}
				return true
			})
		}
		fold.Apply(ev)
	}
}

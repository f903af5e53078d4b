package catalogue

import (
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// BenchmarkEvents: GET /events with the default query over the demo catalogue (13
// events, 16 markets): one engine read of every book, the data index's figures, the
// rendering (HTTP excluded).
func BenchmarkEvents(b *testing.B) {
	r := newRig(b, "", nil)
	defer r.stop()
	r.trade("bitcoin-above-150k-on-december-31-2026", 400_000, 100*market.One)
	for i := range 20 {
		r.rest("us-recession-in-2026", market.Micros(10_000*(i+1)), 10*market.One)
	}
	q := api.EventsQuery{Limit: api.EventsDefaultLimit, Order: api.EventOrderVolume}
	b.ReportAllocs()
	for b.Loop() {
		evs, err := r.svc.Events(r.ctx, r.h, q)
		if err != nil || len(evs) != 13 {
			b.Fatal(err)
		}
	}
}

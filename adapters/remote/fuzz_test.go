package remote

import (
	"encoding/json"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// FuzzPlacementStatus: whatever the venue answers to a post (status word, amounts),
// the order's status fits its type and its matched size stays within its size: a
// resting order is never reported cancelled, a FAK never live, a FOK either all
// matched or nothing, and MATCHED always means the whole size.
func FuzzPlacementStatus(f *testing.F) {
	for _, st := range []string{api.PlacementLive, api.PlacementMatched, api.PlacementDelayed, api.PlacementUnmatched, "", "weird"} {
		for typ := range 4 {
			f.Add(st, uint8(typ), uint8(market.Buy), int64(10_000_000), int64(4_000_000), int64(10_000_000))
			f.Add(st, uint8(typ), uint8(market.Sell), int64(10_000_000), int64(-5), int64(1<<62))
		}
	}
	f.Fuzz(func(t *testing.T, status string, typ, side uint8, size, making, taking int64) {
		req := agent.OrderRequest{Type: market.OrderType(typ % 4), Side: market.Side(side % 2), Size: market.Micros(size)}
		if req.Size <= 0 {
			return
		}
		st, matched := placementStatus(&req, status, market.Micros(making), market.Micros(taking))
		if matched < 0 || matched > req.Size {
			t.Fatalf("matched %d outside [0, %d]", matched, req.Size)
		}
		switch {
		case st == market.StatusMatched && matched != req.Size:
			t.Fatalf("MATCHED with %d of %d", matched, req.Size)
		case req.Type.Rests() && st != market.StatusLive && st != market.StatusMatched:
			t.Fatalf("a %v order reported %v", req.Type, st)
		case req.Type == market.FAK && st == market.StatusLive:
			t.Fatal("a FAK reported live")
		case req.Type == market.FOK && !(st == market.StatusMatched || st == market.StatusCanceled && matched == 0):
			t.Fatalf("a FOK reported %v with %d matched", st, matched)
		}
	})
}

// FuzzMarketInfo: any market object the venue may send converts into a market the
// agent can use (binary, a valid tick, an end date that is a real date or zero) or
// is refused; it never panics.
func FuzzMarketInfo(f *testing.F) {
	f.Add(`{"condition_id":"0x01","tokens":[{"token_id":"1","outcome":"Yes"},{"token_id":"2","outcome":"No"}],"minimum_tick_size":"0.01","minimum_order_size":"5","end_date_iso":"2026-06-30T00:00:00Z"}`)
	f.Add(`{"condition_id":"0x02","tokens":[{"token_id":"1","outcome":"Up","winner":true},{"token_id":"2","outcome":"Down"}],"minimum_tick_size":"0.001","end_date_iso":"2026-06-30"}`)
	f.Add(`{"condition_id":"0x03","tokens":[{"token_id":"1"}],"minimum_tick_size":"0.01"}`)
	f.Add(`{"condition_id":"0x04","tokens":[{"token_id":"1"},{"token_id":"2"}],"minimum_tick_size":"0.02","end_date_iso":"0000-01-01T00:00:00Z"}`)
	f.Fuzz(func(t *testing.T, body string) {
		var m api.Market
		if json.Unmarshal([]byte(body), &m) != nil {
			return
		}
		info, err := MarketInfo(&m)
		if err != nil {
			return
		}
		if !market.ValidTick(info.TickSize) || info.Tokens[market.Yes] != m.Tokens[0].TokenID {
			t.Fatalf("converted %+v from %s", info, body)
		}
		if info.EndDate < 0 || info.EndDate > 253402300799 {
			t.Fatalf("end date %d from %q", info.EndDate, m.EndDateISO)
		}
	})
}

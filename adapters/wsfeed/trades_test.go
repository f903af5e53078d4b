package wsfeed

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// TestTradeStatusesCountOnce: the dialect sends a trade event on every status
// change (MATCHED, MINED, CONFIRMED); the feed emits the trade's fills once, on
// the first event of its id.
func TestTradeStatusesCountOnce(t *testing.T) {
	var fills int
	fd, err := New(Config{URL: "ws://127.0.0.1:1", User: &api.APIKeyCreds{APIKey: "k"},
		Handler: func(ev *market.Event) {
			if ev.Kind == market.EventFill {
				fills++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	var last atomic.Int64
	var got atomic.Bool
	r := &reader{f: fd, ch: UserChannel, last: &last, got: &got}
	trade := func(id market.TradeID, status string) api.WSMessage {
		w := api.NewWSTrade(&api.Trade{ID: id, TakerOrderID: "0x01", Market: "0xc", AssetID: "1", Side: api.Side(market.Buy),
			Size: api.Decimal(market.One), Price: api.Decimal(market.One / 2), Status: status, Owner: "k",
			MakerAddress: "0x0000000000000000000000000000000000000001", TraderSide: "TAKER"}, 0)
		return api.WSMessage{Trade: &w}
	}
	for _, st := range []string{api.TradeMatched, api.TradeMined, api.TradeConfirmed} {
		r.user([]api.WSMessage{trade("t-1", st)})
	}
	if fills != 1 {
		t.Fatalf("three statuses of one trade gave %d fills", fills)
	}
	r.user([]api.WSMessage{trade("t-2", api.TradeMatched), trade("t-2", api.TradeConfirmed)})
	if fills != 2 {
		t.Fatalf("a second trade: %d fills", fills)
	}
	for i := range maxSeenTrades + 1 {
		r.firstSight(market.TradeID(strconv.Itoa(i)))
	}
	if len(r.trades) != maxSeenTrades || len(r.tradeRing) != maxSeenTrades {
		t.Fatalf("remembered %d/%d ids", len(r.trades), len(r.tradeRing))
	}
}

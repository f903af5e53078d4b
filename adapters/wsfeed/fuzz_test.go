package wsfeed

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// FuzzFeedFrames (client side): any sequence of server frames, split from the input
// at newlines, either fails to decode (the feed would reconnect) or is applied by
// the reader without panicking, and the feed's promises hold: no change, trade or
// tick event for an asset before its snapshot, books never contain empty or
// misordered levels.
func FuzzFeedFrames(f *testing.F) {
	files, _ := filepath.Glob("../../api/testdata/ws/*.json")
	var all [][]byte
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		all = append(all, bytes.TrimSpace(b))
		f.Add(b)
	}
	f.Add(bytes.Join(all, []byte("\n")))
	f.Add([]byte(`{"event_type":"book","asset_id":"100","market":"m","bids":[{"price":"0.4","size":"1"}],"asks":[],"seq":3}
{"event_type":"price_change","market":"m","timestamp":"1","price_changes":[{"asset_id":"100","price":"0.5","size":"2","side":"SELL","seq":4,"best_bid":"0.4","best_ask":"0.5"}]}
{"event_type":"price_change","market":"m","timestamp":"1","price_changes":[{"asset_id":"100","price":"0.5","size":"0","side":"SELL","seq":6,"best_bid":"0.4","best_ask":"0"}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		ready := map[market.TokenID]bool{}
		var bad atomic.Value
		fd, err := New(Config{URL: "ws://127.0.0.1:1", Assets: []market.TokenID{"100", "1", "52114319501245915516055106046884209969926127482827954674443846427813813222426"},
			Handler: func(ev *market.Event) {
				switch ev.Kind {
				case market.EventBook:
					ready[ev.Token] = true
				case market.EventPriceChange, market.EventLastTrade, market.EventTickSize:
					if !ready[ev.Token] {
						bad.Store("event before snapshot: " + ev.Kind.String())
					}
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		var lastSeen atomic.Int64
		var got atomic.Bool
		r := &reader{f: fd, ch: MarketChannel, last: &lastSeen, got: &got}
		for _, frame := range bytes.Split(in, []byte("\n")) {
			msgs, err := api.DecodeWSFrame(frame)
			if err != nil {
				continue
			}
			r.market(msgs)
		}
		if v := bad.Load(); v != nil {
			t.Fatal(v)
		}
		fd.mu.Lock()
		defer fd.mu.Unlock()
		for tok, st := range fd.books {
			for i, l := range st.book.Bids {
				if l.Size <= 0 || i > 0 && st.book.Bids[i-1].Price <= l.Price {
					t.Fatalf("%s: bids %+v", tok, st.book.Bids)
				}
			}
			for i, l := range st.book.Asks {
				if l.Size <= 0 || i > 0 && st.book.Asks[i-1].Price >= l.Price {
					t.Fatalf("%s: asks %+v", tok, st.book.Asks)
				}
			}
		}
	})
}

// FuzzPriceFrame (client side of /ws/rtds): a frame gives a price only of a
// wanted symbol, with a positive time and a finite value; never a panic.
func FuzzPriceFrame(f *testing.F) {
	f.Add([]byte(`{"topic":"crypto_prices","type":"update","timestamp":1753314064237,"payload":{"symbol":"btcusdt","timestamp":1753314064213,"value":67234.5}}`))
	f.Add([]byte(`{"topic":"crypto_prices_chainlink","type":"*","timestamp":1,"payload":{"symbol":"ETH/USD","timestamp":"17","value":"3456.7"}}`))
	f.Add([]byte(`{"topic":"subscription","type":"error","timestamp":1,"payload":{"error":"no","topic":"equity_prices"}}`))
	want := map[market.FeedSymbol]string{{Source: market.FeedCrypto, Symbol: "btcusdt"}: "crypto:btcusdt",
		{Source: market.FeedChainlink, Symbol: "eth/usd"}: "chainlink:eth/usd"}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, ok, _ := decodePriceFrame(b, want)
		if !ok {
			return
		}
		if ev.Kind != market.EventFeed || ev.Time <= 0 || math.IsNaN(ev.Value) || math.IsInf(ev.Value, 0) ||
			ev.Name != "crypto:btcusdt" && ev.Name != "chainlink:eth/usd" {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

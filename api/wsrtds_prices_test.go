package api

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestRTDSPriceRoundTrip(t *testing.T) {
	for _, v := range []float64{100000, 100123.456789, 0.25, 2.5, 0.000001, 3500.1} {
		b := AppendRTDSPrice(nil, RTDSPrice{Symbol: "btcusdt", Timestamp: 1753314064213, Value: v})
		p, err := DecodeRTDSPrice(b)
		if err != nil || p.Value != v || p.Symbol != "btcusdt" || p.Timestamp != 1753314064213 {
			t.Fatalf("%s: %+v %v", b, p, err)
		}
	}
	// The service's own example, a string timestamp and an extra member.
	p, err := DecodeRTDSPrice([]byte(`{"symbol":"SOLUSDT","timestamp":"1753314064213","value":189.55,"full_accuracy_value":"189.55"}`))
	if err != nil || p.Symbol != "solusdt" || p.Value != 189.55 {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{``, `[]`, `{"symbol":"x","timestamp":1}`, `{"symbol":"","timestamp":1,"value":1}`,
		`{"symbol":"x","timestamp":0,"value":1}`, `{"symbol":"x","timestamp":1,"value":"NaN"}`, `{"symbol":"x","timestamp":1,"value":"Inf"}`,
		`{"symbol":"x","timestamp":1,"value":1e999}`, `{"symbol":"x","timestamp":1.5,"value":1}`, `{"symbol":"x","timestamp":1,"value":"0x1p3"}`,
		`{"symbol":"x","timestamp":1,"value":null}`} {
		if _, err := DecodeRTDSPrice([]byte(bad)); !errors.Is(err, ErrRTDSPrice) {
			t.Errorf("%s accepted (%v)", bad, err)
		}
	}
}

func TestRTDSPriceFilters(t *testing.T) {
	syms := []market.FeedSymbol{{Source: market.FeedCrypto, Symbol: "btcusdt"}, {Source: market.FeedChainlink, Symbol: "btc/usd"},
		{Source: market.FeedCrypto, Symbol: "ethusdt"}}
	subs := RTDSPriceSubscriptions(syms)
	if len(subs) != 2 || subs[0].Topic != RTDSTopicCryptoPrices || subs[0].Filters != "btcusdt,ethusdt" ||
		subs[1].Topic != RTDSTopicChainlinkPrices || subs[1].Filters != `{"symbol":"btc/usd"}` {
		t.Fatalf("%+v", subs)
	}
	for _, s := range subs {
		src, ok := RTDSPriceSource(s.Topic)
		got, err := ParseRTDSPriceFilters(src, s.Filters, 10)
		if !ok || err != nil || len(got) == 0 || got[0].Source != src {
			t.Fatalf("%+v: %v %v", s, got, err)
		}
	}
	got, err := ParseRTDSPriceFilters(market.FeedCrypto, `["BTCUSDT"," solusdt"]`, 10)
	if err != nil || len(got) != 2 || got[0].Symbol != "btcusdt" || got[1].Symbol != "solusdt" {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := ParseRTDSPriceFilters(market.FeedCrypto, " ", 10); err != nil || got != nil {
		t.Fatalf("empty: %v %v", got, err)
	}
	for _, bad := range []string{`btc usdt`, `{"symbol":""}`, `[1]`, `a,,b`, `{`} {
		if _, err := ParseRTDSPriceFilters(market.FeedCrypto, bad, 10); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ParseRTDSPriceFilters(market.FeedCrypto, "a,b,c", 2); err == nil {
		t.Error("3 symbols accepted with max 2")
	}
}

// FuzzDecodeRTDSPrice (client side): an accepted payload has a bounded symbol, a
// positive time and a finite value, and encodes back to the same price.
func FuzzDecodeRTDSPrice(f *testing.F) {
	f.Add([]byte(`{"symbol":"btcusdt","timestamp":1753314064213,"value":67234.5}`))
	f.Add([]byte(`{"symbol":"eth/usd","timestamp":"1753314064213","value":"3456.78"}`))
	f.Add([]byte(`{"symbol":"x","timestamp":1,"value":-0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeRTDSPrice(b)
		if err != nil {
			if !errors.Is(err, ErrRTDSPrice) {
				t.Fatalf("error kind: %v", err)
			}
			return
		}
		if p.Symbol == "" || len(p.Symbol) > market.MaxFeedSymbol || p.Timestamp <= 0 || math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			t.Fatalf("accepted %+v", p)
		}
		q, err := DecodeRTDSPrice(AppendRTDSPrice(nil, p))
		if err != nil || q != p && !(q.Symbol == p.Symbol && q.Timestamp == p.Timestamp && q.Value == p.Value) {
			t.Fatalf("round trip %+v → %+v (%v)", p, q, err)
		}
	})
}

// FuzzParseRTDSPriceFilters (server side): accepted filters give at most max valid
// symbols of the source.
func FuzzParseRTDSPriceFilters(f *testing.F) {
	f.Add("btcusdt,ethusdt")
	f.Add(`{"symbol":"btc/usd"}`)
	f.Add(`["aapl","TSLA"]`)
	f.Fuzz(func(t *testing.T, s string) {
		syms, err := ParseRTDSPriceFilters(market.FeedEquity, s, 4)
		if err != nil {
			return
		}
		if len(syms) > 4 {
			t.Fatalf("%d symbols", len(syms))
		}
		for _, x := range syms {
			if y, err := market.ParseFeedSymbol(x.String()); err != nil || y != x || x.Source != market.FeedEquity {
				t.Fatalf("symbol %v: %v", x, err)
			}
		}
		_ = strconv.Quote(s)
	})
}

package market

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFeedSymbol(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want FeedSymbol
		err  string
	}{
		{"crypto:btcusdt", FeedSymbol{FeedCrypto, "btcusdt"}, ""},
		{"crypto:BTCUSDT", FeedSymbol{FeedCrypto, "btcusdt"}, ""},
		{"chainlink:btc/usd", FeedSymbol{FeedChainlink, "btc/usd"}, ""},
		{"equity:brk.b", FeedSymbol{FeedEquity, "brk.b"}, ""},
		{"btcusdt", FeedSymbol{}, "SOURCE:SYMBOL"},
		{"stock:aapl", FeedSymbol{}, "the source"},
		{"crypto:", FeedSymbol{}, "1-32"},
		{"crypto:" + strings.Repeat("a", 33), FeedSymbol{}, "1-32"},
		{"crypto:btc usdt", FeedSymbol{}, "letters"},
		{"crypto:btc:usdt", FeedSymbol{}, "letters"},
	} {
		got, err := ParseFeedSymbol(tc.in)
		if tc.err == "" {
			if err != nil || got != tc.want || got.String() != strings.ToLower(tc.in) {
				t.Errorf("%q: %+v %v", tc.in, got, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrFeedSymbol) {
			t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
		}
	}
}

// FuzzParseFeedSymbol: never panics; what parses prints back to itself (so a
// recording keyed by String finds the binding again), and every error is an
// ErrFeedSymbol.
func FuzzParseFeedSymbol(f *testing.F) {
	for _, s := range []string{"crypto:btcusdt", "chainlink:eth/usd", "equity:AAPL", ":", "crypto:", "x:y:z", "crypto:\x00", "equity:é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ParseFeedSymbol(s)
		if err != nil {
			if !errors.Is(err, ErrFeedSymbol) || !strings.HasPrefix(err.Error(), "feed symbol: ") {
				t.Fatalf("error %v", err)
			}
			return
		}
		again, err := ParseFeedSymbol(fs.String())
		if err != nil || again != fs || fs.String() != strings.ToLower(s) {
			t.Fatalf("%q -> %+v -> %+v %v", s, fs, again, err)
		}
	})
}

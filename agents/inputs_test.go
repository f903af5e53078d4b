package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

func TestFeedsAndSignalsAreRead(t *testing.T) {
	src := minimal + `feeds:
  btc: crypto:BTCUSDT
  eth: {symbol: "chainlink:eth/usd", stale: 10s}
signals:
  model: {source: http, stale: 30s, required: true}
  score: {source: file, path: score.txt, stale: 1m}
  odds: {source: command, command: [./odds.sh, --now], every: 2s, stale: 2m}
  view: {source: nats, stale: 1m}
signal_http:
  addr: 127.0.0.1:9470
  token: env:PITBOSS_SIGNAL_TOKEN
`
	s, err := opts.Parse("/a/agent.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []FeedBinding{{Name: "btc", Symbol: market.FeedSymbol{Source: market.FeedCrypto, Symbol: "btcusdt"}, Line: 6, Col: 8},
		{Name: "eth", Symbol: market.FeedSymbol{Source: market.FeedChainlink, Symbol: "eth/usd"}, Stale: 10 * time.Second, Line: 7, Col: 8}}
	if len(s.Feeds) != 2 || s.Feeds[0] != want[0] || s.Feeds[1] != want[1] {
		t.Fatalf("feeds %+v, want %+v", s.Feeds, want)
	}
	if len(s.Signals) != 4 {
		t.Fatalf("signals %+v", s.Signals)
	}
	m, f, c, v := s.Signals[0], s.Signals[1], s.Signals[2], s.Signals[3]
	if m.Source != SignalHTTP || m.Stale != 30*time.Second || !m.Required || m.Every != 0 {
		t.Errorf("model %+v", m)
	}
	if f.Source != SignalFile || f.Path != "/a/score.txt" || f.Every != DefaultSignalEvery || f.Required {
		t.Errorf("score %+v", f)
	}
	if c.Source != SignalCommand || strings.Join(c.Command, " ") != "/a/odds.sh --now" || c.Every != 2*time.Second {
		t.Errorf("odds %+v", c)
	}
	if v.Source != SignalNATS || v.Stale != time.Minute {
		t.Errorf("view %+v", v)
	}
	if s.SignalHTTP.Addr != "127.0.0.1:9470" || s.SignalHTTP.Token.String() != "env:PITBOSS_SIGNAL_TOKEN" {
		t.Errorf("signal_http %+v", s.SignalHTTP)
	}
	src2 := s.Sources()
	if len(src2.Feeds) != 2 || src2.Feeds[1].Symbol != "chainlink:eth/usd" || src2.Feeds[1].Stale != 10000 ||
		len(src2.Signals) != 4 || src2.Signals[0].Stale != 30000 {
		t.Errorf("sources %+v", src2)
	}
}

func TestFeedAndSignalProblems(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"feeds: [btc]", "must be a mapping of feed names"},
		{"feeds: {btc: btcusdt}", "must be SOURCE:SYMBOL"},
		{"feeds: {btc: 'stock:aapl'}", "the source must be crypto, chainlink or equity"},
		{"feeds: {btc: 'crypto:btc usdt'}", "letters, digits"},
		{"feeds: {btc: {stale: 1s}}", "symbol is required"},
		{"feeds: {btc: {symbol: 'crypto:x', stale: -1s}}", "must not be negative"},
		{"feeds: {1btc: 'crypto:x'}", "identifiers"},
		{"signals: {m: {source: http}}", "stale is required"},
		{"signals: {m: {stale: 1s}}", "source is required"},
		{"signals: {m: {source: carrier_pigeon, stale: 1s}}", "is not a source"},
		{"signals: {m: {source: file, stale: 1s}}", "needs path"},
		{"signals: {m: {source: command, stale: 1s}}", "needs command"},
		{"signals: {m: {source: file, path: x, every: 1ms, stale: 1s}}", "every must be at least"},
		{"signals: {m: {source: nats, every: 1s, stale: 1s}}", "for file and command signals"},
		{"signals: {m: {source: http, stale: 1s}}", "signal_http.token is required"},
		{"signals: {m: {source: nats, stale: 1s}}\nsignal_http: {token: env:T}", "no signal has source: http"},
		{"signals: {m: {source: http, stale: 1s}}\nsignal_http: {addr: '0.0.0.0:80', token: env:T}", "must be a loopback"},
		{"signals: {m: {source: http, stale: 1s}}\nsignal_http: {token: 'keystore:/k'}", "use env:VAR"},
		{"signals: {m: {source: http, stale: 1s}}\nsignal_http: {token: 'keyring:k'}", "use env:VAR"},
		{"signals: {m: {source: nats, stale: 1s, colour: red}}", "colour"},
	} {
		_, err := opts.Parse("a.yaml", []byte(minimal+tc.src+"\n"))
		var ps Problems
		if !errors.As(err, &ps) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %q", tc.src, err, tc.want)
			continue
		}
		for _, p := range ps {
			if p.Line < 5 {
				t.Errorf("%s: problem not positioned in the section: %s", tc.src, p)
			}
		}
	}
}

// TestSignalTokenIsNeverInTheFile: a bearer token written in place of its
// reference is refused without being echoed.
func TestSignalTokenIsNeverInTheFile(t *testing.T) {
	secret := "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	_, err := opts.Parse("a.yaml", []byte(minimal+"signals: {m: {source: http, stale: 1s}}\nsignal_http: {token: '"+secret+"'}\n"))
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("err %v", err)
	}
}

// TestCheckNamesUnboundInputs: the strategy's feeds and signals must be bound, and
// a feed bound for nothing is named with a suggestion.
func TestCheckNamesUnboundInputs(t *testing.T) {
	dir := t.TempDir()
	st := "name: s\nfeeds: [btc]\nsignals: [model]\nquotes:\n  bid: {side: BUY, price: feeds.btc.price * 0 + signals.model, size: 1}\n"
	if err := os.WriteFile(filepath.Join(dir, "strategy.yaml"), []byte(st), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(extra string) *Spec {
		p := filepath.Join(dir, "agent.yaml")
		if err := os.WriteFile(p, []byte(minimal+extra), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Options{Getenv: opts.Getenv}.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	_, err := write("").LoadStrategy()
	if err == nil || !strings.Contains(err.Error(), "feed btc of strategy s is not bound") || !strings.Contains(err.Error(), "signal model of strategy s is not bound") {
		t.Fatalf("err %v", err)
	}
	_, err = write("feeds: {btc: 'crypto:btcusdt', btx: 'crypto:x'}\nsignals: {model: {source: nats, stale: 5s}}\n").LoadStrategy()
	if err == nil || !strings.Contains(err.Error(), "declares no feed btx (did you mean btc?)") {
		t.Fatalf("err %v", err)
	}
	if _, err := write("feeds: {btc: 'crypto:btcusdt'}\nsignals: {model: {source: nats, stale: 5s}, extra: {source: nats, stale: 5s}}\n").LoadStrategy(); err != nil {
		t.Fatal(err)
	}
}

package strategytest

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestParseReadsEveryDirective(t *testing.T) {
	src := `# a comment
strategy s.yaml
param a=1
market main 0xc1 yes=101 no=102 tick=0.001 min=2 end=99 fee_bps=20 neg_risk
balance 12.5
position main NO 3 @0.25
guard max_order_notional=5
@1 book main YES bids 0.4x1 0.3x2 asks 0.6x1
@2 change main YES BUY 0.41x3 NO SELL 0.5x0
@3 trade main NO SELL 0.5x2
@4 fill main YES BUY 0.4x1 fee=0.01
@5 order main YES BUY 0.4x2 id=o1 matched=2 update
@6 tick main 0.01
@7 resolved main NO
@8 timer
----
expected
`
	c, err := Parse("dir/case.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Markets[0].Info
	switch {
	case c.Strategy != "dir/s.yaml", len(c.Overrides) != 1 || c.Overrides[0].Line != 3:
		t.Fatalf("strategy %q overrides %+v", c.Strategy, c.Overrides)
	case m.TickSize != 1_000 || m.MinSize != 2*market.One || m.EndDate != 99 || m.FeeBps != 20 || !m.NegRisk || m.Tokens[market.No] != "102":
		t.Fatalf("market %+v", m)
	case c.Balance != 12_500_000 || c.Positions[0].Size != 3*market.One || c.Positions[0].Cost != 750_000:
		t.Fatalf("balance %d positions %+v", c.Balance, c.Positions)
	case len(c.Extra) != 1 || c.Extra[0] != "guard max_order_notional=5":
		t.Fatalf("extra %q", c.Extra)
	case c.Expected != "expected\n":
		t.Fatalf("expected %q", c.Expected)
	}
	kinds := []market.EventKind{market.EventBook, market.EventPriceChange, market.EventLastTrade, market.EventFill,
		market.EventOrder, market.EventTickSize, market.EventResolved, market.EventTimer}
	if len(c.Events) != len(kinds) {
		t.Fatalf("%d events", len(c.Events))
	}
	for i, k := range kinds {
		if ev := c.Events[i].Event; ev.Kind != k || ev.Time != int64(i+1) {
			t.Errorf("event %d: %v at %d, want %v", i, ev.Kind, ev.Time, k)
		}
	}
	if ch := c.Events[1].Event.Changes; len(ch) != 2 || ch[1].Token != "102" || ch[1].Size != 0 {
		t.Errorf("changes %+v", ch)
	}
	if o := c.Events[4].Event.Order; o.ID != "o1" || o.Status != market.StatusMatched || c.Events[4].Event.OrderUpdate != market.OrderUpdated {
		t.Errorf("order %+v", o)
	}
	st := c.State()
	if st.Markets["0xc1"] == nil || st.Positions["102"] == nil || st.Balance != c.Balance {
		t.Fatal("state")
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	tests := []struct{ src, want string }{
		{"strategy s.yaml\nmarket m 0x1\n@1 book m MAYBE bids 0.4x1\n----\n", "c.txt:3:"},
		{"strategy s.yaml\nmarket m 0x1\n@1 bogus m\n----\n", `unknown event "bogus"`},
		{"strategy s.yaml\nmarket m 0x1\nfrobnicate\n----\n", `unknown directive "frobnicate"`},
		{"strategy s.yaml\nmarket m 0x1 colour=red\n----\n", `unknown attribute "colour"`},
		{"strategy s.yaml\nmarket m 0x1\n@1 trade m YES BUY 0.4\n----\n", "PRICExSIZE"},
		{"market m 0x1\n----\n", "no strategy line"},
		{"strategy s.yaml\nmarket m 0x1\n", "no \"----\" line"},
	}
	for _, tt := range tests {
		_, err := Parse("c.txt", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error %v, want %q", tt.src, err, tt.want)
		}
	}
}

func TestFormatIntent(t *testing.T) {
	tests := []struct {
		it   market.Intent
		want string
	}{
		{market.Intent{Kind: market.IntentQuote, Key: "m/bid", Outcome: market.Yes, Side: market.Buy, Price: 450_000, Size: 10 * market.One, PostOnly: true},
			"quote m/bid YES BUY 0.45 x10 GTC post_only"},
		{market.Intent{Kind: market.IntentQuote, Key: "m/g", Outcome: market.No, Side: market.Sell, Price: 1_000, Size: 12_340_000, Type: market.GTD, Expiration: 99},
			"quote m/g NO SELL 0.001 x12.34 GTD exp=99"},
		{market.Intent{Kind: market.IntentTake, Key: "m/arb", Outcome: market.No, Side: market.Buy, Price: 530_000, Size: 5 * market.One, Type: market.FOK},
			"take m/arb NO BUY 0.53 x5 FOK"},
		{market.Intent{Kind: market.IntentCancel, Key: "m/ask", Outcome: market.Yes, Side: market.Sell}, "cancel m/ask YES SELL"},
		{market.Intent{Kind: market.IntentFlatten, Key: "m/stop"}, "flatten m/stop"},
	}
	for _, tt := range tests {
		if got := FormatIntent(&tt.it); got != tt.want {
			t.Errorf("FormatIntent = %q, want %q", got, tt.want)
		}
	}
}

func TestRunAnnotatesEachIntent(t *testing.T) {
	c, err := Parse("../testdata/golden/x.txt", []byte(`strategy ../../../agents/examples/quoter/strategy.yaml
market main 0xc1 yes=101 no=102
@1 book main YES bids 0.45x100 asks 0.49x100
----
`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(c, func(ev *market.Event, st *market.State, it *market.Intent) []string {
		return []string{"    note: " + it.Kind.String()}
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "    note: ") != 3 || !strings.Contains(out, "  quote main/bid YES BUY 0.45 x10 GTC post_only\n    note: quote\n") {
		t.Fatalf("output:\n%s", out)
	}
}

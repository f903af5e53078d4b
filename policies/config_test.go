package policies

import (
	"errors"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

func TestZeroConfigIsTheConservativeDefault(t *testing.T) {
	got := Config{}.Resolved()
	want := Config{
		MaxOrderSize: DefaultMaxOrderSize, MaxOrderNotional: DefaultMaxOrderNotional, MaxPosition: DefaultMaxPosition,
		MaxMarketPosition: DefaultMaxMarketPosition, MaxGrossExposure: DefaultMaxGrossExposure, MaxOpenOrders: DefaultMaxOpenOrders,
		PriceBand: DefaultPriceBand, MaxOrdersPerMinute: DefaultMaxOrdersPerMinute, MaxDailyLoss: DefaultMaxDailyLoss,
		MaxDrawdown: DefaultMaxDrawdown,
	}
	if got.MaxOrderSize != want.MaxOrderSize || got.PriceBand != m("0.1") || got.MaxOrderNotional != m("50") ||
		got.MaxOpenOrders != 20 || got.MaxDrawdown != want.MaxDrawdown || got.FlattenOnHalt {
		t.Fatalf("resolved %+v", got)
	}
	if p := (Config{}).Problems(); p != nil {
		t.Fatalf("zero config has problems: %v", p)
	}
	// explicit values are kept
	if r := (Config{MaxOpenOrders: 3, PriceBand: m("0.02")}).Resolved(); r.MaxOpenOrders != 3 || r.PriceBand != m("0.02") {
		t.Fatalf("resolved %+v", r)
	}
}

func TestConfigProblemsReportsEveryProblem(t *testing.T) {
	cfg := Config{
		MaxOrderSize: -1, MaxOrderNotional: market.MaxMicros + 1, PriceBand: market.One, MaxOpenOrders: -2,
		MaxOrdersPerMinute: MaxOrdersPerMinuteLimit + 1, MaxPosition: m("1.005"),
		Custom: []CustomGuard{
			{Name: "ok", DenyIf: "size > 10"},
			{Name: "ok", DenyIf: "size > 10"},
			{Name: "Bad Name", DenyIf: "size >"},
			{DenyIf: "sizee > 3"},
			{Name: "empty"},
		},
	}
	got := cfg.Problems()
	var lines []string
	for _, p := range got {
		lines = append(lines, p.String())
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"max_order_size: must not be negative",
		"max_order_notional: must be at most",
		"price_band: must be below 1",
		"max_open_orders: must be between 0",
		"max_orders_per_minute: must be between 0",
		`custom[1].name: "ok" is also the name of custom[0]`,
		`custom[2].name: "Bad Name": use lower-case`,
		"custom[2].deny_if:1:",
		"custom[3].name: is required",
		"custom[3].deny_if:1:1: unknown name sizee (did you mean size?)",
		"custom[4].deny_if: is required",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "price_band") || !strings.Contains(err.Error(), "custom[3]") {
		t.Fatalf("New error %v", err)
	}
	if _, err := New(Config{}, WithGeoblock(Geoblock{Status: 7})); err == nil {
		t.Fatal("New accepted an invalid geoblock status")
	}
}

func TestCustomGuards(t *testing.T) {
	tests := []struct {
		name   string
		denyIf string
		reason string
		setup  func(s *market.State)
		intent *market.Intent
		deny   bool
		want   string // reason substring
	}{
		{name: "denies when the expression holds", denyIf: "notional > 4 && buy", reason: "too big", intent: quote(yes, market.Buy, "0.45", "10"), deny: true, want: "too big"},
		{name: "allows when it does not", denyIf: "notional > 4 && buy", intent: quote(yes, market.Buy, "0.35", "10")},
		{name: "default reason quotes the expression", denyIf: "side == 'BUY'", intent: quote(yes, market.Buy, "0.45", "10"), deny: true, want: "deny_if: side == 'BUY'"},
		{name: "sees the book", denyIf: "has_mid && spread > 0.015 && best_bid == 0.44 && best_ask == 0.46 && mid == 0.45", intent: quote(yes, market.Buy, "0.45", "10"), deny: true},
		{name: "sees the mirrored book of the NO token", denyIf: "mid == 0.55 && best_bid == 0.54 && outcome == 'NO'", intent: quote(no, market.Buy, "0.55", "10"), deny: true},
		{name: "sees the position", denyIf: "held == 20 && open_sells == 5 && reduces && sell", setup: func(s *market.State) {
			hold(s, yes, "20", "0.4")
			openOrder(s, "0xs1", yes, market.Sell, "0.5", "5")
		}, intent: quote(yes, market.Sell, "0.46", "15"), deny: true},
		{name: "sees the time to the end of the market", denyIf: "hours_to_end <= 24 && time > 0", intent: quote(yes, market.Buy, "0.45", "10"), deny: true},
		{name: "no end date is infinitely far", denyIf: "hours_to_end < 1000000", intent: quote(yes2, market.Buy, "0.45", "10")},
		{name: "sees equity and status", denyIf: "equity == 100 && balance == 100 && geoblock == 'allowed' && account_mode == 'normal' && day_pnl == 0", intent: quote(yes, market.Buy, "0.45", "10"), deny: true},
		{name: "a runtime error denies", denyIf: "[1, 2][open_orders + 5] > 0", intent: quote(yes, market.Buy, "0.45", "10"), deny: true, want: "deny_if failed"},
		{name: "does not apply to cancels", denyIf: "true", intent: &market.Intent{Kind: market.IntentCancelAll}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newChain(t, Config{Custom: []CustomGuard{{Name: "g", DenyIf: tt.denyIf, Reason: tt.reason}}})
			s := fixture()
			if tt.setup != nil {
				tt.setup(s)
			}
			d := c.Evaluate(s, tt.intent)
			if d.Allowed == tt.deny {
				t.Fatalf("allowed=%v, want deny=%v (%v)", d.Allowed, tt.deny, d.Err())
			}
			if tt.deny {
				if d.Denied.Guard != "custom:g" || !errors.Is(d.Err(), ErrCustom) || !strings.Contains(d.Denied.Reason, tt.want) {
					t.Fatalf("denial %+v", d.Denied)
				}
			}
		})
	}
}

func TestCompileDenyIfPositionsErrorsInTheFile(t *testing.T) {
	_, err := CompileDenyIf("size > 1 && pirce < 2", exprenv.Origin{File: "agent.yaml", Line: 12, Col: 14})
	var ee *exprenv.Error
	if !errors.As(err, &ee) || ee.Line != 12 || ee.Col != 26 || !strings.Contains(ee.Message, "did you mean price?") {
		t.Fatalf("error %#v", err)
	}
	if _, err := CompileDenyIf("size + 1", exprenv.Origin{}); err == nil {
		t.Fatal("a non-boolean deny_if compiled")
	}
	if _, err := CompileDenyIf("now() > 0", exprenv.Origin{}); err == nil {
		t.Fatal("the clock is reachable from deny_if")
	}
}

// FuzzDenyIf compiles arbitrary expressions and evaluates those that compile: it must
// never panic, compile errors must be positioned inside the expression, and an
// evaluation failure must deny.
func FuzzDenyIf(f *testing.F) {
	for _, s := range []string{
		"size > 10", "notional > 4 && buy", "[1,2][open_orders+5] > 0", "mid / 0 > 1", "hours_to_end < 1",
		"let x = size; x > 1", "size >", "(((", "'a' + 1 > 0", "held in [1,2]", "reduce([1,2], # + #acc) > 2",
		"map(1..100000, #) | len() > 0", "token matches '1.*'", "\"\\u0000\" == key", "sise > 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := CompileDenyIf(src, exprenv.Origin{})
		if err != nil {
			var ee *exprenv.Error
			if !errors.As(err, &ee) {
				t.Fatalf("compile error of %q is %T, not *exprenv.Error", src, err)
			}
			if ee.Line < 1 || ee.Col < 1 {
				t.Fatalf("compile error of %q has position %d:%d", src, ee.Line, ee.Col)
			}
			return
		}
		c, err := New(Config{Custom: []CustomGuard{{Name: "f", DenyIf: src}}}, WithGeoblock(Geoblock{Status: GeoAllowed}))
		if err != nil {
			t.Fatalf("compiled alone but New fails: %v", err)
		}
		d := c.Evaluate(fixture(), quote(yes, market.Buy, "0.45", "10"))
		if !d.Allowed && d.Denied.Guard != "custom:f" {
			t.Fatalf("%q: denied by %s", src, d.Denied.Guard)
		}
	})
}

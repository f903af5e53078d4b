package policies

import (
	"encoding/json"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/market"
)

func TestAuditRecordRendersForZapJSONAndHumans(t *testing.T) {
	c, col := newChain(t, Config{MaxOrderNotional: m("4")})
	s := fixture()
	c.Evaluate(s, quote(yes, market.Buy, "0.45", "10"))
	c.Evaluate(s, &market.Intent{Kind: market.IntentCancelAll, Market: cond})
	c.Trip(s.Time, "operator bob")
	if len(col.recs) != 3 {
		t.Fatalf("%d records", len(col.recs))
	}
	den, allow, trip := col.recs[0], col.recs[1], col.recs[2]

	t.Run("zap", func(t *testing.T) {
		core, logs := observer.New(zapcore.InfoLevel)
		zap.New(core).Info("decision", zap.Object("audit", den))
		fields := logs.All()[0].ContextMap()["audit"].(map[string]any)
		if fields["guard"] != GuardOrderNotional || fields["allowed"] != false || fields["kind"] != "decision" ||
			fields["time_ms"] != t0 || fields["agent"] != "test" {
			t.Fatalf("fields %v", fields)
		}
		in := fields["intent"].(map[string]any)
		if in["price"] != "0.45" || in["size"] != "10" || in["side"] != "BUY" || in["token"] != string(yes) {
			t.Fatalf("intent fields %v", in)
		}
	})
	t.Run("json", func(t *testing.T) {
		b, err := json.Marshal(den)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		in := got["intent"].(map[string]any)
		if got["guard"] != GuardOrderNotional || got["allowed"] != false || in["price"] != "0.45" || in["kind"] != "quote" || in["outcome"] != "YES" {
			t.Fatalf("json %s", b)
		}
		b, _ = json.Marshal(trip)
		if string(b) != `{"kind":"trip","agent":"test","time_ms":1767225600000,"guard":"kill_switch","allowed":false,"reason":"operator bob"}` {
			t.Fatalf("trip json %s", b)
		}
	})
	t.Run("string", func(t *testing.T) {
		tests := []struct {
			r    Record
			want string
		}{
			{den, "deny quote q1 101 BUY 10@0.45 by max_order_notional: order notional 4.5 exceeds max_order_notional 4"},
			{allow, "allow cancel_all " + string(cond)},
			{trip, "trip: operator bob"},
		}
		for _, tt := range tests {
			if got := tt.r.String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		}
	})
}

func TestNilSinkDiscards(t *testing.T) {
	c, err := New(Config{}, WithSink(nil), WithGeoblock(Geoblock{Status: GeoAllowed}))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Evaluate(fixture(), quote(yes, market.Buy, "0.45", "10")); !d.Allowed {
		t.Fatal(d.Err())
	}
}

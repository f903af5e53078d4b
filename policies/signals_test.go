package policies

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestStaleSignalsDenyNewOrdersExactlyFromTheLimit: with a signal received at t
// and a limit of 500 ms, quotes and takes pass at t+499 and are denied from t+500
// on, as before the first value; cancels and flattening always pass.
func TestStaleSignalsDenyNewOrdersExactlyFromTheLimit(t *testing.T) {
	c, _ := newChain(t, Config{}, WithGuards(StaleSignals([]SignalLimit{{Name: "model", Stale: 500}})))
	s := fixture()
	denied := func(it *market.Intent) string {
		d := c.Evaluate(s, it)
		if d.Allowed {
			return ""
		}
		return d.Denied.Guard + ": " + d.Denied.Reason
	}
	if got := denied(quote(yes, market.Buy, "0.44", "10")); !strings.Contains(got, "signal_stale: signal model has no value yet") {
		t.Fatalf("before the first value: %q", got)
	}
	s.Apply(&market.Event{Kind: market.EventSignal, Time: t0 + 1000, Name: "model", Value: 0.4})
	for _, tc := range []struct {
		at   int64
		want string
	}{{1000, ""}, {1499, ""}, {1500, "signal_stale: signal model is stale: its value is 500 ms old, the limit is 500 ms"}, {9000, "is stale"}} {
		s.Time = t0 + tc.at
		for _, it := range []*market.Intent{quote(yes, market.Buy, "0.44", "10"), take(yes, market.Buy, "0.46", "10")} {
			if got := denied(it); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("at +%d %s: %q, want %q", tc.at, it.Kind, got, tc.want)
			}
		}
		for _, it := range []*market.Intent{{Kind: market.IntentCancel, Key: "q1", Market: cond}, {Kind: market.IntentFlatten, Market: cond}} {
			if got := denied(it); got != "" {
				t.Errorf("at +%d %s denied: %s", tc.at, it.Kind, got)
			}
		}
	}
}

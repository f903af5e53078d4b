package report

import (
	"encoding/json"
	"testing"
)

// FuzzMoneyText: Money parses what it prints and refuses what is not an exact
// decimal; whatever it accepts prints back to an equal value.
func FuzzMoneyText(f *testing.F) {
	for _, s := range []string{"0", "12.5", "-0.000001", "1e3", "", "-", "0.0000001", "9007199254.740992"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m Money
		if err := m.UnmarshalText([]byte(s)); err != nil {
			return
		}
		b, _ := m.MarshalText()
		var back Money
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Fatalf("%q → %s → %v (%v)", s, b, back, err)
		}
	})
}

// FuzzReportJSON: a report read back from arbitrary JSON marshals without error.
func FuzzReportJSON(f *testing.F) {
	r := knownRun(f, Config{})
	b, _ := r.MarshalIndent()
	f.Add(b)
	f.Add([]byte(`{"summary":{"sharpe":null,"pnl":"-1.5"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Report
		if json.Unmarshal(data, &r) != nil {
			return
		}
		if _, err := r.MarshalIndent(); err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
	})
}

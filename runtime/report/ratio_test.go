package report

import (
	"math"
	"testing"
)

// TestRatioPrintsTwoDecimalsOrADash: the tables' form of a figure, and of an
// undefined one (no variance, no loss).
func TestRatioPrintsTwoDecimalsOrADash(t *testing.T) {
	for _, tc := range []struct {
		r              Ratio
		fixed, percent string
	}{
		{1.25, "1.25", "125.00%"},
		{-0.0312, "-0.03", "-3.12%"},
		{0, "0.00", "0.00%"},
		{Ratio(math.NaN()), "—", "—"},
		{Ratio(math.Inf(1)), "—", "—"},
		{Ratio(math.Inf(-1)), "—", "—"},
	} {
		if got := tc.r.Fixed(); got != tc.fixed {
			t.Errorf("Ratio(%v).Fixed() = %q, want %q", float64(tc.r), got, tc.fixed)
		}
		if got := tc.r.Percent(); got != tc.percent {
			t.Errorf("Ratio(%v).Percent() = %q, want %q", float64(tc.r), got, tc.percent)
		}
	}
}

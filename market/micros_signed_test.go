package market

import (
	"errors"
	"testing"
)

func TestParseSignedMicrosAcceptsWhatStringWrites(t *testing.T) {
	tests := []struct {
		in   string
		want Micros
		err  error
	}{
		{"0", 0, nil},
		{"12.5", 12_500_000, nil},
		{"-12.5", -12_500_000, nil},
		{"-0.000001", -1, nil},
		{"-0", 0, nil},
		{"", 0, ErrNotDecimal},
		{"-", 0, ErrNotDecimal},
		{"--1", 0, ErrNegativeAmount},
		{"+1", 0, ErrNotDecimal},
		{"-0.0000001", 0, ErrTooPrecise},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSignedMicros(tc.in)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("ParseSignedMicros(%q) = %v, %v; want %v, %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

func FuzzParseSignedMicros(f *testing.F) {
	for _, s := range []string{"0", "-1", "12.5", "-0.000001", "--1", "-", "", "1e3", "-999999999999.999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSignedMicros(s)
		if err != nil {
			if m != 0 {
				t.Fatalf("%q: error %v with value %v", s, err, m)
			}
			return
		}
		// What it accepts reads back from its canonical form.
		back, err := ParseSignedMicros(m.String())
		if err != nil || back != m {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, m, m.String(), back, err)
		}
	})
}

package market

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"
)

func TestParseMicros(t *testing.T) {
	tests := []struct {
		in   string
		want Micros
		err  error
	}{
		{"0", 0, nil},
		{"1", One, nil},
		{"0.5", 500_000, nil},
		{"12.82", 12_820_000, nil},
		{"0.000001", 1, nil},
		{"0.0100000000", 10_000, nil},
		{"100", 100 * One, nil},
		{"007.5", 7_500_000, nil},
		{"9007199254.740992", MaxMicros, nil},
		{"9007199254.740993", 0, ErrOutOfRange},
		{"99999999999999999999999", 0, ErrOutOfRange},
		{"0.0000001", 0, ErrTooPrecise},
		{"1.2345678", 0, ErrTooPrecise},
		{"-1", 0, ErrNegativeAmount},
		{"-", 0, ErrNotDecimal},
		{"", 0, ErrNotDecimal},
		{".5", 0, ErrNotDecimal},
		{"5.", 0, ErrNotDecimal},
		{"1e3", 0, ErrNotDecimal},
		{"+1", 0, ErrNotDecimal},
		{" 1", 0, ErrNotDecimal},
		{"1.2.3", 0, ErrNotDecimal},
		{"0.00000001x", 0, ErrNotDecimal},
		{"NaN", 0, ErrNotDecimal},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMicros(tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("ParseMicros(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if err == nil && got != tt.want {
				t.Fatalf("ParseMicros(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestMicrosString(t *testing.T) {
	tests := []struct {
		in   Micros
		want string
	}{
		{0, "0"}, {One, "1"}, {500_000, "0.5"}, {12_820_000, "12.82"}, {1, "0.000001"},
		{-1, "-0.000001"}, {-2_500_000, "-2.5"}, {100 * One, "100"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("Micros(%d).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMicrosFromDecimal(t *testing.T) {
	if m, err := MicrosFromDecimal(decimal.RequireFromString("-0.25")); err != nil || m != -250_000 {
		t.Fatalf("got %d, %v", m, err)
	}
	if _, err := MicrosFromDecimal(decimal.RequireFromString("0.0000005")); !errors.Is(err, ErrTooPrecise) {
		t.Fatalf("want ErrTooPrecise, got %v", err)
	}
	if _, err := MicrosFromDecimal(decimal.RequireFromString("1e20")); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("want ErrOutOfRange, got %v", err)
	}
}

func TestMulDiv(t *testing.T) {
	if n, ok := Notional(560_000, 21_040_000); !ok || n != 11_782_400 {
		t.Fatalf("Notional = %d, %v", n, ok)
	}
	if n, ok := Notional(One, MaxMicros); !ok || n != MaxMicros {
		t.Fatalf("Notional(max) = %d, %v", n, ok)
	}
	if _, ok := MulDiv(MaxMicros*512, MaxMicros*512, 1); ok {
		t.Fatal("overflow not reported")
	}
	if _, ok := MulDiv(-1, 1, 1); ok {
		t.Fatal("negative operand accepted")
	}
}

func TestParseMicrosNoAlloc(t *testing.T) {
	n := testing.AllocsPerRun(100, func() { _, _ = ParseMicros("12345.678901") })
	if n != 0 {
		t.Fatalf("ParseMicros allocates %v times", n)
	}
}

// FuzzParseMicros checks that parsing never panics, agrees with shopspring/decimal on
// every accepted input and round-trips through String.
func FuzzParseMicros(f *testing.F) {
	for _, s := range []string{"0", "0.5", "12.82", "1.0000001", "-3", "1e5", "9007199254.740992", ".", "00.010"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMicros(s)
		if err != nil {
			return
		}
		d, derr := decimal.NewFromString(s)
		if derr != nil {
			t.Fatalf("accepted %q that decimal rejects: %v", s, derr)
		}
		if !d.Equal(m.Decimal()) {
			t.Fatalf("ParseMicros(%q) = %s, decimal says %s", s, m, d)
		}
		back, err := ParseMicros(m.String())
		if err != nil || back != m {
			t.Fatalf("round trip of %q: %q -> %d, %v", s, m.String(), back, err)
		}
	})
}

func BenchmarkParseMicros(b *testing.B) {
	if got, err := ParseMicros("12345.678901"); err != nil || got != 12_345_678_901 {
		b.Fatalf("ParseMicros = %v, %v; want 12345.678901 (the benchmark would time another path)", got, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ParseMicros("12345.678901")
	}
}

func BenchmarkMicrosAppend(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	for b.Loop() {
		buf = Micros(12_345_678_901).AppendTo(buf[:0])
	}
}

package market

import (
	"errors"
	"math"
	"math/bits"
	"strconv"

	"github.com/shopspring/decimal"
)

// Micros is an exact quantity in millionths: 1_000_000 is 1.0. Prices (collateral per
// share), sizes (shares) and collateral amounts all use it, matching the 6 decimals
// of collateral and outcome tokens on the CLOB API.
type Micros int64

// Unit constants.
const (
	// One is 1.0 in micro-units: one share, one unit of collateral, the price of a
	// winning outcome token.
	One Micros = 1_000_000
	// Lot is the size granularity of orders: 0.01 share.
	Lot Micros = 10_000
	// MaxMicros bounds every amount accepted from outside. It leaves headroom so that
	// the product of a price (at most One) and a size never overflows in 128-bit
	// intermediates and sums of many amounts stay in range.
	MaxMicros Micros = 1 << 53
)

// Errors returned by the decimal conversions.
var (
	ErrNotDecimal     = errors.New("not a decimal number")
	ErrTooPrecise     = errors.New("more than 6 decimal places")
	ErrOutOfRange     = errors.New("amount out of range")
	ErrNegativeAmount = errors.New("negative amount")
)

// ParseMicros parses a plain non-negative decimal string ("0.5", "12.82", "100",
// "0.010000") into micro-units. It accepts digits with at most one '.', and trailing
// zeros beyond the sixth decimal; it rejects signs, exponents, spaces, empty parts
// on both sides of the point, any non-zero digit past the sixth decimal
// (ErrTooPrecise: nothing is rounded) and values above MaxMicros. It never allocates.
func ParseMicros(s string) (Micros, error) {
	if len(s) == 0 {
		return 0, ErrNotDecimal
	}
	if s[0] == '-' {
		if _, err := ParseMicros(s[1:]); err == nil {
			return 0, ErrNegativeAmount
		}
		return 0, ErrNotDecimal
	}
	var whole uint64
	i := 0
	digits := 0
	for ; i < len(s) && s[i] != '.'; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, ErrNotDecimal
		}
		digits++
		if whole > uint64(MaxMicros/One) {
			return 0, ErrOutOfRange
		}
		whole = whole*10 + uint64(c-'0')
	}
	var frac uint64
	scale := uint64(One)
	if i < len(s) { // at '.'
		i++
		if i == len(s) {
			return 0, ErrNotDecimal
		}
		for n := 0; i < len(s); i, n = i+1, n+1 {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, ErrNotDecimal
			}
			if n < 6 {
				scale /= 10
				frac += uint64(c-'0') * scale
			} else if c != '0' {
				// keep scanning to report ErrNotDecimal for later garbage first
				for j := i + 1; j < len(s); j++ {
					if s[j] < '0' || s[j] > '9' {
						return 0, ErrNotDecimal
					}
				}
				return 0, ErrTooPrecise
			}
		}
	}
	if digits == 0 {
		return 0, ErrNotDecimal
	}
	hi, lo := bits.Mul64(whole, uint64(One))
	if hi != 0 || lo > uint64(MaxMicros) || lo+frac > uint64(MaxMicros) {
		return 0, ErrOutOfRange
	}
	return Micros(lo + frac), nil
}

// String formats m as the shortest exact decimal: 500000 → "0.5", 100000000 → "100",
// 12820000 → "12.82", -1 → "-0.000001".
func (m Micros) String() string {
	var buf [32]byte
	return string(m.AppendTo(buf[:0]))
}

// AppendTo appends the String form of m to b and returns the extended slice; it does
// not allocate when b has room.
func (m Micros) AppendTo(b []byte) []byte {
	u := uint64(m)
	if m < 0 {
		b = append(b, '-')
		u = uint64(-m)
		if m == math.MinInt64 {
			u = 1 << 63
		}
	}
	b = strconv.AppendUint(b, u/uint64(One), 10)
	frac := u % uint64(One)
	if frac == 0 {
		return b
	}
	b = append(b, '.')
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for n > 0 && d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...)
}

// Decimal returns m as an exact shopspring decimal.
func (m Micros) Decimal() decimal.Decimal { return decimal.New(int64(m), -6) }

// MicrosFromDecimal converts d exactly; it fails with ErrTooPrecise when d has a
// non-zero digit past the sixth decimal and ErrOutOfRange beyond ±MaxMicros. Negative
// values are allowed (PnL); callers that need a non-negative amount check the sign.
func MicrosFromDecimal(d decimal.Decimal) (Micros, error) {
	scaled := d.Shift(6)
	if !scaled.Equal(scaled.Truncate(0)) {
		return 0, ErrTooPrecise
	}
	limit := decimal.NewFromInt(int64(MaxMicros))
	if scaled.Abs().GreaterThan(limit) {
		return 0, ErrOutOfRange
	}
	return Micros(scaled.IntPart()), nil
}

// MulDiv returns a*b/c rounded toward zero, computed with a 128-bit intermediate so
// that a price times a size never overflows. It panics if c is zero (a programmer
// error) and reports ok=false if the result does not fit in int64. All of a, b and c
// must be non-negative.
func MulDiv(a, b, c Micros) (r Micros, ok bool) {
	if a < 0 || b < 0 || c <= 0 {
		if c == 0 {
			panic("market: MulDiv by zero")
		}
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return 0, false
	}
	return Micros(q), true
}

// Notional returns price×size in collateral micro-units, rounded toward zero.
// For a price on any supported tick and a size that is a multiple of Lot the result
// is exact. ok is false on overflow.
func Notional(price, size Micros) (Micros, bool) { return MulDiv(price, size, One) }

package sim

import (
	"math/big"
	"math/bits"
	"math/rand/v2"

	"github.com/pitbossdev/pitboss/market"
)

// Fixed-point arithmetic of the model. Everything the sim computes at run time is
// integer arithmetic, so a seed gives the same flow on every platform and build: the
// Go specification lets a compiler fuse x*y+z into one FMA instruction, and math.Exp
// and math.Log have assembly versions whose last bit can depend on the CPU (amd64's
// Exp uses FMA when the CPU has it). Floats appear only when a Config is converted
// (New), where each parameter passes through single, correctly rounded operations.
// See docs/design/0075-sim-model.md.

// fix is a signed Q32.32 fixed-point number (1.0 = 1<<32): logits, normal and
// exponential deviates.
type fix int64

const (
	fracBits = 32
	fixOne   = fix(1) << fracBits

	// log2e is log2(e) in Q32 (1.4426950408889634 · 2^32, rounded).
	log2e = 6196328019
	// ln2 is ln(2) in Q32 (0.6931471805599453 · 2^32, rounded).
	ln2 = 2977044472
	// sqrt3x65536 is √3 · 2^16, rounded: the scale that makes the sum of four
	// uniform 16-bit integers, centred, a unit-variance deviate in Q32.
	sqrt3x65536 = 113512
	// maxLogit bounds the latent logit: |x| ≤ 9.21, i.e. a probability in
	// [0.0001, 0.9999].
	maxLogit = fix(39556648796) // 9.21 · 2^32
)

// exp2Tab[b][k] = 2^(k · 2^-(8(b+1))) in Q62, for the four bytes of a Q32 fraction:
// 2^f = exp2Tab[0][f>>24] · exp2Tab[1][f>>16&255] · exp2Tab[2][f>>8&255] · exp2Tab[3][f&255].
// Built at init from exact integer square roots (math/big), so its entries are the
// same on every platform.
var exp2Tab [4][256]uint64

func init() {
	// c[i] = floor(2^(2^-i) · 2^62) for i = 1..32, by repeated integer square roots:
	// 2^(2^-i) = sqrt(2^(2^-(i-1))).
	var c [33]uint64
	c[0] = 1 << 63 // 2^1 in Q62
	v, r := new(big.Int), new(big.Int)
	for i := 1; i <= 32; i++ {
		v.SetUint64(c[i-1])
		v.Lsh(v, 62)
		r.Sqrt(v)
		c[i] = r.Uint64()
	}
	for b := 0; b < 4; b++ {
		for k := 0; k < 256; k++ {
			x := uint64(1) << 62
			for j := 0; j < 8; j++ {
				if k&(0x80>>j) != 0 {
					x = mulQ62(x, c[8*b+j+1])
				}
			}
			exp2Tab[b][k] = x
		}
	}
}

// mulQ62 multiplies two Q62 numbers (each < 2^64), truncating.
func mulQ62(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi<<2 | lo>>62
}

// mulQ32 multiplies two non-negative Q32 numbers, truncating. The product must fit.
func mulQ32(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi<<32 | lo>>32
}

// exp2Frac returns 2^(f/2^32) in Q62, a value in [2^62, 2^63).
func exp2Frac(f uint32) uint64 {
	x := exp2Tab[0][f>>24]
	x = mulQ62(x, exp2Tab[1][f>>16&255])
	x = mulQ62(x, exp2Tab[2][f>>8&255])
	return mulQ62(x, exp2Tab[3][f&255])
}

// expNeg returns e^(-z) in Q32 for z ≥ 0: a value in [0, 2^32].
func expNeg(z fix) uint64 {
	if z <= 0 {
		return 1 << fracBits
	}
	w := mulQ32(uint64(z), log2e) // z·log2(e) = n + f
	n, f := w>>fracBits, uint32(w)
	if f == 0 {
		if n >= fracBits+1 {
			return 0
		}
		return (1 << fracBits) >> n
	}
	// 2^-(n+f) = 2^(1-f) · 2^-(n+1), with 1-f in (0, 1).
	sh := n + 1 + 30 // Q62 → Q32, then 2^-(n+1)
	if sh >= 64 {
		return 0
	}
	return exp2Frac(uint32(1<<fracBits-uint64(f))) >> sh
}

// sigmoid returns the probability 1/(1+e^-x) in micro-units, rounded to the nearest
// and clamped to [1, One-1].
func sigmoid(x fix) market.Micros {
	a := x
	if a < 0 {
		a = -a
	}
	u := expNeg(a)
	const num = uint64(market.One) << fracBits
	den := 1<<fracBits + u
	q := market.Micros((num + den/2) / den) // 1/(1+e^-|x|) ≥ 0.5
	if x < 0 {
		q = market.One - q
	}
	return min(max(q, 1), market.One-1)
}

// logit returns ln(p/(1-p)) in Q32 for a probability p in micro-units, clamped to
// ±maxLogit. It inverts sigmoid to within rounding.
func logit(p market.Micros) fix {
	p = min(max(p, 1), market.One-1)
	// ln(p/(1-p)) = ln2 · (log2 p − log2 (1−p)).
	l := log2Q32(uint64(p)) - log2Q32(uint64(market.One-p))
	neg := l < 0
	if neg {
		l = -l
	}
	x := fix(mulQ32(uint64(l), ln2))
	if neg {
		x = -x
	}
	return clampLogit(x)
}

func clampLogit(x fix) fix { return min(max(x, -maxLogit), maxLogit) }

// log2Q32 returns log2(u) in Q32 for u ≥ 1, with 30 exact fractional bits (the
// binary logarithm by repeated squaring: each squaring of the mantissa yields one
// bit).
func log2Q32(u uint64) fix {
	e := bits.Len64(u) - 1
	m := u << (63 - e) >> 1 // mantissa in Q62: [2^62, 2^63)
	var frac uint64
	for i := 1; i <= 30; i++ {
		m = mulQ62(m, m) // [2^62, 2^64)
		if m >= 1<<63 {
			m >>= 1
			frac |= 1 << (fracBits - i)
		}
	}
	return fix(e)<<fracBits + fix(frac)
}

// log2Tab[i] = log2(1 + i/256) in Q32 and recipTab[i] = 2^48/(256+i), for log2Fast.
// Built at init with integer arithmetic only.
var (
	log2Tab  [256]fix
	recipTab [256]uint64
)

func init() {
	for i := range log2Tab {
		log2Tab[i] = log2Q32(uint64(256+i)) - 8<<fracBits
		recipTab[i] = (1<<48 + uint64(256+i)/2) / uint64(256+i)
	}
}

// log2Fast returns log2(u) in Q32 for u ≥ 1, within 3·10^-8: a table of log2 at the
// first 8 bits of the mantissa and two terms of the series of log2(1+y) for the
// rest (y < 2^-8). The exponential deviates use it; logit uses the exact log2Q32.
func log2Fast(u uint64) fix {
	e := bits.Len64(u) - 1
	m := u << (63 - e) // mantissa in Q63: [2^63, 2^64)
	i := m >> 55 & 0xff
	f := m & (1<<55 - 1) // the rest, in units of 2^-63
	hi, lo := bits.Mul64(f, recipTab[i])
	y := hi<<24 | lo>>40 // y = rest/(1 + i/256) in Q63, < 2^55
	hi, lo = bits.Mul64(y, y)
	y2 := hi<<1 | lo>>63 // y² in Q63
	v := y - y2/2        // ln(1+y) ≈ y − y²/2, in Q63
	hi, lo = bits.Mul64(v, log2e)
	return fix(e)<<fracBits + log2Tab[i] + fix(hi<<1|lo>>63)
}

// expDeviate returns a standard exponential deviate −ln(U), U uniform in (0, 1], in
// Q32 (at most 53·ln 2 ≈ 36.7).
func expDeviate(r *rand.PCG) fix {
	k := r.Uint64()>>11 + 1              // U = k/2^53 in (0, 1]
	l := fix(53)<<fracBits - log2Fast(k) // −log2 U
	return fix(mulQ32(uint64(l), ln2))
}

// normDeviate returns an approximately standard normal deviate in Q16: the sum of
// four uniform 16-bit integers (Irwin–Hall, n = 4), centred and scaled to unit
// variance. Its support is bounded (±√12 ≈ ±3.46); sums of many are Gaussian, and
// the model's fat tails come from jumps.
func normDeviate(r *rand.PCG) int64 {
	x := r.Uint64()
	s := int64(x&0xffff) + int64(x>>16&0xffff) + int64(x>>32&0xffff) + int64(x>>48)
	return (s - 2*0xffff) * sqrt3x65536 >> 16
}

// uintN returns a uniform integer in [0, n) for n > 0 (Lemire's multiply-and-reject,
// unbiased). It is defined here rather than taken from math/rand/v2's Rand so that the
// sim's output does not depend on how a Go release implements Rand's helpers; PCG
// itself is a fixed, documented algorithm.
func uintN(r *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// chance reports true with probability p/One (p in micro-units).
func chance(r *rand.PCG, p market.Micros) bool {
	if p <= 0 {
		return false
	}
	if p >= market.One {
		return true
	}
	return uintN(r, uint64(market.One)) < uint64(p)
}

// expMillis returns an exponential duration with mean ms (≥ 1 ms), in ms.
func expMillis(r *rand.PCG, mean int64) int64 {
	if mean <= 0 {
		return 1
	}
	// A Q32 deviate times an integer, shifted by 32: an integer number of ms.
	return max(int64(mulQ32(uint64(expDeviate(r)), uint64(mean))), 1)
}

// expMicros returns an exponential amount with mean m (micro-units), truncated to a
// multiple of unit and at least unit.
func expMicros(r *rand.PCG, m, unit market.Micros) market.Micros {
	if m <= 0 {
		return unit
	}
	d := market.Micros(mulQ32(uint64(expDeviate(r)), uint64(m)))
	return max(d/unit*unit, unit)
}

// isqrt returns floor(sqrt(n)).
func isqrt(n uint64) uint64 {
	if n < 2 {
		return n
	}
	// Newton's method from an upper bound; exact in integers.
	x := uint64(1) << ((bits.Len64(n) + 1) / 2)
	for {
		y := (x + n/x) / 2
		if y >= x {
			return x
		}
		x = y
	}
}

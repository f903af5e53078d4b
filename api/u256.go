package api

import (
	"errors"
	"math/bits"
	"strconv"
)

// U256 is an unsigned 256-bit integer: the EIP-712 uint256 fields of a signed order
// (salt, tokenId, amounts, expiration, nonce, fee rate) and the L1 auth nonce. The
// zero value is 0. It is a comparable value type (usable as a map key) and safe to
// copy.
//
// As JSON it encodes as a decimal string ("1234") and decodes from a decimal string
// or a JSON integer number, exactly, up to 2^256−1. Use [Salt] where the wire wants a
// JSON number.
type U256 struct {
	w [4]uint64 // little-endian 64-bit limbs
}

// ErrU256 is returned for text that is not a plain non-negative decimal integer below
// 2^256.
var ErrU256 = errors.New("not a uint256 decimal integer")

// maxU256Digits is the number of decimal digits of 2^256−1.
const maxU256Digits = 78

// U256From returns v as a U256.
func U256From(v uint64) U256 { return U256{w: [4]uint64{v}} }

// ParseU256 parses a decimal integer: ASCII digits only (leading zeros allowed), no
// sign, no exponent, no fraction, at most 2^256−1. It does not allocate.
func ParseU256(s string) (U256, error) {
	var z U256
	if len(s) == 0 {
		return z, ErrU256
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return U256{}, ErrU256
		}
		if !z.mulAdd(10, uint64(c-'0')) {
			return U256{}, ErrU256
		}
	}
	return z, nil
}

// mulAdd sets z = z*m + a and reports false on overflow.
func (z *U256) mulAdd(m, a uint64) bool {
	carry := a
	for i := range z.w {
		hi, lo := bits.Mul64(z.w[i], m)
		var c uint64
		lo, c = bits.Add64(lo, carry, 0)
		z.w[i] = lo
		carry = hi + c
	}
	return carry == 0
}

// divmod sets z = z/d and returns the remainder.
func (z *U256) divmod(d uint64) uint64 {
	var r uint64
	for i := 3; i >= 0; i-- {
		z.w[i], r = bits.Div64(r, z.w[i], d)
	}
	return r
}

// IsZero reports whether z is 0.
func (z U256) IsZero() bool { return z.w == [4]uint64{} }

// Uint64 returns z and true when z fits in 64 bits.
func (z U256) Uint64() (uint64, bool) {
	return z.w[0], z.w[1]|z.w[2]|z.w[3] == 0
}

// Cmp returns -1, 0 or +1 as z is less than, equal to or greater than x.
func (z U256) Cmp(x U256) int {
	for i := 3; i >= 0; i-- {
		switch {
		case z.w[i] < x.w[i]:
			return -1
		case z.w[i] > x.w[i]:
			return 1
		}
	}
	return 0
}

// Bytes32 returns z as 32 big-endian bytes (the ABI encoding of a uint256).
func (z U256) Bytes32() [32]byte {
	var b [32]byte
	z.PutBytes32(b[:])
	return b
}

// PutBytes32 writes z as 32 big-endian bytes into b, which must have room for 32.
func (z U256) PutBytes32(b []byte) {
	_ = b[31]
	for i := 0; i < 4; i++ {
		v := z.w[3-i]
		for j := 0; j < 8; j++ {
			b[i*8+j] = byte(v >> (56 - 8*j))
		}
	}
}

// U256FromBytes32 reads 32 big-endian bytes.
func U256FromBytes32(b [32]byte) U256 {
	var z U256
	for i := 0; i < 4; i++ {
		var v uint64
		for j := 0; j < 8; j++ {
			v = v<<8 | uint64(b[i*8+j])
		}
		z.w[3-i] = v
	}
	return z
}

// AppendDecimal appends the canonical decimal form of z (no leading zeros; "0" for
// zero) to b.
func (z U256) AppendDecimal(b []byte) []byte {
	if z.w[1]|z.w[2]|z.w[3] == 0 {
		return strconv.AppendUint(b, z.w[0], 10)
	}
	var buf [maxU256Digits]byte
	i := len(buf)
	for !z.IsZero() {
		// 10^19 is the largest power of ten below 2^64: 19 digits per division.
		r := z.divmod(1e19)
		for k := 0; k < 19; k++ {
			i--
			buf[i] = byte('0' + r%10)
			r /= 10
			if z.IsZero() && r == 0 {
				break
			}
		}
	}
	return append(b, buf[i:]...)
}

// String returns the canonical decimal form.
func (z U256) String() string {
	var buf [maxU256Digits]byte
	return string(z.AppendDecimal(buf[:0]))
}

// MarshalText implements encoding.TextMarshaler (decimal).
func (z U256) MarshalText() ([]byte, error) { return z.AppendDecimal(nil), nil }

// UnmarshalText implements encoding.TextUnmarshaler (decimal, see ParseU256).
func (z *U256) UnmarshalText(b []byte) error {
	v, err := ParseU256(string(b))
	if err != nil {
		return err
	}
	*z = v
	return nil
}

// MarshalJSON encodes z as a JSON string of decimal digits.
func (z U256) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 24), '"')
	b = z.AppendDecimal(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string of decimal digits or a JSON integer number.
func (z *U256) UnmarshalJSON(b []byte) error {
	s, err := unquoteNumber(b)
	if err != nil {
		return err
	}
	v, err := ParseU256(s)
	if err != nil {
		return err
	}
	*z = v
	return nil
}

// Salt is the salt of a signed order: a U256 that encodes as a JSON number (as every
// upstream client sends it) and decodes from a JSON number or string, exactly, so
// that values above 2^53 survive a round trip. The zero value is 0.
type Salt U256

// MarshalJSON encodes s as a bare JSON integer.
func (s Salt) MarshalJSON() ([]byte, error) { return U256(s).AppendDecimal(nil), nil }

// UnmarshalJSON accepts a JSON integer number or a JSON string of decimal digits.
func (s *Salt) UnmarshalJSON(b []byte) error { return (*U256)(s).UnmarshalJSON(b) }

// String returns the decimal form.
func (s Salt) String() string { return U256(s).String() }

// unquoteNumber returns the text of a JSON string without its quotes, or the text
// of a bare JSON token. Escapes are not allowed inside the string (a number never
// needs them).
func unquoteNumber(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		inner := b[1 : len(b)-1]
		for _, c := range inner {
			if c == '\\' || c == '"' {
				return "", ErrU256
			}
		}
		return string(inner), nil
	}
	if len(b) == 0 || b[0] == '"' || string(b) == "null" {
		return "", ErrU256
	}
	return string(b), nil
}

package market

import (
	"encoding/hex"
	"errors"
)

// TokenID identifies an outcome token: the decimal string of an ERC-1155 uint256 id,
// exactly as it appears on the wire.
type TokenID string

// ConditionID identifies a binary condition (a market): "0x" followed by 64 hex digits.
type ConditionID string

// OrderID identifies an order. On the service it is the order's EIP-712 digest
// ("0x" + 64 hex digits); the embedded venue uses the same form.
type OrderID string

// TradeID identifies a trade (a match between one taker and one or more makers).
type TradeID string

// Address is a 20-byte account address (an Ethereum EOA). The zero value is the zero
// address. It is comparable and usable as a map key.
type Address [20]byte

// ErrBadAddress is returned by ParseAddress for anything that is not "0x" + 40 hex.
var ErrBadAddress = errors.New("invalid address")

// ParseAddress accepts "0x" followed by 40 hex digits in any case (checksum casing is
// not verified here; adapters/auth renders and checks EIP-55).
func ParseAddress(s string) (Address, error) {
	var a Address
	if len(s) != 42 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return a, ErrBadAddress
	}
	if _, err := hex.Decode(a[:], []byte(s[2:])); err != nil {
		return Address{}, ErrBadAddress
	}
	return a, nil
}

// String returns the lower-case "0x"-prefixed hex form.
func (a Address) String() string {
	var buf [42]byte
	buf[0], buf[1] = '0', 'x'
	hex.Encode(buf[2:], a[:])
	return string(buf[:])
}

// IsZero reports whether a is the zero address.
func (a Address) IsZero() bool { return a == Address{} }

// MarshalText implements encoding.TextMarshaler (lower-case hex).
func (a Address) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Address) UnmarshalText(b []byte) error {
	v, err := ParseAddress(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

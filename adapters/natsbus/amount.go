package natsbus

import (
	"errors"

	"github.com/pitbossdev/pitboss/market"
)

// Amount is a market.Micros that travels in JSON as an exact decimal string
// ("0.5", "-12.82"), the way the service writes amounts, so that fleet messages are
// readable by people and tools without float rounding. The zero value is "0".
type Amount market.Micros

// Micros returns a as market.Micros.
func (a Amount) Micros() market.Micros { return market.Micros(a) }

// String returns the decimal form.
func (a Amount) String() string { return market.Micros(a).String() }

// MarshalText implements encoding.TextMarshaler.
func (a Amount) MarshalText() ([]byte, error) {
	var buf [32]byte
	return market.Micros(a).AppendTo(buf[:0]), nil
}

// UnmarshalText accepts what MarshalText writes: an optional '-' and an exact
// decimal with at most 6 decimals, within ±market.MaxMicros.
func (a *Amount) UnmarshalText(b []byte) error {
	m, err := market.ParseSignedMicros(string(b))
	if err != nil {
		return errors.Join(errors.New("natsbus: invalid amount"), err)
	}
	*a = Amount(m)
	return nil
}

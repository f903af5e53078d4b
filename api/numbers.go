package api

import (
	"errors"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/market"
)

// Decimal is an exact amount (a price, a size, collateral) that travels as a JSON
// string of its shortest decimal form: "0.5", "100", "12.82". It decodes from a JSON
// string or a JSON number; the empty string decodes as zero (the upstream Rust client
// treats "" as zero for amounts). Values with more than 6 decimals, signs or
// exponents in strings, and anything beyond ±market.MaxMicros are rejected; nothing
// is rounded. The zero value is 0.
type Decimal market.Micros

// Micros returns d as market.Micros.
func (d Decimal) Micros() market.Micros { return market.Micros(d) }

// String returns the shortest exact decimal form.
func (d Decimal) String() string { return market.Micros(d).String() }

// MarshalJSON encodes d as a JSON string.
func (d Decimal) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 16), '"')
	b = market.Micros(d).AppendTo(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string or number (see Decimal).
func (d *Decimal) UnmarshalJSON(b []byte) error {
	m, err := parseAmountJSON(b)
	if err != nil {
		return err
	}
	*d = Decimal(m)
	return nil
}

// Number is an exact amount that travels as a bare JSON number (0.5, 100): the
// tick size of GET /tick-size, min_order_size of a book, price-history points. It
// decodes from a JSON number or string like Decimal. The zero value is 0.
type Number market.Micros

// Micros returns n as market.Micros.
func (n Number) Micros() market.Micros { return market.Micros(n) }

// String returns the shortest exact decimal form.
func (n Number) String() string { return market.Micros(n).String() }

// MarshalJSON encodes n as a bare JSON number.
func (n Number) MarshalJSON() ([]byte, error) { return market.Micros(n).AppendTo(nil), nil }

// UnmarshalJSON accepts a JSON number or string (see Decimal).
func (n *Number) UnmarshalJSON(b []byte) error {
	m, err := parseAmountJSON(b)
	if err != nil {
		return err
	}
	*n = Number(m)
	return nil
}

// ErrAmount is returned for JSON that is not an exactly representable amount.
var ErrAmount = errors.New("not an exact decimal amount")

// parseAmountJSON parses a JSON string or number into micro-units, exactly. Plain
// decimals go through the allocation-free market.ParseMicros; negative values and
// JSON numbers in exponent form go through shopspring/decimal.
func parseAmountJSON(b []byte) (market.Micros, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		s := b[1 : len(b)-1]
		if len(s) == 0 {
			return 0, nil
		}
		return parseAmountText(string(s), false)
	}
	if len(b) == 0 || b[0] == '"' || string(b) == "null" || string(b) == "true" || string(b) == "false" {
		return 0, ErrAmount
	}
	return parseAmountText(string(b), true)
}

func parseAmountText(s string, jsonNumber bool) (market.Micros, error) {
	m, err := market.ParseMicros(s)
	switch {
	case err == nil:
		return m, nil
	case errors.Is(err, market.ErrNegativeAmount):
		// Negative amounts (PnL) are allowed; the rest of the text is a plain decimal.
		m, err := market.ParseMicros(s[1:])
		if err != nil {
			return 0, ErrAmount
		}
		return -m, nil
	case !jsonNumber || !errors.Is(err, market.ErrNotDecimal) || len(s) > 64 || !validJSONNumber(s):
		return 0, ErrAmount
	}
	// A JSON number in exponent form (1e-2, 5E+1).
	d, err := decimal.NewFromString(s)
	if err != nil {
		return 0, ErrAmount
	}
	if m, err = market.MicrosFromDecimal(d); err != nil {
		return 0, ErrAmount
	}
	return m, nil
}

// validJSONNumber reports whether s is a JSON number: -?int(.frac)?([eE][+-]?digits)?
func validJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		st := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == st {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		st := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == st || i-st > 3 {
			return false
		}
	}
	return i == len(s)
}

// Int is an int64 that travels as a JSON string of decimal digits ("1700000000"):
// timestamps, expirations and counts that the wire writes as strings. It decodes from
// a JSON string or an integer JSON number; "" and null decode as 0. The zero value
// is 0.
type Int int64

// MarshalJSON encodes i as a JSON string.
func (i Int) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 24), '"')
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string or an integer JSON number; "" and null decode
// as 0 (the upstream services send a null expiration for orders without one).
func (i *Int) UnmarshalJSON(b []byte) error {
	if string(b) == `""` || string(b) == "null" {
		*i = 0
		return nil
	}
	s, err := unquoteNumber(b)
	if err != nil {
		return ErrAmount
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return ErrAmount
	}
	*i = Int(v)
	return nil
}

// Side is market.Side on the wire: "BUY" or "SELL". Decoding accepts either case;
// anything else is an error. The zero value is invalid (like market.Side) and does
// not encode.
type Side market.Side

// ErrSide is returned for a side that is not BUY or SELL.
var ErrSide = errors.New(`side must be "BUY" or "SELL"`)

// MarshalText implements encoding.TextMarshaler.
func (s Side) MarshalText() ([]byte, error) {
	if !market.Side(s).Valid() {
		return nil, ErrSide
	}
	return []byte(market.Side(s).String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Side) UnmarshalText(b []byte) error {
	v, ok := ParseSide(string(b))
	if !ok {
		return ErrSide
	}
	*s = Side(v)
	return nil
}

// ParseSide accepts "BUY" and "SELL" in any case.
func ParseSide(s string) (market.Side, bool) {
	switch {
	case len(s) == 3 && (s[0]|0x20) == 'b' && (s[1]|0x20) == 'u' && (s[2]|0x20) == 'y':
		return market.Buy, true
	case len(s) == 4 && (s[0]|0x20) == 's' && (s[1]|0x20) == 'e' && (s[2]|0x20) == 'l' && (s[3]|0x20) == 'l':
		return market.Sell, true
	}
	return 0, false
}

// OrderType is market.OrderType on the wire: "GTC", "GTD", "FOK", "FAK" (either case
// on input). The zero value is GTC, the service's default.
type OrderType market.OrderType

// ErrOrderType is returned for an unknown order type.
var ErrOrderType = errors.New(`order type must be "GTC", "GTD", "FOK" or "FAK"`)

// MarshalText implements encoding.TextMarshaler.
func (t OrderType) MarshalText() ([]byte, error) {
	if !market.OrderType(t).Valid() {
		return nil, ErrOrderType
	}
	return []byte(market.OrderType(t).String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *OrderType) UnmarshalText(b []byte) error {
	v, ok := market.ParseOrderType(string(b))
	if !ok {
		return ErrOrderType
	}
	*t = OrderType(v)
	return nil
}

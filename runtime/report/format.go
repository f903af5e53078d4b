package report

import (
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// FormatMoney writes an amount of collateral for people: to the cent, rounded half
// away from zero, thousands separated by commas ("1,018.90", "-0.02"). An amount
// that rounds to zero keeps its sign ("-0.00"): it is not nothing. The JSON
// report keeps every amount exact; only the text and HTML pages round.
func FormatMoney(m Money) string {
	v := int64(m)
	neg := v < 0
	if neg {
		v = -v
	}
	cents := (v + 5_000) / 10_000
	whole, frac := cents/100, cents%100
	ds := []byte{}
	w := strconv.AppendInt(nil, whole, 10)
	for i, d := range w {
		if i > 0 && (len(w)-i)%3 == 0 {
			ds = append(ds, ',')
		}
		ds = append(ds, d)
	}
	s := string(ds) + "." + string([]byte{byte('0' + frac/10), byte('0' + frac%10)})
	if neg {
		return "-" + s
	}
	return s
}

// FormatSigned is FormatMoney with a + on positive amounts (a PnL, a difference).
func FormatSigned(m Money) string {
	if m > 0 {
		return "+" + FormatMoney(m)
	}
	return FormatMoney(m)
}

// FormatPrice writes a price exactly, with at least two decimals ("0.40",
// "0.455").
func FormatPrice(m Money) string {
	s := market.Micros(m).String()
	i := strings.IndexByte(s, '.')
	switch {
	case i < 0:
		return s + ".00"
	case len(s)-i-1 < 2:
		return s + strings.Repeat("0", 2-(len(s)-i-1))
	}
	return s
}

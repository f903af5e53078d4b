package report

import (
	"encoding/csv"
	"io"
	"strconv"
)

// FillsHeader is the first line of the fills CSV.
var FillsHeader = []string{"time_ms", "time_utc", "market", "token", "outcome", "side", "role", "price", "size",
	"notional", "fee", "realized", "order", "trade"}

// WriteFillsCSV writes every fill of the report as CSV (RFC 4180, a header line
// first): times as Unix ms and UTC text, amounts as exact decimals.
func (r *Report) WriteFillsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(FillsHeader); err != nil {
		return err
	}
	row := make([]string, len(FillsHeader))
	for i := range r.Fills {
		f := &r.Fills[i]
		row[0] = strconv.FormatInt(f.Time, 10)
		row[1] = fmtTime(f.Time)
		row[2] = string(f.Market)
		row[3] = string(f.Token)
		row[4] = f.Outcome
		row[5] = f.Side
		row[6] = f.Role
		row[7] = f.Price.String()
		row[8] = f.Size.String()
		row[9] = f.Notional.String()
		row[10] = f.Fee.String()
		row[11] = f.Realized.String()
		row[12] = string(f.Order)
		row[13] = string(f.Trade)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

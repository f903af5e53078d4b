package report

import (
	"encoding/csv"
	"io"
	"strconv"
)

// FillsHeader is the first line of the fills CSV.
var FillsHeader = []string{"time_ms", "time_utc", "market", "slug", "token", "outcome", "side", "role", "price", "size",
	"notional", "fee", "realized", "order", "trade", "key"}

// WriteFillsCSV writes every fill of the report as CSV (RFC 4180, a header line
// first): times as Unix ms and UTC text, the market's condition id and slug, the
// outcome as YES or NO, amounts as exact decimals, and the order's quote or rule
// key.
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
		row[3] = f.Slug
		row[4] = string(f.Token)
		row[5] = f.Outcome
		row[6] = f.Side
		row[7] = f.Role
		row[8] = f.Price.String()
		row[9] = f.Size.String()
		row[10] = f.Notional.String()
		row[11] = f.Fee.String()
		row[12] = f.Realized.String()
		row[13] = string(f.Order)
		row[14] = string(f.Trade)
		row[15] = f.Key
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

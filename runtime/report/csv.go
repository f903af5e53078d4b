package report

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
)

// FillsHeader is the first line of the fills CSV.
var FillsHeader = []string{"time_ms", "time_utc", "market", "slug", "token", "outcome", "side", "role", "price", "size",
	"notional", "fee", "realized", "order", "trade", "key"}

// WriteFillsCSV writes every fill of the report as CSV (RFC 4180, a header line
// first): times as Unix ms and UTC text, the market's condition id and slug, the
// outcome as YES or NO, amounts as exact decimals, and the order's quote or rule
// key. Each merge of complete sets is a row too, in time order after the fills of
// its time: side MERGE, role merge, outcome YES+NO, no token, order or trade, price
// 1 (per set), size the sets, notional the collateral returned, the PnL it
// realized, and in the key column who asked ("rule merge_sets"). So the realized
// column adds up to the report's realized PnL less what resolutions settled.
func (r *Report) WriteFillsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(FillsHeader); err != nil {
		return err
	}
	row := make([]string, len(FillsHeader))
	merges := r.Merges
	writeMerges := func(upTo int64) error {
		for len(merges) > 0 && merges[0].Time < upTo {
			m := &merges[0]
			merges = merges[1:]
			row[0] = strconv.FormatInt(m.Time, 10)
			row[1] = fmtTime(m.Time)
			row[2] = string(m.Market)
			row[3] = m.Slug
			row[4], row[5], row[6], row[7] = "", "YES+NO", "MERGE", "merge"
			row[8] = "1"
			row[9] = m.Sets.String()
			row[10] = m.Collateral.String()
			row[11] = "0"
			row[12] = m.Realized.String()
			row[13], row[14] = "", ""
			row[15] = m.Reason
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range r.Fills {
		f := &r.Fills[i]
		if err := writeMerges(f.Time); err != nil {
			return err
		}
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
	if err := writeMerges(math.MaxInt64); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// mergedRun buys 10 YES at 0.45 and 10 NO at 0.52 (cost 9.70), merges the 10 sets
// (10 collateral: +0.30 realized, YES 10 × 0.5 − 4.50 = +0.50, NO 5 − 5.20 = −0.20),
// buys 4 more YES at 0.45 and merges nothing more; the state books the merge as the
// agent does (market.MergeSets, balance + 10).
func mergedRun(t testing.TB) *Report {
	s := newScript(t, Config{From: t0, To: t0 + 60_000}, "1000")
	s.book(0, "0.45", "0.47")
	s.fillAs(1000, market.Yes, market.Buy, market.Maker, "0.45", "10", "0", "bid")
	s.fillAs(2000, market.No, market.Buy, market.Maker, "0.52", "10", "0", "ask_no")
	n := dec("10")
	if _, ok := market.MergeSets(s.st.Positions[yes], s.st.Positions[no], n); !ok {
		t.Fatal("MergeSets refused")
	}
	s.st.Balance += n
	s.c.Merge(t0+2000, cond, n, "rule merge_sets")
	s.fillAs(3000, market.Yes, market.Buy, market.Maker, "0.45", "4", "0", "bid")
	s.book(4000, "0.45", "0.47")
	s.st.Time = t0 + 60_000
	return s.c.Finish(&s.st, Run{Agent: "test", Data: "script", Events: 5})
}

// TestMergesAreSummedAndShown: a merge is a row of Report.Merges with its sets, the
// collateral returned and the PnL it realized by side; the summary counts and sums
// them; the text report has a merges line, the HTML a Merges card, the CSV a MERGE
// row between the fills of its time and after, and the CSV's realized column adds
// up to the run's realized PnL (nothing settled); the equity is the ledger's.
func TestMergesAreSummedAndShown(t *testing.T) {
	r := mergedRun(t)
	want := MergeRow{Time: t0 + 2000, Market: cond, Slug: "will-it-rain", Sets: Money(dec("10")), Collateral: Money(dec("10")),
		Realized: Money(dec("0.3")), YesRealized: Money(dec("0.5")), NoRealized: Money(-dec("0.2")), Reason: "rule merge_sets"}
	if len(r.Merges) != 1 || r.Merges[0] != want {
		t.Fatalf("merges %+v, want [%+v]", r.Merges, want)
	}
	s := r.Summary
	if s.Merges != 1 || s.MergedSets != Money(dec("10")) || s.MergeRealized != Money(dec("0.3")) || s.Redeems != 0 {
		t.Errorf("summary merges %d sets %s realized %s redeems %d", s.Merges, s.MergedSets, s.MergeRealized, s.Redeems)
	}
	// 1000 − 9.70 + 10 − 1.80 + 4 YES at the mid 0.46: realized +0.30, unrealized +0.04.
	if s.EndEquity != Money(dec("1000.34")) || s.Realized != Money(dec("0.3")) || s.PnL != Money(dec("0.34")) {
		t.Errorf("end equity %s, realized %s, pnl %s; want 1000.34, 0.3, 0.34", s.EndEquity, s.Realized, s.PnL)
	}

	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if line := "merges            1: 10 sets → 10.00 collateral, realized +0.30; 0 redeems, 0.00 collateral\n"; !strings.Contains(text.String(), line) {
		t.Errorf("text report lacks %q:\n%s", line, text.String())
	}
	var html bytes.Buffer
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if card := "Merges</div>"; !strings.Contains(html.String(), card) || !strings.Contains(html.String(), "10 sets → 10.00 collateral, realized &#43;0.30") {
		t.Errorf("HTML report lacks the Merges card")
	}

	var out bytes.Buffer
	if err := r.WriteFillsCSV(&out); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d CSV rows, want a header, 3 fills and 1 merge:\n%q", len(rows), rows)
	}
	sides := []string{rows[1][6], rows[2][6], rows[3][6], rows[4][6]}
	if strings.Join(sides, " ") != "BUY BUY MERGE BUY" {
		t.Errorf("CSV sides %v, want the merge after the fill of its time", sides)
	}
	m := rows[3]
	if got := strings.Join(m[4:], ","); got != ",YES+NO,MERGE,merge,1,10,10,0,0.3,,,rule merge_sets" {
		t.Errorf("merge row %q", got)
	}
	var sum market.Micros
	for _, row := range rows[1:] {
		v, err := market.ParseSignedMicros(row[12])
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	if Money(sum) != s.Realized {
		t.Errorf("CSV realized adds up to %s, the report's realized is %s", Money(sum), s.Realized)
	}
}

// TestReportsWithoutMergesAreUnchanged: a run that merges nothing has no merges
// line, card or JSON field (so older reports and goldens read the same).
func TestReportsWithoutMergesAreUnchanged(t *testing.T) {
	r := knownRun(t, Config{})
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	js, err := r.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "\nmerges") || bytes.Contains(js, []byte(`"merge`)) || strings.Contains(html.String(), "Merges</div>") {
		t.Error("a run without merges shows merges")
	}
}

package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/runtime/report/reporttest"
)

// comparedRuns are the known run and the eventful one (a kill-switch trip, a
// resolution), with parameters and settings that partly differ.
func comparedRuns(t *testing.T) []Compared {
	a, b := knownRun(t, Config{}), eventfulRun(t)
	a.Run.Params = []Param{{"half_spread", "0.02"}, {"size", "10"}}
	a.Run.Settings = []Param{{"guards.max_daily_loss", "25"}}
	b.Run.Params = []Param{{"half_spread", "0.03"}, {"size", "10"}, {"skew", "0.01"}}
	b.Run.Settings = []Param{{"guards.max_daily_loss", "10"}}
	return []Compared{{"baseline", a}, {"tight-loss", b}}
}

// TestGoldenComparison: the text and HTML comparison of two runs, golden; the
// rows that differ are marked and the differences are B − A.
func TestGoldenComparison(t *testing.T) {
	c, err := Compare(comparedRuns(t))
	if err != nil {
		t.Fatal(err)
	}
	var txt, page bytes.Buffer
	if err := c.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	reporttest.CheckGolden(t, filepath.Join("testdata", "golden", "compare.txt"), txt.Bytes())
	reporttest.CheckGolden(t, filepath.Join("testdata", "golden", "compare.html"), page.Bytes())
	rows := map[string]Row{}
	for _, r := range append(c.Params, c.Metrics...) {
		rows[r.Name] = r
	}
	if r := rows["param half_spread"]; !r.Differs || r.Values[0] != "0.02" || r.Values[1] != "0.03" {
		t.Errorf("half_spread row %+v", r)
	}
	if r := rows["param skew"]; !r.Differs || r.Values[0] != "—" {
		t.Errorf("skew row %+v", r)
	}
	if r := rows["param size"]; r.Differs {
		t.Errorf("size row %+v", r)
	}
	a, b := c.Runs[0].Report.Summary, c.Runs[1].Report.Summary
	if r := rows["pnl"]; r.Diffs[0] != FormatSigned(b.PnL-a.PnL) {
		t.Errorf("pnl difference %q, want %q", r.Diffs[0], FormatSigned(b.PnL-a.PnL))
	}
	if r := rows["kill-switch trips"]; r.Diffs[0] != "+1" || !r.Differs {
		t.Errorf("kill-switch row %+v", r)
	}
	if !strings.Contains(page.String(), `class="mark mark-kill_switch"`) || strings.Contains(page.String(), "<script") ||
		strings.Contains(page.String(), "https://") {
		t.Error("the page does not mark the trip, or is not self-contained")
	}
	if _, err := Compare(comparedRuns(t)[:1]); err == nil {
		t.Error("a comparison of one run")
	}
}

// TestSavedRuns: a saved run reads back equal, names are checked, a save
// replaces atomically, the list is sorted, a report from the future is refused.
func TestSavedRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "backtests")
	r := knownRun(t, Config{})
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "x.json", strings.Repeat("a", 65), "sp ace"} {
		if _, _, err := SaveRun(dir, bad, r); !errors.Is(err, ErrRunName) {
			t.Errorf("name %q: %v", bad, err)
		}
	}
	path, replaced, err := SaveRun(dir, "b-2", r)
	if err != nil || replaced || path != filepath.Join(dir, "b-2.json") {
		t.Fatal(path, replaced, err)
	}
	if _, replaced, err = SaveRun(dir, "b-2", r); err != nil || !replaced {
		t.Fatal(replaced, err)
	}
	if _, _, err := SaveRun(dir, "a.1", r); err != nil {
		t.Fatal(err)
	}
	names, err := ListRuns(dir)
	if err != nil || strings.Join(names, ",") != "a.1,b-2" {
		t.Fatalf("list %v %v", names, err)
	}
	back, err := LoadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := r.MarshalIndent()
	y, _ := back.MarshalIndent()
	if !bytes.Equal(x, y) {
		t.Fatal("a saved run does not read back equal")
	}
	future := filepath.Join(dir, "future.json")
	if err := os.WriteFile(future, []byte(`{"version": 99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRun(future); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("future report: %v", err)
	}
	if names, _ := ListRuns(filepath.Join(dir, "none")); len(names) != 0 {
		t.Fatal("a missing directory lists runs")
	}
}

package backtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/runtime/report"
)

// TestBacktestReportShowsMerges: a strategy that bids for YES and for NO on the
// bundled sample and merges the complete sets (do: merge) shows each merge in
// the report — an event of kind merge, round trips that exit by "merge" with every
// share sold — in its JSON, HTML and text forms; the round trips' PnL adds up to
// the run's.
func TestBacktestReportShowsMerges(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string { return writeIn(t, dir, name, src) }
	write("merger.yaml", `name: merger
description: bids for YES and for NO at the touch, and merges the pairs back
quotes:
  bid:
    side: BUY
    price: yes.bid
    size: 5
    when: yes.two_sided && yes.position < 5
  bid_no:
    token: NO
    side: BUY
    price: 1 - yes.ask
    size: 5
    when: yes.two_sided && no.position < 5
rules:
  sets:
    on: fill
    when: yes.position > 0 && no.position > 0
    do: merge
`)
	agentPath := writeAgent(t, dir, "merger")
	rep := run(t, Config{Spec: loadAgent(t, agentPath), Source: sample(t)})
	var merges []report.Mark
	for _, e := range rep.Events {
		if e.Kind == report.MarkMerge {
			merges = append(merges, e)
		}
	}
	if len(merges) < 2 {
		t.Fatalf("%d merges in the report's events (%d fills), want at least 2", len(merges), len(rep.Fills))
	}
	if !strings.Contains(merges[0].Reason, " sets → ") || !strings.HasSuffix(merges[0].Reason, " collateral (rule sets)") || merges[0].Slug == "" {
		t.Errorf("merge event %+v", merges[0])
	}
	var byMerge int
	var tripPnL report.Money
	for _, rt := range rep.RoundTrips {
		tripPnL += rt.PnL
		if rt.ExitReason == "merge" {
			byMerge++
			if rt.Sold != rt.Bought {
				t.Errorf("round trip %+v closed by a merge with shares left", rt)
			}
		}
	}
	// A merge closes the side it empties (both, when the pair was whole).
	if byMerge < len(merges) || byMerge > 2*len(merges) {
		t.Errorf("%d round trips exit by merge, for %d merges", byMerge, len(merges))
	}
	if tripPnL != rep.Summary.PnL {
		t.Errorf("round trips' PnL %s, the run's %s: want them equal", tripPnL, rep.Summary.PnL)
	}
	shows(t, rep, merges[0].Reason)
}

// writeIn writes src to the file name in dir (0600) and returns its path.
func writeIn(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeAgent writes dir/agent.yaml: a dry run named name of the strategy in
// dir/name.yaml on the first tradable binary market, with small order limits; it
// returns its path.
func writeAgent(t *testing.T, dir, name string) string {
	t.Helper()
	return writeIn(t, dir, "agent.yaml", `name: `+name+`
wallet: keyring:pitboss-`+name+`
venue: embedded
dry_run: true
markets:
  select: accepting_orders && active && !neg_risk && tick <= 0.01
  limit: 1
strategy:
  file: `+name+`.yaml
guards:
  max_order_size: 25
  max_order_notional: 15
`)
}

// shows checks that the JSON, HTML and text forms of rep all contain what.
func shows(t *testing.T, rep *report.Report, what string) {
	t.Helper()
	out := render(t, rep)
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"JSON": out[0], "HTML": out[1], "text": text.Bytes()} {
		if !bytes.Contains(b, []byte(what)) {
			t.Errorf("the %s report does not show %q", name, what)
		}
	}
}

package backtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
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

// TestQuoterMergesCompleteSetsOnTheSample: the quoter example, backtested on the
// bundled sample as the README runs it, merges the complete sets it comes to hold
// (its bid buys YES, its ask-as-buy-NO buys NO), and every merge returns exactly
// its sets as collateral. Money is checked to the micro-unit: at the end and at the
// first merge (a run stopped at its time), the agent's collateral (available plus
// reserved) is the start's minus the fills' net cost plus the merges' collateral,
// and each token's position is what the fills bought minus sold minus the sets
// merged; the report's figures (summary, merges, CSV rows, text line) agree.
func TestQuoterMergesCompleteSetsOnTheSample(t *testing.T) {
	full := quoterRun(t, 0)
	rep := full.Report
	if rep.Summary.Merges < 1 || len(rep.Merges) != rep.Summary.Merges {
		t.Fatalf("%d merges (%d rows) in the quoter's backtest on the sample, want at least 1", rep.Summary.Merges, len(rep.Merges))
	}
	var sets, realized report.Money
	for _, m := range rep.Merges {
		if m.Sets <= 0 || m.Collateral != m.Sets || m.Realized != m.YesRealized+m.NoRealized || m.Reason != "rule merge_sets" {
			t.Errorf("merge %+v: want positive sets returned one for one, realized split by side, by rule merge_sets", m)
		}
		sets += m.Sets
		realized += m.Realized
	}
	if rep.Summary.MergedSets != sets || rep.Summary.MergeRealized != realized {
		t.Errorf("summary merged %s realized %s, the rows add up to %s and %s", rep.Summary.MergedSets, rep.Summary.MergeRealized, sets, realized)
	}
	conserved(t, full, rep.Run.To)

	// At the first merge: a run of the same data stopped at its time made the same
	// merge, and its money adds up there too.
	first := rep.Merges[0]
	part := quoterRun(t, first.Time)
	if got := part.Report.Merges; len(got) != 1 || got[0] != first {
		t.Fatalf("the run stopped at the first merge made %+v, want [%+v]", got, first)
	}
	conserved(t, part, first.Time)

	// The four forms show the merges: JSON figures, the text line, the HTML card,
	// a MERGE row per merge in the CSV.
	out := render(t, rep)
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("merges            %d: %s sets → %s collateral", rep.Summary.Merges, sets, report.FormatMoney(sets))
	if !strings.Contains(text.String(), line) {
		t.Errorf("the text report lacks %q", line)
	}
	if !bytes.Contains(out[0], []byte(`"merged_sets": "`+sets.String()+`"`)) {
		t.Errorf("the JSON report lacks merged_sets %s", sets)
	}
	if !bytes.Contains(out[1], []byte(">Merges</div>")) {
		t.Error("the HTML report lacks the Merges card")
	}
	if n := bytes.Count(out[2], []byte(",YES+NO,MERGE,merge,1,")); n != len(rep.Merges) {
		t.Errorf("%d MERGE rows in the CSV, want %d", n, len(rep.Merges))
	}
}

// quoterRun backtests the quoter example on the bundled sample up to to (0: the end).
func quoterRun(t *testing.T, to int64) *Result {
	t.Helper()
	res, err := Run(context.Background(), Config{Spec: loadAgent(t, quoterAgent), Source: sample(t), To: to})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// conserved checks, to the micro-unit, that the agent's collateral at the end of
// res (available plus reserved) is the starting balance minus what the fills up to
// at cost net plus the collateral of the merges up to at, that each position is its
// fills minus the sets merged, and that the report's equity is the agent's.
func conserved(t *testing.T, res *Result, at int64) {
	t.Helper()
	rep, st := res.Report, res.Status
	cash := market.Micros(rep.Summary.StartEquity)
	held := map[market.TokenID]market.Micros{}
	info := map[market.ConditionID][2]market.TokenID{}
	for _, f := range rep.Fills {
		if f.Time > at {
			t.Fatalf("fill at %d after %d", f.Time, at)
		}
		n, fee := market.Micros(f.Notional), market.Micros(f.Fee)
		switch f.Side {
		case "BUY":
			cash -= n + fee
			held[f.Token] += market.Micros(f.Size)
		case "SELL":
			cash += n - fee
			held[f.Token] -= market.Micros(f.Size)
		}
	}
	for _, f := range rep.Fills { // a merged market's two tokens both filled
		toks := info[f.Market]
		toks[map[string]int{"YES": 0, "NO": 1}[f.Outcome]] = f.Token
		info[f.Market] = toks
	}
	for _, m := range rep.Merges {
		cash += market.Micros(m.Collateral)
		for _, tok := range info[m.Market] {
			if tok == "" {
				t.Fatalf("merge %+v in a market without fills of both tokens", m)
			}
			held[tok] -= market.Micros(m.Sets)
		}
	}
	if got := st.Balance + st.Reserved; got != cash {
		t.Errorf("at %d: collateral %s (available %s, reserved %s), the fills and merges say %s", at, got, st.Balance, st.Reserved, cash)
	}
	for _, p := range st.Positions {
		if p.Size != held[p.Token] {
			t.Errorf("at %d: %s %s holds %s, the fills and merges say %s", at, p.Label, p.Outcome, p.Size, held[p.Token])
		}
	}
	if market.Micros(rep.Summary.EndEquity) != st.Equity {
		t.Errorf("at %d: report equity %s, agent's %s", at, rep.Summary.EndEquity, st.Equity)
	}
}

package strategy

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestRedeemRuleAsksForTheResolvedTokens: a rule with do: redeem intends to redeem
// its market's tokens once the market resolved and something is held there, naming
// what the winning shares pay (0 for a losing position); before the resolution, or
// with nothing held, it intends nothing. A merge rule intends nothing in a resolved
// market (its complete sets are redeemed instead).
func TestRedeemRuleAsksForTheResolvedTokens(t *testing.T) {
	s := mustParse(t, `
rules:
  collect: {on: [resolved, timer], when: "true", do: redeem}
  sets: {on: [resolved, timer], when: "true", do: merge}
`)
	in, st := holding(t, s, 0, 0)
	info := st.Markets[benchCond]
	for _, tc := range []struct {
		resolved bool
		winner   market.Outcome
		yes, no  market.Micros
		want     string
	}{
		{false, 0, 12 * market.One, 3 * market.One, "merge m/sets 3"},
		{true, market.Yes, 12 * market.One, 3 * market.One, "redeem m/collect 12"},
		{true, market.No, 12 * market.One, 3 * market.One, "redeem m/collect 3"},
		{true, market.No, 12 * market.One, 0, "redeem m/collect 0"},
		{true, market.Yes, 0, 0, ""},
	} {
		info.Resolved, info.Winner = tc.resolved, tc.winner
		st.Positions[benchYes].Size, st.Positions[benchNo].Size = tc.yes, tc.no
		ev := &market.Event{Kind: market.EventTimer, Time: 5}
		if tc.resolved {
			ev = &market.Event{Kind: market.EventResolved, Time: 5, Market: benchCond, Winner: info.Tokens[tc.winner]}
		}
		out, err := in.Decide(ev, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range out {
			if it.Market != benchCond {
				t.Fatalf("%s of market %s", it.Kind, it.Market)
			}
			got = append(got, it.Kind.String()+" "+it.Key+" "+it.Size.String())
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%+v: intents %v, want %s", tc, got, tc.want)
		}
	}
}

// TestRedeemIsAnAction: redeem is named among do:'s actions, and a near miss is
// suggested.
func TestRedeemIsAnAction(t *testing.T) { suggestsAction(t, "redeem", "redem") }

// TestResolvedPositionIsMarkedAtItsPayout: once the market resolved, a position
// held until its redeem is marked at its payout (1 a winning share, 0 a losing
// one), not at the book's stale mid.
func TestResolvedPositionIsMarkedAtItsPayout(t *testing.T) {
	s := mustParse(t, `
rules:
  marked: {when: "yes.upnl == 12 && no.upnl == 0 && upnl == 12", do: cancel_all}
`)
	in, st := holding(t, s, 12*market.One, 3*market.One)
	st.Apply(&market.Event{Kind: market.EventBook, Time: 1, Market: benchCond, Token: benchYes,
		Bids: []market.Level{{Price: 400_000, Size: market.One}}, Asks: []market.Level{{Price: 600_000, Size: market.One}}})
	for _, tc := range []struct {
		ev   market.Event
		want int
	}{
		{market.Event{Kind: market.EventTimer, Time: 2}, 0}, // at the mid: yes.upnl 6, no.upnl 1.5
		{market.Event{Kind: market.EventResolved, Time: 3, Market: benchCond, Winner: benchYes}, 1},
	} {
		st.Apply(&tc.ev)
		out, err := in.Decide(&tc.ev, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != tc.want {
			t.Fatalf("%s: intents %+v, want %d", tc.ev.Kind, out, tc.want)
		}
	}
}

package policies

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestKillSwitchTripsOnDailyLoss(t *testing.T) {
	c, col := newChain(t, Config{MaxDailyLoss: m("10"), MaxDrawdown: m("1000"), FlattenOnHalt: true})
	s := fixture()
	hold(s, yes, "100", "0.45") // equity 100 + 100 × 0.45 = 145
	if a := c.Observe(s); a.Any() {
		t.Fatalf("tripped at the baseline: %+v", a)
	}
	// the YES mid falls to 0.36: equity 136, a loss of 9 < 10
	s.Books[yes].Reset([]market.Level{{Price: m("0.35"), Size: m("1")}}, []market.Level{{Price: m("0.37"), Size: m("1")}})
	s.Time += 1000
	if a := c.Observe(s); a.Any() {
		t.Fatalf("tripped below the limit: %+v", a)
	}
	// mid 0.35: equity 135, a loss of 10: trips
	s.Books[yes].Reset([]market.Level{{Price: m("0.34"), Size: m("1")}}, []market.Level{{Price: m("0.36"), Size: m("1")}})
	s.Time += 1000
	a := c.Observe(s)
	if !a.CancelAll || !a.Flatten || !a.Halt || !strings.Contains(a.Reason, "daily loss 10 reached max_daily_loss 10") {
		t.Fatalf("action %+v", a)
	}
	if !c.Halted() {
		t.Fatal("not halted")
	}
	last := col.recs[len(col.recs)-1]
	if last.Kind != RecordTrip || last.Guard != GuardKillSwitch || last.Time != s.Time {
		t.Fatalf("trip record %+v", last)
	}
	// it stays tripped though the market recovers, and asks only once
	s.Books[yes].Reset([]market.Level{{Price: m("0.60"), Size: m("1")}}, []market.Level{{Price: m("0.62"), Size: m("1")}})
	if a := c.Observe(s); a.Any() {
		t.Fatalf("asked again: %+v", a)
	}
	if d := c.Evaluate(s, quote(yes, market.Sell, "0.61", "10")); d.Allowed || d.Denied.Guard != GuardKillSwitch {
		t.Fatalf("opening allowed while halted: %+v", d)
	}
	// only an operator resumes
	if !c.Resume(s, "operator alice") || c.Halted() {
		t.Fatal("resume failed")
	}
	if c.Resume(s, "again") {
		t.Fatal("resuming an untripped switch reported a change")
	}
	if d := c.Evaluate(s, quote(yes, market.Sell, "0.61", "10")); !d.Allowed {
		t.Fatalf("denied after resume: %v", d.Err())
	}
	if r := col.recs[len(col.recs)-2]; r.Kind != RecordResume || r.Reason != "operator alice" {
		t.Fatalf("resume record %+v", r)
	}
}

func TestKillSwitchTripsOnDrawdownFromTheHighWaterMark(t *testing.T) {
	c, _ := newChain(t, Config{MaxDailyLoss: m("1000"), MaxDrawdown: m("20")})
	s := fixture()
	c.Observe(s) // equity 100
	s.Balance = m("130")
	c.Observe(s) // high-water 130
	s.Balance = m("111")
	if a := c.Observe(s); a.Any() {
		t.Fatal("tripped at a drawdown of 19")
	}
	s.Balance = m("110")
	if a := c.Observe(s); !a.Halt || a.Flatten || !strings.Contains(a.Reason, "drawdown 20 reached max_drawdown 20") {
		t.Fatalf("action %+v", a)
	}
	if k := c.KillState(); k.HighWater != m("130") || !k.Tripped {
		t.Fatalf("kill state %+v", k)
	}
}

func TestDailyLossBaselineRollsAtUTCMidnight(t *testing.T) {
	c, _ := newChain(t, Config{MaxDailyLoss: m("10"), MaxDrawdown: m("1000")})
	s := fixture()
	s.Time = t0 + day - 1
	c.Observe(s)
	s.Balance = m("91") // lost 9 today
	c.Observe(s)
	s.Time = t0 + day // a new day starts at 91
	s.Balance = m("91")
	c.Observe(s)
	s.Balance = m("82") // lost 9 of the new day: 18 in total, but not in one day
	if a := c.Observe(s); a.Any() {
		t.Fatalf("tripped across days: %+v", a)
	}
	if k := c.KillState(); k.DayStart != m("91") || k.Day != (t0+day)/day {
		t.Fatalf("baseline %+v", k)
	}
}

func TestEvaluateReportsTheTripItCauses(t *testing.T) {
	c, _ := newChain(t, Config{MaxDailyLoss: m("5")})
	s := fixture()
	c.Observe(s)
	s.Balance = m("90")
	d := c.Evaluate(s, quote(yes, market.Buy, "0.45", "10"))
	if !d.Action.Halt || d.Allowed || d.Denied.Guard != GuardKillSwitch {
		t.Fatalf("decision %+v", d)
	}
}

func TestOperatorTripIsIdempotent(t *testing.T) {
	c, col := newChain(t, Config{})
	s := fixture()
	a := c.Trip(s.Time, "")
	if !a.CancelAll || !a.Halt || a.Reason != "operator" {
		t.Fatalf("action %+v", a)
	}
	a2 := c.Trip(s.Time+5, "second")
	if a2.Reason != "operator" || c.KillState().TrippedAt != s.Time {
		t.Fatalf("second trip changed the first: %+v %+v", a2, c.KillState())
	}
	if n := len(col.recs); n != 1 {
		t.Fatalf("%d records for two trips, want 1", n)
	}
}

// TestKillStateSurvivesARestart persists the state as JSON and restores it into a
// new chain, which must still deny.
func TestKillStateSurvivesARestart(t *testing.T) {
	c, _ := newChain(t, Config{MaxDrawdown: m("1")})
	s := fixture()
	s.Balance = m("1234.5")
	c.Observe(s)
	s.Balance = m("1233.5")
	c.Observe(s)
	b, err := json.Marshal(c.KillState())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"high_water_equity":"1234.5"`) || !strings.Contains(string(b), `"tripped":true`) {
		t.Fatalf("json %s", b)
	}
	var k KillState
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	if k != c.KillState() {
		t.Fatalf("round trip %+v != %+v", k, c.KillState())
	}
	c2, _ := newChain(t, Config{MaxDrawdown: m("1")}, WithKillState(k))
	if d := c2.Evaluate(s, quote(yes, market.Buy, "0.45", "10")); d.Allowed || d.Denied.Guard != GuardKillSwitch {
		t.Fatalf("restored chain allowed: %+v", d)
	}
	for _, bad := range []string{`{"day_start_equity":"x"}`, `{"high_water_equity":"1.0000001"}`, `[`} {
		if err := json.Unmarshal([]byte(bad), &k); err == nil {
			t.Fatalf("accepted %s", bad)
		}
	}
	if err := json.Unmarshal([]byte(`{"day_start_equity":"-2.5"}`), &k); err != nil || k.DayStart != -m("2.5") {
		t.Fatalf("negative equity: %v %v", k.DayStart, err)
	}
}

func TestEquityMarksPositions(t *testing.T) {
	s := fixture()
	s.Reserved = m("4")
	hold(s, yes, "10", "0.30")  // mid 0.45 → 4.5
	hold(s, no, "10", "0.50")   // no NO book: mirrored mid 0.55 → 5.5
	hold(s, yes2, "10", "0.20") // mid 0.45 → 4.5
	delete(s.Books, yes2)
	// no book at all for yes2 or no2: average cost 0.20 → 2
	if got, want := s.Equity(), m("100")+m("4")+m("4.5")+m("5.5")+m("2"); got != want {
		t.Fatalf("equity %s, want %s", got, want)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor/statusview"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// TestStatusOfAStandaloneRun runs the example quoter for half an hour of simulated
// market (leaving its orders on stop, so they are there to see), then prints its
// status from the state directory: markets with spread and mid, its orders with
// their distance from the mid (consistent with the prices) and age, inventory, PnL,
// the guards' use; --json is the same view. The status file is private (0600).
func TestStatusOfAStandaloneRun(t *testing.T) {
	state := t.TempDir()
	if code, out, errOut := runEnv(t, "run", "--clock", "sim", "--duration", "30m", "--leave-orders", "--state-dir", state, quoterAgent); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	fi, err := os.Stat(filepath.Join(state, wire.StatusFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("status file: %v %v", fi, err)
	}
	code, out, errOut := runEnv(t, "status", "--state-dir", state, quoterAgent)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, re := range []string{
		`(?m)^Agent quoter: stopped, dry run, wallet 0x[0-9a-f]{40}$`,
		`(?m)^Status of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(.+ ago\); last market event \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$`,
		`(?m)^Markets:\n  Market +Bid +Ask +Mid +Spread\n  \S+ +YES +0\.\d+ +0\.\d+ +0\.\d+ +0\.\d+ \(\d+\.\d\d%\)$`,
		`(?m)^Orders: [1-9]\d* open\n  Market +Side +Price +Size +Filled +From mid +Age\n  \S+ +(YES|NO) +(BUY|SELL) +0\.\d+`,
		`(?m)^Inventory:$`, `(?m)^  Balance \d+\.\d\d USDC, reserved by open buys \d+\.\d\d$`,
		`(?m)^PnL:\n  -?\d+\.\d\d \(realized -?\d+\.\d\d, unrealized -?\d+\.\d\d\); equity \d+\.\d\d$`,
		`(?m)^  max_position +\S+ +/ \d+ +shares +\d+%`, `(?m)^  max_open_orders +\S+ +/ 6 +orders +\d+%`, `(?m)^  max_daily_loss +\S+ +/ \d+ +USDC +\d+%`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no %s in:\n%s", re, out)
		}
	}

	code, js, errOut := runEnv(t, "status", "--json", "--state-dir", state, quoterAgent)
	if code != 0 {
		t.Fatalf("status --json: exit %d\n%s", code, errOut)
	}
	var v statusview.View
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	if v.Agent != "quoter" || v.State != "stopped" || len(v.Markets) != 1 || v.Markets[0].Mid == 0 || len(v.Orders) == 0 ||
		len(v.Orders) != v.OpenOrders || len(v.Guards) != 7 {
		t.Fatalf("view %+v", v)
	}
	for _, o := range v.Orders {
		want := o.Mid - o.Price
		if o.Side == market.Sell.String() {
			want = o.Price - o.Mid
		}
		if o.Mid == 0 || o.Distance != want || o.AgeMS < 0 || o.AgeMS > 30*60*1000 {
			t.Errorf("order %+v: distance or age wrong", o)
		}
	}
	if !strings.Contains(out, string(v.Markets[0].Label)) {
		t.Errorf("the text does not name the market %q", v.Markets[0].Label)
	}

	// Without a run there is nothing to show, and it says why.
	code, _, errOut = runEnv(t, "status", "--state-dir", t.TempDir(), quoterAgent)
	if code == 0 || !strings.Contains(errOut, "no status file: run the agent first") {
		t.Fatalf("no status file: exit %d %s", code, errOut)
	}
}

package statusview

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

func amt(s string) natsbus.Amount {
	m, err := market.ParseSignedMicros(s)
	if err != nil {
		panic(err)
	}
	return natsbus.Amount(m)
}

// fixture is a quoter's status: two markets (one with an empty side), three open
// orders of which the status lists two, a position, guards of which one is near
// its limit.
func fixture() natsbus.Status {
	t := time.Date(2026, 3, 2, 15, 30, 0, 0, time.UTC).UnixMilli()
	var w market.Address
	w[0], w[19] = 0xc2, 0x13
	return natsbus.Status{V: 1, Agent: "quoter", Wallet: w, State: natsbus.StateRunning, DryRun: true, Time: t, LastEvent: t - 2000,
		OpenOrders: 3, Balance: amt("962.504"), Reserved: amt("23.75"), Equity: amt("1003.6049"), PnL: amt("3.6049"),
		Realized: amt("1.5"), Unrealized: amt("2.1049"),
		Books: []natsbus.BookStatus{
			{Market: "0xaaa1", Label: "will-it-rain-in-london-tomorrow", Token: "11", Outcome: "YES", Bid: amt("0.49"), Ask: amt("0.51"), Mid: amt("0.5"), Spread: amt("0.02")},
			{Market: "0xbbb2", Token: "21", Outcome: "YES", Bid: amt("0.12")},
		},
		Orders: []natsbus.OrderStatus{
			{ID: "o-1", Market: "0xaaa1", Label: "will-it-rain-in-london-tomorrow", Outcome: "YES", Side: "BUY", Price: amt("0.48"), Size: amt("25"), Matched: amt("5"), Placed: t - 44000, Mid: amt("0.5"), Distance: amt("0.02")},
			{ID: "o-2", Market: "0xbbb2", Outcome: "YES", Side: "SELL", Price: amt("0.2"), Size: amt("10"), Placed: t - 3602000},
		},
		Positions: []natsbus.PositionStatus{
			{Market: "0xaaa1", Label: "will-it-rain-in-london-tomorrow", Token: "11", Outcome: "YES", Size: amt("40"), AvgPrice: amt("0.4474"), Mark: amt("0.5"), Unrealized: amt("2.1049")},
			{Market: "0xbbb2", Token: "22", Outcome: "NO", Size: amt("0"), Realized: amt("1.5")},
		},
		Guards: []natsbus.GuardStatus{
			{Guard: "max_position", Unit: "shares", Used: amt("65"), Limit: amt("80"), Use: 81},
			{Guard: "max_open_orders", Unit: "orders", Used: amt("3"), Limit: amt("20"), Use: 15},
			{Guard: "max_daily_loss", Unit: "USDC", Used: amt("0"), Limit: amt("50"), Use: 0},
		},
	}
}

// TestRenderGolden: the text and the JSON of a quoter's status at a fixed instant
// (testdata/*.golden; PITBOSS_UPDATE_GOLDEN=1 rewrites them).
func TestRenderGolden(t *testing.T) {
	st := fixture()
	v := New(st, st.Time+4000)
	var text bytes.Buffer
	if err := Render(&text, v); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "quoter.txt.golden", text.Bytes())
	golden(t, "quoter.json.golden", append(js, '\n'))

	// What the view derives.
	if v.AgeMS != 4000 || v.Orders[0].AgeMS != 42000 || v.Orders[1].AgeMS != 3600000 || v.Markets[0].SpreadPct != "4.00%" ||
		v.Markets[1].SpreadPct != "" || len(v.Inventory) != 1 || !v.Guards[0].Near || v.Guards[1].Near {
		t.Fatalf("view %+v", v)
	}
}

// TestRenderEmpty: an agent that has not seen a market event yet.
func TestRenderEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, New(natsbus.Status{Agent: "new", State: natsbus.StateStarting, DryRun: true, Time: 1000}, 1000)); err != nil {
		t.Fatal(err)
	}
	golden(t, "empty.txt.golden", b.Bytes())
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{cents(amt("3.6049")), "3.60"}, {cents(amt("3.605")), "3.61"}, {cents(amt("-0.004")), "0.00"}, {cents(amt("-2.755")), "-2.76"},
		{percent(20000, 500000), "4.00%"}, {percent(1, 3), "33.33%"},
		{Age(850), "850ms"}, {Age(42000), "42s"}, {Age(425000), "7m05s"}, {Age(3600000), "1h00m"}, {Age(3 * 86400000), "3d00h"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("PITBOSS_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (PITBOSS_UPDATE_GOLDEN=1 writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

package main

import (
	"testing"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// TestAuditLineRendersARecordForPeople pins `pitboss ctl audit`'s line: sequence,
// event time with milliseconds (UTC), agent, kind, then the record's own text.
func TestAuditLineRendersARecordForPeople(t *testing.T) {
	order := natsbus.AuditEntry{Seq: 42, Record: natsbus.AuditRecord{Agent: "quoter", Kind: natsbus.AuditOrder,
		Time: 1_714_564_800_007, Order: &natsbus.OrderRecord{Action: "place", Side: "BUY", Outcome: "YES",
			Price: natsbus.Amount(450_000), Size: natsbus.Amount(10 * market.One), IntentKey: "m/bid"}}}
	want := "    42 2024-05-01T12:00:00.007Z quoter       order     place BUY YES 10 @0.45 (m/bid)"
	if got := auditLine(order); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

package wire

import (
	"testing"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// TestAuditRecordsForTheFleet converts each kind of the agent's records.
func TestAuditRecordsForTheFleet(t *testing.T) {
	w := market.Address{1}
	order := market.Order{ID: "0xabc", Market: "0xc1", Token: "11", Side: market.Buy, Price: 450_000, Size: 10 * market.One, Type: market.GTC}
	cases := []struct {
		name  string
		in    agent.AuditRecord
		check func(t *testing.T, r natsbus.AuditRecord)
	}{
		{"decision keeps its intent", agent.AuditRecord{Kind: agent.AuditDecision, Agent: "a", Time: 7, Allowed: false, Guard: "price_band", Reason: "too far",
			Intent: market.Intent{Kind: market.IntentQuote, Key: "bid", Token: "11", Side: market.Buy, Price: 450_000, Size: 10 * market.One}},
			func(t *testing.T, r natsbus.AuditRecord) {
				d := r.Decision
				if r.Kind != natsbus.AuditDecision || d.Allow || d.Guard != "price_band" || d.Reason != "too far" || d.Intent.Kind != "quote" ||
					d.Intent.Side != "BUY" || d.Intent.Price != 450_000 || d.Intent.Key != "bid" {
					t.Fatalf("%+v %+v", r, d)
				}
			}},
		{"order with its quote key", agent.AuditRecord{Kind: agent.AuditOrder, Agent: "a", Op: "place", Order: order, Key: "bid"},
			func(t *testing.T, r natsbus.AuditRecord) {
				o := r.Order
				if r.Kind != natsbus.AuditOrder || o.Action != "place" || o.ID != "0xabc" || o.IntentKey != "bid" || o.Size != natsbus.Amount(10*market.One) || o.Error != "" {
					t.Fatalf("%+v", o)
				}
			}},
		{"rejected order keeps the venue's code", agent.AuditRecord{Kind: agent.AuditOrder, Agent: "a", Op: "place", Order: order,
			Err: market.ErrInsufficientBalance.Error()},
			func(t *testing.T, r natsbus.AuditRecord) {
				if r.Order.Code != market.CodeInsufficientBalance || r.Order.Error != "not enough balance / allowance" {
					t.Fatalf("%+v", r.Order)
				}
			}},
		{"cancel_all", agent.AuditRecord{Kind: agent.AuditOrder, Agent: "a", Op: "cancel_all", Order: market.Order{Market: "0xc1"}, Reason: "shutdown"},
			func(t *testing.T, r natsbus.AuditRecord) {
				if o := r.Order; o.Action != "cancel_all" || o.Market != "0xc1" || o.IntentKey != "shutdown" || o.Side != "" {
					t.Fatalf("%+v", o)
				}
			}},
		{"fill", agent.AuditRecord{Kind: agent.AuditFill, Agent: "a", Fill: market.Fill{Trade: "t1", Order: "0xabc", Token: "11", Side: market.Buy, Price: 450_000, Size: market.One}},
			func(t *testing.T, r natsbus.AuditRecord) {
				if r.Kind != natsbus.AuditFill || r.Fill.Trade != "t1" || r.Fill.Size != natsbus.Amount(market.One) {
					t.Fatalf("%+v", r.Fill)
				}
			}},
		{"trip", agent.AuditRecord{Kind: agent.AuditTrip, Agent: "a", Reason: "max_daily_loss"},
			func(t *testing.T, r natsbus.AuditRecord) {
				if c := r.Control; r.Kind != natsbus.AuditControl || c.Request.Op != natsbus.OpKill || c.Request.From != "kill switch" || c.Request.Reason != "max_daily_loss" {
					t.Fatalf("%+v", r.Control)
				}
			}},
		{"resume", agent.AuditRecord{Kind: agent.AuditResume, Agent: "a", Reason: "operator"},
			func(t *testing.T, r natsbus.AuditRecord) {
				if r.Control.Request.Op != natsbus.OpResumeAfterKill {
					t.Fatalf("%+v", r.Control)
				}
			}},
		{"control", agent.AuditRecord{Kind: agent.AuditControl, Agent: "a", Reason: "pause: operator ctl x@y"},
			func(t *testing.T, r natsbus.AuditRecord) {
				if c := r.Control.Request; c.Op != natsbus.OpPause || c.Reason != "operator ctl x@y" || c.Target != "a" {
					t.Fatalf("%+v", c)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := auditRecord(&c.in, w, true)
			if r.Agent != "a" || r.Wallet != w || !r.DryRun || r.Time != c.in.Time {
				t.Fatalf("header %+v", r)
			}
			if !r.Kind.Valid() {
				t.Fatalf("kind %q", r.Kind)
			}
			c.check(t, r)
		})
	}
}

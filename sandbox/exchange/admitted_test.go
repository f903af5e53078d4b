package exchange

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestAdmittedMatchesChecked runs the property streams through an admission layer
// (a set of every accepted id, refusing a Place of one of them before the engine, as
// the server does: docs/design/0169) and then through two engines: one admitted
// (SetAdmitted) and one that checks every id itself. For the admitted stream the two
// must agree byte for byte, command by command (events and errors), in their final
// snapshots and in their answers about final ids (Cancel of a final order,
// OrderStatus), with Check passing on the admitted engine after every command while
// ids wait unindexed; and for every refused duplicate, AdmissionError must be the
// error the checking engine gives that Place.
func TestAdmittedMatchesChecked(t *testing.T) {
	seeds, n := 6, 2500
	if testing.Short() || raceEnabled {
		seeds, n = 3, 1500
	}
	var refused, finalAnswers, deferredSeen int
	for s := 0; s < seeds; s++ {
		seed := uint64(s)*104_729 + 3
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			ref := New(Config{FeeAccount: feeAcct})
			adm := New(Config{FeeAccount: feeAcct})
			adm.SetAdmitted(true)
			g := newGen(rand.New(rand.NewPCG(seed, seed^0x51ed)), ref)
			accepted := map[market.OrderID]bool{}
			cmds := g.setup()
			var refLog, admLog []byte
			for i := 0; len(cmds) > 0 || i < n; i++ {
				var c Command
				if len(cmds) > 0 {
					c, cmds = cmds[0], cmds[1:]
				} else {
					c = g.command()
				}
				if c.Kind == Place && accepted[c.Order] {
					// the admission refuses it: what would the checking engine say?
					clone, err := Restore(ref.AppendSnapshot(nil))
					if err != nil {
						t.Fatal(err)
					}
					probe := c
					probe.Time = 0 // at the engine clock, as AdmissionError
					_, want := clone.Apply(&probe)
					if got := adm.AdmissionError(&c); !sameErr(got, want) {
						t.Fatalf("command %d: AdmissionError %v, the checking engine %v", i, got, want)
					}
					refused++
					continue
				}
				if c.Kind == Cancel || c.Kind == Place {
					if _, final := ref.finalStatus(c.Order); final && c.Kind == Cancel {
						finalAnswers++
					}
				}
				if adm.index.indexed < adm.index.n {
					deferredSeen++
				}
				re, rerr := ref.Apply(&c)
				refLog = AppendEvents(refLog[:0], re)
				ae, aerr := adm.Apply(&c)
				admLog = AppendEvents(admLog[:0], ae)
				if !bytes.Equal(refLog, admLog) || !sameErr(rerr, aerr) {
					t.Fatalf("command %d (%+v): admitted engine differs: %v / %v", i, c, aerr, rerr)
				}
				if c.Kind == Place && rerr == nil {
					accepted[c.Order] = true
				}
				if c.Order != "" {
					rs, rok := ref.OrderStatus(c.Order)
					as, aok := adm.OrderStatus(c.Order)
					if rs != as || rok != aok {
						t.Fatalf("command %d: OrderStatus(%s) %v %v, checking engine %v %v", i, c.Order, as, aok, rs, rok)
					}
				}
				if err := adm.Check(); err != nil {
					t.Fatalf("command %d: %v", i, err)
				}
			}
			snap := adm.AppendSnapshot(nil)
			if !bytes.Equal(snap, ref.AppendSnapshot(nil)) {
				t.Fatal("final snapshots differ")
			}
			back, err := Restore(snap)
			if err != nil {
				t.Fatal(err)
			}
			if back.Admitted() {
				t.Fatal("a restored engine is admitted")
			}
			var ids []market.OrderID
			adm.AcceptedIDs(func(id market.OrderID) { ids = append(ids, id) })
			if len(ids) != len(accepted) {
				t.Fatalf("AcceptedIDs lists %d ids, %d were accepted", len(ids), len(accepted))
			}
			for _, id := range ids {
				if !accepted[id] {
					t.Fatalf("AcceptedIDs lists %q, never accepted", id)
				}
			}
		})
	}
	if refused == 0 || finalAnswers == 0 || deferredSeen == 0 {
		t.Fatalf("vacuous: %d duplicates refused, %d cancels of final orders, %d commands with unindexed ids", refused, finalAnswers, deferredSeen)
	}
}

// TestAdmittedContractBreach: a duplicate of a final id that reaches an admitted
// engine is accepted (the engine trusts its admission), and Check reports it.
func TestAdmittedContractBreach(t *testing.T) {
	h := newHarness(t)
	h.e.SetAdmitted(true)
	c := h.order(alice, yes, market.Buy, "0.40", "10")
	h.ok(c)
	h.ok(Command{Kind: Cancel, Order: c.Order, Owner: alice})
	if _, err := h.e.Apply(&c); err != nil {
		t.Fatalf("an admitted engine refused a duplicate of a final id: %v", err)
	}
	if err := h.e.Check(); err == nil || !errors.Is(err, ErrInvariant) {
		t.Fatalf("Check after an id accepted twice: %v", err)
	}
	if _, err := Restore(h.e.AppendSnapshot(nil)); err == nil {
		t.Fatal("Restore accepted a snapshot with an id twice")
	}
}

func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

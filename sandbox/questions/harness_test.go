package questions

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

func addr(n byte) market.Address { return market.Address{0: 0xaa, 19: n} }

var (
	alice = addr(1)
	bob   = addr(2)
	carol = addr(3)
	dave  = addr(4)
)

const t0 = int64(1_800_000_000_000) // the harness clock at start, Unix ms

func dec(s string) api.Decimal {
	m, err := market.ParseMicros(s)
	if err != nil {
		panic(err)
	}
	return api.Decimal(m)
}

// harness drives a State and an engine the way the server does: a plan's commands,
// then its record; the invariants of both are checked after every step.
type harness struct {
	t   testing.TB
	e   *exchange.Engine
	s   *State
	now int64
	ids int
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, e: exchange.New(exchange.Config{}), s: s, now: t0}
	for _, a := range []market.Address{alice, bob, carol, dave} {
		h.apply(exchange.Command{Kind: exchange.Deposit, Owner: a, Amount: 1000 * market.One})
	}
	return h
}

// apply applies an engine command at the harness clock, failing on a rejection.
func (h *harness) apply(c exchange.Command) []exchange.Event {
	h.t.Helper()
	c.Time = h.now
	evs, err := h.e.Apply(&c)
	if err != nil {
		h.t.Fatalf("%s: %v", c.Kind, err)
	}
	return evs
}

// run carries out a plan (or returns the planning error): its commands, which must
// all be accepted, then its record; then it checks the engine's and the state's
// invariants.
func (h *harness) run(p *Plan, err error) error {
	h.t.Helper()
	if err != nil {
		var me *market.Error
		if !errors.As(err, &me) {
			h.t.Fatalf("planning error %v is not a catalog error", err)
		}
		if _, ok := market.Lookup(me.Code); !ok {
			h.t.Fatalf("code %q not in the catalog", me.Code)
		}
		return err
	}
	for _, c := range p.Commands {
		c.Time = h.now
		if _, err := h.e.Apply(&c); err != nil {
			h.t.Fatalf("planned %s %+v rejected: %v", c.Kind, c, err)
		}
	}
	if err := h.s.ApplyRecord(p.Record()); err != nil {
		h.t.Fatalf("record refused: %v", err)
	}
	h.check()
	return nil
}

func (h *harness) ok(p *Plan, err error) *Plan {
	h.t.Helper()
	if err := h.run(p, err); err != nil {
		h.t.Fatalf("unexpected error: %v", err)
	}
	return p
}

// fails returns a check that a planning call was refused with code:
// h.fails(code)(h.s.PlanX(...)).
func (h *harness) fails(code market.Code) func(*Plan, error) {
	return func(_ *Plan, err error) {
		h.t.Helper()
		var me *market.Error
		if err == nil || !errors.As(err, &me) || me.Code != code {
			h.t.Fatalf("got %v, want %s", err, code)
		}
	}
}

func (h *harness) check() {
	h.t.Helper()
	if err := h.e.Check(); err != nil {
		h.t.Fatal(err)
	}
	if err := h.s.Audit(h.e); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) advance(d time.Duration) { h.now += d.Milliseconds() }

func (h *harness) coll(a market.Address) market.Micros {
	v, _ := h.e.Collateral(a)
	return v
}

func (h *harness) wantColl(a market.Address, want string) {
	h.t.Helper()
	if got := h.coll(a); got != dec(want).Micros() {
		h.t.Fatalf("collateral of %s: %s, want %s", a, got, want)
	}
}

// yesNo is a draft of the yes-no template ending a day after the harness start.
func (h *harness) yesNo(text string) api.QuestionDraft {
	return api.QuestionDraft{TemplateID: "yes-no", Question: text, EndDate: api.ISOMillis(h.now + 24*hour)}
}

func (h *harness) create(creator market.Address, d api.QuestionDraft, bond string) api.Question {
	h.t.Helper()
	p := h.ok(h.s.PlanCreate(h.e, creator, &api.CreateQuestionRequest{QuestionDraft: d, Bond: dec(bond)}, h.now))
	q, ok := h.s.Question(p.QuestionID())
	if !ok {
		h.t.Fatal("created question not found")
	}
	return q
}

// place rests (or matches) a GTC order.
func (h *harness) place(owner market.Address, tok market.TokenID, side market.Side, price, size string) []exchange.Event {
	h.t.Helper()
	h.ids++
	return h.apply(exchange.Command{Kind: exchange.Place, Order: market.OrderID("o" + strconv.Itoa(h.ids)), Owner: owner,
		Token: tok, Side: side, Price: dec(price).Micros(), Size: dec(size).Micros(), Type: market.GTC, Nonce: h.e.Nonce(owner)})
}

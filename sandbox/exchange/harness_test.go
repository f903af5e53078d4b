package exchange

import (
	"errors"
	"strconv"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// Test vocabulary: a few accounts, one or two markets, amounts written as decimals.

func addr(n byte) market.Address {
	var a market.Address
	a[0], a[19] = 0xaa, n
	return a
}

var (
	feeAcct = addr(0xfe)
	alice   = addr(1)
	bob     = addr(2)
	carol   = addr(3)
	dave    = addr(4)
)

const (
	cond  = market.ConditionID("0xc0")
	yes   = market.TokenID("101")
	no    = market.TokenID("102")
	cond2 = market.ConditionID("0xc1")
	yes2  = market.TokenID("201")
	no2   = market.TokenID("202")
)

// d parses a decimal amount, failing the test binary on a typo.
func d(s string) market.Micros {
	v, err := market.ParseMicros(s)
	if err != nil {
		panic("bad amount " + s + ": " + err.Error())
	}
	return v
}

func spec(y, n market.TokenID, tick string) MarketSpec {
	return MarketSpec{Tokens: [2]market.TokenID{y, n}, Question: "Will it?", Slug: "will-it", Outcomes: [2]string{"Yes", "No"},
		TickSize: d(tick), MinSize: d("1"), Active: true, AcceptingOrders: true}
}

type harness struct {
	t   testing.TB
	e   *Engine
	now int64
	ids int
	fee uint32  // fee rate h.order signs
	log []Event // every event so far
}

// newHarness returns an engine with market cond (tick 0.01, min size 1) and alice,
// bob and carol holding 1000 collateral each.
func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{t: t, e: New(Config{FeeAccount: feeAcct}), now: 1_000_000}
	h.ok(Command{Kind: CreateMarket, Market: cond, Spec: spec(yes, no, "0.01")})
	for _, a := range []market.Address{alice, bob, carol} {
		h.ok(Command{Kind: Deposit, Owner: a, Amount: d("1000")})
	}
	return h
}

// do applies c at the harness clock and checks the invariants afterwards.
func (h *harness) do(c Command) ([]Event, error) {
	h.t.Helper()
	if c.Time == 0 {
		c.Time = h.now
	}
	evs, err := h.e.Apply(&c)
	if err != nil {
		var me *market.Error
		if !errors.As(err, &me) {
			h.t.Fatalf("%s: error %v is not a catalog error", c.Kind, err)
		}
		if _, ok := market.Lookup(me.Code); !ok {
			h.t.Fatalf("%s: error code %q is not in the catalog", c.Kind, me.Code)
		}
	}
	if cerr := h.e.Check(); cerr != nil {
		h.t.Fatalf("after %s: %v", c.Kind, cerr)
	}
	out := append([]Event(nil), evs...)
	h.log = append(h.log, out...)
	return out, err
}

func (h *harness) ok(c Command) []Event {
	h.t.Helper()
	evs, err := h.do(c)
	if err != nil {
		h.t.Fatalf("%s: unexpected error %v", c.Kind, err)
	}
	return evs
}

// fails applies c and checks it is rejected with code (and message, if not empty).
func (h *harness) fails(c Command, code market.Code, msg string) {
	h.t.Helper()
	before := h.e.AppendSnapshot(nil)
	evs, err := h.do(c)
	var me *market.Error
	if !errors.As(err, &me) || me.Code != code {
		h.t.Fatalf("%s: got error %v, want code %s", c.Kind, err, code)
	}
	if msg != "" && me.Message != msg {
		h.t.Fatalf("%s: message %q, want %q", c.Kind, me.Message, msg)
	}
	if n := len(evs); n == 0 || evs[n-1].Kind != CommandRejected || evs[n-1].Code != code {
		h.t.Fatalf("%s: last event is not the rejection: %+v", c.Kind, evs)
	}
	// A rejection changes nothing but the sequence number (and the clock).
	after := h.e.AppendSnapshot(nil)
	if string(stripCounters(before)) != string(stripCounters(after)) {
		h.t.Fatalf("%s: rejected command changed the state", c.Kind)
	}
}

// stripCounters blanks the clock and sequence numbers of a snapshot's header, which a
// rejection legitimately advances.
func stripCounters(s []byte) []byte {
	r := dec{b: s, off: 5 + 20 + 1}
	r.varint()
	r.uvarint()
	out := append([]byte(nil), s[:5+20+1]...)
	return append(out, s[r.off:]...)
}

func (h *harness) id() market.OrderID {
	h.ids++
	return market.OrderID("o" + strconv.Itoa(h.ids))
}

// order builds a GTC Place of owner on token at price for size shares.
func (h *harness) order(owner market.Address, token market.TokenID, side market.Side, price, size string) Command {
	return Command{Kind: Place, Order: h.id(), Owner: owner, Token: token, Side: side, Price: d(price), Size: d(size), Type: market.GTC, FeeRateBps: h.fee}
}

// place applies a GTC order and returns its id.
func (h *harness) place(owner market.Address, token market.TokenID, side market.Side, price, size string) market.OrderID {
	h.t.Helper()
	c := h.order(owner, token, side, price, size)
	h.ok(c)
	return c.Order
}

// split gives owner amount of YES and NO of cond.
func (h *harness) split(owner market.Address, amount string) {
	h.t.Helper()
	h.ok(Command{Kind: Split, Owner: owner, Market: cond, Amount: d(amount)})
}

func (h *harness) coll(a market.Address) (market.Micros, market.Micros) { return h.e.Collateral(a) }

func (h *harness) tokens(a market.Address, t market.TokenID) (market.Micros, market.Micros) {
	return h.e.TokenBalance(a, t)
}

func (h *harness) wantColl(a market.Address, avail, res string) {
	h.t.Helper()
	if ga, gr := h.coll(a); ga != d(avail) || gr != d(res) {
		h.t.Fatalf("collateral of %x: %s available, %s reserved; want %s, %s", a[19], ga, gr, avail, res)
	}
}

func (h *harness) wantTokens(a market.Address, t market.TokenID, avail, res string) {
	h.t.Helper()
	if ga, gr := h.tokens(a, t); ga != d(avail) || gr != d(res) {
		h.t.Fatalf("token %s of %x: %s available, %s reserved; want %s, %s", t, a[19], ga, gr, avail, res)
	}
}

func (h *harness) wantLevels(t market.TokenID, side market.Side, want ...string) {
	h.t.Helper()
	got := h.e.Levels(t, side, nil, 0)
	var gs []string
	for _, l := range got {
		gs = append(gs, l.Price.String()+"x"+l.Size.String())
	}
	if len(gs) != len(want) {
		h.t.Fatalf("%s %s levels %v, want %v", t, side, gs, want)
	}
	for i := range gs {
		if gs[i] != want[i] {
			h.t.Fatalf("%s %s levels %v, want %v", t, side, gs, want)
		}
	}
}

func (h *harness) wantStatus(id market.OrderID, st market.OrderStatus) {
	h.t.Helper()
	got, ok := h.e.OrderStatus(id)
	if !ok || got != st {
		h.t.Fatalf("order %s: status %v (known %v), want %v", id, got, ok, st)
	}
}

// kinds lists the kinds of evs, for compact assertions.
func kinds(evs []Event) []EventKind {
	out := make([]EventKind, len(evs))
	for i := range evs {
		out[i] = evs[i].Kind
	}
	return out
}

func find(evs []Event, k EventKind) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

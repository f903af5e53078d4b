package exchange

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// checkApply applies c and fails unless the outcome is success or a catalog error and
// every invariant still holds.
func checkApply(t *testing.T, e *Engine, c *Command) {
	t.Helper()
	evs, err := e.Apply(c)
	if err != nil {
		var me *market.Error
		if !errors.As(err, &me) {
			t.Fatalf("%s: %v is not a catalog error", c.Kind, err)
		}
		if _, ok := market.Lookup(me.Code); !ok {
			t.Fatalf("%s: code %q is not in the catalog", c.Kind, me.Code)
		}
		if n := len(evs); n == 0 || evs[n-1].Kind != CommandRejected || evs[n-1].Code != me.Code {
			t.Fatalf("%s: rejection without its event", c.Kind)
		}
	}
	if cerr := e.Check(); cerr != nil {
		t.Fatalf("after %+v: %v", c, cerr)
	}
}

// FuzzApply drives the public command entry point with command streams chosen by the
// fuzzer's bytes: no input may panic, every rejection must be a catalog error, and the
// invariants must hold after every command.
func FuzzApply(f *testing.F) {
	for s := uint64(1); s <= 8; s++ {
		r := rand.New(rand.NewPCG(s, s))
		b := make([]byte, 64+64*s)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0}, 200))
	f.Add(bytes.Repeat([]byte{0xff}, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		e := New(Config{FeeAccount: feeAcct})
		src := &byteSource{b: data}
		g := newGen(src, e)
		for _, c := range g.setup() {
			checkApply(t, e, &c)
		}
		for n := 0; !src.done() && n < 2000; n++ {
			c := g.command()
			checkApply(t, e, &c)
		}
	})
}

// FuzzApplyRaw feeds arbitrary decoded commands (any field values, not only plausible
// ones) to an engine with listed markets and funded accounts.
func FuzzApplyRaw(f *testing.F) {
	seedCommands(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		e := fuzzEngine(t)
		for len(data) > 0 {
			c, n, err := DecodeCommand(data)
			if err != nil {
				return
			}
			data = data[n:]
			checkApply(t, e, &c)
		}
	})
}

// fuzzEngine returns an engine with market cond (tick 0.01, fee 100 bps), a resting
// book and funded accounts, so that decoded commands reach deep paths.
func fuzzEngine(t testing.TB) *Engine {
	e := New(Config{FeeAccount: feeAcct})
	s := spec(yes, no, "0.01")
	s.FeeBps = 100
	cmds := []Command{
		{Kind: CreateMarket, Market: cond, Spec: s},
		{Kind: Deposit, Owner: alice, Amount: d("1000")},
		{Kind: Deposit, Owner: bob, Amount: d("1000")},
		{Kind: Split, Owner: bob, Market: cond, Amount: d("100")},
		{Kind: Place, Order: "a1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.4"), Size: d("10"), FeeRateBps: 100},
		{Kind: Place, Order: "b1", Owner: bob, Token: yes, Side: market.Sell, Price: d("0.6"), Size: d("10"), FeeRateBps: 100},
		{Kind: Place, Order: "b2", Owner: bob, Token: no, Side: market.Sell, Price: d("0.5"), Size: d("10"), FeeRateBps: 100,
			Type: market.GTD, Expiration: 2_000_000},
	}
	for i, c := range []market.ConditionID{condA, condB} { // a neg-risk event
		ns := spec(market.TokenID("n"+string(rune('a'+i))), market.TokenID("n"+string(rune('x'+i))), "0.01")
		ns.NegRisk, ns.NegRiskID = true, evID
		cmds = append(cmds, Command{Kind: CreateMarket, Market: c, Spec: ns}, Command{Kind: Split, Owner: bob, Market: c, Amount: d("50")})
	}
	for i := range cmds {
		cmds[i].Time = 1_000_000_000
		if _, err := e.Apply(&cmds[i]); err != nil {
			t.Fatalf("setup %d: %v", i, err)
		}
	}
	return e
}

func seedCommands(f *testing.F) {
	cmds := []Command{
		{Kind: Place, Time: 1_000_000_001, Order: "x1", Owner: alice, Token: yes, Side: market.Buy, Price: d("0.6"), Size: d("5"), FeeRateBps: 100},
		{Kind: Place, Time: 1_000_000_002, Order: "x2", Owner: alice, Token: no, Side: market.Buy, Price: d("0.6"), Size: d("5"), Type: market.FAK, FeeRateBps: 100},
		{Kind: Cancel, Order: "a1", Owner: alice},
		{Kind: CancelAll, Owner: bob, Market: cond},
		{Kind: AdvanceTime, Time: 3_000_000_000_000},
		{Kind: Resolve, Market: cond, Winner: market.No},
		{Kind: Redeem, Owner: bob, Market: cond},
		{Kind: UpdateMarket, Market: cond, Spec: spec(yes, no, "0.001")},
		{Kind: Merge, Owner: bob, Market: cond, Amount: d("3")},
		{Kind: SetAccountMode, Owner: alice, Mode: market.ModeCloseOnly},
		{Kind: IncrementNonce, Owner: bob},
		{Kind: Withdraw, Owner: alice, Amount: d("999")},
		{Kind: Transfer, Owner: alice, To: carol, Amount: d("5")},
		{Kind: Convert, Owner: bob, Market: condA, Amount: d("7")},
		{Kind: Swap, Owner: bob, To: alice, Token: yes, Size: d("2"), Amount: d("1.2")},
		{Kind: Resolve, Market: condB, Winner: market.Yes},
	}
	var all []byte
	for i := range cmds {
		b, _ := cmds[i].AppendBinary(nil)
		f.Add(b)
		all = append(all, b...)
	}
	f.Add(all)
}

// FuzzDecodeCommand checks the journal decoder: no input panics, and whatever decodes
// re-encodes to exactly the bytes it came from (one encoding per command).
func FuzzDecodeCommand(f *testing.F) {
	seedCommands(f)
	f.Add([]byte{1})
	f.Add([]byte{2, 9, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, n, err := DecodeCommand(data)
		if err != nil {
			if !errors.Is(err, ErrEncoding) {
				t.Fatalf("error %v does not wrap ErrEncoding", err)
			}
			return
		}
		b, _ := c.AppendBinary(nil)
		if !bytes.Equal(b, data[:n]) {
			t.Fatalf("decoded %+v re-encodes to %x, input %x", c, b, data[:n])
		}
		var c2 Command
		if err := c2.UnmarshalBinary(b); err != nil || c2 != c {
			t.Fatalf("round trip: %v %+v", err, c2)
		}
	})
}

// FuzzDecodeEvent checks the event-log decoder the same way.
func FuzzDecodeEvent(f *testing.F) {
	h := newHarness(f)
	h.split(alice, "10")
	h.place(alice, yes, market.Sell, "0.5", "10")
	h.ok(h.order(bob, yes, market.Buy, "0.5", "5"))
	h.ok(Command{Kind: Transfer, Owner: bob, To: carol, Amount: d("1")})
	for i := range h.log {
		b, _ := h.log[i].AppendBinary(nil)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, n, err := DecodeEvent(data)
		if err != nil {
			if !errors.Is(err, ErrEncoding) {
				t.Fatalf("error %v does not wrap ErrEncoding", err)
			}
			return
		}
		if b, _ := ev.AppendBinary(nil); !bytes.Equal(b, data[:n]) {
			t.Fatalf("decoded %+v re-encodes to %x, input %x", ev, b, data[:n])
		}
	})
}

// FuzzRestore checks the snapshot decoder: no input panics; a snapshot is either
// refused with an error wrapping ErrEncoding or ErrInvariant, or restores to an engine
// whose invariants hold and whose snapshot is the input.
func FuzzRestore(f *testing.F) {
	for _, seed := range []uint64{3, 5} {
		r := generate(f, seed, 300, 150)
		f.Add(r.snap)
		f.Add(r.final)
	}
	empty := New(Config{}).AppendSnapshot(nil)
	f.Add(empty)
	v1 := append([]byte(nil), empty[:len(empty)-1]...)
	v1[4] = snapshotVersion1
	f.Add(v1)
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Restore(data)
		if err != nil {
			if !errors.Is(err, ErrEncoding) && !errors.Is(err, ErrInvariant) {
				t.Fatalf("error %v wraps neither ErrEncoding nor ErrInvariant", err)
			}
			return
		}
		if cerr := e.Check(); cerr != nil {
			t.Fatal(cerr)
		}
		want := data
		if data[4] == snapshotVersion1 { // written again as version 2: no neg-risk events
			want = append(append([]byte(nil), data...), 0)
			want[4] = snapshotVersion
		}
		if !bytes.Equal(e.AppendSnapshot(nil), want) {
			t.Fatal("restored engine snapshots to different bytes")
		}
		c := Command{Kind: AdvanceTime, Time: e.Time() + 1}
		checkApply(t, e, &c)
	})
}

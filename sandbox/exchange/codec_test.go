package exchange

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func allKindsOfCommands() []Command {
	s := spec(yes2, no2, "0.001")
	s.FeeBps, s.NegRisk, s.EndDate, s.Closed, s.Archived = 25, true, 1_900_000_000, true, true
	return []Command{
		{Kind: CreateMarket, Time: 1, Market: cond2, Spec: s},
		{Kind: UpdateMarket, Time: 2, Market: cond2, Spec: s},
		{Kind: Resolve, Time: 3, Market: cond2, Winner: market.No},
		{Kind: Deposit, Time: 4, Owner: alice, Amount: d("12.345678")},
		{Kind: Withdraw, Time: 5, Owner: alice, Amount: d("1")},
		{Kind: Split, Time: 6, Owner: alice, Market: cond, Amount: d("2")},
		{Kind: Merge, Time: 7, Owner: alice, Market: cond, Amount: d("2")},
		{Kind: Redeem, Time: 8, Owner: alice, Market: cond},
		{Kind: Place, Time: 9, Order: "0xabc", Owner: bob, Market: cond, Token: no, Side: market.Sell, Type: market.GTD, PostOnly: true,
			Price: d("0.37"), Size: d("12.5"), Expiration: 1_800_000_000, Nonce: 3, FeeRateBps: 100},
		{Kind: Cancel, Time: 10, Order: "0xabc", Owner: bob},
		{Kind: CancelAll, Time: 11, Owner: bob, Market: cond, Token: yes},
		{Kind: IncrementNonce, Time: 12, Owner: bob},
		{Kind: SetAccountMode, Time: 13, Owner: bob, Mode: market.ModeBanned},
		{Kind: AdvanceTime, Time: 14},
		{Kind: Place, Time: -1, Price: -5, Size: -1 << 62, Amount: -1, Expiration: -7}, // out-of-range values encode too
		{},
	}
}

// TestCommandEncoding checks that every kind of command round-trips, that a journal of
// concatenated commands decodes in order, and that equal commands encode identically.
func TestCommandEncoding(t *testing.T) {
	var journal []byte
	cmds := allKindsOfCommands()
	for _, c := range cmds {
		t.Run(c.Kind.String(), func(t *testing.T) {
			b, err := c.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var got Command
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if got != c {
				t.Fatalf("round trip\n got %+v\nwant %+v", got, c)
			}
			again, _ := got.AppendBinary(nil)
			if !bytes.Equal(again, b) {
				t.Fatal("re-encoding differs")
			}
			if n := testing.AllocsPerRun(100, func() { b, _ = c.AppendBinary(b[:0]) }); n != 0 {
				t.Fatalf("AppendBinary allocates %v times", n)
			}
		})
		journal, _ = c.AppendBinary(journal)
	}
	t.Run("a journal decodes command by command", func(t *testing.T) {
		for i := 0; len(journal) > 0; i++ {
			c, n, err := DecodeCommand(journal)
			if err != nil || c != cmds[i] {
				t.Fatalf("command %d: %v %+v", i, err, c)
			}
			journal = journal[n:]
		}
	})
}

// TestCommandEncodingIsStable pins the version-1 encoding of a Place: journals written
// by one build must replay on the next, so a change here needs a new version.
func TestCommandEncodingIsStable(t *testing.T) {
	c := Command{Kind: Place, Time: 1_700_000_000_123, Order: "o1", Owner: alice, Token: yes, Side: market.Buy,
		Price: d("0.55"), Size: d("10"), FeeRateBps: 100}
	b, _ := c.AppendBinary(nil)
	// version 1, kind 9, time, field mask, owner, token "101", order "o1", side 1,
	// price 0.55, size 10, fee rate 100 (signed values zigzag varints)
	const want = "01" + "09" + "f6a1abfef962" + "9d13" + "aa00000000000000000000000000000000000001" +
		"03313031" + "026f31" + "01" + "e09143" + "80dac409" + "64"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("encoding\n got %s\nwant %s", got, want)
	}
}

// TestCommandDecodingErrors checks that malformed journals are refused with ErrEncoding.
func TestCommandDecodingErrors(t *testing.T) {
	good, _ := (&Command{Kind: Deposit, Time: 5, Owner: alice, Amount: 7}).AppendBinary(nil)
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty input", nil},
		{"unknown version", append([]byte{2}, good[1:]...)},
		{"truncated", good[:len(good)-1]},
		{"truncated in the address", good[:10]},
		{"non-minimal varint", []byte{1, 4, 0x85, 0x00, 0}},
		{"unknown field bits", []byte{1, 4, 10, 0x80, 0x80, 0x80, 0x80, 0x04}},
		{"present field with a zero value", []byte{1, 4, 10, 1 << 1, 0}},
		{"string longer than the input", []byte{1, 4, 10, 1 << 1, 9, 'a'}},
		{"fee rate beyond 32 bits", []byte{1, 9, 0, 0x80, 0x10, 0x80, 0x80, 0x80, 0x80, 0x10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := DecodeCommand(tt.in); !errors.Is(err, ErrEncoding) {
				t.Fatalf("error %v, want ErrEncoding", err)
			}
		})
	}
	t.Run("trailing bytes after one command", func(t *testing.T) {
		var c Command
		if err := c.UnmarshalBinary(append(good, 0)); !errors.Is(err, ErrEncoding) {
			t.Fatalf("error %v", err)
		}
	})
}

// TestEventEncoding checks that the events of a session round-trip and that the log
// of a session is the concatenation of its events.
func TestEventEncoding(t *testing.T) {
	h := newHarness(t)
	withFee(h, 100)
	h.split(alice, "10")
	h.place(alice, yes, market.Sell, "0.5", "10")
	h.ok(h.order(bob, no, market.Buy, "0.4", "1"))
	h.ok(h.order(bob, yes, market.Buy, "0.55", "4"))
	h.do(Command{Kind: Withdraw, Owner: dave, Amount: 1})
	h.ok(Command{Kind: Resolve, Market: cond, Winner: market.Yes})
	log := AppendEvents(nil, h.log)
	for i := 0; len(log) > 0; i++ {
		ev, n, err := DecodeEvent(log)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev != h.log[i] {
			t.Fatalf("event %d\n got %+v\nwant %+v", i, ev, h.log[i])
		}
		log = log[n:]
	}
	if _, _, err := DecodeEvent([]byte{9}); !errors.Is(err, ErrEncoding) {
		t.Fatalf("bad version: %v", err)
	}
}

// TestSnapshot checks that a snapshot restores an engine that behaves exactly like the
// original, and that Restore refuses corrupt or inconsistent snapshots.
func TestSnapshot(t *testing.T) {
	build := func(t *testing.T) *harness {
		h := newHarness(t)
		withFee(h, 50)
		h.ok(Command{Kind: CreateMarket, Market: cond2, Spec: spec(yes2, no2, "0.001")})
		h.split(alice, "30")
		h.place(alice, yes, market.Sell, "0.6", "10")
		h.place(alice, yes, market.Sell, "0.6", "5")
		c := h.order(bob, no, market.Buy, "0.3", "8")
		c.Type, c.Expiration = market.GTD, h.now/1000+100
		h.ok(c)
		h.ok(h.order(carol, yes, market.Buy, "0.6", "3"))
		h.place(carol, yes2, market.Buy, "0.123", "7")
		h.ok(Command{Kind: SetAccountMode, Owner: dave, Mode: market.ModeCloseOnly})
		h.ok(Command{Kind: IncrementNonce, Owner: carol})
		h.ok(Command{Kind: Cancel, Order: "o1", Owner: alice})
		return h
	}
	t.Run("a restored engine continues exactly like the original", func(t *testing.T) {
		h := build(t)
		snap := h.e.AppendSnapshot(nil)
		e2, err := Restore(snap)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e2.AppendSnapshot(nil), snap) {
			t.Fatal("snapshot of the restored engine differs")
		}
		next := []Command{
			h.order(dave, yes, market.Buy, "0.6", "1"),
			{Kind: Deposit, Owner: dave, Amount: d("5")},
			{Kind: Place, Order: "n1", Owner: dave, Token: yes, Side: market.Buy, Price: d("0.6"), Size: d("7"), FeeRateBps: 50},
			{Kind: Place, Order: "n2", Owner: carol, Token: no, Side: market.Buy, Price: d("0.45"), Size: d("2"), FeeRateBps: 50, Nonce: 1},
			{Kind: AdvanceTime, Time: h.now + 200_000},
			{Kind: Resolve, Market: cond, Winner: market.No},
			{Kind: Redeem, Owner: bob, Market: cond},
		}
		for i := range next {
			if next[i].Time == 0 {
				next[i].Time = h.now + 1000
			}
			c1, c2 := next[i], next[i]
			ev1, err1 := h.e.Apply(&c1)
			ev2, err2 := e2.Apply(&c2)
			if !bytes.Equal(AppendEvents(nil, ev1), AppendEvents(nil, ev2)) || (err1 == nil) != (err2 == nil) {
				t.Fatalf("command %d: restored engine diverges", i)
			}
		}
		if !bytes.Equal(h.e.AppendSnapshot(nil), e2.AppendSnapshot(nil)) {
			t.Fatal("final states differ")
		}
	})
	t.Run("equal states give equal snapshots", func(t *testing.T) {
		a, b := build(t), build(t)
		if !bytes.Equal(a.e.AppendSnapshot(nil), b.e.AppendSnapshot(nil)) {
			t.Fatal("snapshots differ")
		}
	})
	corrupt := []struct {
		name   string
		mutate func(e *Engine, snap []byte) []byte
		want   error
	}{
		{"not a snapshot", func(_ *Engine, s []byte) []byte { return []byte("hello") }, ErrEncoding},
		{"unknown version", func(_ *Engine, s []byte) []byte { s[4] = 9; return s }, ErrEncoding},
		{"truncated", func(_ *Engine, s []byte) []byte { return s[:len(s)-3] }, ErrEncoding},
		{"trailing bytes", func(_ *Engine, s []byte) []byte { return append(s, 0) }, ErrEncoding},
		{"a balance that breaks conservation", func(e *Engine, _ []byte) []byte {
			e.accts[1].avail++
			return e.AppendSnapshot(nil)
		}, ErrInvariant},
		{"a reservation that does not match its order", func(e *Engine, _ []byte) []byte {
			b, _ := e.lookupAccount(bob)
			e.accts[b].res--
			e.accts[b].avail++
			return e.AppendSnapshot(nil)
		}, ErrInvariant},
		{"supplies that do not match the locked collateral", func(e *Engine, _ []byte) []byte {
			e.pos[0].avail++
			return e.AppendSnapshot(nil)
		}, ErrInvariant},
	}
	for _, tt := range corrupt {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			h := build(t)
			_, err := Restore(tt.mutate(h.e, h.e.AppendSnapshot(nil)))
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

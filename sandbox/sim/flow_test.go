package sim

import (
	"bytes"
	"math"
	"testing"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// A venue stepping a Flow the embedded venue's way (Setup, then Next/Step/apply in
// a loop) applies exactly the commands AdvanceTo applies.
func TestFlowStepsLikeAdvanceTo(t *testing.T) {
	const end = t0 + 1_800_000
	var want []byte
	ref := newEngine(t, 2)
	New(Config{Start: t0}, 8).AdvanceTo(end, ref, func(c *exchange.Command, _ []exchange.Event) { want, _ = c.AppendBinary(want) })

	f := &Flow{Sim: New(Config{}, 8), Markets: SyntheticMarkets(2, t0/1000)}
	e := exchange.New(exchange.Config{ForgetFinal: true})
	for _, c := range f.Setup(t0) {
		if _, err := e.Apply(&c); err != nil {
			t.Fatal(err)
		}
	}
	var got []byte
	var buf []exchange.Command
	for {
		next := f.Next()
		if next > end {
			break
		}
		buf = f.Step(max(next, e.Time()), e, buf[:0])
		for i := range buf {
			e.Apply(&buf[i])
			got, _ = buf[i].AppendBinary(got)
		}
	}
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("the flow's commands differ from AdvanceTo's (%d and %d bytes)", len(got), len(want))
	}

	done := &Flow{Sim: New(Config{Start: t0, Markets: []MarketConfig{{Market: "0xnone"}}}, 1)}
	done.Step(t0, e, nil)
	if done.Next() != math.MaxInt64 {
		t.Fatal("a flow with nothing to do is not at MaxInt64")
	}
}

package sim

import (
	"math"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Flow adapts a Sim to a venue that lists its markets through the flow and steps it
// one call at a time, such as the embedded venue (adapters/embedded.Flow has exactly
// these methods):
//
//	flow := &sim.Flow{Sim: sim.New(cfg, seed), Markets: sim.SyntheticMarkets(3, start/1000)}
//
// Setup returns Markets (stamped with the time) for the venue to apply first; Next
// is Sim.Next with math.MaxInt64 for "nothing more"; Step performs the one action
// due at now (Sim.Step) — the venue applies its commands and calls Step again while
// Next is still due, so each action sees the previous one's effects. The commands
// are those AdvanceTo would apply, in the same order.
type Flow struct {
	// Sim is the synthetic flow. Required.
	Sim *Sim
	// Markets are CreateMarket commands returned by Setup (their Time is set); none
	// when the venue creates its markets itself.
	Markets []exchange.Command
}

// Setup returns the market creations, at now.
func (f *Flow) Setup(now int64) []exchange.Command {
	out := make([]exchange.Command, len(f.Markets))
	copy(out, f.Markets)
	for i := range out {
		out[i].Time = now
	}
	return out
}

// Next returns the time of the next action, math.MaxInt64 when none is scheduled.
func (f *Flow) Next() int64 {
	t, ok := f.Sim.Next()
	if !ok {
		return math.MaxInt64
	}
	return t
}

// Step appends the commands of the action due at now (if any) to dst.
func (f *Flow) Step(now int64, e *exchange.Engine, dst []exchange.Command) []exchange.Command {
	dst, _ = f.Sim.Step(now, e, dst)
	return dst
}

package embedded

import (
	"math"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// Flow is the rest of the embedded market: the other participants, whose orders go
// through the engine's command path like everyone's. An Exchange calls it with its
// lock held, from one goroutine at a time. A Flow is deterministic: the same seed,
// the same times and the same engine state give the same commands.
type Flow interface {
	// Setup returns the commands that list the markets, applied once at time now
	// (Unix ms) before anything else.
	Setup(now int64) []exchange.Command
	// Next returns the event time (Unix ms) of the flow's next action, MaxInt64
	// when nothing is scheduled.
	Next() int64
	// AdvanceTo applies to eng every action due at or before now, calling fn with
	// each command and its events (valid during the call only).
	AdvanceTo(now int64, eng *exchange.Engine, fn func(c *exchange.Command, evs []exchange.Event))
}

// SimFlow is the embedded market's flow: sandbox/sim's participants (a market maker,
// noise and informed traders around a latent fair value with news jumps) on
// sim.SyntheticMarkets.
type SimFlow struct {
	sim     *sim.Sim
	markets int
}

// DefaultSimMarkets is how many synthetic markets NewSimFlow lists when asked for
// none.
const DefaultSimMarkets = 4

// NewSimFlow returns the sim's flow with seed on n synthetic markets (if n <= 0,
// DefaultSimMarkets), starting at start (Unix ms), with cfg's parameters
// (cfg.Start is set to start).
func NewSimFlow(seed uint64, n int, start int64, cfg sim.Config) *SimFlow {
	if n <= 0 {
		n = DefaultSimMarkets
	}
	cfg.Start = start
	return &SimFlow{sim: sim.New(cfg, seed), markets: n}
}

// Sim returns the sim (for its Summary).
func (f *SimFlow) Sim() *sim.Sim { return f.sim }

// Setup implements Flow: the synthetic markets, ending 30 days after now.
func (f *SimFlow) Setup(now int64) []exchange.Command {
	cmds := sim.SyntheticMarkets(f.markets, now/1000)
	for i := range cmds {
		cmds[i].Time = now
	}
	return cmds
}

// Next implements Flow.
func (f *SimFlow) Next() int64 {
	due, ok := f.sim.Next()
	if !ok {
		return math.MaxInt64
	}
	return due
}

// AdvanceTo implements Flow.
func (f *SimFlow) AdvanceTo(now int64, eng *exchange.Engine, fn func(c *exchange.Command, evs []exchange.Event)) {
	f.sim.AdvanceTo(now, eng, fn)
}

// ScriptFlow is a Flow that lists the given markets and then applies a fixed list
// of commands at their times: scripted flow for tests.
type ScriptFlow struct {
	Listing  []exchange.Command // applied by Setup (their Time is replaced by Setup's now)
	Commands []exchange.Command // in time order
	i        int
}

// Setup implements Flow.
func (s *ScriptFlow) Setup(now int64) []exchange.Command {
	out := append([]exchange.Command(nil), s.Listing...)
	for i := range out {
		out[i].Time = now
	}
	return out
}

// Next implements Flow: the time of the next scripted command, MaxInt64 after the
// last.
func (s *ScriptFlow) Next() int64 {
	if s.i >= len(s.Commands) {
		return math.MaxInt64
	}
	return s.Commands[s.i].Time
}

// AdvanceTo implements Flow: the scripted commands due by now, in order.
func (s *ScriptFlow) AdvanceTo(now int64, eng *exchange.Engine, fn func(c *exchange.Command, evs []exchange.Event)) {
	for s.i < len(s.Commands) && s.Commands[s.i].Time <= now {
		c := s.Commands[s.i]
		s.i++
		evs, _ := eng.Apply(&c)
		fn(&c, evs)
	}
}

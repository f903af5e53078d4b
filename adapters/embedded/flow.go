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
//
// sandbox/sim's Flow (a sim.Sim on sim.SyntheticMarkets) is the embedded market's
// flow; ScriptFlow replays fixed commands for tests.
type Flow interface {
	// Setup returns the commands that list the markets, applied once at time now
	// (Unix ms) before anything else.
	Setup(now int64) []exchange.Command
	// Next returns the event time (Unix ms) of the flow's next action, MaxInt64
	// when nothing is scheduled.
	Next() int64
	// Step appends to dst the commands of the action due at now, computed from
	// eng as it is; the Exchange applies them in order and calls Step again while
	// Next is due.
	Step(now int64, eng *exchange.Engine, dst []exchange.Command) []exchange.Command
}

var _ Flow = (*sim.Flow)(nil)

// NewSimFlow returns sandbox/sim's flow with seed on n synthetic markets (if n <=
// 0, DefaultSimMarkets) ending 30 days after start, starting at start (Unix ms),
// with cfg's parameters (cfg.Start is set to start).
func NewSimFlow(seed uint64, n int, start int64, cfg sim.Config) *sim.Flow {
	if n <= 0 {
		n = DefaultSimMarkets
	}
	cfg.Start = start
	return &sim.Flow{Sim: sim.New(cfg, seed), Markets: sim.SyntheticMarkets(n, start/1000)}
}

// DefaultSimMarkets is how many synthetic markets NewSimFlow lists when asked for
// none.
const DefaultSimMarkets = 4

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

// Step implements Flow: every scripted command due by now, in order.
func (s *ScriptFlow) Step(now int64, _ *exchange.Engine, dst []exchange.Command) []exchange.Command {
	for s.i < len(s.Commands) && s.Commands[s.i].Time <= now {
		dst = append(dst, s.Commands[s.i])
		s.i++
	}
	return dst
}

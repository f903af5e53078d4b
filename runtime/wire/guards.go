package wire

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// Guards adapts a policies.Chain to agent.Guards: one batch per Begin, each Check an
// evaluation of that batch (EvaluateReplacing when the intent replaces an open
// order; EvaluateKeeping, through CheckKeep, when the order stays). The chain's own
// audit sink is not used: the agent audits every decision it asks for, with the
// orders and fills around it, in one stream.
type Guards struct {
	cfg      policies.Config
	opts     []policies.Option
	chain    *policies.Chain
	batch    *policies.Batch
	geo      atomic.Pointer[policies.Geoblock] // a status set from another goroutine, not yet applied
	applied  atomic.Pointer[policies.Geoblock] // the status the loop last applied (nil: the one the chain was built with)
	kill     policies.KillState                // the kill switch last encoded, as killJSON
	killJSON []byte
}

var (
	_ agent.Guards        = (*Guards)(nil)
	_ agent.Keeper        = (*Guards)(nil)
	_ agent.BatchRepeater = (*Guards)(nil)
	_ agent.LimitReporter = (*Guards)(nil)
)

// Limits implements agent.LimitReporter (policies.Chain.Usage).
func (g *Guards) Limits(st *market.State) []agent.LimitUse {
	us := g.chain.Usage(st)
	out := make([]agent.LimitUse, len(us))
	for i, u := range us {
		out[i] = agent.LimitUse{Guard: u.Guard, Unit: u.Unit, Used: u.Used, Limit: u.Limit}
	}
	return out
}

// NewGuards builds the chain from cfg and opts.
func NewGuards(cfg policies.Config, opts ...policies.Option) (*Guards, error) {
	c, err := policies.New(cfg, opts...)
	if err != nil {
		return nil, err
	}
	return &Guards{cfg: cfg, opts: opts, chain: c}, nil
}

// Chain returns the chain (rebuilt by RestoreKill).
func (g *Guards) Chain() *policies.Chain { return g.chain }

// SetGeoblock hands the chain a new geoblock status (from a periodic /api/geoblock
// check). It is safe from any goroutine; the agent's loop applies it at its next
// Observe or Begin.
func (g *Guards) SetGeoblock(geo policies.Geoblock) { g.geo.Store(&geo) }

// GeoblockApplied reports the last status SetGeoblock handed over that the agent's
// loop has applied (false: none yet). Safe from any goroutine; from the moment it
// reports a block, no evaluation of the loop opens a position.
func (g *Guards) GeoblockApplied() (policies.Geoblock, bool) {
	if p := g.applied.Load(); p != nil {
		return *p, true
	}
	return policies.Geoblock{}, false
}

// applyGeoblock applies a status set by SetGeoblock (on the loop).
func (g *Guards) applyGeoblock() {
	if g.geo.Load() != nil {
		if p := g.geo.Swap(nil); p != nil {
			g.chain.SetGeoblock(*p)
			g.applied.Store(p)
		}
	}
}

// Observe implements agent.Guards.
func (g *Guards) Observe(st *market.State) agent.Action {
	g.applyGeoblock()
	return action(g.chain.Observe(st))
}

// Begin implements agent.Guards. A trip found here is reported with the batch's
// first Check.
func (g *Guards) Begin(st *market.State) agent.Action {
	g.applyGeoblock()
	g.batch = g.chain.Batch(st)
	return agent.Action{}
}

// Check implements agent.Guards.
func (g *Guards) Check(it *market.Intent, replaces market.OrderID) agent.Verdict {
	if g.batch == nil {
		return noBatch
	}
	var d policies.Decision
	if replaces != "" {
		d = g.batch.EvaluateReplacing(it, replaces)
	} else {
		d = g.batch.Evaluate(it)
	}
	return verdict(d)
}

// StateVersion implements agent.Keeper.
func (g *Guards) StateVersion(st *market.State, v uint64) { g.chain.SetStateVersion(st, v) }

// CheckKeep implements agent.Keeper.
func (g *Guards) CheckKeep(it *market.Intent, keeps market.OrderID) agent.Verdict {
	if g.batch == nil {
		return noBatch
	}
	return verdict(g.batch.EvaluateKeeping(it, keeps))
}

// RepeatBatch implements agent.BatchRepeater (policies.Batch.Repeat).
func (g *Guards) RepeatBatch(n int) bool { return g.batch != nil && g.batch.Repeat(n) }

// noBatch denies a Check or CheckKeep made before Begin.
var noBatch = agent.Verdict{Guard: "agent", Reason: "no batch started", Err: policies.ErrNotAllowed}

func verdict(d policies.Decision) agent.Verdict {
	v := agent.Verdict{Allowed: d.Allowed, Action: action(d.Action), Reused: d.Reused}
	if den := d.Denied; den != nil {
		v.Guard, v.Reason, v.Err = den.Guard, den.Reason, den
		if e, ok := den.Err.(*market.Error); ok { // no errors.As: it would allocate
			v.Code = e.Code
		}
		v.RateLimited = den.Guard == policies.GuardRate
	}
	return v
}

// RecordOrder implements agent.Guards.
func (g *Guards) RecordOrder(t int64) { g.chain.RecordOrder(t) }

// Trip implements agent.Guards.
func (g *Guards) Trip(t int64, reason string) agent.Action { return action(g.chain.Trip(t, reason)) }

// Resume implements agent.Guards.
func (g *Guards) Resume(st *market.State, reason string) bool { return g.chain.Resume(st, reason) }

// Halted implements agent.Guards.
func (g *Guards) Halted() bool { return g.chain.Halted() }

// KillReason implements agent.Guards.
func (g *Guards) KillReason() string { return g.chain.KillState().Reason }

// KillState implements agent.Guards: policies.KillState as JSON, encoded again only
// when it changed (the bytes returned are never modified).
func (g *Guards) KillState() ([]byte, error) {
	k := g.chain.KillState()
	if g.killJSON == nil || k != g.kill {
		b, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		g.kill, g.killJSON = k, b
	}
	return g.killJSON, nil
}

// RestoreKill implements agent.Guards: the chain is rebuilt with the saved kill
// switch (policies.WithKillState), so a tripped switch stays tripped.
func (g *Guards) RestoreKill(data []byte) error {
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	var k policies.KillState
	if err := json.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("wire: saved kill switch: %w", err)
	}
	c, err := policies.New(g.cfg, append(append([]policies.Option(nil), g.opts...), policies.WithKillState(k))...)
	if err != nil {
		return err
	}
	g.chain, g.batch = c, nil
	return nil
}

func action(a policies.Action) agent.Action {
	return agent.Action{CancelAll: a.CancelAll, Flatten: a.Flatten, Halt: a.Halt, Reason: a.Reason}
}

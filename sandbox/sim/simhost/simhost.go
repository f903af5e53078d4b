// Package simhost runs sandbox/sim's synthetic flow on the engine host of
// `pitboss exchange` (sandbox/host): Venue adapts a *host.Host to sim.Venue, so that
// a sim.Driver's commands go through the host's one command path — journaled,
// replayed on recovery and published to every listener like any client's.
//
//	s := sim.New(cfg, seed)
//	d := sim.NewDriver(s, simhost.Venue(h), sim.DriverConfig{Clock: clock, Logger: log})
//	go func() { errc <- d.Run(ctx) }() // owned by the server's run group
//
// Each Driver transaction is one host.Exec: the sim reads the engine and applies the
// commands of every action that is due, and the transaction returns once they are
// durable (one journal sync for all of them).
package simhost

import (
	"context"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// Venue returns h as a sim.Venue.
func Venue(h *host.Host) sim.Venue { return venue{h} }

type venue struct{ h *host.Host }

// Exec runs fn in one host transaction (host.Exec): fn's commands are journaled and
// applied by the host's Tx.
func (v venue) Exec(ctx context.Context, fn func(e sim.Engine) error) error {
	return v.h.Exec(ctx, func(tx *host.Tx) error {
		return fn(txEngine{Engine: tx.Engine(), tx: tx})
	})
}

// txEngine reads through the engine's views and applies through the transaction,
// which journals each command before the engine applies it.
type txEngine struct {
	*exchange.Engine
	tx *host.Tx
}

// Apply journals and applies c (host.Tx.Apply). The events are the host's copy.
func (t txEngine) Apply(c *exchange.Command) ([]exchange.Event, error) {
	r := t.tx.Apply(*c)
	if r.Err != nil {
		return r.Events, r.Err
	}
	return r.Events, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/statusview"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

func init() {
	register(command{name: "status", summary: "one agent's markets (spread, mid), orders (distance from mid, age), inventory, PnL and guards near their limits", run: runStatus})
}

const statusUsage = `[--json] [--state-dir DIR] AGENT_FILE

Prints what a running (or the last) 'pitboss run' of the agent file reports, from
the status file it keeps in its state directory (status.json, rewritten every 5 s
and when it stops): each market with bid, ask, mid and spread; the agent's open
orders with their distance from the mid and their age (in market time); its
inventory and balance; its PnL; and its guards with their use of each limit (! at
80% or more). Times are UTC. For an agent of a fleet: pitboss ctl status AGENT.`

func runStatus(_ context.Context, args []string, io stdio) error {
	fs := newFlagSet("status", statusUsage, io)
	asJSON := fs.Bool("json", false, "print JSON")
	stateDir := fs.String("state-dir", "", "state directory (default: the file's state_dir)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("name one agent file")
	}
	spec, err := agents.Options{Getenv: io.getenv}.Load(fs.Arg(0))
	if err != nil {
		var probs agents.Problems
		if errors.As(err, &probs) {
			return fmt.Errorf("%s: %d problem(s) (see pitboss check)", fs.Arg(0), len(probs))
		}
		return err
	}
	dir := spec.StateDir
	if *stateDir != "" {
		dir = *stateDir
	}
	st, err := wire.ReadStatusFile(dir)
	if err != nil {
		return err
	}
	return printStatusView(io, statusview.New(st, time.Now().UnixMilli()), *asJSON)
}

// printAgentStatus prints one fleet agent's last status (ctl status AGENT): the
// row of the supervisor that runs it, else the first that lists it.
func printAgentStatus(io stdio, fl supervisor.Fleet, id market.AgentID, asJSON bool) error {
	var found *supervisor.AgentView
	for _, a := range fl.Agents() {
		if a.ID != id {
			continue
		}
		if a.Status != nil && (found == nil || found.Status == nil || a.Process == supervisor.ProcRunning) {
			found = &a
		} else if found == nil {
			found = &a
		}
	}
	switch {
	case found == nil:
		return market.Errorf(market.CodeAgentNotRunning, id)
	case found.Status == nil:
		return fmt.Errorf("agent %s has sent no status yet (process %s%s)", id, found.Process, suffix(found.Message))
	}
	return printStatusView(io, statusview.New(*found.Status, time.Now().UnixMilli()), asJSON)
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

func printStatusView(io stdio, v statusview.View, asJSON bool) error {
	if asJSON {
		return printJSON(io.stdout, v)
	}
	return statusview.Render(io.stdout, v)
}

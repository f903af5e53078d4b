package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// ctlAgents runs `pitboss ctl agents apply FILE… | list | delete ID` (design
// 0142): the fleet's published agent definitions, which supervisors claim.
func ctlAgents(ctx context.Context, io stdio, c *supervisor.Client, args []string, asJSON bool) error {
	if len(args) == 0 {
		return usagef("agents needs apply FILE…, list or delete ID")
	}
	switch args[0] {
	case "apply":
		if len(args) < 2 {
			return usagef("agents apply needs agent files (or fleet files)")
		}
		var defs []supervisor.Definition
		for _, path := range args[1:] {
			entries := []supervisor.AgentEntry{{File: path}}
			if f, err := (supervisor.Options{Getenv: io.getenv}).LoadFile(path); err == nil && f.Name != "" {
				entries = f.Agents // a fleet file: its agents
			}
			for _, e := range entries {
				d, err := wire.FleetDefinition(e, io.getenv, c.From)
				if err != nil {
					return problems(io, "ctl agents apply", e.File, err)
				}
				defs = append(defs, d)
			}
		}
		if err := c.ApplyDefinitions(ctx, defs); err != nil {
			return err
		}
		for _, d := range defs {
			fmt.Fprintf(io.stdout, "%s: defined (strategy %s)\n", d.ID, d.StrategyName)
		}
		return nil
	case "list", "ls":
		if len(args) != 1 {
			return usagef("agents list takes no arguments")
		}
		defs, err := c.Definitions(ctx)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(io.stdout, defs)
		}
		tw := newTable(io.stdout)
		fmt.Fprintln(tw, "AGENT\tSTRATEGY\tLIVE\tPLACEMENT\tBY\tAT")
		for _, id := range slices.Sorted(maps.Keys(defs)) {
			d := defs[id]
			var pl []string
			for _, k := range slices.Sorted(maps.Keys(d.Placement)) {
				pl = append(pl, k+"="+d.Placement[k])
			}
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\n", id, d.StrategyName, d.Live, strings.Join(pl, ","), d.By,
				time.UnixMilli(d.Time).UTC().Format(time.RFC3339))
		}
		return tw.Flush()
	case "delete", "rm":
		if len(args) != 2 {
			return usagef("agents delete needs one agent id")
		}
		id, err := market.ParseAgentID(args[1])
		if err != nil {
			return usagef("%v", err)
		}
		if err := c.DeleteDefinition(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(io.stdout, "%s: definition deleted (a supervisor that claimed it stops it)\n", id)
		return nil
	}
	return usagef("agents: unknown action %q (apply, list, delete)", args[0])
}

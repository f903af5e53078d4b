package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/strategy"
)

func init() {
	register(command{name: "check", summary: "validate agent, strategy and fleet files, reporting every problem (file:line:col)", run: runCheck})
}

const checkUsage = `[--type auto|agent|strategy|fleet] [-q] FILE...

Checks each agent file (and the strategy file it names, with its parameter
overrides and market slots), each strategy file and each fleet file (its settings,
and every agent file it runs with its strategy, as 'pitboss supervise' loads them),
and prints every problem as file:line:col: message. The kind of a file is told
from its fields. The exit status is 1 when there is any problem.`

func runCheck(_ context.Context, args []string, io stdio) error {
	fs := newFlagSet("check", checkUsage, io)
	kind := fs.String("type", "auto", "file type: auto (from the file's fields), agent, strategy or fleet")
	quiet := fs.Bool("q", false, "print only problems, not a line per valid file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch *kind {
	case "auto", "agent", "strategy", "fleet":
	default:
		return usagef("--type must be auto, agent, strategy or fleet, not %q", *kind)
	}
	if fs.NArg() == 0 {
		return usagef("name at least one file to check")
	}
	c := &checker{io: io, quiet: *quiet, seen: map[string]bool{}, checked: map[string]bool{}}
	for _, path := range fs.Args() {
		k := *kind
		if k == "auto" {
			k = detectKind(path)
		}
		switch k {
		case "agent":
			c.agent(path)
		case "fleet":
			c.fleet(path)
		default:
			c.strategy(path)
		}
	}
	if c.problems > 0 {
		fmt.Fprintf(io.stderr, "pitboss check: %d problem(s) in %d file(s)\n", c.problems, len(c.bad))
		return &exitError{code: 1}
	}
	return nil
}

// checker prints problems once each and counts them.
type checker struct {
	io       stdio
	quiet    bool
	problems int
	bad      []string
	seen     map[string]bool // problems already printed
	checked  map[string]bool // strategy files already checked on their own
}

func (c *checker) report(file, text string) {
	if c.seen[text] {
		return
	}
	c.seen[text] = true
	c.problems++
	if len(c.bad) == 0 || c.bad[len(c.bad)-1] != file {
		c.bad = append(c.bad, file)
	}
	fmt.Fprintln(c.io.stdout, text)
}

func (c *checker) ok(format string, args ...any) {
	if !c.quiet {
		fmt.Fprintf(c.io.stdout, format+"\n", args...)
	}
}

// reportErr prints every problem err carries: agents.Problems, a
// *strategy.CompileError, or any other error as "file: error".
func (c *checker) reportErr(file string, err error) {
	var aps agents.Problems
	var ce *strategy.CompileError
	switch {
	case errors.As(err, &aps):
		for _, p := range aps {
			c.report(p.File, p.String())
		}
	case errors.As(err, &ce):
		for _, p := range ce.Problems {
			c.report(p.File, p.Error())
		}
	default:
		c.report(file, file+": "+strings.TrimPrefix(err.Error(), "agents: "))
	}
}

func (c *checker) agent(path string) {
	spec, err := agents.Options{Getenv: c.io.getenv}.Load(path)
	before := c.problems
	if err != nil {
		c.reportErr(path, err)
	}
	if spec == nil || spec.Strategy.File == "" {
		return
	}
	if _, serr := os.Stat(spec.Strategy.File); serr != nil {
		return // already reported as a problem of the agent file
	}
	st, serr := spec.LoadStrategy()
	if serr != nil {
		c.reportErr(spec.Strategy.File, serr)
		return
	}
	c.checked[filepath.Clean(spec.Strategy.File)] = true
	if c.problems == before {
		c.ok("%s: ok (agent %s: %s on the %s venue, strategy %s from %s)", path, spec.Name, spec.Execution,
			spec.Venue.Kind, st.Name(), spec.Strategy.File)
	}
}

// fleet checks a fleet file as 'pitboss supervise' loads it, then every agent file
// it runs (with its strategy) as 'pitboss check' checks an agent file.
func (c *checker) fleet(path string) {
	before := c.problems
	f, err := supervisor.Options{Getenv: c.io.getenv}.LoadFile(path)
	if err != nil {
		c.reportErr(path, err)
	}
	if f == nil {
		return
	}
	var names []string
	quiet := c.quiet
	c.quiet = true // one line for the fleet, not one per agent
	for _, a := range f.Agents {
		c.agent(a.File)
		id := a.ID
		if id == "" {
			if spec, err := (agents.Options{Getenv: c.io.getenv}).Load(a.File); err == nil {
				id = spec.Name
			}
		}
		mode := "dry run"
		if a.Live {
			mode = "LIVE"
		}
		names = append(names, id+" ("+mode+")")
	}
	c.quiet = quiet
	if c.problems == before {
		c.ok("%s: ok (fleet %s: %d agent(s): %s)", path, f.Name, len(f.Agents), strings.Join(names, ", "))
	}
}

func (c *checker) strategy(path string) {
	if c.checked[filepath.Clean(path)] {
		c.ok("%s: ok (checked with its agent file)", path)
		return
	}
	c.checked[filepath.Clean(path)] = true
	st, err := strategy.Load(path)
	if err != nil {
		c.reportErr(path, err)
		return
	}
	c.ok("%s: ok (strategy %s: %d quote(s), %d rule(s), %d parameter(s))", path, st.Name(), len(st.Quotes()), len(st.Rules()), len(st.Params()))
}

// fleetOnly, agentOnly and strategyOnly are top-level fields that only one kind of
// file has.
var (
	fleetOnly    = []string{"agents", "nats", "stop_timeout", "lock_ttl", "http_addr", "allow_remote_http", "metrics_addr", "restart", "limits", "market_data", "budget", "max_agents"}
	agentOnly    = []string{"wallet", "venue", "dry_run", "strategy", "guards", "state_dir", "log_level"}
	strategyOnly = []string{"params", "indicators", "vars", "quotes", "rules"}
)

// detectKind tells a fleet file, an agent file and a strategy file apart by their
// top-level fields, or, when they do not tell (or the file does not parse), by the
// file's name: fleet*.yaml is a fleet file, agent*.yaml an agent file.
func detectKind(path string) string {
	if src, err := os.ReadFile(path); err == nil {
		var doc yaml.Node
		if yaml.Unmarshal(src, &doc) == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
			root := doc.Content[0]
			keys := map[string]bool{}
			for i := 0; i+1 < len(root.Content); i += 2 {
				keys[root.Content[i].Value] = true
			}
			for _, k := range []struct {
				kind   string
				fields []string
			}{{"fleet", fleetOnly}, {"agent", agentOnly}, {"strategy", strategyOnly}} {
				if slices.ContainsFunc(k.fields, func(f string) bool { return keys[f] }) {
					return k.kind
				}
			}
		}
	}
	switch base := filepath.Base(path); {
	case strings.HasPrefix(base, "fleet"):
		return "fleet"
	case strings.HasPrefix(base, "agent"):
		return "agent"
	}
	return "strategy"
}

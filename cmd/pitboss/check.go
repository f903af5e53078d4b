package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/strategy"
)

func init() {
	register(command{name: "check", summary: "validate agent and strategy files, reporting every problem (file:line:col)", run: runCheck})
}

const checkUsage = `[-type auto|agent|strategy] [-q] FILE...

Checks each agent file (and the strategy file it names, with its parameter
overrides and market slots) and each strategy file, and prints every problem as
file:line:col: message. The exit status is 1 when there is any problem.`

func runCheck(_ context.Context, args []string, io stdio) error {
	fs := newFlagSet("check", checkUsage, io)
	kind := fs.String("type", "auto", "file type: auto (from the file's fields), agent or strategy")
	quiet := fs.Bool("q", false, "print only problems, not a line per valid file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch *kind {
	case "auto", "agent", "strategy":
	default:
		return usagef("-type must be auto, agent or strategy, not %q", *kind)
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
		if k == "agent" {
			c.agent(path)
		} else {
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

// agentOnly and strategyOnly are top-level fields that only one kind of file has.
var (
	agentOnly    = []string{"wallet", "venue", "dry_run", "strategy", "guards", "heartbeat", "state_dir", "log_level", "version"}
	strategyOnly = []string{"params", "indicators", "vars", "quotes", "rules"}
)

// detectKind tells an agent file from a strategy file by its top-level fields, or,
// when they do not tell (or the file does not parse), by its name: agent*.yaml is an
// agent file.
func detectKind(path string) string {
	if src, err := os.ReadFile(path); err == nil {
		var doc yaml.Node
		if yaml.Unmarshal(src, &doc) == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
			root := doc.Content[0]
			for i := 0; i+1 < len(root.Content); i += 2 {
				k := root.Content[i].Value
				for _, f := range agentOnly {
					if k == f {
						return "agent"
					}
				}
				for _, f := range strategyOnly {
					if k == f {
						return "strategy"
					}
				}
			}
		}
	}
	if strings.HasPrefix(filepath.Base(path), "agent") {
		return "agent"
	}
	return "strategy"
}

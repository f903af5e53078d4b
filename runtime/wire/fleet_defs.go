package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// FleetDefinition makes the definition the fleet publishes of entry e
// (docs/design/0142): the agent file's content with its strategy reference
// turned into the strategy file's base name, the strategy file's content, and
// e's settings — not its state directory, a path of this machine. by names the
// publisher.
func FleetDefinition(e supervisor.AgentEntry, getenv func(string) string, by string) (supervisor.Definition, error) {
	spec, err := agents.Options{Getenv: getenv}.Load(e.File)
	if err != nil {
		return supervisor.Definition{}, err
	}
	src, err := os.ReadFile(e.File)
	if err != nil {
		return supervisor.Definition{}, err
	}
	strat, err := os.ReadFile(spec.Strategy.File)
	if err != nil {
		return supervisor.Definition{}, fmt.Errorf("%s: strategy: %w", e.File, err)
	}
	name := filepath.Base(spec.Strategy.File)
	if name == definitionAgentFile {
		name = "strategy-" + name
	}
	af, err := withStrategyFile(src, name)
	if err != nil {
		return supervisor.Definition{}, fmt.Errorf("%s: %w", e.File, err)
	}
	id := spec.Name
	if e.ID != "" {
		id = e.ID
	}
	return supervisor.Definition{V: 1, ID: market.AgentID(id), AgentFile: string(af), StrategyName: name, Strategy: string(strat),
		Wallet: e.Wallet, Live: e.Live, Args: e.Args, Env: e.Env, Restart: e.Restart, Limits: e.Limits, Placement: e.Placement,
		By: by, Time: time.Now().UnixMilli()}, nil
}

// definitionAgentFile is the agent file's name where a definition is written.
const definitionAgentFile = "agent.yaml"

// withStrategyFile returns the agent file src with its strategy reference
// (strategy: FILE, or strategy: {file: FILE, …}) replaced by name.
func withStrategyFile(src []byte, name string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the agent file is not a mapping")
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "strategy" {
			continue
		}
		v := root.Content[i+1]
		switch v.Kind {
		case yaml.ScalarNode:
			v.Value = name
		case yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				if v.Content[j].Value == "file" {
					v.Content[j+1].Value = name
				}
			}
		}
		return yaml.Marshal(&doc)
	}
	return nil, errors.New("the agent file names no strategy")
}

// DefinitionEntry writes definition d's files under dir/agents/<id>/ (0700,
// files 0600) and returns it as a fleet entry of this machine, with its state in
// dir/agents/<id>/state.
func DefinitionEntry(dir string, d supervisor.Definition) (supervisor.AgentEntry, error) {
	if !d.ID.Valid() {
		return supervisor.AgentEntry{}, fmt.Errorf("definition: invalid agent id %q", string(d.ID))
	}
	if d.StrategyName == "" || d.StrategyName == definitionAgentFile || strings.ContainsAny(d.StrategyName, `/\`) || strings.HasPrefix(d.StrategyName, ".") {
		return supervisor.AgentEntry{}, fmt.Errorf("definition of %s: bad strategy file name %q", d.ID, d.StrategyName)
	}
	adir := filepath.Join(dir, "agents", string(d.ID))
	if err := os.MkdirAll(adir, 0o700); err != nil {
		return supervisor.AgentEntry{}, err
	}
	for name, content := range map[string]string{definitionAgentFile: d.AgentFile, d.StrategyName: d.Strategy} {
		if err := os.WriteFile(filepath.Join(adir, name), []byte(content), 0o600); err != nil {
			return supervisor.AgentEntry{}, err
		}
	}
	return supervisor.AgentEntry{File: filepath.Join(adir, definitionAgentFile), ID: string(d.ID), Wallet: d.Wallet, Live: d.Live,
		StateDir: filepath.Join(adir, "state"), Args: d.Args, Env: d.Env, Restart: d.Restart, Limits: d.Limits, Placement: d.Placement}, nil
}

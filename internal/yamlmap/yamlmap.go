// Package yamlmap walks the mappings of settings of pitboss's YAML files
// (fleet files, alert sections) the same way everywhere: aliases resolved,
// unknown and repeated keys reported with the same messages and a "did you
// mean …?" hint. It uses the standard library and the YAML parser only.
package yamlmap

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/internal/suggest"
)

// maxAliasDepth bounds alias chains, so a hostile file cannot make Resolve spin.
const maxAliasDepth = 16

// Resolve follows aliases to the node they name; nil for a chain deeper than
// maxAliasDepth.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i == maxAliasDepth {
			return nil
		}
		n = n.Alias
	}
	return n
}

// IsNull reports a missing node or an explicit null (`key:` or `key: null`).
func IsNull(n *yaml.Node) bool { return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// Report receives one problem: the node it is about (for its line and column)
// and a message that quotes no value beyond a short, truncated key.
type Report func(n *yaml.Node, msg string)

// Fields decodes the mapping n, named where in messages: fn is called, in file
// order, for every key in known with its resolved value (which may be a null
// node, never nil). A null n is an empty mapping. Anything else is reported and
// skipped: a node that is not a mapping, a key that is not a plain name, a key
// set twice, and an unknown key (with the closest known one as a hint).
func Fields(n *yaml.Node, where string, known []string, report Report, fn func(key string, v *yaml.Node)) {
	n = Resolve(n)
	if IsNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		report(n, where+": must be a mapping of settings")
		return
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], Resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			report(k, where+": keys must be plain names")
			continue
		}
		if line, dup := seen[k.Value]; dup {
			report(k, fmt.Sprintf("%s is set twice (first at line %d)", Quote(k.Value), line))
			continue
		}
		seen[k.Value] = k.Line
		if !contains(known, k.Value) {
			msg := fmt.Sprintf("unknown setting %s in %s", Quote(k.Value), where)
			if s := suggest.Closest(k.Value, known); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			report(k, msg)
			continue
		}
		if v == nil {
			report(k, fmt.Sprintf("%s in %s: its alias chain is too deep", Quote(k.Value), where))
			continue
		}
		fn(k.Value, v)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// Quote quotes a key or value for a message, truncated to 60 bytes.
func Quote(s string) string {
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return strconv.Quote(s)
}

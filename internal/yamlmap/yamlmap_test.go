package yamlmap_test

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/internal/yamlmap"
)

func walk(t *testing.T, src string) (keys, probs []string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var root *yaml.Node
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	report := func(n *yaml.Node, msg string) { probs = append(probs, fmt.Sprintf("%d:%d: %s", n.Line, n.Column, msg)) }
	yamlmap.Fields(root, "the file", []string{"name", "agents", "nats"}, report, func(key string, v *yaml.Node) {
		keys = append(keys, key+"="+v.Tag)
	})
	return keys, probs
}

func TestFieldsReportsEveryProblemAndKeepsTheRest(t *testing.T) {
	for _, tc := range []struct {
		name, src   string
		keys, probs string
	}{
		{"known keys in order, nulls passed", "nats:\nname: f\n", "nats=!!null name=!!str", ""},
		{"empty document", "", "", ""},
		{"explicit null", "null\n", "", ""},
		{"not a mapping", "- a\n", "", "1:1: the file: must be a mapping of settings"},
		{"unknown with a hint", "agentz: [a]\nname: f\n", "name=!!str", `1:1: unknown setting "agentz" in the file (did you mean agents?)`},
		{"unknown without a hint", "colour: red\n", "", `1:1: unknown setting "colour" in the file`},
		{"twice", "name: a\nname: b\n", "name=!!str", `2:1: "name" is set twice (first at line 1)`},
		{"key not plain", "[a]: 1\nname: x\n", "name=!!str", "1:1: the file: keys must be plain names"},
		{"alias followed", "name: &n f\nnats: *n\n", "name=!!str nats=!!str", ""},
		{"long key truncated", strings.Repeat("k", 100) + ": 1\n", "", `unknown setting "` + strings.Repeat("k", 57) + `..." in the file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, probs := walk(t, tc.src)
			if got := strings.Join(keys, " "); got != tc.keys {
				t.Errorf("keys %q, want %q", got, tc.keys)
			}
			got := strings.Join(probs, "\n")
			if tc.probs == "" && got != "" || !strings.Contains(got, tc.probs) {
				t.Errorf("problems %q, want %q", got, tc.probs)
			}
		})
	}
}

func TestResolveBoundsAliasChains(t *testing.T) {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: "v"}
	for i := 0; i < 16; i++ {
		n = &yaml.Node{Kind: yaml.AliasNode, Alias: n}
	}
	if r := yamlmap.Resolve(n); r == nil || r.Value != "v" {
		t.Fatalf("a chain of 16 resolves to %v", r)
	}
	if r := yamlmap.Resolve(&yaml.Node{Kind: yaml.AliasNode, Alias: n}); r != nil {
		t.Fatalf("a chain of 17 resolves to %v, want nil", r)
	}
	cyc := &yaml.Node{Kind: yaml.AliasNode}
	cyc.Alias = cyc
	if yamlmap.Resolve(cyc) != nil {
		t.Fatal("a cycle resolves")
	}
}

func FuzzFields(f *testing.F) {
	for _, s := range []string{"name: f\n", "a: &x {b: *x}\n", "[1]: 2\n", "name: 1\nname: 2\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		known := []string{"name", "agents"}
		yamlmap.Fields(doc.Content[0], "f", known, func(n *yaml.Node, msg string) {
			if n == nil || msg == "" || len(msg) > 200 {
				t.Fatalf("report %v %q", n, msg)
			}
		}, func(key string, v *yaml.Node) {
			if v == nil || (key != "name" && key != "agents") {
				t.Fatalf("fn(%q, %v)", key, v)
			}
		})
	})
}

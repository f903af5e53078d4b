package agents

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/policies"
)

// TestDocsMentionEveryName keeps docs/agents.md in step with the code: every field
// of the agent file and every name the select and deny_if expressions can use must
// appear in it, in backquotes.
func TestDocsMentionEveryName(t *testing.T) {
	doc, err := os.ReadFile("../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	var names []string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			names = append(names, tag)
			walk(f.Type)
		}
	}
	walk(reflect.TypeOf(Spec{}))
	for _, env := range []any{MarketEnv{}, policies.Env{}} {
		t := reflect.TypeOf(env)
		for i := 0; i < t.NumField(); i++ {
			names = append(names, t.Field(i).Tag.Get("expr"))
		}
	}
	for _, n := range names {
		if !strings.Contains(text, "`"+n+"`") && !strings.Contains(text, "`"+n+",") && !strings.Contains(text, ", `"+n+"`") {
			t.Errorf("docs/agents.md does not mention `%s`", n)
		}
	}
	if len(names) < 60 {
		t.Fatalf("only %d names found: the walk is broken", len(names))
	}
}

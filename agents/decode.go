package agents

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// decoder turns a yaml.Node tree into Go values by reflection over `yaml` struct
// tags, collecting every problem with its position instead of stopping at the first.
// It knows the types agent files use: strings (and named string types), bools, ints,
// market.Micros (exact decimals), time.Duration, slices, structs, and any type with
// a decodeYAML method.
type decoder struct {
	file  string
	src   []byte
	probs Problems
	nodes map[string]*yaml.Node // path → value node, for validation after decoding
}

// nodeDecoder is implemented by types with their own YAML forms.
type nodeDecoder interface {
	decodeYAML(d *decoder, n *yaml.Node, path string)
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	p := Problem{File: d.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	d.probs = append(d.probs, p)
}

// exprError records an *exprenv.Error (already positioned in the file).
func (d *decoder) exprError(n *yaml.Node, err error) {
	if ee, ok := err.(*exprenv.Error); ok {
		d.probs = append(d.probs, Problem{File: d.file, Line: ee.Line, Col: ee.Col, Msg: ee.Message, Snippet: ee.Snippet})
		return
	}
	d.errorf(n, "%v", err)
}

// show quotes a scalar for a message, unless it could be a secret.
func show(v string) string {
	if hideValue(v) {
		return "(value not shown: it looks like a secret)"
	}
	if len(v) > 60 {
		v = v[:57] + "..."
	}
	return strconv.Quote(v)
}

// at returns the node recorded for path, or the closest recorded parent's.
func (d *decoder) at(path string) *yaml.Node {
	for {
		if n, ok := d.nodes[path]; ok {
			return n
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return d.nodes[""]
		}
		path = path[:i]
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

var (
	microsType   = reflect.TypeOf(market.Micros(0))
	durationType = reflect.TypeOf(time.Duration(0))
	decoderType  = reflect.TypeOf((*nodeDecoder)(nil)).Elem()
)

// decode stores n into v (addressable). A null node leaves v unchanged.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return
		}
		n = n.Alias
	}
	d.nodes[path] = n
	if isNull(n) {
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(decoderType) {
		v.Addr().Interface().(nodeDecoder).decodeYAML(d, n, path)
		return
	}
	switch {
	case v.Type() == microsType:
		if x, ok := d.micros(n, path); ok {
			v.SetInt(int64(x))
		}
		return
	case v.Type() == durationType:
		if x, ok := d.duration(n, path); ok {
			v.SetInt(int64(x))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, "%s: must be a list", path)
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.String:
		if s, ok := d.scalar(n, path); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		if s, ok := d.scalar(n, path); ok {
			if n.Tag != "!!bool" {
				d.errorf(n, "%s: must be true or false, not %s", path, show(s))
				return
			}
			v.SetBool(s == "true" || s == "True" || s == "TRUE")
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if s, ok := d.scalar(n, path); ok {
			x, err := strconv.ParseInt(s, 10, 64)
			if n.Tag != "!!int" || err != nil || v.OverflowInt(x) {
				d.errorf(n, "%s: must be a whole number, not %s", path, show(s))
				return
			}
			v.SetInt(x)
		}
	default:
		panic("agents: cannot decode into " + v.Type().String()) // a programmer error
	}
}

// scalar returns a scalar node's text, or reports that a scalar was expected.
func (d *decoder) scalar(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s: must be a single value, not a %s", path, kindName(n))
		return "", false
	}
	return n.Value, true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// micros parses an exact non-negative decimal, written as a number or a string.
func (d *decoder) micros(n *yaml.Node, path string) (market.Micros, bool) {
	s, ok := d.scalar(n, path)
	if !ok {
		return 0, false
	}
	x, err := market.ParseMicros(s)
	if err != nil {
		d.errorf(n, "%s: %s is not an exact amount (%v); write a decimal such as 12.5 or \"0.01\"", path, show(s), err)
		return 0, false
	}
	return x, true
}

func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.scalar(n, path)
	if !ok {
		return 0, false
	}
	x, err := time.ParseDuration(s)
	if err != nil {
		hint := ""
		if _, e := strconv.Atoi(s); e == nil {
			hint = " (add a unit: " + s + "s)"
		}
		d.errorf(n, "%s: %s is not a duration such as 5s or 1m30s%s", path, show(s), hint)
		return 0, false
	}
	return x, true
}

// field is one decodable field of a struct.
type field struct {
	name  string
	index int
}

func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		out = append(out, field{name: strings.Split(tag, ",")[0], index: i})
	}
	return out
}

// decodeStruct decodes a mapping into the yaml-tagged fields of v: unknown and
// repeated keys are problems; unknown ones come with a "did you mean …?".
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		where := path
		if where == "" {
			where = "the agent file"
		}
		d.errorf(n, "%s: must be a mapping of settings, not a %s", where, kindName(n))
		return
	}
	fields := fieldsOf(v.Type())
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "%s: keys must be plain names", orTop(path))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			d.errorf(k, "%s is set twice (first at line %d)", show(join(path, k.Value)), prev.Line)
			continue
		}
		seen[k.Value] = k
		var fi = -1
		for j, f := range fields {
			if f.name == k.Value {
				fi = j
				break
			}
		}
		if fi < 0 {
			msg := fmt.Sprintf("unknown field %s in %s", show(k.Value), orTop(path))
			if hideValue(k.Value) {
				msg = "unknown field in " + orTop(path) + " (its name is not shown: it looks like a secret)"
			} else if s := exprenv.Suggest(k.Value, names); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			d.errorf(k, "%s", msg)
			continue
		}
		d.decode(val, v.Field(fields[fi].index), join(path, k.Value))
	}
}

func orTop(path string) string {
	if path == "" {
		return "the agent file"
	}
	return path
}

// scanSecrets reports every scalar, key or value, outside the wallet field that
// looks like a private key or a recovery phrase, without quoting it.
func (d *decoder) scanSecrets(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			d.scanSecrets(c, path)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			d.scanSecrets(k, path)
			if path == "" && k.Value == "wallet" {
				continue // the wallet field has its own, stricter check
			}
			d.scanSecrets(v, join(path, k.Value))
		}
	case yaml.ScalarNode:
		if kind := bareSecret(n.Value); kind != "" {
			d.errorf(n, "this value looks like %s: secrets never go in agent files; name the wallet with "+walletForms, kind)
		}
	}
}

package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/market"
)

// MaxFileSize bounds a catalogue file (Load and Parse refuse larger input).
const MaxFileSize = 16 << 20

// Load reads and parses a catalogue file (the format is documented in
// docs/services.md). Errors are Problems positioned in the file, or the error of
// reading it.
func Load(path string) (*Catalog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("catalog: reading %s: %w", path, err)
	}
	return Parse(path, src)
}

// Parse parses catalogue text; name is the file name used in problems. It reports
// every problem at once, each with its line and column: YAML syntax, unknown or
// duplicated fields, values of the wrong kind, and everything Build checks. It never
// panics, whatever src holds.
func Parse(name string, src []byte) (*Catalog, error) {
	l := &loader{file: name, nodes: map[string]*yaml.Node{}}
	if len(src) > MaxFileSize {
		return nil, Problems{{File: name, Line: 1, Col: 1, Msg: fmt.Sprintf("the file is larger than %d bytes", MaxFileSize)}}
	}
	root, ok := l.parse(src)
	if !ok {
		return nil, l.probs.sorted()
	}
	var d Definition
	l.fields(root, "", map[string]func(*yaml.Node, string){
		"tags":     func(n *yaml.Node, p string) { d.Tags = seq(l, n, p, l.tag) },
		"events":   func(n *yaml.Node, p string) { d.Events = seq(l, n, p, l.event) },
		"topics":   func(n *yaml.Node, p string) { d.Topics = seq(l, n, p, l.topic) },
		"profiles": func(n *yaml.Node, p string) { d.Profiles = seq(l, n, p, l.profile) },
	})
	// Build checks what decoding cannot, even when decoding found problems, so that
	// a file's problems are all reported at once; a field that failed to decode
	// keeps its zero value, so Build's problems on that same field are dropped.
	decoded := make(map[string]bool, len(l.probs))
	for _, p := range l.probs {
		decoded[p.Path] = true
	}
	c, err := Build(d)
	var ps Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			if decoded[p.Path] {
				continue
			}
			n := l.at(p.Path)
			p.File = name
			if n != nil {
				p.Line, p.Col = n.Line, n.Column
			}
			l.probs = append(l.probs, p)
		}
	}
	if len(l.probs) > 0 {
		return nil, l.probs.sorted()
	}
	return c, err
}

// loader turns a YAML node tree into a Definition, collecting every problem with its
// position and remembering each field's node by path, so that Build's problems can
// be positioned too.
type loader struct {
	file  string
	probs Problems
	nodes map[string]*yaml.Node
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (l *loader) parse(src []byte) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			l.probs = append(l.probs, Problem{File: l.file, Line: 1, Col: 1, Msg: "the file is empty"})
			return nil, false
		}
		p := Problem{File: l.file, Line: 1, Col: 1, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Msg = m[2]
		}
		l.probs = append(l.probs, p)
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		l.errorf(&extra, "", "a catalogue file holds one YAML document")
	}
	if len(doc.Content) == 0 {
		l.probs = append(l.probs, Problem{File: l.file, Line: 1, Col: 1, Msg: "the file is empty"})
		return nil, false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.errorf(root, "", "a catalogue file is a mapping with tags:, events:, topics: and profiles:, not a %s", kindName(root))
		return nil, false
	}
	return root, true
}

func (l *loader) errorf(n *yaml.Node, path, format string, args ...any) {
	p := Problem{File: l.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	l.probs = append(l.probs, p)
}

// at returns the node recorded for path or for its closest recorded parent.
func (l *loader) at(path string) *yaml.Node {
	for {
		if n, ok := l.nodes[path]; ok {
			return n
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return l.nodes[""]
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

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

// node records n at path and refuses aliases (a catalogue never needs them, and
// refusing them rules out alias-expansion bombs).
func (l *loader) node(n *yaml.Node, path string) bool {
	if l.nodes[""] == nil {
		l.nodes[""] = n
	}
	l.nodes[path] = n
	if n.Kind == yaml.AliasNode {
		l.errorf(n, path, "aliases (*name) are not supported in catalogue files")
		return false
	}
	return true
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// fields walks a mapping, calling the handler of each known key; unknown and
// duplicated keys are problems.
func (l *loader) fields(n *yaml.Node, path string, handlers map[string]func(*yaml.Node, string)) {
	if !l.node(n, path) {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.errorf(n, path, "must be a mapping, not a %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		p := join(path, key)
		if k.Kind != yaml.ScalarNode {
			l.errorf(k, path, "keys must be plain names")
			continue
		}
		if seen[key] {
			l.errorf(k, p, "is given twice")
			continue
		}
		seen[key] = true
		h, ok := handlers[key]
		if !ok {
			l.errorf(k, p, "unknown field%s", suggest(key, handlers))
			continue
		}
		if !l.node(v, p) {
			continue
		}
		if isNull(v) {
			continue
		}
		h(v, p)
	}
}

// suggest returns " (did you mean "x"?)" for the known key closest to key.
func suggest(key string, handlers map[string]func(*yaml.Node, string)) string {
	names := make([]string, 0, len(handlers))
	for k := range handlers {
		names = append(names, k)
	}
	sort.Strings(names)
	best, bestD := "", 3
	for _, k := range names {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return " (known fields: " + strings.Join(names, ", ") + ")"
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// seq decodes a list with one decoder per item.
func seq[T any](l *loader, n *yaml.Node, path string, item func(*yaml.Node, string) T) []T {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "must be a list, not a %s", kindName(n))
		return nil
	}
	out := make([]T, 0, len(n.Content))
	for i, c := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		if !l.node(c, p) {
			continue
		}
		out = append(out, item(c, p))
	}
	return out
}

func (l *loader) scalar(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		l.errorf(n, path, "must be a single value, not a %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (l *loader) str(n *yaml.Node, path string) string {
	s, _ := l.scalar(n, path)
	return s
}

func (l *loader) boolean(n *yaml.Node, path string) bool {
	s, ok := l.scalar(n, path)
	if !ok {
		return false
	}
	if n.Tag != "!!bool" {
		l.errorf(n, path, "must be true or false, not %q", clip(s))
		return false
	}
	return strings.EqualFold(s, "true")
}

func (l *loader) integer(n *yaml.Node, path string, lo, hi int64) int64 {
	s, ok := l.scalar(n, path)
	if !ok {
		return 0
	}
	x, err := strconv.ParseInt(s, 10, 64)
	if n.Tag != "!!int" || err != nil || x < lo || x > hi {
		l.errorf(n, path, "must be a whole number from %d to %d, not %q", lo, hi, clip(s))
		return 0
	}
	return x
}

func (l *loader) micros(n *yaml.Node, path string) market.Micros {
	s, ok := l.scalar(n, path)
	if !ok {
		return 0
	}
	x, err := market.ParseMicros(s)
	if err != nil {
		l.errorf(n, path, "%q is not an exact amount (%v); write a decimal such as 0.01 or 5", clip(s), err)
		return 0
	}
	return x
}

// dateLayouts are the accepted date forms; dates without a zone are UTC.
var dateLayouts = [...]string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"}

// date parses an ISO 8601 date or date-time into Unix seconds.
func (l *loader) date(n *yaml.Node, path string) int64 {
	s, ok := l.scalar(n, path)
	if !ok {
		return 0
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1970 || t.Year() > 9999 {
				break
			}
			return t.Unix()
		}
	}
	l.errorf(n, path, "%q is not a date (write 2026-06-11 or 2026-06-11T19:00:00Z)", clip(s))
	return 0
}

func (l *loader) strings(n *yaml.Node, path string) []string {
	return seq(l, n, path, l.str)
}

func (l *loader) pair(n *yaml.Node, path string) [2]string {
	v := l.strings(n, path)
	if len(v) != 2 {
		if n.Kind == yaml.SequenceNode {
			l.errorf(n, path, "needs exactly two labels, not %d", len(v))
		}
		return [2]string{}
	}
	return [2]string{v[0], v[1]}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// translations decodes a mapping of locale → value. Keys are kept as written;
// Build checks them.
func translations[V any](l *loader, n *yaml.Node, path string, item func(*yaml.Node, string) V) map[Locale]V {
	if n.Kind != yaml.MappingNode {
		l.errorf(n, path, "must be a mapping of locale to text, not a %s", kindName(n))
		return nil
	}
	out := map[Locale]V{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			l.errorf(k, path, "keys must be locales")
			continue
		}
		if _, dup := out[Locale(k.Value)]; dup {
			l.errorf(k, p, "is given twice")
			continue
		}
		l.nodes[p] = k
		if v.Kind == yaml.AliasNode {
			l.errorf(v, p, "aliases (*name) are not supported in catalogue files")
			continue
		}
		out[Locale(k.Value)] = item(v, p)
	}
	return out
}

func (l *loader) tag(n *yaml.Node, p string) Tag {
	var t Tag
	l.fields(n, p, map[string]func(*yaml.Node, string){
		"id":                   func(v *yaml.Node, p string) { t.ID = l.str(v, p) },
		"label":                func(v *yaml.Node, p string) { t.Label = l.str(v, p) },
		"slug":                 func(v *yaml.Node, p string) { t.Slug = l.str(v, p) },
		"force_show":           func(v *yaml.Node, p string) { t.ForceShow = l.boolean(v, p) },
		"force_hide":           func(v *yaml.Node, p string) { t.ForceHide = l.boolean(v, p) },
		"is_carousel":          func(v *yaml.Node, p string) { t.IsCarousel = l.boolean(v, p) },
		"requires_translation": func(v *yaml.Node, p string) { t.RequiresTranslation = l.boolean(v, p) },
		"created_at":           func(v *yaml.Node, p string) { t.CreatedAt = l.date(v, p) },
		"updated_at":           func(v *yaml.Node, p string) { t.UpdatedAt = l.date(v, p) },
		"related":              func(v *yaml.Node, p string) { t.Related = l.related(v, p) },
		"translations": func(v *yaml.Node, p string) {
			t.Translations = translations(l, v, p, l.str)
		},
	})
	return t
}

// related accepts a list of slugs (ranked by position) or of {slug, rank}.
func (l *loader) related(n *yaml.Node, path string) []RelatedTag {
	i := 0
	return seq(l, n, path, func(v *yaml.Node, p string) RelatedTag {
		i++
		r := RelatedTag{Rank: i}
		if v.Kind == yaml.ScalarNode {
			r.Slug = v.Value
			return r
		}
		l.fields(v, p, map[string]func(*yaml.Node, string){
			"slug": func(v *yaml.Node, p string) { r.Slug = l.str(v, p) },
			"rank": func(v *yaml.Node, p string) { r.Rank = int(l.integer(v, p, 1, 1<<20)) },
		})
		return r
	})
}

func (l *loader) eventText(n *yaml.Node, p string) EventText {
	var t EventText
	if n.Kind == yaml.ScalarNode {
		t.Title = n.Value // shorthand: the title only
		return t
	}
	l.fields(n, p, map[string]func(*yaml.Node, string){
		"title":       func(v *yaml.Node, p string) { t.Title = l.str(v, p) },
		"description": func(v *yaml.Node, p string) { t.Description = l.str(v, p) },
	})
	return t
}

func (l *loader) event(n *yaml.Node, p string) Event {
	var e Event
	l.fields(n, p, map[string]func(*yaml.Node, string){
		"id":                func(v *yaml.Node, p string) { e.ID = l.str(v, p) },
		"ticker":            func(v *yaml.Node, p string) { e.Ticker = l.str(v, p) },
		"slug":              func(v *yaml.Node, p string) { e.Slug = l.str(v, p) },
		"title":             func(v *yaml.Node, p string) { e.Title = l.str(v, p) },
		"description":       func(v *yaml.Node, p string) { e.Description = l.str(v, p) },
		"resolution_source": func(v *yaml.Node, p string) { e.ResolutionSource = l.str(v, p) },
		"tags":              func(v *yaml.Node, p string) { e.Tags = l.strings(v, p) },
		"start_date":        func(v *yaml.Node, p string) { e.StartDate = l.date(v, p) },
		"end_date":          func(v *yaml.Node, p string) { e.EndDate = l.date(v, p) },
		"created_at":        func(v *yaml.Node, p string) { e.CreatedAt = l.date(v, p) },
		"image":             func(v *yaml.Node, p string) { e.Image = l.str(v, p) },
		"icon":              func(v *yaml.Node, p string) { e.Icon = l.str(v, p) },
		"featured":          func(v *yaml.Node, p string) { e.Featured = l.boolean(v, p) },
		"archived":          func(v *yaml.Node, p string) { e.Archived = l.boolean(v, p) },
		"closed":            func(v *yaml.Node, p string) { e.Closed = l.boolean(v, p) },
		"recurrence":        func(v *yaml.Node, p string) { e.Recurrence = l.str(v, p) },
		"neg_risk":          func(v *yaml.Node, p string) { e.NegRisk = l.boolean(v, p) },
		"translations": func(v *yaml.Node, p string) {
			e.Translations = translations(l, v, p, l.eventText)
		},
		"markets": func(v *yaml.Node, p string) { e.Markets = seq(l, v, p, l.market) },
	})
	return e
}

// Defaults of market fields a file leaves out.
const (
	DefaultTickSize market.Micros = 10_000    // 0.01
	DefaultMinSize  market.Micros = 5_000_000 // 5 shares
)

func (l *loader) market(n *yaml.Node, p string) Market {
	m := Market{TickSize: DefaultTickSize, MinSize: DefaultMinSize, Active: true, AcceptingOrders: true}
	acceptingSet := false
	l.fields(n, p, map[string]func(*yaml.Node, string){
		"id":           func(v *yaml.Node, p string) { m.ID = l.str(v, p) },
		"condition_id": func(v *yaml.Node, p string) { m.Condition = market.ConditionID(l.str(v, p)) },
		"token_ids": func(v *yaml.Node, p string) {
			t := l.pair(v, p)
			m.Tokens = [2]market.TokenID{market.TokenID(t[0]), market.TokenID(t[1])}
		},
		"slug":             func(v *yaml.Node, p string) { m.Slug = l.str(v, p) },
		"question":         func(v *yaml.Node, p string) { m.Question = l.str(v, p) },
		"description":      func(v *yaml.Node, p string) { m.Description = l.str(v, p) },
		"outcomes":         func(v *yaml.Node, p string) { m.Outcomes = l.pair(v, p) },
		"group_item_title": func(v *yaml.Node, p string) { m.GroupItemTitle = l.str(v, p) },
		"tick_size":        func(v *yaml.Node, p string) { m.TickSize = l.micros(v, p) },
		"min_size":         func(v *yaml.Node, p string) { m.MinSize = l.micros(v, p) },
		"fee_bps":          func(v *yaml.Node, p string) { m.FeeBps = uint32(l.integer(v, p, 0, 10_000)) },
		"start_date":       func(v *yaml.Node, p string) { m.StartDate = l.date(v, p) },
		"end_date":         func(v *yaml.Node, p string) { m.EndDate = l.date(v, p) },
		"icon":             func(v *yaml.Node, p string) { m.Icon = l.str(v, p) },
		"image":            func(v *yaml.Node, p string) { m.Image = l.str(v, p) },
		"active":           func(v *yaml.Node, p string) { m.Active = l.boolean(v, p) },
		"closed":           func(v *yaml.Node, p string) { m.Closed = l.boolean(v, p) },
		"archived":         func(v *yaml.Node, p string) { m.Archived = l.boolean(v, p) },
		"accepting_orders": func(v *yaml.Node, p string) { m.AcceptingOrders, acceptingSet = l.boolean(v, p), true },
		"translations": func(v *yaml.Node, p string) {
			m.Translations = translations(l, v, p, l.marketText)
		},
	})
	if m.Closed && !acceptingSet {
		m.AcceptingOrders = false
	}
	return m
}

func (l *loader) marketText(n *yaml.Node, p string) MarketText {
	var t MarketText
	if n.Kind == yaml.ScalarNode {
		t.Question = n.Value // shorthand: the question only
		return t
	}
	l.fields(n, p, map[string]func(*yaml.Node, string){
		"question":         func(v *yaml.Node, p string) { t.Question = l.str(v, p) },
		"description":      func(v *yaml.Node, p string) { t.Description = l.str(v, p) },
		"group_item_title": func(v *yaml.Node, p string) { t.GroupItemTitle = l.str(v, p) },
		"outcomes":         func(v *yaml.Node, p string) { t.Outcomes = l.pair(v, p) },
	})
	return t
}

func (l *loader) topic(n *yaml.Node, p string) Topic {
	var t Topic
	l.fields(n, p, map[string]func(*yaml.Node, string){
		"slug":        func(v *yaml.Node, p string) { t.Slug = l.str(v, p) },
		"title":       func(v *yaml.Node, p string) { t.Title = l.str(v, p) },
		"description": func(v *yaml.Node, p string) { t.Description = l.str(v, p) },
		"translations": func(v *yaml.Node, p string) {
			t.Translations = translations(l, v, p, l.eventText)
		},
		"sections": func(v *yaml.Node, p string) { t.Sections = seq(l, v, p, l.section) },
	})
	return t
}

func (l *loader) section(n *yaml.Node, p string) Section {
	var s Section
	l.fields(n, p, map[string]func(*yaml.Node, string){
		"slug":  func(v *yaml.Node, p string) { s.Slug = l.str(v, p) },
		"title": func(v *yaml.Node, p string) { s.Title = l.str(v, p) },
		"translations": func(v *yaml.Node, p string) {
			s.Translations = translations(l, v, p, l.str)
		},
		"events": func(v *yaml.Node, p string) { s.Events = l.strings(v, p) },
	})
	return s
}

func (l *loader) profile(n *yaml.Node, p string) Profile {
	var pr Profile
	l.fields(n, p, map[string]func(*yaml.Node, string){
		"address": func(v *yaml.Node, p string) {
			s := l.str(v, p)
			a, err := market.ParseAddress(s)
			if err != nil {
				l.errorf(v, p, "%q is not a wallet address (0x and 40 hex digits)", clip(s))
				return
			}
			pr.Address = a
		},
		"name":          func(v *yaml.Node, p string) { pr.Name = l.str(v, p) },
		"bio":           func(v *yaml.Node, p string) { pr.Bio = l.str(v, p) },
		"profile_image": func(v *yaml.Node, p string) { pr.ProfileImage = l.str(v, p) },
		"x_username":    func(v *yaml.Node, p string) { pr.XUsername = l.str(v, p) },
		"verified":      func(v *yaml.Node, p string) { pr.Verified = l.boolean(v, p) },
		"created_at":    func(v *yaml.Node, p string) { pr.CreatedAt = l.date(v, p) },
	})
	return pr
}

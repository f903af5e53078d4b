package strategy

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
	yaml "go.yaml.in/yaml/v3"
)

// spec is a parsed strategy file: its structure with positions, before expressions
// are compiled (compiling needs the parameter values).
type spec struct {
	file        string
	src         []byte
	name        string
	description string
	slots       []string
	slotNodes   []*yaml.Node
	feeds       []string // feeds: the names the agent binds to real-time feeds
	feedNodes   []*yaml.Node
	signals     []string // signals: the names the agent binds to signal sources
	signalNodes []*yaml.Node
	params      []*paramSpec
	indicators  []*indSpec
	vars        []*varSpec
	quotes      []*quoteSpec
	rules       []*ruleSpec
}

// exprSrc is one expression of the file and where it is.
type exprSrc struct {
	text string
	at   exprenv.Origin
	node *yaml.Node
}

type varSpec struct {
	name string
	key  *yaml.Node
	expr exprSrc
	// broken: the name was refused; the expression is compiled for its problems
	// only and defines nothing.
	broken bool
}

// ref is a literal value or a parameter name (for windows, ttl, cooldown, post_only).
type ref struct {
	param string  // parameter name, if a reference
	num   float64 // literal number (events, or ms for durations)
	dur   bool    // literal was a duration
	b     bool    // literal bool
	set   bool    // a value was given
	node  *yaml.Node
	col   int // column of the reference inside the node (indicators)
}

type quoteSpec struct {
	id       string
	key      *yaml.Node
	slot     string
	slotNode *yaml.Node
	token    market.Outcome
	side     market.Side
	typ      market.OrderType
	price    exprSrc
	size     exprSrc
	when     *exprSrc
	ttl      ref
	postOnly ref
	// broken: a structural problem (id, side, type, a missing field, ...) was
	// reported. The block's expressions are still compiled, so that one run lists
	// their problems too, but it never becomes part of a strategy.
	broken bool
}

type ruleAction uint8

const (
	actTake ruleAction = iota + 1
	actCancelAll
	actFlatten
	actPause
	actMerge
	actRedeem
)

var actionNames = map[string]ruleAction{"cancel_all": actCancelAll, "flatten": actFlatten, "pause": actPause,
	"merge": actMerge, "redeem": actRedeem}

type takeSpec struct {
	node  *yaml.Node
	token market.Outcome
	side  market.Side
	typ   market.OrderType
	price exprSrc
	size  exprSrc
}

type ruleSpec struct {
	id       string
	key      *yaml.Node
	slot     string
	slotNode *yaml.Node
	on       uint16 // bit set of event kinds; 0 = every event
	when     exprSrc
	action   ruleAction
	takes    []takeSpec
	cooldown ref
	broken   bool // as quoteSpec.broken
}

// Event kinds as the file names them, for `on:` and event.kind.
const (
	onBook = 1 << iota
	onTrade
	onTickSize
	onResolved
	onOrder
	onFill
	onTimer
	onFeed
	onSignal
)

var onNames = map[string]uint16{"book": onBook, "trade": onTrade, "tick_size": onTickSize, "resolved": onResolved, "order": onOrder, "fill": onFill, "timer": onTimer, "feed": onFeed, "signal": onSignal}

func onList() []string {
	return []string{"book", "trade", "tick_size", "resolved", "order", "fill", "timer", "feed", "signal"}
}

// kindBit maps an event to its `on:` bit and its event.kind name.
func kindBit(k market.EventKind) (uint16, string) {
	switch k {
	case market.EventBook, market.EventPriceChange:
		return onBook, "book"
	case market.EventLastTrade:
		return onTrade, "trade"
	case market.EventTickSize:
		return onTickSize, "tick_size"
	case market.EventResolved:
		return onResolved, "resolved"
	case market.EventOrder:
		return onOrder, "order"
	case market.EventFill:
		return onFill, "fill"
	case market.EventTimer:
		return onTimer, "timer"
	case market.EventFeed:
		return onFeed, "feed"
	case market.EventSignal:
		return onSignal, "signal"
	}
	return 0, ""
}

var topFields = []string{"name", "description", "markets", "feeds", "signals", "params", "indicators", "vars", "quotes", "rules"}

// parser walks a YAML document into a spec, recording every problem.
type parser struct {
	*problems
	s *spec
}

func parse(file string, src []byte) (*spec, *problems) {
	p := &parser{problems: newProblems(file, src), s: &spec{file: file, src: src}}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		p.yamlError(err)
		return p.s, p.problems
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.at(1, 1, "empty strategy file")
		return p.s, p.problems
	}
	root := doc.Content[0]
	fields := p.fields(root, "strategy file", topFields)
	if fields == nil {
		return p.s, p.problems
	}
	if n := fields["name"]; n != nil {
		p.s.name, _ = p.scalar(n, "name")
	}
	if n := fields["description"]; n != nil {
		p.s.description, _ = p.scalar(n, "description")
	}
	if n := fields["markets"]; n != nil {
		p.markets(n)
	}
	if n := fields["feeds"]; n != nil {
		p.s.feeds, p.s.feedNodes = p.names(n, "feeds", "feed", MaxFeeds)
	}
	if n := fields["signals"]; n != nil {
		p.s.signals, p.s.signalNodes = p.names(n, "signals", "signal", MaxSignals)
	}
	if n := fields["params"]; n != nil {
		p.params(n)
	}
	if n := fields["indicators"]; n != nil {
		p.indicators(n)
	}
	if n := fields["vars"]; n != nil {
		p.vars(n)
	}
	if n := fields["quotes"]; n != nil {
		p.quotes(n)
	}
	if n := fields["rules"]; n != nil {
		p.rules(n)
	}
	if len(p.s.quotes) == 0 && len(p.s.rules) == 0 && len(p.list) == 0 {
		p.node(root, "the strategy has neither quotes nor rules: it would never do anything")
	}
	return p.s, p.problems
}

// pairs returns the key/value pairs of a mapping node, or nil (with a problem) when n
// is not a mapping. An empty value (`quotes:` with nothing) is an empty mapping.
func (p *parser) pairs(n *yaml.Node, what string) [][2]*yaml.Node {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return [][2]*yaml.Node{}
	}
	if n.Kind == yaml.AliasNode {
		p.node(n, "%s: YAML aliases are not supported", what)
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.node(n, "%s must be a mapping", what)
		return nil
	}
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Kind != yaml.ScalarNode {
			p.node(n.Content[i], "%s: keys must be plain names", what)
			continue
		}
		if n.Content[i].Value == "<<" {
			p.node(n.Content[i], "%s: YAML merge keys are not supported", what)
			continue
		}
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

// fields returns the values of a mapping by key, reporting unknown keys with a
// suggestion. It returns nil when n is not a mapping.
func (p *parser) fields(n *yaml.Node, what string, known []string) map[string]*yaml.Node {
	pairs := p.pairs(n, what)
	if pairs == nil {
		return nil
	}
	out := make(map[string]*yaml.Node, len(pairs))
	for _, kv := range pairs {
		k := kv[0].Value
		if !slices.Contains(known, k) {
			if s := exprenv.Suggest(k, known); s != "" {
				p.node(kv[0], "unknown field %q in %s (did you mean %q?)", k, what, s)
			} else {
				p.node(kv[0], "unknown field %q in %s (known: %s)", k, what, strings.Join(known, ", "))
			}
			continue
		}
		out[k] = kv[1]
	}
	return out
}

// scalar returns a scalar's text.
func (p *parser) scalar(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		p.node(n, "%s must be a single value", what)
		return "", false
	}
	return n.Value, true
}

// expr returns an expression's text and origin.
func (p *parser) expr(n *yaml.Node, what string) (exprSrc, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.node(n, "%s must be an expression", what)
		return exprSrc{}, false
	}
	text, at := exprenv.OriginOf(p.file, n, p.s.src)
	return exprSrc{text: text, at: at, node: n}, true
}

var (
	reIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reID    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
)

// names parses a list of input names (feeds: [btc], signals: [model]): identifiers,
// each once, at most max.
func (p *parser) names(n *yaml.Node, field, what string, max int) ([]string, []*yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		p.node(n, "%s must be a list of names, e.g. [%s]", field, map[string]string{"feeds": "btc, eth", "signals": "model"}[field])
		return nil, nil
	}
	var names []string
	var nodes []*yaml.Node
	for _, c := range n.Content {
		name, ok := p.scalar(c, "a "+what+" name")
		if !ok {
			continue
		}
		switch {
		case !reIdent.MatchString(name) || len(name) > 64:
			p.node(c, "%s %q must be a name of at most 64 letters, digits and _, not starting with a digit", what, name)
		case slices.Contains(names, name):
			p.node(c, "%s %q is listed twice", what, name)
		case len(names) == max:
			p.node(c, "more than %d %ss", max, what)
		default:
			names = append(names, name)
			nodes = append(nodes, c)
		}
	}
	return names, nodes
}

func (p *parser) markets(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		p.node(n, "markets must be a list of slot names, e.g. [main, hedge]")
		return
	}
	seen := map[string]bool{}
	for _, c := range n.Content {
		name, ok := p.scalar(c, "a market slot")
		if !ok {
			continue
		}
		switch {
		case !reID.MatchString(name):
			p.node(c, "market slot %q must be a name (letters, digits, _ and -)", name)
		case seen[name]:
			p.node(c, "market slot %q is listed twice", name)
		default:
			seen[name] = true
			p.s.slots = append(p.s.slots, name)
			p.s.slotNodes = append(p.s.slotNodes, c)
		}
	}
}

func (p *parser) vars(n *yaml.Node) {
	for _, kv := range p.pairs(n, "vars") {
		broken := !reIdent.MatchString(kv[0].Value)
		if broken {
			p.node(kv[0], "var name %q must be an identifier (letters, digits and _)", kv[0].Value)
		}
		e, ok := p.expr(kv[1], "var "+kv[0].Value)
		if !ok {
			continue
		}
		p.s.vars = append(p.s.vars, &varSpec{name: kv[0].Value, key: kv[0], expr: e, broken: broken})
	}
}

var quoteFields = []string{"market", "token", "side", "price", "size", "when", "type", "ttl", "post_only"}

// quotes reads the quotes: section. A quote with a structural problem is kept,
// marked broken, so that its expressions are compiled (and their problems listed)
// all the same.
func (p *parser) quotes(n *yaml.Node) {
	for _, kv := range p.pairs(n, "quotes") {
		id := kv[0].Value
		what := "quote " + id
		ok := true
		if !reID.MatchString(id) {
			p.node(kv[0], "quote id %q must be a name (letters, digits, _ and -)", id)
			ok = false
		}
		fs := p.fields(kv[1], what, quoteFields)
		if fs == nil {
			continue
		}
		q := &quoteSpec{id: id, key: kv[0], typ: market.GTC}
		q.slot, q.slotNode = p.slotRef(fs["market"], what)
		q.token = p.token(fs["token"], what)
		var good bool
		q.side, good = p.side(fs["side"], kv[0], what)
		ok = ok && good
		if t := fs["type"]; t != nil {
			switch strings.ToUpper(t.Value) {
			case "GTC":
				q.typ = market.GTC
			case "GTD":
				q.typ = market.GTD
			case "FOK", "FAK":
				p.node(t, "%s: type %s does not rest on the book; use a rule with take: for immediate orders", what, t.Value)
				ok = false
			default:
				p.node(t, "%s: type must be GTC or GTD", what)
				ok = false
			}
		}
		q.price, ok = p.required(fs, "price", kv[0], what, ok)
		q.size, ok = p.required(fs, "size", kv[0], what, ok)
		if w := fs["when"]; w != nil {
			if e, good := p.expr(w, what+" when"); good {
				q.when = &e
			}
		}
		q.ttl = p.durationRef(fs["ttl"], what+" ttl")
		if q.typ == market.GTD && !q.ttl.set {
			p.node(kv[0], "%s: a GTD quote needs ttl (how long each order lives, e.g. ttl: 90s)", what)
			ok = false
		}
		if q.typ != market.GTD && q.ttl.set {
			p.node(fs["ttl"], "%s: ttl is only for type: GTD", what)
		}
		q.postOnly = p.boolRef(fs["post_only"], what+" post_only")
		q.broken = !ok
		p.s.quotes = append(p.s.quotes, q)
	}
}

func (p *parser) required(fs map[string]*yaml.Node, field string, at *yaml.Node, what string, ok bool) (exprSrc, bool) {
	n := fs[field]
	if n == nil {
		p.node(at, "%s: %s is required", what, field)
		return exprSrc{}, false
	}
	e, good := p.expr(n, what+" "+field)
	return e, ok && good
}

func (p *parser) slotRef(n *yaml.Node, what string) (string, *yaml.Node) {
	if n == nil {
		return "", nil
	}
	v, ok := p.scalar(n, what+" market")
	if !ok {
		return "", nil
	}
	return v, n
}

func (p *parser) token(n *yaml.Node, what string) market.Outcome {
	if n == nil {
		return market.Yes
	}
	switch strings.ToUpper(n.Value) {
	case "YES":
		return market.Yes
	case "NO":
		return market.No
	}
	p.node(n, "%s: token must be YES or NO", what)
	return market.Yes
}

func (p *parser) side(n *yaml.Node, at *yaml.Node, what string) (market.Side, bool) {
	if n == nil {
		p.node(at, "%s: side is required (BUY or SELL)", what)
		return 0, false
	}
	switch strings.ToUpper(n.Value) {
	case "BUY":
		return market.Buy, true
	case "SELL":
		return market.Sell, true
	}
	p.node(n, "%s: side must be BUY or SELL", what)
	return 0, false
}

var ruleFields = []string{"market", "on", "when", "do", "take", "cooldown"}

// rules reads the rules: section; a rule with a structural problem is kept, marked
// broken, as quotes does.
func (p *parser) rules(n *yaml.Node) {
	for _, kv := range p.pairs(n, "rules") {
		id := kv[0].Value
		what := "rule " + id
		ok := true
		if !reID.MatchString(id) {
			p.node(kv[0], "rule id %q must be a name (letters, digits, _ and -)", id)
			ok = false
		}
		fs := p.fields(kv[1], what, ruleFields)
		if fs == nil {
			continue
		}
		r := &ruleSpec{id: id, key: kv[0]}
		r.slot, r.slotNode = p.slotRef(fs["market"], what)
		if on := fs["on"]; on != nil {
			r.on = p.onMask(on, what)
		}
		r.when, ok = p.required(fs, "when", kv[0], what, ok)
		do, take := fs["do"], fs["take"]
		switch {
		case do != nil && take != nil:
			p.node(do, "%s: give either do: or take:, not both", what)
			ok = false
		case do == nil && take == nil:
			p.node(kv[0], "%s: needs an action: take: (orders) or do: cancel_all | flatten | pause | merge | redeem", what)
			ok = false
		case do != nil:
			a, known := actionNames[do.Value]
			if !known {
				msg := "%s: do must be cancel_all, flatten, pause, merge or redeem"
				if do.Value == "take" {
					msg = "%s: to take, give the orders under take: instead of do: take"
				} else if s := exprenv.Suggest(do.Value, []string{"cancel_all", "flatten", "pause", "merge", "redeem"}); s != "" {
					msg += " (did you mean " + s + "?)"
				}
				p.node(do, msg, what)
				ok = false
			}
			r.action = a
		default:
			r.action = actTake
			items := []*yaml.Node{take}
			if take.Kind == yaml.SequenceNode {
				items = take.Content
			}
			if len(items) == 0 {
				p.node(take, "%s: take: lists no order", what)
				ok = false
			}
			for i, it := range items {
				t, good := p.takeOrder(it, what+" take["+strconv.Itoa(i)+"]")
				ok = ok && good
				r.takes = append(r.takes, t)
			}
		}
		r.cooldown = p.durationRef(fs["cooldown"], what+" cooldown")
		r.broken = !ok
		p.s.rules = append(p.s.rules, r)
	}
}

var takeFields = []string{"token", "side", "price", "size", "type"}

func (p *parser) takeOrder(n *yaml.Node, what string) (takeSpec, bool) {
	fs := p.fields(n, what, takeFields)
	if fs == nil {
		return takeSpec{}, false
	}
	t := takeSpec{node: n, typ: market.FAK, token: p.token(fs["token"], what)}
	var ok bool
	t.side, ok = p.side(fs["side"], n, what)
	if tn := fs["type"]; tn != nil {
		switch strings.ToUpper(tn.Value) {
		case "FOK":
			t.typ = market.FOK
		case "FAK":
			t.typ = market.FAK
		default:
			p.node(tn, "%s: type must be FOK or FAK (a take is immediate; resting orders are quotes)", what)
			ok = false
		}
	}
	t.price, ok = p.required(fs, "price", n, what, ok)
	t.size, ok = p.required(fs, "size", n, what, ok)
	return t, ok
}

func (p *parser) onMask(n *yaml.Node, what string) uint16 {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var mask uint16
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			p.node(it, "%s: on lists event names", what)
			continue
		}
		for _, name := range strings.Split(it.Value, ",") {
			name = strings.TrimSpace(name)
			bit, ok := onNames[name]
			if !ok {
				msg := "%s: unknown event %q in on (events: " + strings.Join(onList(), ", ") + ")"
				if s := exprenv.Suggest(name, onList()); s != "" {
					msg = "%s: unknown event %q in on (did you mean " + s + "?)"
				}
				p.node(it, msg, what, name)
				continue
			}
			mask |= bit
		}
	}
	return mask
}

// durationRef reads a duration literal ("90s") or a parameter name.
func (p *parser) durationRef(n *yaml.Node, what string) ref {
	if n == nil {
		return ref{}
	}
	v, ok := p.scalar(n, what)
	if !ok {
		return ref{}
	}
	if reIdent.MatchString(v) {
		return ref{param: v, set: true, node: n}
	}
	ms, ok := parseDuration(v)
	if !ok {
		p.node(n, "%s must be a duration such as 500ms, 30s, 5m or 1h, or a parameter name", what)
		return ref{}
	}
	return ref{num: float64(ms), dur: true, set: true, node: n}
}

// boolRef reads true/false or a parameter name.
func (p *parser) boolRef(n *yaml.Node, what string) ref {
	if n == nil {
		return ref{}
	}
	switch n.Value {
	case "true":
		return ref{b: true, set: true, node: n}
	case "false":
		return ref{set: true, node: n}
	}
	if reIdent.MatchString(n.Value) {
		return ref{param: n.Value, set: true, node: n}
	}
	p.node(n, "%s must be true, false or a parameter name", what)
	return ref{}
}

// reDuration matches duration literals: one or more number-unit pairs ("90s",
// "1m30s", "1.5h", "500ms", "2d"), the units of agent files plus days.
var reDuration = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h|d))+$`)

var reDurationPart = regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)`)

// parseDuration parses a duration literal into whole milliseconds, positive and at
// most a year.
func parseDuration(s string) (int64, bool) {
	if !reDuration.MatchString(s) {
		return 0, false
	}
	var ms float64
	for _, m := range reDurationPart.FindAllStringSubmatch(s, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, false
		}
		ms += v * map[string]float64{"ms": 1, "s": 1e3, "m": 60e3, "h": 3600e3, "d": 86400e3}[m[2]]
	}
	ms = math.Round(ms*1e6) / 1e6 // 1.1s is 1100 ms, not 1100.0000000000002
	if ms != float64(int64(ms)) || ms <= 0 || ms > 365*86400e3 {
		return 0, false
	}
	return int64(ms), true
}

// formatDuration renders milliseconds in the largest unit that divides them.
func formatDuration(ms int64) string {
	switch {
	case ms%86_400_000 == 0:
		return strconv.FormatInt(ms/86_400_000, 10) + "d"
	case ms%3_600_000 == 0:
		return strconv.FormatInt(ms/3_600_000, 10) + "h"
	case ms%60_000 == 0:
		return strconv.FormatInt(ms/60_000, 10) + "m"
	case ms%1000 == 0:
		return strconv.FormatInt(ms/1000, 10) + "s"
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

package strategy

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// Strategy is a compiled strategy file with one set of parameter values. It is
// immutable and safe for concurrent use: every agent (or backtest, or sweep point)
// makes its own Instance from it.
type Strategy struct {
	spec   *spec
	values map[string]pval
	env    *exprenv.Env // the final environment: every name known

	indicators []compiledInd
	vars       []compiledVar
	quotes     []compiledQuote
	rules      []compiledRule

	needDepth  bool // some expression reads bid_depth, ask_depth or imbalance
	needOrders bool // some expression reads orders
	needOpen   bool // some expression reads open_buy or open_sell
	// reuse: a market's quotes may be reused when their inputs are unchanged
	// (reuse.go).
	reuse bool
	// needLast: the tokens' last trades are filled for every evaluation (some
	// expression reads one, or one runs on expr's VM, whose reads are not known
	// exactly); otherwise only to mark a position on a token with an empty book.
	needLast bool
	// needEvent: the event's fields are filled (some expression reads event, or
	// one runs on expr's VM).
	needEvent bool
	// needEndsIn: market.ends_in is filled (some expression reads it, or one runs
	// on expr's VM).
	needEndsIn bool
	// full: every evaluation recomputes the whole environment and evaluates every
	// expression (no reuse); the reference the reuse tests compare with.
	full bool
	// memo: the dependency masks of the vars, nil when vars are not kept while
	// their inputs are unchanged (memo.go)
	memo *memoPlan

	// calls are the distinct feed method calls (feeds.btc.change(60s)), whose
	// values expressions read from Inputs.C<i>.
	calls []feedCall
	// varReads is what the vars read (every market evaluates every var); a
	// market's reads are these and those of its quotes and rules (deps.go).
	varReads reads
	// cross: some expression reads another market slot or the event's aggregates,
	// so an event of one market may evaluate others (deps.go).
	cross bool
}

type compiledInd struct {
	name   string
	fn     indFn
	token  market.Outcome
	series series
	input  int // serFeed, serSignal: the feed's or signal's index
	events int
	span   int64
	slot   int
}

// feedCall is a feed method call: indicator fn of feed's price over span ms.
type feedCall struct {
	feed int
	fn   indFn
	span int64
}

type compiledVar struct {
	name   string
	prog   *exprenv.Program
	isBool bool
	slot   int
	run    direct
}

// prog is a compiled expression; when the whole expression is the name of an
// indicator or var, slot is its slot (read directly, without the VM), else -1.
type prog struct {
	p    *exprenv.Program
	slot int
	run  direct
}

// direct is a program's evaluation without the evaluator, when it has one: a
// constant, or its unchecked fast path (exprenv.Program.Unchecked), called with the
// instance's boxed Env, the type the programs are compiled against. It gives what
// the evaluator gives, and cannot fail.
type direct struct {
	num     func(env any) float64
	boolean func(env any) bool
}

// directOf returns p's direct evaluation, or the zero direct.
func directOf(p *exprenv.Program) direct {
	if p == nil {
		return direct{}
	}
	if v, c := p.Constant(); c {
		switch v := v.(type) {
		case bool:
			return direct{boolean: func(any) bool { return v }}
		case float64:
			return direct{num: func(any) float64 { return v }}
		case int:
			x := float64(v)
			return direct{num: func(any) float64 { return x }}
		}
		return direct{}
	}
	n, b := p.Unchecked()
	return direct{num: n, boolean: b}
}

type compiledQuote struct {
	id       string
	slot     string
	token    market.Outcome
	side     market.Side
	typ      market.OrderType
	price    prog
	size     prog
	when     prog  // p nil: always
	ttl      int64 // ms, GTD only
	postOnly bool
}

type compiledTake struct {
	token market.Outcome
	side  market.Side
	typ   market.OrderType
	price prog
	size  prog
}

type compiledRule struct {
	id       string
	slot     string
	on       uint16
	when     prog
	action   ruleAction
	takes    []compiledTake
	cooldown int64 // ms
}

// Load reads and compiles the strategy file at path with its parameters' defaults.
// When the file has problems the error is a *CompileError listing every one of them
// with file:line:col; other errors are the file system's.
func Load(path string) (*Strategy, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("strategy: %w", err)
	}
	return Parse(path, src)
}

// Parse compiles a strategy file's content; file names it in error messages.
func Parse(file string, src []byte) (*Strategy, error) {
	sp, probs := parse(file, src)
	values := make(map[string]pval, len(sp.params))
	for _, ps := range sp.params {
		values[ps.name] = ps.def
	}
	s, cprobs := compileSpec(sp, values)
	probs.list = append(probs.list, cprobs.list...)
	if err := probs.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// compile compiles sp with the given parameter values (all present).
func compile(sp *spec, values map[string]pval) (*Strategy, error) {
	s, probs := compileSpec(sp, values)
	if err := probs.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// Name returns the strategy's name: its name: field, or the file name.
func (s *Strategy) Name() string {
	if s.spec.name != "" {
		return s.spec.name
	}
	return s.spec.file
}

// Description returns the description: field.
func (s *Strategy) Description() string { return s.spec.description }

// File returns the file name the strategy was loaded from.
func (s *Strategy) File() string { return s.spec.file }

// Markets returns the named market slots the file declares (markets:), which an
// agent must bind; nil when the strategy runs on any number of unnamed markets.
func (s *Strategy) Markets() []string { return append([]string(nil), s.spec.slots...) }

// Quotes returns the quote ids in file order.
func (s *Strategy) Quotes() []string {
	out := make([]string, len(s.quotes))
	for i, q := range s.quotes {
		out[i] = q.id
	}
	return out
}

// Rules returns the rule ids in file order.
func (s *Strategy) Rules() []string {
	out := make([]string, len(s.rules))
	for i, r := range s.rules {
		out[i] = r.id
	}
	return out
}

// builtinNames are names a param, indicator or var may not take.
func builtinNames() []string {
	out := append([]string{}, reservedNames...)
	out = append(out, topNames...)
	out = append(out, exprenv.Builtins...)
	out = append(out, exprenv.Helpers()...)
	return out
}

// compileSpec compiles every expression of sp against the environment with the given
// parameter values, collecting every problem.
func compileSpec(sp *spec, values map[string]pval) (*Strategy, *problems) {
	probs := newProblems(sp.file, sp.src)
	s := &Strategy{spec: sp, values: values}

	// one namespace for params, indicators and vars
	builtins := builtinNames()
	taken := map[string]string{} // name -> what defined it, with its line
	claim := func(name, what string, line, col int) bool {
		if slices.Contains(builtins, name) {
			probs.at(line, col, "%s %s: %s is a built-in name", what, name, name)
			return false
		}
		if prev, dup := taken[name]; dup {
			probs.at(line, col, "%s %s: the name is already used by %s", what, name, prev)
			return false
		}
		taken[name] = fmt.Sprintf("%s at line %d", what, line)
		return true
	}
	consts := map[string]any{}
	for _, ps := range sp.params {
		if claim(ps.name, "param", ps.key.Line, ps.key.Column) {
			consts[ps.name] = ps.constant(values[ps.name])
		}
	}
	aliases := map[string]string{}
	for _, n := range topNames {
		aliases[n] = "@a." + n
	}
	nf, nb := 0, 0
	type slotRef struct {
		slot   int
		isBool bool
	}
	slotOf := map[string]slotRef{}

	// slots for indicators
	for _, is := range sp.indicators {
		if !claim(is.name, "indicator", is.key.Line, is.key.Column) {
			continue
		}
		if nf == MaxNumberNames {
			probs.node(is.key, "indicator %s: more than %d indicators and number vars", is.name, MaxNumberNames)
			continue
		}
		ci := compiledInd{name: is.name, fn: is.fn, token: is.token, series: is.series, input: is.input, slot: nf}
		w, ok := s.resolveWindow(is, probs)
		if !ok {
			continue
		}
		if w.dur {
			ci.span = int64(w.num)
		} else {
			ci.events = int(w.num)
		}
		aliases[is.name] = fmt.Sprintf("@s.f%d", nf)
		slotOf[is.name] = slotRef{slot: nf}
		nf++
		s.indicators = append(s.indicators, ci)
	}

	newEnv := func() *exprenv.Env {
		// The typed reads never panic: every Env an Instance evaluates with is
		// m.boxed, whose pointers are set once in NewInstance and never nil.
		env, err := exprenv.New(exprenv.Config{Env: Env{}, Consts: consts, Aliases: aliases, TickField: "market.tick",
			Fields: fieldReader, FieldsNeverPanic: true, Durations: true, Namespaces: s.namespaces()})
		if err != nil { // names were checked above; this is a programmer error
			panic("strategy: " + err.Error())
		}
		return env
	}

	// vars, in order: each sees the params, indicators and earlier vars
	later := map[string]int{}
	for _, v := range sp.vars {
		if !v.broken {
			later[v.name] = v.key.Line
		}
	}
	for _, v := range sp.vars {
		delete(later, v.name)
		if v.broken || !claim(v.name, "var", v.key.Line, v.key.Column) {
			// The name is refused (reported); the expression's own problems are
			// listed all the same, and it defines nothing.
			if _, err := newEnv().Compile(v.expr.text, v.expr.at, exprenv.Any); err != nil {
				probs.add(err)
			}
			continue
		}
		prog, err := newEnv().Compile(v.expr.text, v.expr.at, exprenv.Any)
		if err != nil {
			if e, ok := err.(*exprenv.Error); ok {
				for name, line := range later {
					if strings.HasPrefix(e.Message, "unknown name "+name) {
						e.Message = fmt.Sprintf("var %s uses %s, which is defined later (line %d); vars are computed in order", v.name, name, line)
					}
				}
				if strings.HasPrefix(e.Message, "unknown name "+v.name) {
					e.Message = fmt.Sprintf("var %s refers to itself", v.name)
				}
			}
			probs.add(err)
			continue
		}
		if prog.Kind() == exprenv.Any {
			// e.g. a ternary of an int and a float: ask expr for a number, then a bool
			if p, err := newEnv().Compile(v.expr.text, v.expr.at, exprenv.Float); err == nil {
				prog = p
			} else if p, err := newEnv().Compile(v.expr.text, v.expr.at, exprenv.Bool); err == nil {
				prog = p
			}
		} else if prog.Kind() == exprenv.Int {
			// its slot holds a float64 anyway; as a Float program it may run on
			// the fast path (an int one never does)
			if p, err := newEnv().Compile(v.expr.text, v.expr.at, exprenv.Float); err == nil {
				prog = p
			}
		}
		cv := compiledVar{name: v.name, prog: prog, run: directOf(prog)}
		switch prog.Kind() {
		case exprenv.Bool:
			if nb == MaxBoolNames {
				probs.node(v.key, "var %s: more than %d bool vars", v.name, MaxBoolNames)
				continue
			}
			cv.isBool, cv.slot = true, nb
			aliases[v.name] = fmt.Sprintf("@s.b%d", nb)
			slotOf[v.name] = slotRef{slot: nb, isBool: true}
			nb++
		case exprenv.Float, exprenv.Int:
			if nf == MaxNumberNames {
				probs.node(v.key, "var %s: more than %d indicators and number vars", v.name, MaxNumberNames)
				continue
			}
			cv.slot = nf
			aliases[v.name] = fmt.Sprintf("@s.f%d", nf)
			slotOf[v.name] = slotRef{slot: nf}
			nf++
		default:
			probs.at(v.expr.at.Line, v.expr.at.Col, "var %s must be a number or a bool, not %s", v.name, prog.Kind())
			continue
		}
		s.vars = append(s.vars, cv)
	}

	env := newEnv()
	s.env = env
	comp := func(e exprSrc, kind exprenv.Kind) prog {
		if e.node == nil { // a broken block's field that is not an expression: reported by parse
			return prog{slot: -1}
		}
		p, err := env.Compile(e.text, e.at, kind)
		if err != nil {
			probs.add(err)
			return prog{slot: -1}
		}
		pr := prog{p: p, slot: -1, run: directOf(p)}
		if a := p.Alias(); a != "" {
			if i, ok := slotOf[a]; ok && i.isBool == (kind == exprenv.Bool) {
				pr.slot = i.slot
			}
		}
		return pr
	}
	slotOK := func(slot string, n *yaml.Node) bool {
		if slot == "" || slices.Contains(sp.slots, slot) {
			return true
		}
		if len(sp.slots) == 0 {
			probs.node(n, "market %q: the strategy declares no market slots (add markets: [%s])", slot, slot)
		} else {
			probs.node(n, "market %q is not a declared slot%s", slot, suggestion(slot, sp.slots, "slots"))
		}
		return false
	}

	for _, q := range sp.quotes {
		cq := compiledQuote{id: q.id, slot: q.slot, token: q.token, side: q.side, typ: q.typ}
		ok := q.slotNode == nil || slotOK(q.slot, q.slotNode)
		cq.price = comp(q.price, exprenv.Float)
		cq.size = comp(q.size, exprenv.Float)
		cq.when = prog{slot: -1}
		if q.when != nil {
			cq.when = comp(*q.when, exprenv.Bool)
			ok = ok && cq.when.p != nil
		}
		if q.ttl.set {
			w, good := s.resolveDuration(q.ttl, "quote "+q.id+" ttl", probs)
			ok = ok && good
			cq.ttl = int64(w)
		}
		if q.postOnly.set {
			b, good := s.resolveBool(q.postOnly, "quote "+q.id+" post_only", probs)
			ok = ok && good
			cq.postOnly = b
		}
		if ok && !q.broken && cq.price.p != nil && cq.size.p != nil {
			s.quotes = append(s.quotes, cq)
		}
	}
	for _, r := range sp.rules {
		cr := compiledRule{id: r.id, slot: r.slot, on: r.on, action: r.action}
		ok := r.slotNode == nil || slotOK(r.slot, r.slotNode)
		cr.when = comp(r.when, exprenv.Bool)
		ok = ok && cr.when.p != nil
		for _, t := range r.takes {
			ct := compiledTake{token: t.token, side: t.side, typ: t.typ, price: comp(t.price, exprenv.Float), size: comp(t.size, exprenv.Float)}
			ok = ok && ct.price.p != nil && ct.size.p != nil
			cr.takes = append(cr.takes, ct)
		}
		if r.cooldown.set {
			w, good := s.resolveDuration(r.cooldown, "rule "+r.id+" cooldown", probs)
			ok = ok && good
			cr.cooldown = int64(w)
		}
		if ok && !r.broken {
			s.rules = append(s.rules, cr)
		}
	}
	s.scanNeeds()
	return s, probs
}

// hasInputs reports whether the strategy reads feeds or signals (directly, by a
// method or through an indicator).
func (s *Strategy) hasInputs() bool {
	return len(s.spec.feeds) > 0 || len(s.spec.signals) > 0
}

// namespaces are the names expressions read beyond the current market: markets.NAME
// (the first MaxCrossSlots slots), feeds.NAME (and its methods), signals.NAME and
// the event's aggregates.
func (s *Strategy) namespaces() map[string]exprenv.Namespace {
	sp := s.spec
	mk, fd, sg, ev := map[string]string{}, map[string]string{}, map[string]string{}, map[string]string{}
	for i, n := range sp.slots {
		if i < MaxCrossSlots {
			mk[n] = fmt.Sprintf("@x.m%d", i)
		}
	}
	for i, n := range sp.feeds {
		fd[n] = fmt.Sprintf("@x.f%d", i)
	}
	for i, n := range sp.signals {
		sg[n] = fmt.Sprintf("@x.s%d", i)
	}
	for _, n := range aggNames {
		ev[n] = "@e." + n
	}
	return map[string]exprenv.Namespace{
		"markets": {Members: mk, What: "market slot", Declare: "markets: [NAME, …]"},
		"feeds":   {Members: fd, What: "feed", Declare: "feeds: [NAME, …], bound to a price in the agent file", Methods: s.feedMethod},
		"signals": {Members: sg, What: "signal", Declare: "signals: [NAME, …], bound to a source in the agent file"},
		"event":   {Members: ev, Open: true},
	}
}

// feedMethod resolves feeds.NAME.fn(window): any indicator function of the feed's
// price over a window of time (a duration; a bare number is milliseconds), read
// from a slot of Inputs that every evaluation fills (feedCall).
func (s *Strategy) feedMethod(target, name string, args []float64) (string, error) {
	feed, err := strconv.Atoi(strings.TrimPrefix(target, "@x.f"))
	if err != nil {
		return "", fmt.Errorf("%s is not a feed", target)
	}
	fn := indFns[name]
	if fn == 0 {
		return "", fmt.Errorf("feeds have no method %s%s", name, suggestion(name, indFnList(), "methods"))
	}
	if len(args) != 1 || args[0] != math.Trunc(args[0]) || args[0] < 1 || args[0] > exprenv.MaxDuration {
		return "", fmt.Errorf("%s(window) takes one window, a duration such as 60s", name)
	}
	c := feedCall{feed: feed, fn: fn, span: int64(args[0])}
	i := slices.Index(s.calls, c)
	if i < 0 {
		if len(s.calls) == MaxFeedCalls {
			return "", fmt.Errorf("more than %d distinct feed methods", MaxFeedCalls)
		}
		i = len(s.calls)
		s.calls = append(s.calls, c)
	}
	return fmt.Sprintf("@x.c%d", i), nil
}

// programs returns every compiled expression of the strategy: vars, quotes and
// rules (nil where one is absent, as a quote without when).
func (s *Strategy) programs() []*exprenv.Program {
	var progs []*exprenv.Program
	for _, v := range s.vars {
		progs = append(progs, v.prog)
	}
	for _, q := range s.quotes {
		progs = append(progs, q.price.p, q.size.p, q.when.p)
	}
	for _, r := range s.rules {
		progs = append(progs, r.when.p)
		for _, t := range r.takes {
			progs = append(progs, t.price.p, t.size.p)
		}
	}
	return progs
}

// scanNeeds records which costly parts of the environment any expression reads,
// and what each reads beyond its market (deps.go).
func (s *Strategy) scanNeeds() {
	progs := s.programs()
	for _, p := range progs {
		if p == nil {
			continue
		}
		for _, n := range p.Names() {
			switch {
			case tokenFieldRead(n, "bid_depth"), tokenFieldRead(n, "ask_depth"), tokenFieldRead(n, "imbalance"):
				s.needDepth = true
			case tokenFieldRead(n, "open_buy"), tokenFieldRead(n, "open_sell"):
				s.needOpen = true
			case n == "orders":
				s.needOrders = true
			case eventFieldRead(n):
				s.needEvent = true
			case marketFieldRead(n, "ends_in"):
				s.needEndsIn = true
			}
		}
	}
	s.reuse, s.needLast = reusable(progs, s.quotes) // needLast so far: some expression reads a last trade
	for _, p := range progs {
		if p == nil {
			continue
		}
		if _, c := p.Constant(); !c && !p.Fast() {
			s.needLast, s.needEvent, s.needEndsIn = true, true, true
		}
	}
	s.scanReads()
	s.planMemo()
}

// resolveWindow returns an indicator's window: events (num) or a duration (dur, ms).
func (s *Strategy) resolveWindow(is *indSpec, probs *problems) (ref, bool) {
	w := is.window
	if w.param == "" {
		return w, true
	}
	line, col := w.node.Line, w.col
	ps := s.spec.param(w.param)
	if ps == nil {
		probs.at(line, col, "indicator %s: window %s is neither a number of events, a duration nor a parameter%s", is.name, w.param, suggestion(w.param, paramNames(s.spec), "parameters"))
		return ref{}, false
	}
	v := s.values[w.param]
	switch ps.typ {
	case Duration:
		return ref{num: v.f, dur: true}, true
	case Number, Int:
		if v.f != math.Trunc(v.f) || v.f < 1 || v.f > maxEventWindow {
			probs.at(line, col, "indicator %s: window %s = %s must be a whole number of events from 1 to %d", is.name, w.param, ps.format(v), maxEventWindow)
			return ref{}, false
		}
		return ref{num: v.f}, true
	}
	probs.at(line, col, "indicator %s: window %s is a bool parameter", is.name, w.param)
	return ref{}, false
}

func (s *Strategy) resolveDuration(r ref, what string, probs *problems) (float64, bool) {
	if r.param == "" {
		return r.num, true
	}
	ps := s.spec.param(r.param)
	if ps == nil || ps.typ != Duration {
		probs.node(r.node, "%s: %s is not a duration parameter%s", what, r.param, suggestion(r.param, paramNames(s.spec), "parameters"))
		return 0, false
	}
	return s.values[r.param].f, true
}

func (s *Strategy) resolveBool(r ref, what string, probs *problems) (bool, bool) {
	if r.param == "" {
		return r.b, true
	}
	ps := s.spec.param(r.param)
	if ps == nil || ps.typ != Bool {
		probs.node(r.node, "%s: %s is not a bool parameter%s", what, r.param, suggestion(r.param, paramNames(s.spec), "parameters"))
		return false, false
	}
	return s.values[r.param].b, true
}

func paramNames(sp *spec) []string {
	out := make([]string, len(sp.params))
	for i, ps := range sp.params {
		out[i] = ps.name
	}
	return out
}

package agents

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
	"github.com/pitbossdev/pitboss/strategy"
)

// Limits of the inputs section (the strategy's own limits are strategy.MaxFeeds and
// strategy.MaxSignals; an agent may bind a few signals only its guards read).
const (
	MaxFeedBindings   = 8
	MaxSignalBindings = 16
	// MinSignalEvery is the shortest polling interval of a file or command signal.
	MinSignalEvery = 100 * time.Millisecond
	// MaxSignalCommandArgs bounds a command signal's argv.
	MaxSignalCommandArgs = 32
)

// FeedBinding binds a feed name of the strategy (`feeds: [btc]`) to a real-time
// price: `btc: crypto:btcusdt`, or `btc: {symbol: crypto:btcusdt, stale: 10s}`.
type FeedBinding struct {
	Name   string
	Symbol market.FeedSymbol
	// Stale is the age of a price (event time) at which feeds.NAME.price becomes
	// NaN. If zero, never.
	Stale     time.Duration
	Line, Col int
}

// Feeds are feed bindings in file order.
type Feeds []FeedBinding

// SignalKind is where a signal's values come from.
type SignalKind string

// Signal kinds (`source:` of a signal).
const (
	SignalNATS    SignalKind = "nats"    // published on natsbus.SignalSubject(agent, name) (fleets)
	SignalHTTP    SignalKind = "http"    // POSTed to the agent's signal endpoint (signal_http)
	SignalFile    SignalKind = "file"    // a number read from a file every `every`
	SignalCommand SignalKind = "command" // a number a command prints, run every `every`
)

// SignalBinding declares one outside signal: a named number, where it comes from,
// and how old it may get before expressions see NaN.
//
//	signals:
//	  model: {source: http, stale: 30s}
//	  score: {source: file, path: score.txt, every: 5s, stale: 1m}
//	  odds:  {source: command, command: [./odds.sh, --now], every: 30s, stale: 2m}
//	  view:  {source: nats, stale: 1m}
type SignalBinding struct {
	Name   string
	Source SignalKind
	// Path is the file of a file signal (resolved against the agent file's
	// directory). File signals only.
	Path string
	// Command is the argv of a command signal (the first element resolved against
	// the agent file's directory when it holds a '/'). Command signals only.
	Command []string
	// Every is the polling interval of a file or command signal. If zero, 10s.
	Every time.Duration
	// Stale is the age (event time) at which signals.NAME becomes NaN. Required:
	// an outside number nobody refreshes must not steer orders forever.
	Stale time.Duration
	// Required makes the guard signal_stale deny every new order while the
	// signal is missing or stale (cancels still go through). If false, a stale
	// signal is only NaN to expressions.
	Required  bool
	Line, Col int
}

// Signals are signal bindings in file order.
type Signals []SignalBinding

// SignalEndpoint is the agent's HTTP endpoint for `source: http` signals
// (`signal_http:`). It listens on a loopback address only and every request must
// carry the token as `Authorization: Bearer TOKEN`.
type SignalEndpoint struct {
	// Addr is the loopback address to listen on. If empty, 127.0.0.1:0 (a port
	// the system picks; the agent logs the URL).
	Addr string `yaml:"addr"`
	// Token names the environment variable holding the bearer token (env:VAR):
	// never the token. Required when a signal's source is http.
	Token WalletRef `yaml:"token"`
}

// DefaultSignalEvery is the polling interval of file and command signals.
const DefaultSignalEvery = 10 * time.Second

func (fs *Feeds) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: must be a mapping of feed names to symbols (btc: crypto:btcusdt)", path)
		return
	}
	var out Feeds
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if !d.inputName(k, path, "feed", seen) {
			continue
		}
		if len(out) == MaxFeedBindings {
			d.errorf(k, "%s: at most %d feeds", path, MaxFeedBindings)
			break
		}
		p := join(path, k.Value)
		d.nodes[p] = v
		b := FeedBinding{Name: k.Value, Line: v.Line, Col: v.Column}
		symNode := v
		switch v.Kind {
		case yaml.ScalarNode:
		case yaml.MappingNode:
			var raw struct {
				Symbol string        `yaml:"symbol"`
				Stale  time.Duration `yaml:"stale"`
			}
			d.decodeStruct(v, reflectValue(&raw), p)
			if sn, ok := d.nodes[join(p, "symbol")]; ok {
				symNode = sn
			} else {
				d.errorf(v, "feed %s: symbol is required (e.g. crypto:btcusdt)", k.Value)
				continue
			}
			if raw.Stale < 0 {
				d.errorf(d.at(join(p, "stale")), "feed %s: stale must not be negative", k.Value)
			}
			b.Stale = raw.Stale
		default:
			d.errorf(v, "feed %s: must be a symbol (crypto:btcusdt) or {symbol, stale}", k.Value)
			continue
		}
		if symNode.Kind != yaml.ScalarNode || isNull(symNode) {
			d.errorf(symNode, "feed %s: the symbol must be a string like crypto:btcusdt", k.Value)
			continue
		}
		sym, err := market.ParseFeedSymbol(symNode.Value)
		if err != nil {
			d.errorf(symNode, "feed %s: %s: %v", k.Value, show(symNode.Value), err)
			continue
		}
		b.Symbol = sym
		out = append(out, b)
	}
	*fs = out
}

func (ss *Signals) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: must be a mapping of signal names to {source, stale, ...}", path)
		return
	}
	var out Signals
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if !d.inputName(k, path, "signal", seen) {
			continue
		}
		if len(out) == MaxSignalBindings {
			d.errorf(k, "%s: at most %d signals", path, MaxSignalBindings)
			break
		}
		p := join(path, k.Value)
		d.nodes[p] = v
		if v.Kind != yaml.MappingNode {
			d.errorf(v, "signal %s: must be a mapping {source: nats|http|file|command, stale: DURATION, ...}", k.Value)
			continue
		}
		var raw struct {
			Source   string        `yaml:"source"`
			Path     string        `yaml:"path"`
			Command  []string      `yaml:"command"`
			Every    time.Duration `yaml:"every"`
			Stale    time.Duration `yaml:"stale"`
			Required bool          `yaml:"required"`
		}
		nprobs := len(d.probs)
		d.decodeStruct(v, reflectValue(&raw), p)
		if len(d.probs) > nprobs {
			continue
		}
		b := SignalBinding{Name: k.Value, Source: SignalKind(raw.Source), Path: raw.Path, Command: raw.Command,
			Every: raw.Every, Stale: raw.Stale, Required: raw.Required, Line: v.Line, Col: v.Column}
		bad := func(field, format string, args ...any) {
			d.errorf(d.at(join(p, field)), "signal %s: "+format, append([]any{k.Value}, args...)...)
		}
		switch b.Source {
		case SignalNATS, SignalHTTP:
			if b.Path != "" || len(b.Command) > 0 || b.Every != 0 {
				bad("source", "path, command and every are for file and command signals")
			}
		case SignalFile:
			if strings.TrimSpace(b.Path) == "" || strings.ContainsRune(b.Path, 0) {
				bad("path", "a file signal needs path: FILE")
			}
			if len(b.Command) > 0 {
				bad("command", "command is for command signals")
			}
		case SignalCommand:
			if len(b.Command) == 0 || b.Command[0] == "" {
				bad("command", "a command signal needs command: [PROGRAM, ARG...]")
			} else if len(b.Command) > MaxSignalCommandArgs {
				bad("command", "at most %d arguments", MaxSignalCommandArgs)
			}
			if b.Path != "" {
				bad("path", "path is for file signals")
			}
		case "":
			bad("", "source is required: nats, http, file or command")
		default:
			bad("source", "%s is not a source; use nats, http, file or command", show(raw.Source))
		}
		if b.Source == SignalFile || b.Source == SignalCommand {
			switch {
			case b.Every == 0:
				b.Every = DefaultSignalEvery
			case b.Every < MinSignalEvery:
				bad("every", "every must be at least %s", MinSignalEvery)
			}
		}
		if b.Stale <= 0 {
			bad("stale", "stale is required and positive: the age after which expressions see NaN (e.g. 30s)")
		}
		out = append(out, b)
	}
	*ss = out
}

// inputName checks a feed's or signal's name: an identifier, once.
func (d *decoder) inputName(k *yaml.Node, path, what string, seen map[string]int) bool {
	if k.Kind != yaml.ScalarNode || !paramName.MatchString(k.Value) || len(k.Value) > 64 {
		d.errorf(k, "%s: %s names are identifiers of at most 64 letters, digits and '_'", path, what)
		return false
	}
	if line, dup := seen[k.Value]; dup {
		d.errorf(k, "%s %s is bound twice (first at line %d)", what, k.Value, line)
		return false
	}
	seen[k.Value] = k.Line
	return true
}

func (e *SignalEndpoint) decodeYAML(d *decoder, n *yaml.Node, path string) {
	d.decodeStruct(n, reflectValue(e), path)
	if e.Token.Scheme != "" && e.Token.Scheme != WalletEnv {
		d.errorf(d.at(join(path, "token")), "%s.token: use env:VAR (the variable holding the token)", path)
	}
}

// inputs positions the inputs sections, resolves the file and command signals'
// paths against dir and checks the signal endpoint.
func (o Options) inputs(d *decoder, s *Spec, dir string) {
	for _, key := range []string{"feeds", "signals"} {
		if n, ok := d.nodes[key]; ok && s.inputsLine == 0 {
			s.inputsLine, s.inputsCol = n.Line, n.Column
		}
	}
	for i := range s.Signals {
		b := &s.Signals[i]
		if b.Source == SignalFile && b.Path != "" && !filepath.IsAbs(b.Path) {
			b.Path = filepath.Join(dir, b.Path)
		}
		if b.Source == SignalCommand && len(b.Command) > 0 && strings.ContainsRune(b.Command[0], '/') && !filepath.IsAbs(b.Command[0]) {
			b.Command[0] = filepath.Join(dir, b.Command[0])
		}
	}
	_, set := d.nodes["signal_http"]
	e := &s.SignalHTTP
	switch {
	case s.Signals.Has(SignalHTTP) && e.Token.Scheme == "":
		n := d.at("signal_http")
		if !set {
			n = d.at("signals")
		}
		d.errorf(n, "signal_http.token is required for http signals (env:VAR: the variable holding the bearer token)")
	case set && !s.Signals.Has(SignalHTTP):
		d.errorf(d.at("signal_http"), "signal_http: no signal has source: http")
	}
	if e.Addr != "" {
		host, _, err := net.SplitHostPort(e.Addr)
		ip := net.ParseIP(host)
		if err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			d.errorf(d.at("signal_http.addr"), "signal_http.addr: %s: must be a loopback HOST:PORT (127.0.0.1:9470); the endpoint is not for other machines", show(e.Addr))
		}
	}
}

// Has reports whether a signal of this source is declared.
func (ss Signals) Has(kind SignalKind) bool {
	return slices.ContainsFunc(ss, func(b SignalBinding) bool { return b.Source == kind })
}

// Sources returns the bindings as the strategy takes them (strategy.Sources): each
// feed by its symbol's name, each signal by its own name, staleness in ms.
func (s *Spec) Sources() strategy.Sources {
	var src strategy.Sources
	for _, f := range s.Feeds {
		src.Feeds = append(src.Feeds, strategy.FeedBinding{Name: f.Name, Symbol: f.Symbol.String(), Stale: f.Stale.Milliseconds()})
	}
	for _, g := range s.Signals {
		src.Signals = append(src.Signals, strategy.SignalBinding{Name: g.Name, Stale: g.Stale.Milliseconds()})
	}
	return src
}

// FeedSymbols returns the symbols the agent binds, each once, in file order.
func (s *Spec) FeedSymbols() []market.FeedSymbol {
	var out []market.FeedSymbol
	for _, f := range s.Feeds {
		if !slices.Contains(out, f.Symbol) {
			out = append(out, f.Symbol)
		}
	}
	return out
}

// checkInputs: every feed and signal the strategy declares is bound; a feed bound
// here that the strategy does not declare is a mistake (a signal may be bound for
// the guards alone).
func (s *Spec) checkInputs(st *strategy.Strategy) []*strategy.Problem {
	var out []*strategy.Problem
	bad := func(line, col int, format string, args ...any) {
		out = append(out, &exprenv.Error{File: s.File, Line: line, Col: col, Message: fmt.Sprintf(format, args...)})
	}
	line, col := s.inputsLine, s.inputsCol
	if line == 0 {
		line, col = 1, 1
	}
	feeds := st.Feeds()
	for _, name := range feeds {
		if !slices.ContainsFunc(s.Feeds, func(b FeedBinding) bool { return b.Name == name }) {
			bad(line, col, "feed %s of strategy %s is not bound: add feeds: {%s: SOURCE:SYMBOL} (e.g. crypto:btcusdt)", name, st.Name(), name)
		}
	}
	for _, b := range s.Feeds {
		if !slices.Contains(feeds, b.Name) {
			msg := fmt.Sprintf("strategy %s declares no feed %s", st.Name(), b.Name)
			if sug := exprenv.Suggest(b.Name, feeds); sug != "" {
				msg += " (did you mean " + sug + "?)"
			}
			bad(b.Line, b.Col, "%s", msg)
		}
	}
	for _, name := range st.Signals() {
		if !slices.ContainsFunc(s.Signals, func(b SignalBinding) bool { return b.Name == name }) {
			bad(line, col, "signal %s of strategy %s is not bound: add signals: {%s: {source: ..., stale: ...}}", name, st.Name(), name)
		}
	}
	return out
}

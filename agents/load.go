package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// MaxFileSize bounds an agent file; anything larger is refused unread.
const MaxFileSize = 1 << 20

// Options are the outside world a load may consult, injected for tests. The zero
// value uses the process's environment and file system.
type Options struct {
	// Getenv reads XDG_STATE_HOME and HOME for the default state directory.
	// If nil, os.Getenv.
	Getenv func(string) string
	// Stat checks that the strategy file exists. If nil, os.Stat.
	Stat func(string) (fs.FileInfo, error)
}

// Load reads, defaults and validates the agent file at path with the zero Options.
func Load(path string) (*Spec, error) { return Options{}.Load(path) }

// Load reads, defaults and validates the agent file at path. A file that cannot be
// read gives an ordinary error; a file with problems gives Problems (every problem,
// in file order) and, when the YAML could be parsed, the partial Spec, which is good
// only for reporting (e.g. to find the strategy file it names).
func (o Options) Load(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	if len(src) > MaxFileSize {
		return nil, Problems{{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}}
	}
	return o.Parse(path, src)
}

// Parse is Load for content already read; path names the file in problems and is
// the base for relative paths.
func (o Options) Parse(path string, src []byte) (*Spec, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Stat == nil {
		o.Stat = os.Stat
	}
	d := &decoder{file: path, src: src, nodes: map[string]*yaml.Node{}}
	root, ok := d.parse(src)
	if !ok {
		return nil, d.probs.sorted()
	}
	spec := &Spec{File: path}
	d.scanSecrets(root, "")
	d.decode(root, reflect.ValueOf(spec).Elem(), "")
	d.nodes[""] = root
	o.finish(d, spec)
	if len(d.probs) > 0 {
		return spec, d.probs.sorted()
	}
	return spec, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parse reads exactly one YAML document whose root is a mapping.
func (d *decoder) parse(src []byte) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.probs = append(d.probs, Problem{File: d.file, Line: 1, Col: 1, Msg: "the file is empty"})
			return nil, false
		}
		p := Problem{File: d.file, Line: 1, Col: 1, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Msg = m[2]
		}
		d.probs = append(d.probs, p)
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errorf(&extra, "only one YAML document is allowed in an agent file")
	}
	if len(doc.Content) == 0 {
		d.probs = append(d.probs, Problem{File: d.file, Line: 1, Col: 1, Msg: "the file is empty"})
		return nil, false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "an agent file is a mapping of settings (name:, wallet:, …), not a %s", kindName(root))
		return nil, false
	}
	return root, true
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

// finish applies defaults and checks everything decoding cannot.
func (o Options) finish(d *decoder, s *Spec) {
	dir := filepath.Dir(s.File)
	root := d.nodes[""]
	missing := func(field string) {
		d.errorf(root, "%s is required", field)
	}

	switch s.Version {
	case 0:
		s.Version = 1
	case 1:
	default:
		d.errorf(d.at("version"), "version: %d is not supported (the only version is 1)", s.Version)
	}

	if _, set := d.nodes["name"]; !set {
		missing("name")
	} else if !market.ValidAgentID(s.Name) {
		d.errorf(d.at("name"), "name: %s: use 1 to 64 of A-Z a-z 0-9 _ -, starting with a letter or a digit", show(s.Name))
	}
	if _, set := d.nodes["id"]; set && !market.ValidAgentID(s.ID) {
		d.errorf(d.at("id"), "id: %s: use 1 to 64 of A-Z a-z 0-9 _ -, starting with a letter or a digit", show(s.ID))
		s.ID = ""
	}

	if _, set := d.nodes["wallet"]; !set {
		missing("wallet (" + walletForms + ")")
	} else if s.Wallet.Scheme == WalletKeystore && !filepath.IsAbs(s.Wallet.Value) {
		s.Wallet.Value = filepath.Join(dir, s.Wallet.Value)
	}

	o.venue(d, &s.Venue)
	o.markets(d, &s.Markets)

	if _, set := d.nodes["strategy"]; !set || s.Strategy.File == "" {
		if !set {
			missing("strategy")
		} else {
			d.errorf(d.at("strategy"), "strategy.file is required")
		}
	} else {
		if !filepath.IsAbs(s.Strategy.File) {
			s.Strategy.File = filepath.Join(dir, s.Strategy.File)
		}
		if _, err := o.Stat(s.Strategy.File); err != nil {
			d.errorf(d.at("strategy.file"), "strategy file %s: %v", s.Strategy.File, errors.Unwrap(err))
		}
	}

	o.guards(d, &s.Guards)
	o.inputs(d, s, dir)

	switch {
	case s.Heartbeat == 0:
		s.Heartbeat = DefaultHeartbeat
	case s.Heartbeat < MinHeartbeat || s.Heartbeat > MaxHeartbeat:
		d.errorf(d.at("heartbeat"), "heartbeat: %s is outside %s to %s", s.Heartbeat, MinHeartbeat, MaxHeartbeat)
	}

	switch {
	case s.StateDir == "":
		base := o.Getenv("XDG_STATE_HOME")
		if base == "" {
			if home := o.Getenv("HOME"); home != "" {
				base = filepath.Join(home, ".local", "state")
			}
		}
		if base == "" || !filepath.IsAbs(base) {
			base = filepath.Join(dir, ".state")
		}
		if s.Name != "" {
			s.StateDir = filepath.Join(base, "pitboss", "agents", s.stateDirName())
		}
	case !filepath.IsAbs(s.StateDir):
		s.StateDir = filepath.Join(dir, s.StateDir)
	}

	switch s.LogLevel {
	case "":
		s.LogLevel = LogInfo
	case LogDebug, LogInfo, LogWarn, LogError:
	default:
		d.errorf(d.at("log_level"), "log_level: %s is not a level; use debug, info, warn or error", show(string(s.LogLevel)))
	}
}

var headerPrefix = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,31}_$`)

func (o Options) venue(d *decoder, v *Venue) {
	urls := []struct {
		name string
		val  string
	}{{"clob", v.CLOB}, {"catalogue", v.Catalogue}, {"data", v.Data}, {"bridge", v.Bridge}}
	if v.Kind == VenueEmbedded {
		for _, u := range urls {
			if u.val != "" {
				d.errorf(d.at("venue."+u.name), "venue.%s: only a remote venue has URLs (set kind: remote)", u.name)
			}
		}
		if v.HeaderPrefix != "" {
			d.errorf(d.at("venue.header_prefix"), "venue.header_prefix: only a remote venue has a header prefix")
		}
		return
	}
	for _, u := range urls {
		if u.val == "" {
			d.errorf(d.at("venue"), "venue.%s: the base URL of the %s service is required for a remote venue", u.name, u.name)
			continue
		}
		if msg := checkURL(u.val); msg != "" {
			d.errorf(d.at("venue."+u.name), "venue.%s: %s", u.name, msg)
		}
	}
	if v.HeaderPrefix == "" {
		v.HeaderPrefix = DefaultHeaderPrefix
	} else if !headerPrefix.MatchString(v.HeaderPrefix) {
		d.errorf(d.at("venue.header_prefix"), "venue.header_prefix: %s must be upper-case letters, digits and '_', ending in '_' (like SERVICE_ or POLY_)", show(v.HeaderPrefix))
	}
}

// checkURL accepts https URLs, and http ones only on a loopback address (a local
// `pitboss exchange`). Credentials in URLs are refused: they would leak into logs.
func checkURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return show(s) + " is not an absolute URL"
	}
	if u.User != nil {
		return "credentials do not belong in a URL (they would end up in logs)"
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "a base URL has no query or fragment"
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return ""
		}
		return "plain http is only allowed on a loopback address; use https"
	}
	return "the scheme must be https (or http on a loopback address)"
}

func (o Options) markets(d *decoder, m *Markets) {
	if _, set := d.nodes["markets"]; !set {
		d.errorf(d.nodes[""], "markets is required (a list of token ids, conditions:, slots: or select:)")
		return
	}
	var given []string
	for _, f := range []string{"tokens", "conditions", "slots", "select"} {
		if _, set := d.nodes["markets."+f]; set {
			given = append(given, f)
		}
	}
	switch {
	case len(given) == 0:
		d.errorf(d.at("markets"), "markets: give one of tokens, conditions, slots or select")
		return
	case len(given) > 1:
		d.errorf(d.at("markets."+given[1]), "markets: give only one of tokens, conditions, slots or select (found %s)", strings.Join(given, " and "))
		return
	}
	if given[0] != "select" && m.Limit != 0 {
		d.errorf(d.at("markets.limit"), "markets.limit applies to select only")
	}
	switch given[0] {
	case "tokens":
		ids := make([]string, len(m.Tokens))
		for i, t := range m.Tokens {
			ids[i] = string(t)
		}
		o.ids(d, "markets.tokens", ids, tokenID, "a token id (a decimal number)")
	case "conditions":
		ids := make([]string, len(m.Conditions))
		for i, c := range m.Conditions {
			ids[i] = string(c)
		}
		o.ids(d, "markets.conditions", ids, conditionID, "a condition id (0x and 64 hex digits)")
	case "slots":
		if n := d.at("markets.slots"); n.Kind == yaml.MappingNode && len(n.Content) == 0 {
			d.errorf(n, "markets.slots: bind at least one slot")
		}
	case "select":
		n := d.at("markets.select")
		text, origin := exprenv.OriginOf(d.file, n, d.src)
		sel, err := CompileSelector(text, origin)
		if err != nil {
			d.exprError(n, err)
		}
		m.Selector = sel
		switch {
		case m.Limit == 0:
			m.Limit = DefaultSelectLimit
		case m.Limit < 0 || m.Limit > MaxSelectLimit:
			d.errorf(d.at("markets.limit"), "markets.limit: must be between 1 and %d", MaxSelectLimit)
		}
	}
}

// ids checks a list of identifiers: not empty, well-formed, no repeats.
func (o Options) ids(d *decoder, path string, ids []string, re *regexp.Regexp, what string) {
	if len(ids) == 0 {
		d.errorf(d.at(path), "%s: list at least one id", path)
	}
	seen := map[string]bool{}
	for i, id := range ids {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case !re.MatchString(id):
			d.errorf(d.at(p), "%s: %s is not %s", p, show(id), what)
		case seen[id]:
			d.errorf(d.at(p), "%s: %s is listed twice", p, show(id))
		}
		seen[id] = true
	}
}

// guards maps policies' own validation onto the file, and compiles every deny_if
// with its position in the file.
func (o Options) guards(d *decoder, g *policies.Config) {
	for _, p := range g.Problems() {
		if p.Expr {
			continue // compiled below with file positions
		}
		d.errorf(d.at("guards."+p.Field), "guards.%s: %s", p.Field, p.Msg)
	}
	for i, c := range g.Custom {
		if c.DenyIf == "" {
			continue
		}
		n := d.at(fmt.Sprintf("guards.custom[%d].deny_if", i))
		text, origin := exprenv.OriginOf(d.file, n, d.src)
		if _, err := policies.CompileDenyIf(text, origin); err != nil {
			d.exprError(n, err)
		}
	}
}

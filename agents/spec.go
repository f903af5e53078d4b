package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/alert"
)

// Spec is one agent file, loaded, defaulted and validated (see Load). Every field
// documents its default; docs/agents.md is the user's reference.
//
// A Spec is a plain value owned by the caller. Paths in it (Strategy.File,
// Wallet.Value for keystore references, StateDir) are resolved against the directory
// of the agent file, so they can be used as they are.
type Spec struct {
	// File is the path the spec was loaded from.
	File string `yaml:"-"`

	// Version of the file format. If zero, 1 (the only version).
	Version int `yaml:"version"`
	// Name identifies the agent (market.AgentID: 1–64 of A–Z a–z 0–9 _ -) in logs,
	// metrics, audit records and the fleet. Required.
	Name string `yaml:"name"`
	// ID is the identity of the agent's saved state, for a file that moves or is
	// generated (same rule as Name). If empty, the agent file's absolute path is
	// its identity: two files never share state because they share a name.
	ID string `yaml:"id"`
	// Description is free text for people. If empty, none.
	Description string `yaml:"description"`
	// Wallet names where the wallet's key lives; never the key. Required.
	Wallet WalletRef `yaml:"wallet"`
	// Venue is where orders go. If absent, the embedded exchange.
	Venue Venue `yaml:"venue"`
	// Execution is dry run unless the file says `dry_run: false` (and going live
	// also needs --live on the command line). If absent, dry run.
	Execution Execution `yaml:"dry_run"`
	// Markets are the markets the agent trades. Required.
	Markets Markets `yaml:"markets"`
	// Strategy is the strategy file and its parameter overrides. Required.
	Strategy StrategyRef `yaml:"strategy"`
	// Feeds bind the strategy's feeds (feeds: [btc]) to real-time prices
	// (btc: crypto:btcusdt). If absent, none; a strategy that declares a feed
	// needs it bound.
	Feeds Feeds `yaml:"feeds"`
	// Signals declare outside numbers the strategy (signals: [model]) and the
	// guards read, with their source and staleness limit. If absent, none.
	Signals Signals `yaml:"signals"`
	// SignalHTTP is the agent's endpoint for http signals. Required (its token)
	// when a signal's source is http; otherwise not allowed.
	SignalHTTP SignalEndpoint `yaml:"signal_http"`
	// Guards configure the policy chain. If absent, the conservative defaults of
	// policies.Config.
	Guards policies.Config `yaml:"guards"`
	// Heartbeat is how often the agent tells the venue it is alive (the venue
	// cancels the orders of a silent client). If zero, DefaultHeartbeat (5s).
	Heartbeat time.Duration `yaml:"heartbeat"`
	// StateDir is where the agent keeps its state (kill switch, positions, paper
	// account, open orders). If empty, $XDG_STATE_HOME/pitboss/agents/<dir>
	// (~/.local/state/pitboss/agents/<dir>) where <dir> is the ID, or, without
	// one, <name>-<8 hex digits of the SHA-256 of the file's absolute path>.
	StateDir string `yaml:"state_dir"`
	// LogLevel is debug, info, warn or error. If empty, info.
	LogLevel LogLevel `yaml:"log_level"`
	// Alerts are the webhooks a standalone `pitboss run` tells of its kill switch,
	// failure, stale feed, daily loss and fills (runtime/alert; docs/alerts.md).
	// A supervised agent ignores them: its fleet file's alerts apply. If absent,
	// none.
	Alerts Alerts `yaml:"alerts"`

	inputsLine, inputsCol int // where feeds: (else signals:) is written
}

// Alerts is an agent file's alerts: section, read by runtime/alert (its
// problems positioned in the agent file; URLs and tokens only as references).
type Alerts struct{ alert.Config }

func (a *Alerts) decodeYAML(d *decoder, n *yaml.Node, path string) {
	cfg, probs := alert.ParseYAML(n)
	for _, p := range probs {
		d.probs = append(d.probs, Problem{File: d.file, Line: p.Line, Col: p.Col, Msg: p.Msg})
	}
	a.Config = cfg
}

// DryRun reports whether orders stay in the process (the default).
func (s *Spec) DryRun() bool { return s.Execution != Live }

// Identity is who the agent's saved state belongs to: "id:<ID>" when the file
// sets an id, else "file:<the file's absolute path>". The agent writes it into its
// checkpoint and refuses a state directory of another identity.
func (s *Spec) Identity() string {
	if s.ID != "" {
		return "id:" + s.ID
	}
	return "file:" + absPath(s.File)
}

// stateDirName is the default state directory's name: the ID, else the name and a
// digest of the file's absolute path (readable, and distinct for two files that
// share a name).
func (s *Spec) stateDirName() string {
	if s.ID != "" {
		return s.ID
	}
	h := sha256.Sum256([]byte(absPath(s.File)))
	return s.Name + "-" + hex.EncodeToString(h[:4])
}

// absPath is path made absolute (as it is when it cannot be).
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// Defaults.
const (
	DefaultHeartbeat    = 5 * time.Second
	MinHeartbeat        = time.Second
	MaxHeartbeat        = time.Minute
	DefaultHeaderPrefix = "SERVICE_"
	DefaultSelectLimit  = 10
	MaxSelectLimit      = 1000
)

// Execution says whether orders leave the process. The zero value is DryRun.
type Execution uint8

// Executions.
const (
	DryRun Execution = iota // orders go to a paper venue inside the process
	Live                    // orders go to the venue (also needs --live)
)

// String returns "dry-run" or "live".
func (e Execution) String() string {
	if e == Live {
		return "live"
	}
	return "dry-run"
}

func (e *Execution) decodeYAML(d *decoder, n *yaml.Node, path string) {
	var b bool
	d.decode(n, reflectValue(&b), path)
	if n.Tag == "!!bool" && !b {
		*e = Live
	}
}

// LogLevel is a zap level name.
type LogLevel string

// Log levels.
const (
	LogDebug LogLevel = "debug"
	LogInfo  LogLevel = "info"
	LogWarn  LogLevel = "warn"
	LogError LogLevel = "error"
)

// WalletScheme says where a wallet's key is kept.
type WalletScheme string

// Wallet schemes.
const (
	WalletKeyring  WalletScheme = "keyring"  // the OS keyring (adapters/secrets), by name
	WalletFile     WalletScheme = "file"     // pitboss's encrypted file store (adapters/secrets), by name
	WalletKeystore WalletScheme = "keystore" // a go-ethereum keystore file, by path
	WalletEnv      WalletScheme = "env"      // an environment variable holding the key, by name
)

// walletForms lists the accepted forms, for messages.
const walletForms = "keyring:NAME, file:NAME, keystore:PATH or env:VAR"

// WalletRef is a reference to a wallet's key: "keyring:NAME", "file:NAME",
// "keystore:PATH" or "env:VAR". It is never the key. Each scheme names one store:
// a keyring reference is looked up in the OS keyring only and a file reference in
// the encrypted file store only (no fallback from one to the other). The zero value
// is "no wallet" (invalid in a file).
type WalletRef struct {
	Scheme WalletScheme
	// Value is the keyring or file-store entry name, the keystore path (resolved
	// against the agent file's directory) or the environment variable's name.
	Value string
}

// String returns the reference as written ("keyring:mm-1"); it contains no secret.
func (w WalletRef) String() string {
	if w.Scheme == "" {
		return ""
	}
	return string(w.Scheme) + ":" + w.Value
}

var (
	// itemName is the rule adapters/secrets applies to keyring and file-store
	// names (secrets.ParseRef): a name check accepts is one the stores can hold.
	itemName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// ParseWalletRef parses a wallet reference. Its errors never contain s: a value that
// looks like a private key or a recovery phrase is refused as such.
func ParseWalletRef(s string) (WalletRef, error) {
	if kind := secretKind(s); kind != "" {
		return WalletRef{}, walletError("this looks like " + kind + ": never put a key in an agent file; store it with `pitboss wallet` and write " + walletForms)
	}
	scheme, value, ok := strings.Cut(s, ":")
	if !ok {
		return WalletRef{}, walletError("must be " + walletForms)
	}
	if kind := secretKind(value); kind != "" {
		return WalletRef{}, walletError("this looks like " + kind + " after the scheme: a reference names where the key is kept, it is not the key")
	}
	w := WalletRef{Scheme: WalletScheme(scheme), Value: value}
	switch w.Scheme {
	case WalletKeyring, WalletFile:
		if !itemName.MatchString(value) {
			return WalletRef{}, walletError(scheme + ":NAME needs a name of 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
		}
	case WalletKeystore:
		if strings.TrimSpace(value) == "" || strings.ContainsRune(value, 0) {
			return WalletRef{}, walletError("keystore:PATH needs the path of a keystore file")
		}
	case WalletEnv:
		if !envName.MatchString(value) {
			return WalletRef{}, walletError("env:VAR needs the name of an environment variable (letters, digits, '_')")
		}
	default:
		return WalletRef{}, walletError("unknown scheme; must be " + walletForms)
	}
	return w, nil
}

type walletError string

func (e walletError) Error() string { return string(e) }

func (w *WalletRef) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s: must be "+walletForms, path)
		return
	}
	ref, err := ParseWalletRef(n.Value)
	if err != nil {
		d.errorf(n, "%s: %v", path, err) // never n.Value
		return
	}
	*w = ref
}

// VenueKind says which venue the agent trades on. The zero value is VenueEmbedded.
type VenueKind uint8

// Venue kinds.
const (
	VenueEmbedded VenueKind = iota // the in-process exchange core
	VenueRemote                    // the service (or a `pitboss exchange`) over HTTPS
)

// String returns "embedded" or "remote".
func (k VenueKind) String() string {
	if k == VenueRemote {
		return "remote"
	}
	return "embedded"
}

func (k *VenueKind) decodeYAML(d *decoder, n *yaml.Node, path string) {
	s, ok := d.scalar(n, path)
	if !ok {
		return
	}
	switch s {
	case "embedded":
		*k = VenueEmbedded
	case "remote":
		*k = VenueRemote
	default:
		d.errorf(n, "%s: %s is not a venue; use embedded or remote", path, show(s))
	}
}

// Venue is where orders go: `venue: embedded` (the default), or a mapping with
// `kind: remote` and the four base URLs of the service.
type Venue struct {
	// Kind is embedded or remote. If absent, embedded.
	Kind VenueKind `yaml:"kind"`
	// CLOB, Catalogue, Data and Bridge are the base URLs of the four services
	// (https, or http on a loopback address). Required for remote; not allowed for
	// embedded.
	CLOB      string `yaml:"clob"`
	Catalogue string `yaml:"catalogue"`
	Data      string `yaml:"data"`
	Bridge    string `yaml:"bridge"`
	// HeaderPrefix is the prefix of the service's own headers (SERVICE_API_KEY…).
	// If empty, DefaultHeaderPrefix ("SERVICE_"). Remote only.
	HeaderPrefix string `yaml:"header_prefix"`
}

func (v *Venue) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		v.Kind.decodeYAML(d, n, path)
		return
	}
	d.decodeStruct(n, reflectValue(v), path)
}

// Markets says which markets the agent trades, in exactly one of four ways: token
// ids, condition ids, named slots (for strategies that declare `markets: [a, b]`),
// or a selector expression over the venue's catalogue. `markets: [id, …]` is short
// for `markets: {tokens: [id, …]}`.
type Markets struct {
	// Tokens are outcome token ids (decimal strings); the agent trades their markets.
	Tokens []market.TokenID `yaml:"tokens"`
	// Conditions are condition ids ("0x" + 64 hex digits).
	Conditions []market.ConditionID `yaml:"conditions"`
	// Slots bind each market slot of the strategy to a token or condition id.
	Slots Slots `yaml:"slots"`
	// Select is an expression over MarketEnv choosing markets from the catalogue,
	// e.g. `accepting_orders && !neg_risk && tick == 0.01`.
	Select string `yaml:"select"`
	// Limit caps how many selected markets the agent trades (the first ones in the
	// catalogue's order). If zero, DefaultSelectLimit (10). Select only.
	Limit int `yaml:"limit"`

	// Selector is Select, compiled by Load (nil unless Select is set).
	Selector *Selector `yaml:"-"`

	line, col int // where the markets section is written
}

func (m *Markets) decodeYAML(d *decoder, n *yaml.Node, path string) {
	m.line, m.col = n.Line, n.Column
	if n.Kind == yaml.SequenceNode {
		d.decode(n, reflectValue(&m.Tokens), join(path, "tokens"))
		return
	}
	d.decodeStruct(n, reflectValue(m), path)
}

// Slot binds one named market slot of the strategy to a market, given by one of its
// token ids or by its condition id.
type Slot struct {
	Name      string
	Token     market.TokenID     // set when the slot names a token
	Condition market.ConditionID // set when the slot names a condition
	Line, Col int                // where the slot is written
}

// Slots are slot bindings in file order.
type Slots []Slot

func (ss *Slots) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: must be a mapping of slot names to token or condition ids", path)
		return
	}
	var out Slots
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if k.Kind != yaml.ScalarNode || !paramName.MatchString(k.Value) {
			d.errorf(k, "%s: slot names are identifiers (letters, digits, '_')", path)
			continue
		}
		if line, dup := seen[k.Value]; dup {
			d.errorf(k, "slot %s is bound twice (first at line %d)", k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		d.nodes[join(path, k.Value)] = v
		sl := Slot{Name: k.Value, Line: v.Line, Col: v.Column}
		switch {
		case v.Kind != yaml.ScalarNode || isNull(v):
			d.errorf(v, "slot %s: must be a token id or a condition id", k.Value)
			continue
		case tokenID.MatchString(v.Value):
			sl.Token = market.TokenID(v.Value)
		case conditionID.MatchString(v.Value):
			sl.Condition = market.ConditionID(v.Value)
		default:
			d.errorf(v, "slot %s: %s is neither a token id (decimal) nor a condition id (0x and 64 hex digits)", k.Value, show(v.Value))
			continue
		}
		out = append(out, sl)
	}
	*ss = out
}

var (
	tokenID     = regexp.MustCompile(`^[0-9]{1,78}$`)
	conditionID = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
)

// StrategyRef names the strategy file and overrides some of its parameters.
// `strategy: FILE` is short for `strategy: {file: FILE}`.
type StrategyRef struct {
	// File is the strategy file, relative to the agent file's directory. Required.
	File string `yaml:"file"`
	// Params override the strategy's parameters by name, in file order. If empty,
	// the strategy's own values.
	Params Params `yaml:"params"`
}

// Param is one parameter override: the raw scalar text of its value, to be parsed
// by the strategy with the parameter's type, and where it was written.
type Param struct {
	Name      string
	Value     string
	Line, Col int
}

func (r *StrategyRef) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		d.decode(n, reflectValue(&r.File), join(path, "file"))
		return
	}
	d.decodeStruct(n, reflectValue(r), path)
}

// Params are parameter overrides in file order.
type Params []Param

// Map returns the overrides by name.
func (ps Params) Map() map[string]string {
	out := make(map[string]string, len(ps))
	for _, p := range ps {
		out[p.Name] = p.Value
	}
	return out
}

func (ps *Params) decodeYAML(d *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: must be a mapping of parameter names to values", path)
		return
	}
	var out Params
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if k.Kind != yaml.ScalarNode || !paramName.MatchString(k.Value) {
			d.errorf(k, "%s: parameter names are identifiers (letters, digits, '_')", path)
			continue
		}
		if line, dup := seen[k.Value]; dup {
			d.errorf(k, "parameter %s is set twice (first at line %d)", k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		if v.Kind != yaml.ScalarNode || isNull(v) {
			d.errorf(v, "parameter %s: must be a single value", k.Value)
			continue
		}
		d.nodes[join(path, k.Value)] = v
		out = append(out, Param{Name: k.Value, Value: v.Value, Line: v.Line, Col: v.Column})
	}
	*ps = out
}

var paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

package supervisor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/internal/yamlmap"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/alert"
)

// MaxFleetFileSize bounds a fleet file; anything larger is refused unread.
const MaxFleetFileSize = 1 << 20

// Defaults of the fleet file, used for every setting left out.
const (
	DefaultHeartbeat   = time.Second
	DefaultStopTimeout = 15 * time.Second
	DefaultHTTPAddr    = "127.0.0.1:8740"
	DefaultBackoff     = time.Second
	DefaultMaxBackoff  = time.Minute
	DefaultCrashLoop   = 5
	DefaultCrashWindow = 2 * time.Minute
	DefaultLockTTL     = 15 * time.Second
	// DefaultHangTimeout is the watchdog's default silence (Restart.HangTimeout):
	// 30 s, or ten heartbeats if that is longer.
	DefaultHangTimeout = 30 * time.Second
	// DefaultStartTimeout is how long a new process may take to send its first
	// heartbeat (Restart.StartTimeout): 2 min, or ten heartbeats if longer.
	DefaultStartTimeout = 2 * time.Minute
	// WatchdogOff in Restart.HangTimeout or Restart.StartTimeout turns that check
	// off (the fleet file's 0).
	WatchdogOff time.Duration = -1
	// MinHeartbeat and MaxHeartbeat bound the agents' status interval.
	MinHeartbeat = 100 * time.Millisecond
	MaxHeartbeat = time.Minute
	// MaxAgents bounds the agents of one fleet file.
	MaxAgents = 1000
)

// RestartPolicy says when a supervisor starts an agent's process again after it
// ended by itself (not on an operator's stop).
type RestartPolicy string

// Restart policies. The zero value means RestartOnFailure.
const (
	RestartOnFailure RestartPolicy = "on-failure" // after a crash or a non-zero exit
	RestartAlways    RestartPolicy = "always"     // after any exit, even a clean one
	RestartNever     RestartPolicy = "never"      // leave it stopped
)

// Restart configures restarts with exponential backoff and crash-loop detection.
type Restart struct {
	// Policy: on-failure (default), always or never.
	Policy RestartPolicy
	// Backoff is the first wait before a restart; each further crash doubles it, up
	// to MaxBackoff, with ±20 % jitter. A process that ran for MaxBackoff without
	// crashing starts again from Backoff. If zero, DefaultBackoff (1 s).
	Backoff time.Duration
	// MaxBackoff caps the wait. If zero, DefaultMaxBackoff (1 min).
	MaxBackoff time.Duration
	// CrashLoop crashes within CrashWindow put the agent in the crashloop state: no
	// more restarts until an operator restarts it (`pitboss ctl restart`). If zero,
	// DefaultCrashLoop (5); negative never declares a crash loop.
	CrashLoop int
	// CrashWindow: if zero, DefaultCrashWindow (2 min).
	CrashWindow time.Duration
	// HangTimeout is the watchdog: a running process whose heartbeats have been
	// missing for longer is hung — its process group is stopped (SIGTERM, SIGKILL
	// after the stop timeout), a "hung" lifecycle record says for how long it was
	// silent, and it counts as a crash (backoff, crash loop, Policy). If zero,
	// DefaultHangTimeout or ten heartbeats, whichever is longer; WatchdogOff (the
	// fleet file's 0) never kills a silent agent.
	HangTimeout time.Duration
	// StartTimeout bounds the wait for a new process's first heartbeat (it is not
	// judged by HangTimeout before it). If zero, DefaultStartTimeout or ten
	// heartbeats, whichever is longer; WatchdogOff waits forever.
	StartTimeout time.Duration
}

// Limits are optional per-process resource limits, applied to the child right after
// it starts (prlimit(2) and setpriority(2) on Linux; see docs/fleet.md for what
// each guarantees). A zero field sets nothing.
type Limits struct {
	// AddressSpace is RLIMIT_AS in bytes (virtual memory). Go reserves address space
	// generously: give a Go agent at least 2 GiB, or use Memory instead.
	AddressSpace int64
	// Memory is the Go runtime's soft memory limit (GOMEMLIMIT) in bytes: the
	// garbage collector works harder near it; it is not a hard cap.
	Memory int64
	// GoMaxProcs is the agent's GOMAXPROCS: how many threads run Go code at once.
	// If zero, automatic: 1 when the supervisor runs more agents than it has CPUs
	// (an agent is one loop and a few I/O goroutines; 50 agents with two threads
	// each on 2 cores fight over them — docs/design/0125), else Go's default; a
	// GOMAXPROCS in the supervisor's own environment wins over the automatic
	// choice. GoMaxProcsCores (`gomaxprocs: 0` in the file) always leaves Go's
	// default.
	GoMaxProcs int
	// OpenFiles is RLIMIT_NOFILE (descriptors).
	OpenFiles uint64
	// CPUSeconds is RLIMIT_CPU: the kernel sends SIGXCPU, then SIGKILL, after this much
	// CPU time (the process counts as crashed).
	CPUSeconds uint64
	// Nice is the scheduling priority (-20 to 19); raising priority (below 0) needs
	// privileges. Nil leaves it unchanged.
	Nice *int
}

// GoMaxProcsCores in Limits.GoMaxProcs leaves the agent Go's default GOMAXPROCS
// (one thread per core) even when agents outnumber cores.
const GoMaxProcsCores = -1

// Merge returns l with the fields o sets.
func (l Limits) Merge(o Limits) Limits {
	override(&l.AddressSpace, o.AddressSpace)
	override(&l.Memory, o.Memory)
	override(&l.GoMaxProcs, o.GoMaxProcs)
	override(&l.OpenFiles, o.OpenFiles)
	override(&l.CPUSeconds, o.CPUSeconds)
	override(&l.Nice, o.Nice)
	return l
}

// override sets *dst to v unless v is its type's zero value (a setting left out).
func override[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// NATSFile is the fleet file's `nats` section: embed a server (the default) or join
// an existing cluster (URL set).
type NATSFile struct {
	// URL joins an existing NATS cluster ("nats://a:4222,nats://b:4222") instead of
	// embedding a server. If empty, the supervisor embeds one.
	URL string
	// Credentials is the supervisor's credentials for URL: a NATS JWT .creds file or
	// a pitboss endpoint file (JSON, written by natsbus.Endpoint.WriteFile); either
	// must be mode 0600. If empty, no authentication.
	Credentials string
	// AgentCredentials is what the agents get (same kinds). If empty, the agents get
	// the supervisor's credentials (and its rights): give them an agent-role user
	// (docs/fleet.md).
	AgentCredentials string
	// StoreDir is the embedded server's JetStream directory. If empty,
	// $XDG_STATE_HOME/pitboss/fleet/<name>/nats.
	StoreDir string
	// Port is the embedded server's port on 127.0.0.1. If zero, a free port.
	Port int
	// Replicas of every stream and bucket the fleet creates (the AUDIT trail, the
	// locks, desired state, configuration, agent definitions and checkpoints, the
	// request budget) on a cluster. If zero: 3 when the cluster has at least three
	// JetStream servers, else 1. A supervisor never lowers the replicas of what
	// exists (see docs/fleet.md).
	Replicas int
	// TLS: the cluster's CA and this machine's client certificate and key (mutual
	// TLS); the agents and `pitboss ctl` use the same files. Each path is resolved
	// against the fleet file's directory; the key must be mode 0600.
	TLS TLSFiles
	// SigningKey is a file (mode 0600) holding the seed of a signing key of the
	// fleet's NATS account (decentralized JWT authentication; Credentials must be
	// a user JWT of that account): the supervisor mints each agent process its own
	// short-lived credentials, limited to that agent's subjects (docs/fleet.md). If
	// empty, agents get AgentCredentials (shared by all of them). Not with
	// AgentCredentials.
	SigningKey string
	// CredentialsTTL is the lifetime of the credentials minted with SigningKey
	// (MinCredentialsTTL to MaxCredentialsTTL; renewed from half of it, design/0154).
	// If zero, natsbus.DefaultAgentJWTTTL (1 h). Only with SigningKey.
	CredentialsTTL time.Duration
}

// Bounds of nats.credentials_ttl: at least a minute (each agent reconnects once
// per renewal, and a supervisor's clock must agree with the servers' to well
// within a quarter of it), at most a day (a stolen creds file is good until it
// expires).
const (
	MinCredentialsTTL = time.Minute
	MaxCredentialsTTL = 24 * time.Hour
)

// TLSFiles are the PEM files of a TLS connection to NATS: the certificate
// authorities to trust (CA) and, for mutual TLS, a client certificate and its key.
type TLSFiles struct {
	CA, Cert, Key string
}

// MarketDataMode says where agents of a remote venue take their market data.
type MarketDataMode string

// Market-data modes. The zero value means MarketDataAuto in a fleet file and
// MarketDataOwn in a Config.
const (
	MarketDataOwn    MarketDataMode = "own"    // each agent opens its own venue feed
	MarketDataFanout MarketDataMode = "fanout" // one venue subscription per token for the fleet, over NATS
	// MarketDataAuto is fanout when the fleet has agents on the remote venue — its
	// venue (Venue, unless set) is theirs: runtime/wire.ResolveFleetAgent settles
	// it while resolving the agents — and own otherwise.
	MarketDataAuto MarketDataMode = "auto"
)

// MarketData is the fleet file's `market_data` section.
type MarketData struct {
	// Mode is auto (default), own or fanout.
	Mode MarketDataMode
	// Venue is the base URL of the venue's WebSocket service ("wss://…", the local
	// exchange's "ws://127.0.0.1:8080") the fan-out publisher subscribes to. Required
	// with fanout (auto takes the remote agents' venue). Agents on another venue
	// keep their own market channel.
	Venue string
	// Publish: this supervisor publishes tokens agents ask for (taking the feed lock
	// of each, so one supervisor of the fleet does). If false with fanout, it only
	// runs agents that consume the fan-out. Default true.
	Publish bool
}

// Budget is the fleet file's `budget` section: the fleet-wide request budget
// (natsbus.BudgetConfig).
type Budget struct {
	// Key names the egress IP the budget is for. If empty, "default".
	Key string
	// Limit requests per 60 s. If zero, 500.
	Limit int
	// Reserve for cancels. If zero, Limit/10.
	Reserve int
	// PerAgent caps the ordinary grants one agent may hold in a window, so that a
	// runaway agent cannot drain the budget of the others (urgent ones may use the
	// reserve on top). If zero, half of Limit-Reserve.
	PerAgent int
}

// AgentEntry is one agent of the fleet file: an agent file and what the fleet
// changes of it.
type AgentEntry struct {
	// File is the agent file (resolved against the fleet file's directory).
	File string
	// ID overrides the agent file's name (market.AgentID), so that one agent file
	// can run several times (each with its own wallet). If empty, the file's name.
	ID string
	// Wallet overrides the agent file's wallet reference. If empty, the file's.
	Wallet string
	// Live passes --live: the agent trades live. The agent file must say
	// `dry_run: false` as well.
	Live bool
	// StateDir overrides the agent's state directory. If empty: the file's, or, when
	// ID is set, a sibling of it named after ID.
	StateDir string
	// Args are extra `pitboss run` flags (e.g. ["--speed", "10"]); --live,
	// --supervised and --state-dir are set from the other fields.
	Args []string
	// Env names variables of the supervisor's environment this agent needs and gets
	// (e.g. PITBOSS_KEYSTORE_PASSPHRASE for a live keystore wallet, the variables of
	// its API credentials). Nothing else of that environment is passed beyond the
	// basics (docs/fleet.md).
	Env []string
	// Restart and Limits override the fleet's defaults field by field.
	Restart *Restart
	Limits  *Limits
	// Placement lists labels a supervisor must have to run the agent (region:
	// eu-west): the agent runs on supervisors whose labels include all of them.
	Placement map[string]string

	// Line and Col locate the entry in the fleet file (for messages).
	Line, Col int
}

// File is a fleet file, loaded, defaulted and validated (see LoadFile). Paths are
// resolved against the file's directory.
type File struct {
	// Path is where the file was read from.
	Path string
	// Name of the fleet ([A-Za-z0-9_-], as an agent id). Required.
	Name string
	// NATS: embedded (default) or an existing cluster.
	NATS NATSFile
	// Heartbeat is the agents' status interval; an agent silent for three of them is
	// dead. If zero, DefaultHeartbeat (1 s).
	Heartbeat time.Duration
	// StopTimeout is how long a stopping agent gets after SIGTERM before SIGKILL. If
	// zero, DefaultStopTimeout (15 s).
	StopTimeout time.Duration
	// LockTTL is how long the fleet's locks outlive their holder. If zero,
	// DefaultLockTTL (15 s).
	LockTTL time.Duration
	// HTTPAddr is the dashboard's address. If empty, DefaultHTTPAddr; "off" turns
	// the dashboard off. It must be a loopback address unless AllowRemoteHTTP.
	HTTPAddr string
	// AllowRemoteHTTP allows a non-loopback HTTPAddr (put it behind TLS and
	// authentication: the dashboard has a kill-all button).
	AllowRemoteHTTP bool
	// MetricsAddr serves Prometheus metrics. If empty, off.
	MetricsAddr string
	// Restart and Limits are the defaults of every agent.
	Restart Restart
	Limits  Limits
	// MarketData and Budget: see their types.
	MarketData MarketData
	Budget     Budget
	// StateDir is this supervisor's own directory: the audit spool, the files of
	// agents it runs from the fleet's definitions. If empty,
	// $XDG_STATE_HOME/pitboss/fleet/<name>.
	StateDir string
	// MaxAgents bounds the agents this supervisor runs (its capacity): of the
	// agents defined in the fleet, it claims at most this many. If zero, no bound.
	MaxAgents int
	// Labels describe this supervisor (region: eu-west) for agents' placement.
	Labels map[string]string
	// Alerts are the fleet's webhooks (runtime/alert; docs/alerts.md). If
	// absent, none.
	Alerts alert.Config
	// Agents of the fleet, in file order. The supervisor publishes them to the
	// fleet's definitions and runs them, or any other defined agent, as its
	// capacity and labels allow. An empty list (agents: []) is a supervisor that
	// only runs agents defined by others.
	Agents []AgentEntry
}

// Options are what LoadFile may consult, injected for tests. The zero value uses
// the process's environment.
type Options struct {
	// Getenv reads XDG_STATE_HOME and HOME (the default store directory). If nil,
	// os.Getenv.
	Getenv func(string) string
}

// LoadFile reads, defaults and validates the fleet file at path. A file with
// problems gives agents.Problems (every problem with its line and column, in file
// order).
func (o Options) LoadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxFleetFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	if len(src) > MaxFleetFileSize {
		return nil, agents.Problems{{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFleetFileSize)}}
	}
	return o.Parse(path, src)
}

// Parse is LoadFile for content already read; path names the file in problems and
// is the base of relative paths.
func (o Options) Parse(path string, src []byte) (*File, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	d := &fdec{file: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		p := agents.Problem{File: path, Msg: "not valid YAML: " + yamlMessage(err)}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Col = 1
		}
		return nil, agents.Problems{p}
	}
	if len(doc.Content) == 0 {
		return nil, agents.Problems{{File: path, Line: 1, Col: 1, Msg: "the fleet file is empty"}}
	}
	root := doc.Content[0]
	f := &File{Path: path, MarketData: MarketData{Publish: true}}
	d.fleet(root, f)
	o.finish(d, root, f)
	if len(d.probs) > 0 {
		return nil, d.probs
	}
	return f, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlMessage strips the "yaml: " prefix; the parser's messages do not quote
// values beyond a short token.
func yamlMessage(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// fdec walks the YAML tree of a fleet file, collecting every problem.
type fdec struct {
	file     string
	probs    agents.Problems
	timeouts []timeoutCheck // watchdog timeouts, checked in finish
}

func (d *fdec) errorf(n *yaml.Node, format string, args ...any) {
	p := agents.Problem{File: d.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	d.probs = append(d.probs, p)
}

// fields decodes a mapping: fn is called for every known key; unknown and
// duplicated keys are problems (yamlmap.Fields).
func (d *fdec) fields(n *yaml.Node, where string, known []string, fn func(key string, v *yaml.Node)) {
	yamlmap.Fields(n, where, known, d.report, fn)
}

func (d *fdec) report(n *yaml.Node, msg string) { d.errorf(n, "%s", msg) }

func quote(s string) string { return yamlmap.Quote(s) }

func (d *fdec) scalar(n *yaml.Node, key string) (string, bool) {
	if yamlmap.IsNull(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s: must be a single value", key)
		return "", false
	}
	return n.Value, true
}

func (d *fdec) str(n *yaml.Node, key string, out *string) {
	if s, ok := d.scalar(n, key); ok {
		*out = s
	}
}

func (d *fdec) boolean(n *yaml.Node, key string, out *bool) {
	s, ok := d.scalar(n, key)
	if !ok {
		return
	}
	switch s {
	case "true", "yes", "on":
		*out = true
	case "false", "no", "off":
		*out = false
	default:
		d.errorf(n, "%s: must be true or false, not %s", key, quote(s))
	}
}

func (d *fdec) integer(n *yaml.Node, key string, lo, hi int64, out *int64) {
	s, ok := d.scalar(n, key)
	if !ok {
		return
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		d.errorf(n, "%s: must be a whole number from %d to %d, not %s", key, lo, hi, quote(s))
		return
	}
	*out = v
}

func (d *fdec) duration(n *yaml.Node, key string, out *time.Duration) {
	s, ok := d.scalar(n, key)
	if !ok {
		return
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		d.errorf(n, "%s: must be a duration such as 500ms, 10s or 2m, not %s", key, quote(s))
		return
	}
	*out = v
}

// size parses a byte size: a whole number with an optional unit (KiB, MiB, GiB, KB,
// MB, GB, or none for bytes).
func (d *fdec) size(n *yaml.Node, key string, out *int64) {
	s, ok := d.scalar(n, key)
	if !ok {
		return
	}
	v, err := ParseSize(s)
	if err != nil {
		d.errorf(n, "%s: %v", key, err)
		return
	}
	*out = v
}

// ParseSize parses a byte size such as "512MiB", "2GiB", "1GB" or "1048576".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("must be a positive size such as 512MiB or 2GiB, not %s", quote(s))
	}
	return v * mult, nil
}

var fleetKeys = []string{"version", "name", "nats", "heartbeat", "stop_timeout", "lock_ttl", "http_addr", "allow_remote_http",
	"metrics_addr", "restart", "limits", "market_data", "budget", "state_dir", "max_agents", "labels", "agents", "alerts"}

func (d *fdec) fleet(root *yaml.Node, f *File) {
	root = yamlmap.Resolve(root)
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "the fleet file must be a mapping of settings (name, nats, agents, ...)")
		return
	}
	d.fields(root, "the fleet file", fleetKeys, func(key string, v *yaml.Node) {
		switch key {
		case "version":
			var ver int64
			d.integer(v, key, 1, 1, &ver)
		case "name":
			d.str(v, key, &f.Name)
			if !market.ValidAgentID(f.Name) {
				d.errorf(v, "name: %s: use 1 to 64 of A-Z a-z 0-9 _ -, starting with a letter or a digit", quote(f.Name))
			}
		case "nats":
			d.nats(v, &f.NATS)
		case "heartbeat":
			d.duration(v, key, &f.Heartbeat)
			if f.Heartbeat != 0 && (f.Heartbeat < MinHeartbeat || f.Heartbeat > MaxHeartbeat) {
				d.errorf(v, "heartbeat: %s is outside %s to %s", f.Heartbeat, MinHeartbeat, MaxHeartbeat)
			}
		case "stop_timeout":
			d.duration(v, key, &f.StopTimeout)
		case "lock_ttl":
			d.duration(v, key, &f.LockTTL)
			if f.LockTTL != 0 && f.LockTTL < 3*time.Second {
				d.errorf(v, "lock_ttl: %s is too short (at least 3s)", f.LockTTL)
			}
		case "http_addr":
			d.str(v, key, &f.HTTPAddr)
		case "allow_remote_http":
			d.boolean(v, key, &f.AllowRemoteHTTP)
		case "metrics_addr":
			d.str(v, key, &f.MetricsAddr)
		case "restart":
			d.restart(v, key, &f.Restart)
		case "limits":
			d.limits(v, key, &f.Limits)
		case "market_data":
			d.marketData(v, &f.MarketData)
		case "budget":
			d.budget(v, &f.Budget)
		case "state_dir":
			d.str(v, key, &f.StateDir)
		case "max_agents":
			var x int64
			d.integer(v, key, 1, MaxAgents, &x)
			f.MaxAgents = int(x)
		case "labels":
			f.Labels = d.labels(v, key)
		case "agents":
			d.agents(v, f)
		case "alerts":
			var probs []alert.Problem
			f.Alerts, probs = alert.ParseYAML(v)
			for _, p := range probs {
				d.probs = append(d.probs, agents.Problem{File: d.file, Line: p.Line, Col: p.Col, Msg: p.Msg})
			}
		}
	})
	if len(f.Agents) == 0 && !d.hasKey(root, "agents") {
		d.errorf(root, "agents is required: a list of agent files")
	}
	if !d.hasKey(root, "name") {
		d.errorf(root, "name is required (the fleet's name)")
	}
}

func (d *fdec) hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// labelPattern is a label's key and value: what ids allow, plus '.'.
var labelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// labels decodes a mapping of labels (region: eu-west).
func (d *fdec) labels(n *yaml.Node, where string) map[string]string {
	n = yamlmap.Resolve(n)
	if yamlmap.IsNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: must be a mapping of labels (region: eu-west)", where)
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlmap.Resolve(n.Content[i+1])
		val, ok := d.scalar(v, where+"."+k.Value)
		switch {
		case k.Kind != yaml.ScalarNode || !labelPattern.MatchString(k.Value):
			d.errorf(k, "%s: %s is not a label name (1 to 64 of A-Z a-z 0-9 _ . -)", where, quote(k.Value))
		case !ok:
		case !labelPattern.MatchString(val):
			d.errorf(v, "%s.%s: %s is not a label value (1 to 64 of A-Z a-z 0-9 _ . -)", where, k.Value, quote(val))
		default:
			if _, dup := out[k.Value]; dup {
				d.errorf(k, "%s is set twice", quote(k.Value))
			}
			out[k.Value] = val
		}
	}
	return out
}

func (d *fdec) nats(n *yaml.Node, c *NATSFile) {
	d.fields(n, "nats", []string{"url", "credentials", "agent_credentials", "store_dir", "port", "replicas", "tls", "signing_key", "credentials_ttl"}, func(key string, v *yaml.Node) {
		switch key {
		case "url":
			d.str(v, "nats.url", &c.URL)
			for _, u := range strings.Split(c.URL, ",") {
				if !strings.HasPrefix(u, "nats://") && !strings.HasPrefix(u, "tls://") {
					d.errorf(v, "nats.url: %s is not a nats:// or tls:// URL", quote(u))
				} else if strings.Contains(u, "@") {
					d.errorf(v, "nats.url: put credentials in nats.credentials (a 0600 file), not in the URL")
				}
			}
		case "credentials":
			d.str(v, "nats.credentials", &c.Credentials)
		case "agent_credentials":
			d.str(v, "nats.agent_credentials", &c.AgentCredentials)
		case "store_dir":
			d.str(v, "nats.store_dir", &c.StoreDir)
		case "port":
			var p int64
			d.integer(v, "nats.port", 0, 65535, &p)
			c.Port = int(p)
		case "replicas":
			var r int64
			d.integer(v, "nats.replicas", 1, 5, &r)
			c.Replicas = int(r)
		case "tls":
			d.fields(v, "nats.tls", []string{"ca", "cert", "key"}, func(key string, v *yaml.Node) {
				switch key {
				case "ca":
					d.str(v, "nats.tls.ca", &c.TLS.CA)
				case "cert":
					d.str(v, "nats.tls.cert", &c.TLS.Cert)
				case "key":
					d.str(v, "nats.tls.key", &c.TLS.Key)
				}
			})
			if (c.TLS.Cert == "") != (c.TLS.Key == "") {
				d.errorf(v, "nats.tls: cert and key go together (a client certificate and its private key)")
			}
		case "signing_key":
			d.str(v, "nats.signing_key", &c.SigningKey)
		case "credentials_ttl":
			d.duration(v, "nats.credentials_ttl", &c.CredentialsTTL)
			if c.CredentialsTTL != 0 && (c.CredentialsTTL < MinCredentialsTTL || c.CredentialsTTL > MaxCredentialsTTL) {
				d.errorf(v, "nats.credentials_ttl: %s is out of range (1m to 24h)", c.CredentialsTTL)
			}
		}
	})
}

func (d *fdec) restart(n *yaml.Node, where string, r *Restart) {
	d.fields(n, where, []string{"policy", "backoff", "max_backoff", "crash_loop", "crash_window", "hang_timeout", "start_timeout"}, func(key string, v *yaml.Node) {
		switch key {
		case "policy":
			var s string
			d.str(v, where+".policy", &s)
			switch RestartPolicy(s) {
			case RestartOnFailure, RestartAlways, RestartNever:
				r.Policy = RestartPolicy(s)
			default:
				d.errorf(v, "%s.policy: %s is not a policy; use on-failure, always or never", where, quote(s))
			}
		case "backoff":
			d.duration(v, where+".backoff", &r.Backoff)
		case "max_backoff":
			d.duration(v, where+".max_backoff", &r.MaxBackoff)
		case "crash_loop":
			var c int64
			d.integer(v, where+".crash_loop", -1, 1000, &c)
			r.CrashLoop = int(c)
		case "crash_window":
			d.duration(v, where+".crash_window", &r.CrashWindow)
		case "hang_timeout":
			d.watchdog(v, where+".hang_timeout", &r.HangTimeout)
		case "start_timeout":
			d.watchdog(v, where+".start_timeout", &r.StartTimeout)
		}
	})
	if r.Backoff > 0 && r.MaxBackoff > 0 && r.MaxBackoff < r.Backoff {
		d.errorf(n, "%s: max_backoff (%s) is shorter than backoff (%s)", where, r.MaxBackoff, r.Backoff)
	}
}

// watchdog parses a watchdog timeout: a duration, 0 or off (WatchdogOff). It is
// checked against the heartbeat in finish (the heartbeat may come later in the
// file).
func (d *fdec) watchdog(n *yaml.Node, key string, out *time.Duration) {
	s, ok := d.scalar(n, key)
	if !ok {
		return
	}
	if s == "off" {
		*out = WatchdogOff
		return
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil || v < 0:
		d.errorf(n, "%s: must be a duration such as 30s or 2m, or 0 (off), not %s", key, quote(s))
	case v == 0:
		*out = WatchdogOff
	default:
		*out = v
		d.timeouts = append(d.timeouts, timeoutCheck{n: n, key: key, v: v})
	}
}

// timeoutCheck is a watchdog timeout to check against the heartbeat.
type timeoutCheck struct {
	n   *yaml.Node
	key string
	v   time.Duration
}

// minWatchdogBeats is the shortest watchdog timeout, in heartbeats: the roster
// calls an agent dead after three missed ones; a shorter timeout would kill agents
// that merely had one status delayed.
const minWatchdogBeats = 3

// shortWatchdog reports whether watchdog timeout d is under minWatchdogBeats
// heartbeats of hb (WatchdogOff and an unset 0 never are): the rule of the fleet
// file (finish) and of New alike.
func shortWatchdog(d, hb time.Duration) bool { return d > 0 && d < minWatchdogBeats*hb }

func (d *fdec) limits(n *yaml.Node, where string, l *Limits) {
	d.fields(n, where, []string{"address_space", "memory", "gomaxprocs", "open_files", "cpu_seconds", "nice"}, func(key string, v *yaml.Node) {
		switch key {
		case "address_space":
			d.size(v, where+".address_space", &l.AddressSpace)
			if l.AddressSpace != 0 && l.AddressSpace < 256<<20 {
				d.errorf(v, "%s.address_space: at least 256MiB (a Go process reserves that much address space at start)", where)
			}
		case "memory":
			d.size(v, where+".memory", &l.Memory)
		case "gomaxprocs":
			x := int64(-1)
			d.integer(v, where+".gomaxprocs", 0, 1024, &x)
			switch {
			case x == 0:
				l.GoMaxProcs = GoMaxProcsCores // Go's default, said explicitly
			case x > 0:
				l.GoMaxProcs = int(x)
			}
		case "open_files":
			var x int64
			d.integer(v, where+".open_files", 16, 1<<20, &x)
			l.OpenFiles = uint64(x)
		case "cpu_seconds":
			var x int64
			d.integer(v, where+".cpu_seconds", 1, 1<<40, &x)
			l.CPUSeconds = uint64(x)
		case "nice":
			x := int64(-100)
			d.integer(v, where+".nice", -20, 19, &x)
			if x != -100 {
				nv := int(x)
				l.Nice = &nv
			}
		}
	})
}

func (d *fdec) marketData(n *yaml.Node, m *MarketData) {
	d.fields(n, "market_data", []string{"mode", "venue", "publish"}, func(key string, v *yaml.Node) {
		switch key {
		case "mode":
			var s string
			d.str(v, "market_data.mode", &s)
			switch MarketDataMode(s) {
			case MarketDataOwn, MarketDataFanout, MarketDataAuto:
				m.Mode = MarketDataMode(s)
			default:
				d.errorf(v, "market_data.mode: %s is not a mode; use auto, own or fanout", quote(s))
			}
		case "venue":
			d.str(v, "market_data.venue", &m.Venue)
			if !isWSURL(m.Venue) {
				d.errorf(v, "market_data.venue: %s is not a ws:// or wss:// URL", quote(m.Venue))
			}
		case "publish":
			d.boolean(v, "market_data.publish", &m.Publish)
		}
	})
}

// isWSURL reports whether s names a WebSocket service: ws:// or wss://. The
// fleet file's market_data.venue and the child's EnvMarketVenue are checked alike.
func isWSURL(s string) bool {
	return strings.HasPrefix(s, "ws://") || strings.HasPrefix(s, "wss://")
}

func (d *fdec) budget(n *yaml.Node, b *Budget) {
	d.fields(n, "budget", []string{"key", "limit", "reserve", "per_agent"}, func(key string, v *yaml.Node) {
		switch key {
		case "key":
			d.str(v, "budget.key", &b.Key)
		case "limit":
			var x int64
			d.integer(v, "budget.limit", 1, 1_000_000, &x)
			b.Limit = int(x)
		case "reserve":
			var x int64
			d.integer(v, "budget.reserve", -1, 1_000_000, &x)
			b.Reserve = int(x)
		case "per_agent":
			var x int64
			d.integer(v, "budget.per_agent", 1, 1_000_000, &x)
			b.PerAgent = int(x)
		}
	})
	if b.Limit > 0 && b.Reserve >= b.Limit {
		d.errorf(n, "budget: reserve (%d) must be smaller than limit (%d)", b.Reserve, b.Limit)
	}
}

var agentKeys = []string{"file", "id", "wallet", "live", "state_dir", "args", "env", "restart", "limits", "placement"}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// reservedArgs are `pitboss run` flags the fleet sets itself.
var reservedArgs = []string{"--live", "-live", "--supervised", "-supervised", "--state-dir", "-state-dir", "--log-format", "-log-format"}

func (d *fdec) agents(n *yaml.Node, f *File) {
	if yamlmap.IsNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "agents: must be a list of agent files (- file: path.yaml)")
		return
	}
	if len(n.Content) > MaxAgents {
		d.errorf(n, "agents: more than %d agents", MaxAgents)
		return
	}
	for i, item := range n.Content {
		item = yamlmap.Resolve(item)
		where := fmt.Sprintf("agents[%d]", i)
		e := AgentEntry{Line: item.Line, Col: item.Column}
		if item.Kind == yaml.ScalarNode && !yamlmap.IsNull(item) {
			e.File = item.Value
		} else {
			d.fields(item, where, agentKeys, func(key string, v *yaml.Node) {
				switch key {
				case "file":
					d.str(v, where+".file", &e.File)
				case "id":
					d.str(v, where+".id", &e.ID)
					if !market.ValidAgentID(e.ID) {
						d.errorf(v, "%s.id: %s: use 1 to 64 of A-Z a-z 0-9 _ -, starting with a letter or a digit", where, quote(e.ID))
					}
				case "wallet":
					d.str(v, where+".wallet", &e.Wallet)
					if _, err := agents.ParseWalletRef(e.Wallet); err != nil {
						d.errorf(v, "%s.wallet: %v", where, err) // never the value
					}
				case "live":
					d.boolean(v, where+".live", &e.Live)
				case "state_dir":
					d.str(v, where+".state_dir", &e.StateDir)
				case "args":
					if v.Kind != yaml.SequenceNode {
						d.errorf(v, "%s.args: must be a list of flags", where)
						return
					}
					for _, a := range v.Content {
						s, ok := d.scalar(yamlmap.Resolve(a), where+".args")
						if !ok {
							continue
						}
						name, _, _ := strings.Cut(s, "=")
						for _, r := range reservedArgs {
							if name == r {
								d.errorf(a, "%s.args: %s is set by the fleet file (use live or state_dir)", where, name)
							}
						}
						e.Args = append(e.Args, s)
					}
				case "env":
					if v.Kind != yaml.SequenceNode {
						d.errorf(v, "%s.env: must be a list of variable names", where)
						return
					}
					for _, a := range v.Content {
						s, ok := d.scalar(yamlmap.Resolve(a), where+".env")
						if !ok {
							continue
						}
						switch {
						case !envName.MatchString(s):
							// Not quoted: it may be NAME=secret.
							d.errorf(a, "%s.env: not a variable name: list names only (A-Z, 0-9, _); the values come from the supervisor's environment", where)
						case strings.HasPrefix(s, "PITBOSS_NATS_") || strings.HasPrefix(s, "PITBOSS_FLEET_"):
							d.errorf(a, "%s.env: %s is set by the supervisor", where, s)
						default:
							e.Env = append(e.Env, s)
						}
					}
				case "restart":
					e.Restart = &Restart{}
					d.restart(v, where+".restart", e.Restart)
				case "limits":
					e.Limits = &Limits{}
					d.limits(v, where+".limits", e.Limits)
				case "placement":
					e.Placement = d.labels(v, where+".placement")
				}
			})
		}
		if e.File == "" {
			d.errorf(item, "%s: file is required (the agent file)", where)
		}
		f.Agents = append(f.Agents, e)
	}
}

// finish applies defaults and resolves paths.
func (o Options) finish(d *fdec, root *yaml.Node, f *File) {
	dir := filepath.Dir(f.Path)
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if f.Heartbeat == 0 {
		f.Heartbeat = DefaultHeartbeat
	}
	if f.StopTimeout == 0 {
		f.StopTimeout = DefaultStopTimeout
	}
	if f.LockTTL == 0 {
		f.LockTTL = DefaultLockTTL
	}
	if f.HTTPAddr == "" {
		f.HTTPAddr = DefaultHTTPAddr
	}
	f.NATS.Credentials = abs(f.NATS.Credentials)
	f.NATS.AgentCredentials = abs(f.NATS.AgentCredentials)
	f.NATS.SigningKey = abs(f.NATS.SigningKey)
	f.NATS.TLS = TLSFiles{CA: abs(f.NATS.TLS.CA), Cert: abs(f.NATS.TLS.Cert), Key: abs(f.NATS.TLS.Key)}
	switch {
	case f.NATS.URL != "" && (f.NATS.StoreDir != "" || f.NATS.Port != 0):
		d.errorf(root, "nats: store_dir and port are for the embedded server; with url the fleet joins an existing cluster")
	case f.NATS.URL == "" && (f.NATS.Credentials != "" || f.NATS.AgentCredentials != "" || f.NATS.SigningKey != ""):
		d.errorf(root, "nats: credentials are for an existing cluster (url); the embedded server makes its own")
	case f.NATS.SigningKey != "" && f.NATS.AgentCredentials != "":
		d.errorf(root, "nats: signing_key and agent_credentials contradict each other: with a signing key every agent gets credentials of its own; remove agent_credentials")
	case f.NATS.CredentialsTTL != 0 && f.NATS.SigningKey == "":
		d.errorf(root, "nats: credentials_ttl is the lifetime of credentials minted with signing_key; without a signing key nothing is minted")
	case f.NATS.URL == "" && f.NATS.TLS != (TLSFiles{}):
		d.errorf(root, "nats: tls is for an existing cluster (url); the embedded server listens on loopback only")
	case f.NATS.URL == "" && f.NATS.Replicas > 1:
		d.errorf(root, "nats: replicas above 1 need a cluster (url); the embedded server is one server")
	}
	if f.StateDir == "" && f.Name != "" {
		f.StateDir = filepath.Join(stateHome(o.Getenv, dir), "pitboss", "fleet", f.Name)
	}
	f.StateDir = abs(f.StateDir)
	if f.Budget.Limit > 0 && f.Budget.PerAgent > f.Budget.Limit {
		d.errorf(root, "budget: per_agent (%d) is more than the limit (%d)", f.Budget.PerAgent, f.Budget.Limit)
	}
	if f.NATS.URL == "" {
		if f.NATS.StoreDir == "" && f.Name != "" {
			f.NATS.StoreDir = filepath.Join(stateHome(o.Getenv, dir), "pitboss", "fleet", f.Name, "nats")
		}
		f.NATS.StoreDir = abs(f.NATS.StoreDir)
	}
	for _, c := range d.timeouts {
		if shortWatchdog(c.v, f.Heartbeat) {
			d.errorf(c.n, "%s: %s is shorter than %d heartbeats (%s); use a longer one, or 0 to turn the watchdog off",
				c.key, c.v, minWatchdogBeats, minWatchdogBeats*f.Heartbeat)
		}
	}
	f.Restart = f.Restart.withDefaults().withWatchdog(f.Heartbeat)
	if f.MarketData.Mode == "" {
		f.MarketData.Mode = MarketDataAuto
	}
	if f.MarketData.Mode == MarketDataFanout && f.MarketData.Venue == "" && f.MarketData.Publish {
		d.errorf(root, "market_data: mode fanout needs venue (the venue's WebSocket URL) or publish: false")
	}
	ids := map[string]int{}
	for i := range f.Agents {
		e := &f.Agents[i]
		e.File = abs(e.File)
		e.StateDir = abs(e.StateDir)
		if e.ID != "" {
			if line, dup := ids[e.ID]; dup {
				d.errorf(&yaml.Node{Line: e.Line, Column: e.Col}, "agents[%d]: id %s is used twice (first at line %d)", i, quote(e.ID), line)
			}
			ids[e.ID] = e.Line
		}
	}
}

func stateHome(getenv func(string) string, dir string) string {
	base := getenv("XDG_STATE_HOME")
	if base == "" {
		if home := getenv("HOME"); home != "" {
			base = filepath.Join(home, ".local", "state")
		}
	}
	if base == "" || !filepath.IsAbs(base) {
		base = filepath.Join(dir, ".state")
	}
	return base
}

// withDefaults fills the zero fields of r.
func (r Restart) withDefaults() Restart {
	if r.Policy == "" {
		r.Policy = RestartOnFailure
	}
	if r.Backoff == 0 {
		r.Backoff = DefaultBackoff
	}
	if r.MaxBackoff == 0 {
		r.MaxBackoff = max(DefaultMaxBackoff, r.Backoff)
	}
	if r.CrashLoop == 0 {
		r.CrashLoop = DefaultCrashLoop
	}
	if r.CrashWindow == 0 {
		r.CrashWindow = DefaultCrashWindow
	}
	return r
}

// withWatchdog fills zero watchdog timeouts for agents heartbeating every hb: the
// defaults, or ten heartbeats if that is longer.
func (r Restart) withWatchdog(hb time.Duration) Restart {
	if r.HangTimeout == 0 {
		r.HangTimeout = max(DefaultHangTimeout, 10*hb)
	}
	if r.StartTimeout == 0 {
		r.StartTimeout = max(DefaultStartTimeout, 10*hb)
	}
	return r
}

// Merge returns r with the fields o sets (an agent's override of the fleet's
// default), defaults filled.
func (r Restart) Merge(o *Restart) Restart {
	if o == nil {
		return r.withDefaults()
	}
	override(&r.Policy, o.Policy)
	override(&r.Backoff, o.Backoff)
	override(&r.MaxBackoff, o.MaxBackoff)
	override(&r.CrashLoop, o.CrashLoop)
	override(&r.CrashWindow, o.CrashWindow)
	override(&r.HangTimeout, o.HangTimeout)
	override(&r.StartTimeout, o.StartTimeout)
	if r.MaxBackoff < r.Backoff {
		r.MaxBackoff = r.Backoff
	}
	return r.withDefaults()
}

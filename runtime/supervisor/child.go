package supervisor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// Environment variables a supervisor sets for each child (`pitboss run
// --supervised`), besides the NATS endpoint (natsbus.EnvURL and the others). None of
// them is a secret; the NATS password travels in natsbus's variables only.
const (
	EnvAgent       = "PITBOSS_FLEET_AGENT"        // the agent id the supervisor locked (overrides the file's name)
	EnvFleet       = "PITBOSS_FLEET_NAME"         // the fleet's name
	EnvWallet      = "PITBOSS_FLEET_WALLET"       // a wallet reference overriding the file's (optional)
	EnvLease       = "PITBOSS_FLEET_LEASE"        // the lease id of the wallet lock the supervisor holds
	EnvSupervisor  = "PITBOSS_FLEET_SUPERVISOR"   // the supervisor's name
	EnvHeartbeat   = "PITBOSS_FLEET_HEARTBEAT"    // status interval (a Go duration)
	EnvRun         = "PITBOSS_FLEET_RUN"          // the start number of this agent under this supervisor
	EnvMarketData  = "PITBOSS_FLEET_MARKET_DATA"  // own or fanout
	EnvMarketVenue = "PITBOSS_FLEET_MARKET_VENUE" // the venue the fan-out's market data comes from (optional)
	EnvBudget      = "PITBOSS_FLEET_BUDGET"       // the request budget's key
)

// ChildConfig is what a supervised agent process learns from its environment: who
// it is in the fleet, the lease it runs under, and how to reach the fleet's NATS.
// Endpoint holds secrets (it redacts itself when printed).
type ChildConfig struct {
	Endpoint   natsbus.Endpoint
	Fleet      string
	Agent      market.AgentID
	Wallet     string // a wallet reference overriding the agent file's; empty: the file's
	Lease      string
	Supervisor string
	Heartbeat  time.Duration
	Run        uint64
	MarketData MarketDataMode
	// MarketVenue is the WebSocket base of the venue the fan-out republishes
	// (MarketData.Venue), when this supervisor publishes: an agent trading on
	// another venue keeps its own market channel. Empty: not known (another
	// supervisor publishes).
	MarketVenue string
	Budget      string
	// FenceFD is the descriptor of the lease fence pipe (EnvFenceFD); 0: none.
	FenceFD int
}

// Environ returns c as environment entries (the NATS endpoint's included: pass it
// to exec.Cmd.Env only, never to a log or an argument list).
func (c ChildConfig) Environ() []string {
	env := c.Endpoint.Environ()
	add := func(k, v string) {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	add(EnvFleet, c.Fleet)
	add(EnvAgent, string(c.Agent))
	add(EnvWallet, c.Wallet)
	add(EnvLease, c.Lease)
	add(EnvSupervisor, c.Supervisor)
	if c.Heartbeat > 0 {
		add(EnvHeartbeat, c.Heartbeat.String())
	}
	add(EnvRun, strconv.FormatUint(c.Run, 10))
	add(EnvMarketData, string(c.MarketData))
	add(EnvMarketVenue, c.MarketVenue)
	add(EnvBudget, c.Budget)
	if c.FenceFD > 0 {
		add(EnvFenceFD, strconv.Itoa(c.FenceFD))
	}
	return env
}

// ErrNotSupervised is returned by ChildFromEnv when the environment has no fleet
// configuration (the process was not started by a supervisor).
var ErrNotSupervised = errors.New("not started by a supervisor: PITBOSS_FLEET_AGENT and PITBOSS_NATS_* are not set (use pitboss supervise)")

// ChildFromEnv reads a ChildConfig through getenv (os.Getenv in production).
func ChildFromEnv(getenv func(string) string) (ChildConfig, error) {
	id := getenv(EnvAgent)
	if id == "" {
		return ChildConfig{}, ErrNotSupervised
	}
	c := ChildConfig{Fleet: getenv(EnvFleet), Wallet: getenv(EnvWallet), Lease: getenv(EnvLease),
		Supervisor: getenv(EnvSupervisor), MarketData: MarketDataMode(getenv(EnvMarketData)), Budget: getenv(EnvBudget),
		MarketVenue: getenv(EnvMarketVenue), Heartbeat: DefaultHeartbeat}
	aid, err := market.ParseAgentID(id)
	if err != nil {
		return ChildConfig{}, fmt.Errorf("%s: %w", EnvAgent, err)
	}
	c.Agent = aid
	if c.Lease == "" {
		return ChildConfig{}, fmt.Errorf("%s is not set: the supervisor passes the lease of the wallet lock", EnvLease)
	}
	if s := getenv(EnvHeartbeat); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < MinHeartbeat || d > MaxHeartbeat {
			return ChildConfig{}, fmt.Errorf("%s: %q is not a heartbeat interval", EnvHeartbeat, s)
		}
		c.Heartbeat = d
	}
	if s := getenv(EnvRun); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return ChildConfig{}, fmt.Errorf("%s: %q is not a number", EnvRun, s)
		}
		c.Run = n
	}
	switch c.MarketData {
	case "":
		c.MarketData = MarketDataOwn
	case MarketDataOwn, MarketDataFanout:
	default:
		return ChildConfig{}, fmt.Errorf("%s: %q is not own or fanout", EnvMarketData, string(c.MarketData))
	}
	if v := c.MarketVenue; v != "" && !isWSURL(v) {
		return ChildConfig{}, fmt.Errorf("%s: %q is not a ws:// or wss:// URL", EnvMarketVenue, v)
	}
	ep, err := natsbus.EndpointFromEnv(getenv)
	if err != nil {
		return ChildConfig{}, fmt.Errorf("the fleet's NATS endpoint: %w", err)
	}
	c.Endpoint = ep
	return c, nil
}

// baseEnvKeys are the variables of the supervisor's own environment a child
// inherits; nothing else is passed on (no other secrets: API keys, other agents'
// wallet variables, cloud credentials). LC_* variables are passed as well.
var baseEnvKeys = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR", "XDG_RUNTIME_DIR", "XDG_STATE_HOME",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "DBUS_SESSION_BUS_ADDRESS", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "GOMAXPROCS", "GOGC", "GODEBUG"}

// childBaseEnv filters environ (KEY=VALUE entries) down to baseEnvKeys and LC_*,
// plus the variables named in extra (an agent's env: wallet reference).
func childBaseEnv(environ []string, extra []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		keep := strings.HasPrefix(k, "LC_")
		for _, b := range baseEnvKeys {
			keep = keep || k == b
		}
		for _, b := range extra {
			keep = keep || k == b
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

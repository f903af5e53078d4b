package supervisor_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/agents"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
)

var testOpts = Options{Getenv: func(k string) string {
	if k == "XDG_STATE_HOME" {
		return "/state"
	}
	return ""
}}

const fullFleet = `version: 1
name: prod-eu
nats:
  store_dir: data/nats
  port: 4333
heartbeat: 2s
stop_timeout: 20s
lock_ttl: 30s
http_addr: 127.0.0.1:9000
metrics_addr: 127.0.0.1:9464
restart:
  policy: always
  backoff: 500ms
  max_backoff: 30s
  crash_loop: 3
  crash_window: 1m
  hang_timeout: 45s
  start_timeout: 3m
limits:
  address_space: 4GiB
  memory: 512MiB
  gomaxprocs: 1
  open_files: 256
  cpu_seconds: 3600
  nice: 5
market_data:
  mode: fanout
  venue: wss://venue.example/ws
budget:
  key: 203.0.113.7
  limit: 400
  reserve: 40
agents:
  - mm1.yaml
  - file: /abs/mm2.yaml
    id: mm-2b
    wallet: keyring:mm2b
    live: true
    state_dir: st/mm2b
    args: [--speed, "10"]
    env: [PITBOSS_KEYSTORE_PASSPHRASE]
    restart: {policy: never, hang_timeout: 0}
    limits: {open_files: 128}
`

// TestParseClusterFleetFile reads the settings of a fleet on a NATS cluster.
func TestParseClusterFleetFile(t *testing.T) {
	src := `name: prod
nats:
  url: tls://10.0.0.5:4222,tls://10.0.0.6:4222
  credentials: sup.creds
  signing_key: /keys/account.nk
  credentials_ttl: 10m
  replicas: 3
  tls: {ca: ca.pem, cert: sup.pem, key: sup-key.pem}
budget: {limit: 500, per_agent: 100}
max_agents: 8
labels: {region: eu-west, tier: a.1}
agents:
  - {file: mm.yaml, placement: {region: eu-west}}
`
	f, err := testOpts.Parse("/etc/pitboss/fleet.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := TLSFiles{CA: "/etc/pitboss/ca.pem", Cert: "/etc/pitboss/sup.pem", Key: "/etc/pitboss/sup-key.pem"}
	if f.NATS.Replicas != 3 || f.NATS.TLS != want || f.NATS.SigningKey != "/keys/account.nk" || f.NATS.CredentialsTTL != 10*time.Minute || f.Budget.PerAgent != 100 ||
		f.MaxAgents != 8 || f.Labels["region"] != "eu-west" || f.Labels["tier"] != "a.1" || f.Agents[0].Placement["region"] != "eu-west" ||
		f.StateDir != "/state/pitboss/fleet/prod" {
		t.Fatalf("%+v", f)
	}
	if f, err := testOpts.Parse("/etc/pitboss/fleet.yaml", []byte("name: spare\nnats: {url: 'nats://h:4222'}\nmax_agents: 4\nagents: []\n")); err != nil || len(f.Agents) != 0 {
		t.Fatalf("a supervisor without agents of its own: %+v %v", f, err)
	}
}

func TestParseFullFleetFile(t *testing.T) {
	f, err := testOpts.Parse("/etc/pitboss/fleet.yaml", []byte(fullFleet))
	if err != nil {
		t.Fatal(err)
	}
	nice := 5
	checks := []struct {
		name      string
		got, want any
	}{
		{"name", f.Name, "prod-eu"},
		{"store dir resolved", f.NATS.StoreDir, "/etc/pitboss/data/nats"},
		{"port", f.NATS.Port, 4333},
		{"heartbeat", f.Heartbeat, 2 * time.Second},
		{"stop timeout", f.StopTimeout, 20 * time.Second},
		{"lock ttl", f.LockTTL, 30 * time.Second},
		{"http", f.HTTPAddr, "127.0.0.1:9000"},
		{"metrics", f.MetricsAddr, "127.0.0.1:9464"},
		{"restart", f.Restart, Restart{Policy: RestartAlways, Backoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, CrashLoop: 3, CrashWindow: time.Minute,
			HangTimeout: 45 * time.Second, StartTimeout: 3 * time.Minute}},
		{"limits address space", f.Limits.AddressSpace, int64(4 << 30)},
		{"limits memory", f.Limits.Memory, int64(512 << 20)},
		{"limits gomaxprocs", f.Limits.GoMaxProcs, 1},
		{"limits files", f.Limits.OpenFiles, uint64(256)},
		{"limits cpu", f.Limits.CPUSeconds, uint64(3600)},
		{"limits nice", *f.Limits.Nice, nice},
		{"market data", f.MarketData, MarketData{Mode: MarketDataFanout, Venue: "wss://venue.example/ws", Publish: true}},
		{"budget", f.Budget, Budget{Key: "203.0.113.7", Limit: 400, Reserve: 40}},
		{"agents", len(f.Agents), 2},
		{"short form", f.Agents[0].File, "/etc/pitboss/mm1.yaml"},
		{"absolute file", f.Agents[1].File, "/abs/mm2.yaml"},
		{"id", f.Agents[1].ID, "mm-2b"},
		{"wallet", f.Agents[1].Wallet, "keyring:mm2b"},
		{"live", f.Agents[1].Live, true},
		{"state dir", f.Agents[1].StateDir, "/etc/pitboss/st/mm2b"},
		{"args", strings.Join(f.Agents[1].Args, " "), "--speed 10"},
		{"env", strings.Join(f.Agents[1].Env, " "), "PITBOSS_KEYSTORE_PASSPHRASE"},
		{"agent restart", f.Restart.Merge(f.Agents[1].Restart).Policy, RestartNever},
		{"agent watchdog off", f.Restart.Merge(f.Agents[1].Restart).HangTimeout, WatchdogOff},
		{"agent keeps the fleet's start timeout", f.Restart.Merge(f.Agents[1].Restart).StartTimeout, 3 * time.Minute},
		{"agent limits", f.Limits.Merge(*f.Agents[1].Limits).OpenFiles, uint64(128)},
		{"agent limits keep the rest", f.Limits.Merge(*f.Agents[1].Limits).Memory, int64(512 << 20)},
		{"position", f.Agents[1].Line, strings.Count(fullFleet[:strings.Index(fullFleet, "- file: /abs")], "\n") + 1},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Fatalf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	f, err := testOpts.Parse("fleet.yaml", []byte("name: f1\nagents: [a.yaml]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Restart{Policy: RestartOnFailure, Backoff: DefaultBackoff, MaxBackoff: DefaultMaxBackoff, CrashLoop: DefaultCrashLoop, CrashWindow: DefaultCrashWindow,
		HangTimeout: DefaultHangTimeout, StartTimeout: DefaultStartTimeout}
	switch {
	case f.Heartbeat != DefaultHeartbeat, f.StopTimeout != DefaultStopTimeout, f.LockTTL != DefaultLockTTL:
		t.Fatalf("timing defaults: %+v", f)
	case f.HTTPAddr != DefaultHTTPAddr:
		t.Fatalf("http addr %q", f.HTTPAddr)
	case f.MetricsAddr != "":
		t.Fatal("metrics on by default")
	case f.Restart != want:
		t.Fatalf("restart %+v", f.Restart)
	case f.NATS.StoreDir != "/state/pitboss/fleet/f1/nats":
		t.Fatalf("store dir %q", f.NATS.StoreDir)
	case f.MarketData != MarketData{Mode: MarketDataAuto, Publish: true}:
		t.Fatalf("market data %+v", f.MarketData)
	case f.Limits.GoMaxProcs != 0:
		t.Fatalf("gomaxprocs %d, want automatic", f.Limits.GoMaxProcs)
	case f.Agents[0].File != "a.yaml":
		t.Fatalf("file %q", f.Agents[0].File)
	}
}

// TestParseGoMaxProcsAndMarketDataModes: gomaxprocs 0 says Go's default (not the
// automatic choice), and each market-data mode is read as written.
func TestParseGoMaxProcsAndMarketDataModes(t *testing.T) {
	cases := []struct {
		name, src string
		procs     int
		mode      MarketDataMode
	}{
		{"left out: automatic", "", 0, MarketDataAuto},
		{"gomaxprocs 0: Go's default", "limits: {gomaxprocs: 0}\n", GoMaxProcsCores, MarketDataAuto},
		{"gomaxprocs 2", "limits: {gomaxprocs: 2}\n", 2, MarketDataAuto},
		{"auto with a venue", "market_data: {mode: auto, venue: 'ws://127.0.0.1:1'}\n", 0, MarketDataAuto},
		{"own", "market_data: {mode: own}\n", 0, MarketDataOwn},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := testOpts.Parse("fleet.yaml", []byte("name: f\n"+c.src+"agents: [a.yaml]\n"))
			if err != nil {
				t.Fatal(err)
			}
			if f.Limits.GoMaxProcs != c.procs || f.MarketData.Mode != c.mode {
				t.Fatalf("gomaxprocs %d, mode %s; want %d, %s", f.Limits.GoMaxProcs, f.MarketData.Mode, c.procs, c.mode)
			}
		})
	}
}

// TestParseReportsEveryProblemWithItsPosition checks that each mistake is named at
// its line and column.
func TestParseReportsEveryProblemWithItsPosition(t *testing.T) {
	cases := []struct {
		name, src, want string
		line, col       int
	}{
		{"missing name", "agents: [a.yaml]\n", "name is required", 1, 1},
		{"missing agents", "name: f\n", "agents is required", 1, 1},
		{"bad name", "name: a.b\nagents: [a.yaml]\n", `name: "a.b": use 1 to 64`, 1, 7},
		{"unknown key suggests", "name: f\nagentz: [a.yaml]\n", `unknown setting "agentz" in the fleet file (did you mean agents?)`, 2, 1},
		{"duplicate key", "name: f\nname: g\nagents: [a]\n", `"name" is set twice (first at line 1)`, 2, 1},
		{"bad duration", "name: f\nheartbeat: soon\nagents: [a]\n", `heartbeat: must be a duration`, 2, 12},
		{"heartbeat range", "name: f\nheartbeat: 5m\nagents: [a]\n", "heartbeat: 5m0s is outside", 2, 12},
		{"bad policy", "name: f\nrestart: {policy: sometimes}\nagents: [a]\n", `restart.policy: "sometimes" is not a policy`, 2, 19},
		{"backoff order", "name: f\nrestart: {backoff: 1m, max_backoff: 1s}\nagents: [a]\n", "max_backoff (1s) is shorter than backoff (1m0s)", 2, 10},
		{"bad size", "name: f\nlimits: {memory: lots}\nagents: [a]\n", `limits.memory: must be a positive size`, 2, 18},
		{"tiny address space", "name: f\nlimits: {address_space: 1MiB}\nagents: [a]\n", "at least 256MiB", 2, 25},
		{"nice range", "name: f\nlimits: {nice: 40}\nagents: [a]\n", "limits.nice: must be a whole number from -20 to 19", 2, 16},
		{"url with password", "name: f\nnats: {url: 'nats://u:p@h:4222'}\nagents: [a]\n", "put credentials in nats.credentials", 2, 13},
		{"url scheme", "name: f\nnats: {url: 'http://h'}\nagents: [a]\n", "is not a nats:// or tls:// URL", 2, 13},
		{"store dir with url", "name: f\nnats: {url: 'nats://h:1', store_dir: x}\nagents: [a]\n", "store_dir and port are for the embedded server", 1, 1},
		{"creds without url", "name: f\nnats: {credentials: c}\nagents: [a]\n", "credentials are for an existing cluster", 1, 1},
		{"fanout without venue", "name: f\nmarket_data: {mode: fanout}\nagents: [a]\n", "mode fanout needs venue", 1, 1},
		{"bad venue", "name: f\nmarket_data: {venue: 'http://x'}\nagents: [a]\n", "is not a ws:// or wss:// URL", 2, 22},
		{"bad mode", "name: f\nmarket_data: {mode: shared}\nagents: [a]\n", `market_data.mode: "shared" is not a mode; use auto, own or fanout`, 2, 21},
		{"gomaxprocs range", "name: f\nlimits: {gomaxprocs: -1}\nagents: [a]\n", "limits.gomaxprocs: must be a whole number from 0 to 1024", 2, 22},
		{"reserve", "name: f\nbudget: {limit: 10, reserve: 10}\nagents: [a]\n", "reserve (10) must be smaller than limit (10)", 2, 9},
		{"agents not a list", "name: f\nagents: {a: b}\n", "agents: must be a list", 2, 9},
		{"agent without file", "name: f\nagents: [{id: x}]\n", "agents[0]: file is required", 2, 10},
		{"bad agent id", "name: f\nagents: [{file: a, id: 'x y'}]\n", `agents[0].id: "x y"`, 2, 24},
		{"duplicate id", "name: f\nagents:\n - {file: a, id: x}\n - {file: b, id: x}\n", `id "x" is used twice (first at line 3)`, 4, 4},
		{"env value instead of a name", "name: f\nagents: [{file: a, env: ['A=b']}]\n", "agents[0].env: not a variable name", 2, 26},
		{"env of the fleet", "name: f\nagents: [{file: a, env: [PITBOSS_NATS_PASSWORD]}]\n", "PITBOSS_NATS_PASSWORD is set by the supervisor", 2, 26},
		{"reserved arg", "name: f\nagents: [{file: a, args: [--live]}]\n", "--live is set by the fleet file", 2, 27},
		{"wallet looks like a key", "name: f\nagents: [{file: a, wallet: 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318}]\n", "never put a key", 2, 28},
		{"not yaml", "name: [\n", "not valid YAML", 1, 1},
		{"not a mapping", "- a\n", "must be a mapping", 1, 1},
		{"version", "version: 2\nname: f\nagents: [a]\n", "version: must be a whole number from 1 to 1", 1, 10},
		{"hang timeout not a duration", "name: f\nrestart: {hang_timeout: soon}\nagents: [a]\n", `restart.hang_timeout: must be a duration such as 30s or 2m, or 0 (off), not "soon"`, 2, 25},
		{"hang timeout negative", "name: f\nrestart: {hang_timeout: -5s}\nagents: [a]\n", `restart.hang_timeout: must be a duration`, 2, 25},
		{"hang timeout under three heartbeats", "name: f\nrestart: {hang_timeout: 5s}\nheartbeat: 2s\nagents: [a]\n", "restart.hang_timeout: 5s is shorter than 3 heartbeats (6s)", 2, 25},
		{"agent start timeout under three heartbeats", "name: f\nagents: [{file: a, restart: {start_timeout: 100ms}}]\n", "agents[0].restart.start_timeout: 100ms is shorter than 3 heartbeats (3s)", 2, 45},
		{"replicas on the embedded server", "name: f\nnats: {replicas: 3}\nagents: [a]\n", "replicas above 1 need a cluster", 1, 1},
		{"replicas range", "name: f\nnats: {url: 'nats://h:1', replicas: 7}\nagents: [a]\n", "nats.replicas: must be a whole number from 1 to 5", 2, 37},
		{"tls without url", "name: f\nnats: {tls: {ca: ca.pem}}\nagents: [a]\n", "tls is for an existing cluster", 1, 1},
		{"tls cert without key", "name: f\nnats: {url: 'nats://h:1', tls: {cert: c.pem}}\nagents: [a]\n", "cert and key go together", 2, 32},
		{"signing key without url", "name: f\nnats: {signing_key: k.nk}\nagents: [a]\n", "credentials are for an existing cluster", 1, 1},
		{"signing key and agent credentials", "name: f\nnats: {url: 'nats://h:1', signing_key: k.nk, agent_credentials: a.creds}\nagents: [a]\n",
			"signing_key and agent_credentials contradict each other", 1, 1},
		{"credentials ttl without a signing key", "name: f\nnats: {url: 'nats://h:1', credentials_ttl: 1h}\nagents: [a]\n", "credentials_ttl is the lifetime of credentials minted with signing_key", 1, 1},
		{"credentials ttl too short", "name: f\nnats: {url: 'nats://h:1', signing_key: k.nk, credentials_ttl: 30s}\nagents: [a]\n", "nats.credentials_ttl: 30s is out of range (1m to 24h)", 2, 63},
		{"credentials ttl too long", "name: f\nnats: {url: 'nats://h:1', signing_key: k.nk, credentials_ttl: 25h}\nagents: [a]\n", "nats.credentials_ttl: 25h0m0s is out of range (1m to 24h)", 2, 63},
		{"bad label", "name: f\nlabels: {'a b': x}\nagents: [a]\n", `labels: "a b" is not a label name`, 2, 10},
		{"bad placement value", "name: f\nagents: [{file: a, placement: {region: 'e u'}}]\n", `agents[0].placement.region: "e u" is not a label value`, 2, 40},
		{"max agents", "name: f\nmax_agents: 0\nagents: [a]\n", "max_agents: must be a whole number from 1 to 1000", 2, 13},
		{"per agent over the limit", "name: f\nbudget: {limit: 10, per_agent: 20}\nagents: [a]\n", "per_agent (20) is more than the limit (10)", 1, 1},
		{"hang timeout a list", "name: f\nrestart: {hang_timeout: [1]}\nagents: [a]\n", "restart.hang_timeout: must be a single value", 2, 25},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := testOpts.Parse("fleet.yaml", []byte(c.src))
			var probs agents.Problems
			if !errors.As(err, &probs) {
				t.Fatalf("want problems, got %v", err)
			}
			for _, p := range probs {
				if strings.Contains(p.Msg, c.want) {
					if p.Line != c.line || p.Col != c.col || p.File != "fleet.yaml" {
						t.Fatalf("%q at %d:%d, want %d:%d", p.Msg, p.Line, p.Col, c.line, c.col)
					}
					return
				}
			}
			t.Fatalf("no problem containing %q in:\n%v", c.want, err)
		})
	}
}

// TestParseWatchdogTimeouts: left out, the watchdog waits 30 s of silence (2 min
// for the first heartbeat) or ten heartbeats if longer; 0 and off turn a check
// off; an agent overrides the fleet's field by field.
func TestParseWatchdogTimeouts(t *testing.T) {
	cases := []struct {
		name, src         string
		hang, start       time.Duration
		agentHang, agentS time.Duration
	}{
		{"defaults", "", DefaultHangTimeout, DefaultStartTimeout, DefaultHangTimeout, DefaultStartTimeout},
		{"ten heartbeats when longer", "heartbeat: 20s\n", 200 * time.Second, 200 * time.Second, 200 * time.Second, 200 * time.Second},
		{"set", "restart: {hang_timeout: 10s, start_timeout: 1m}\n", 10 * time.Second, time.Minute, 10 * time.Second, time.Minute},
		{"0 turns it off", "restart: {hang_timeout: 0, start_timeout: 0s}\n", WatchdogOff, WatchdogOff, WatchdogOff, WatchdogOff},
		{"off turns it off", "restart: {hang_timeout: off}\n", WatchdogOff, DefaultStartTimeout, WatchdogOff, DefaultStartTimeout},
		{"agent override", "restart: {hang_timeout: 0}\nagents_restart: {hang_timeout: 5s}\n", WatchdogOff, DefaultStartTimeout, 5 * time.Second, DefaultStartTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, agent := c.src, "a.yaml"
			if i := strings.Index(src, "agents_restart: "); i >= 0 {
				agent = "{file: a.yaml, restart: " + strings.TrimSuffix(src[i+len("agents_restart: "):], "\n") + "}"
				src = src[:i]
			}
			f, err := testOpts.Parse("fleet.yaml", []byte("name: f\n"+src+"agents: ["+agent+"]\n"))
			if err != nil {
				t.Fatal(err)
			}
			a := f.Restart.Merge(f.Agents[0].Restart)
			if f.Restart.HangTimeout != c.hang || f.Restart.StartTimeout != c.start || a.HangTimeout != c.agentHang || a.StartTimeout != c.agentS {
				t.Fatalf("fleet %s/%s, agent %s/%s; want %s/%s, %s/%s", f.Restart.HangTimeout, f.Restart.StartTimeout, a.HangTimeout, a.StartTimeout,
					c.hang, c.start, c.agentHang, c.agentS)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true}, {"512MiB", 512 << 20, true}, {"2 GiB", 2 << 30, true}, {"1GB", 1e9, true}, {"10KB", 10_000, true},
		{"1024B", 1024, true}, {"0", 0, false}, {"-1", 0, false}, {"1.5GiB", 0, false}, {"lots", 0, false},
		{"99999999999TiB", 0, false}, {"", 0, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseSize(c.in)
			if (err == nil) != c.ok || got != c.want {
				t.Fatalf("ParseSize(%q) = %d, %v", c.in, got, err)
			}
		})
	}
}

func TestLoadFileRefusesLargeFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(p, make([]byte, MaxFleetFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := testOpts.LoadFile(p)
	var probs agents.Problems
	if !errors.As(err, &probs) || !strings.Contains(probs[0].Msg, "larger than") {
		t.Fatalf("got %v", err)
	}
	if _, err := testOpts.LoadFile(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("missing file loaded")
	}
}

// FuzzParseFleetFile feeds arbitrary bytes to the fleet-file parser: it never
// panics, every problem is inside the file, and a 64-hex-digit secret in the input
// never appears in a message.
func FuzzParseFleetFile(f *testing.F) {
	f.Add([]byte(fullFleet))
	for _, s := range []string{
		"", "a", "- 1", "name: [", "&a x: *a", "name: &n a\nagents: [*n]\n", "agents: [{file: a, limits: {nice: x}}]",
		"name: f\nagents:\n - file: a\n   wallet: 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318\n",
		"name: f\nrestart: [1]\nagents: [a]", "? [a]\n: b", "name: f\n---\n", "agents: !!map {a: 1}", "nats: {port: 99999}",
		"limits: {address_space: 9223372036854775807}", "name: f\nagents: [{args: [{a: b}]}]",
		"name: f\nalerts: {daily_loss: 5, webhooks: [{name: t, format: telegram, token: env:T, chat_id: \"1\"}]}\nagents: [a]",
		"name: f\nrestart: {hang_timeout: off, start_timeout: 1ms}\nagents: [{file: a, restart: {hang_timeout: 0}}]",
	} {
		f.Add([]byte(s))
	}
	const secret = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := testOpts.Parse("f.yaml", src)
		if err == nil {
			return
		}
		var probs agents.Problems
		if !errors.As(err, &probs) {
			t.Fatalf("not problems: %v", err)
		}
		lines := strings.Count(string(src), "\n") + strings.Count(string(src), "\r") + 1
		for _, p := range probs {
			if p.Line < 0 || p.Line > lines+1 {
				t.Fatalf("problem outside the file: %+v", p)
			}
			if strings.Contains(p.Msg, secret) {
				t.Fatalf("secret in message: %q", p.Msg)
			}
		}
	})
}

// TestFleetFileAlerts: the fleet file's alerts section is read by runtime/alert,
// its problems positioned in the fleet file, a URL in place of a reference
// refused without being quoted.
func TestFleetFileAlerts(t *testing.T) {
	f, err := testOpts.Parse("f.yaml", []byte("name: f\nalerts:\n  daily_loss: 40\n  webhooks:\n    - {name: ops, format: slack, url: env:SLACK_HOOK}\nagents: [a.yaml]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Alerts.Webhooks) != 1 || f.Alerts.Webhooks[0].URL != "env:SLACK_HOOK" || f.Alerts.DailyLoss != 40_000_000 {
		t.Fatalf("alerts %+v", f.Alerts)
	}
	_, err = testOpts.Parse("f.yaml", []byte("name: f\nalerts:\n  webhooks:\n    - {name: ops, format: slack, url: 'https://hooks.slack.com/services/T/B/sekrit'}\nagents: [a.yaml]\n"))
	var probs agents.Problems
	if !errors.As(err, &probs) || len(probs) != 1 || probs[0].Line != 4 || strings.Contains(probs[0].String(), "sekrit") ||
		!strings.Contains(probs[0].String(), "f.yaml:4:") {
		t.Fatalf("problems %v", err)
	}
}

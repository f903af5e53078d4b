package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
)

// opts is the injected outside world: HOME=/home/u, and every strategy file exists
// except one named missing.yaml.
var opts = Options{
	Getenv: func(k string) string {
		if k == "HOME" {
			return "/home/u"
		}
		return ""
	},
	Stat: func(p string) (fs.FileInfo, error) {
		if filepath.Base(p) == "missing.yaml" {
			return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
		}
		return nil, nil
	},
}

const minimal = `name: mm-1
wallet: keyring:mm-1
markets: ["12345"]
strategy: strategy.yaml
`

func TestLoadAppliesDefaults(t *testing.T) {
	s, err := opts.Parse("agents/mm/agent.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		File: "agents/mm/agent.yaml", Version: 1, Name: "mm-1",
		Wallet:    WalletRef{Scheme: WalletKeyring, Value: "mm-1"},
		Markets:   Markets{Tokens: []market.TokenID{"12345"}},
		Strategy:  StrategyRef{File: "agents/mm/strategy.yaml"},
		Heartbeat: 5 * time.Second, StateDir: "/home/u/.local/state/pitboss/agents/" + dirOf("agents/mm/agent.yaml", "mm-1"), LogLevel: LogInfo,
	}
	if s.Version != want.Version || s.Name != want.Name || s.Wallet != want.Wallet || s.Strategy.File != want.Strategy.File ||
		s.Heartbeat != want.Heartbeat || s.StateDir != want.StateDir || s.LogLevel != want.LogLevel ||
		len(s.Markets.Tokens) != 1 || s.Markets.Tokens[0] != "12345" {
		t.Fatalf("spec\n got %+v\nwant %+v", s, want)
	}
	if !s.DryRun() || s.Execution != DryRun || s.Venue.Kind != VenueEmbedded {
		t.Fatal("the defaults are not dry run on the embedded venue")
	}
	if !reflect.DeepEqual(s.Guards, policies.Config{}) {
		t.Fatalf("guards %+v", s.Guards)
	}
}

func TestLoadReadsEveryField(t *testing.T) {
	src := `version: 1
name: arb_2
description: two legs
wallet: keystore:keys/arb.json
venue:
  kind: remote
  clob: https://clob.example.com
  catalogue: https://cat.example.com/api
  data: http://127.0.0.1:8081
  bridge: https://bridge.example.com
  header_prefix: POLY_
dry_run: false
markets:
  select: accepting_orders && !neg_risk && tick == 0.01 && end_date > now
  limit: 3
strategy:
  file: /abs/strategy.yaml
  params:
    spread: 0.02
    size: 10
    enabled: true
guards:
  max_order_size: 25
  max_order_notional: "12.5"
  price_band: 0.05
  max_open_orders: 4
  flatten_on_halt: true
  custom:
    - name: late
      deny_if: hours_to_end < 2
      reason: too close to the end
heartbeat: 2s
state_dir: state/arb
log_level: debug
`
	s, err := opts.Parse("/etc/pitboss/agent.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Wallet.Value != "/etc/pitboss/keys/arb.json" || s.Wallet.String() != "keystore:/etc/pitboss/keys/arb.json" {
		t.Fatalf("wallet %+v", s.Wallet)
	}
	v := s.Venue
	if v.Kind != VenueRemote || v.CLOB != "https://clob.example.com" || v.Data != "http://127.0.0.1:8081" || v.HeaderPrefix != "POLY_" {
		t.Fatalf("venue %+v", v)
	}
	if s.DryRun() || s.Execution != Live {
		t.Fatal("dry_run: false not read")
	}
	if s.Markets.Selector == nil || s.Markets.Limit != 3 || s.Markets.Tokens != nil {
		t.Fatalf("markets %+v", s.Markets)
	}
	if s.Strategy.File != "/abs/strategy.yaml" || len(s.Strategy.Params) != 3 ||
		s.Strategy.Params[0] != (Param{Name: "spread", Value: "0.02", Line: 19, Col: 13}) || s.Strategy.Params.Map()["enabled"] != "true" {
		t.Fatalf("strategy %+v", s.Strategy)
	}
	g := s.Guards
	if g.MaxOrderSize != 25*market.One || g.MaxOrderNotional != 12_500_000 || g.PriceBand != 50_000 || g.MaxOpenOrders != 4 ||
		!g.FlattenOnHalt || len(g.Custom) != 1 || g.Custom[0] != (policies.CustomGuard{Name: "late", DenyIf: "hours_to_end < 2", Reason: "too close to the end"}) {
		t.Fatalf("guards %+v", g)
	}
	if s.Heartbeat != 2*time.Second || s.StateDir != "/etc/pitboss/state/arb" || s.LogLevel != LogDebug {
		t.Fatalf("spec %+v", s)
	}
	if _, err := policies.New(s.Guards); err != nil {
		t.Fatalf("the guards section does not build a chain: %v", err)
	}
}

func TestShorthandForms(t *testing.T) {
	src := `name: q
wallet: env:PITBOSS_KEY
venue: embedded
markets:
  tokens: ["1", "2"]
strategy:
  file: s.yaml
`
	s, err := opts.Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Venue.Kind != VenueEmbedded || len(s.Markets.Tokens) != 2 || s.Wallet != (WalletRef{WalletEnv, "PITBOSS_KEY"}) {
		t.Fatalf("spec %+v", s)
	}
	s, err = opts.Parse("a.yaml", []byte(strings.Replace(src, "venue: embedded", "venue: remote", 1)))
	if err == nil || !strings.Contains(err.Error(), "venue.clob: the base URL of the clob service is required") {
		t.Fatalf("remote without URLs: %v", err)
	}
	if s == nil || s.Name != "q" {
		t.Fatal("no partial spec with the problems")
	}
}

// dirOf is the default state directory's name of an agent file without an id: its
// name and 8 hex digits of the SHA-256 of its absolute path.
func dirOf(path, name string) string {
	abs, _ := filepath.Abs(path)
	h := sha256.Sum256([]byte(abs))
	return name + "-" + hex.EncodeToString(h[:4])
}

func TestStateDirDefaults(t *testing.T) {
	const file = "/srv/a/agent.yaml"
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/pitboss/agents/" + dirOf(file, "mm-1")},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/pitboss/agents/" + dirOf(file, "mm-1")},
		{map[string]string{"XDG_STATE_HOME": "relative"}, "/srv/a/.state/pitboss/agents/" + dirOf(file, "mm-1")},
		{nil, "/srv/a/.state/pitboss/agents/" + dirOf(file, "mm-1")},
	}
	for _, tt := range tests {
		o := opts
		o.Getenv = func(k string) string { return tt.env[k] }
		s, err := o.Parse(file, []byte(minimal))
		if err != nil {
			t.Fatal(err)
		}
		if s.StateDir != tt.want {
			t.Errorf("env %v: state dir %q, want %q", tt.env, s.StateDir, tt.want)
		}
		if s.Identity() != "file:"+file {
			t.Errorf("identity %q", s.Identity())
		}
	}
}

// TestStateIsKeyedByIdentity: two files that share a name (a copied directory)
// never share a default state directory; an explicit id names the state, for
// both the directory and the identity.
func TestStateIsKeyedByIdentity(t *testing.T) {
	o := opts
	o.Getenv = func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }
	a, err := o.Parse("/srv/quoter/agent.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	b, err := o.Parse("/srv/quoter-copy/agent.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != b.Name || a.StateDir == b.StateDir || a.Identity() == b.Identity() {
		t.Fatalf("two files named %s share state: %s (%s) and %s (%s)", a.Name, a.StateDir, a.Identity(), b.StateDir, b.Identity())
	}
	for _, path := range []string{"/srv/quoter/agent.yaml", "/elsewhere/agent.yaml"} {
		s, err := o.Parse(path, []byte(minimal+"id: mm-main\n"))
		if err != nil {
			t.Fatal(err)
		}
		if s.StateDir != "/home/u/.local/state/pitboss/agents/mm-main" || s.Identity() != "id:mm-main" {
			t.Fatalf("%s with id mm-main: state dir %s, identity %s", path, s.StateDir, s.Identity())
		}
	}
	if _, err := o.Parse("/srv/a.yaml", []byte(minimal+"id: ../x\n")); err == nil || !strings.Contains(err.Error(), "id: \"../x\"") {
		t.Fatalf("a bad id: %v", err)
	}
}

// TestProblems checks that each mistake is reported at its place, and that a file
// with several mistakes reports all of them.
func TestProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // "line:col: substring", in order
	}{
		{"empty file", "", []string{"1:1: the file is empty"}},
		{"not a mapping", "- a\n- b\n", []string{"1:1: an agent file is a mapping of settings"}},
		{"syntax error", "name: a\n  wallet: b: c\n", []string{"2:1: mapping values are not allowed"}},
		{"two documents", minimal + "---\nname: b\n", []string{"5:1: only one YAML document"}},
		{"required fields", "description: nothing\n", []string{
			"1:1: name is required", "1:1: wallet (keyring:NAME, file:NAME, keystore:PATH or env:VAR) is required",
			"1:1: markets is required", "1:1: strategy is required"}},
		{"unknown fields suggest", minimal + "dryrun: true\nguards:\n  max_ordr_size: 5\n  bogus: 1\n", []string{
			`5:1: unknown field "dryrun" in the agent file (did you mean dry_run?)`,
			`7:3: unknown field "max_ordr_size" in guards (did you mean max_order_size?)`,
			`8:3: unknown field "bogus" in guards`}},
		{"duplicate key", minimal + "name: again\n", []string{`5:1: "name" is set twice (first at line 1)`}},
		{"bad name", strings.Replace(minimal, "mm-1\nw", "a.b\nw", 1), []string{`1:7: name: "a.b": use 1 to 64`}},
		{"bad version", "version: 2\n" + minimal, []string{"1:10: version: 2 is not supported"}},
		{"wallet without scheme", strings.Replace(minimal, "keyring:mm-1", "mm-1", 1), []string{"2:9: wallet: must be keyring:NAME, file:NAME, keystore:PATH or env:VAR"}},
		{"wallet unknown scheme", strings.Replace(minimal, "keyring:mm-1", "vault:mm-1", 1), []string{"2:9: wallet: unknown scheme"}},
		{"wallet bad env name", strings.Replace(minimal, "keyring:mm-1", "env:1X", 1), []string{"2:9: wallet: env:VAR needs the name"}},
		{"wallet bad file name", strings.Replace(minimal, "keyring:mm-1", "file:-x", 1), []string{"2:9: wallet: file:NAME needs a name of 1-64"}},
		{"wallet keyring name the stores cannot hold", strings.Replace(minimal, "keyring:mm-1", "keyring:me@host", 1), []string{"2:9: wallet: keyring:NAME needs a name"}},
		{"wallet mapping", strings.Replace(minimal, "keyring:mm-1", "{a: b}", 1), []string{"2:9: wallet: must be keyring:NAME"}},
		{"dry_run not a bool", minimal + "dry_run: no\n", []string{`5:10: dry_run: must be true or false, not "no"`}},
		{"venue unknown", minimal + "venue: moon\n", []string{`5:8: venue: "moon" is not a venue`}},
		{"embedded with urls", minimal + "venue:\n  clob: https://x\n  header_prefix: X_\n", []string{
			"6:9: venue.clob: only a remote venue has URLs", "7:18: venue.header_prefix: only a remote venue"}},
		{"remote urls checked", minimal + "venue:\n  kind: remote\n  clob: http://example.com\n  catalogue: https://u:p@example.com\n  data: ftp://x\n  bridge: nope\n  header_prefix: service\n", []string{
			"7:9: venue.clob: plain http is only allowed on a loopback address",
			"8:14: venue.catalogue: credentials do not belong in a URL",
			"9:9: venue.data: the scheme must be https",
			`10:11: venue.bridge: "nope" is not an absolute URL`,
			`11:18: venue.header_prefix: "service" must be upper-case`}},
		{"markets both", strings.Replace(minimal, `markets: ["12345"]`, "markets:\n  tokens: [\"1\"]\n  select: active", 1), []string{"5:11: markets: give only one of tokens, conditions, slots or select (found tokens and select)"}},
		{"markets neither", strings.Replace(minimal, `markets: ["12345"]`, "markets:\n  limit: 3", 1), []string{"4:3: markets: give one of tokens"}},
		{"markets bad tokens", strings.Replace(minimal, `["12345"]`, `["12a", "7", "7"]`, 1), []string{
			`3:11: markets.tokens[0]: "12a" is not a token id`, `3:23: markets.tokens[2]: "7" is listed twice`}},
		{"markets empty token list", strings.Replace(minimal, `["12345"]`, `[]`, 1), []string{"3:10: markets.tokens: list at least one id"}},
		{"markets limit without select", strings.Replace(minimal, `markets: ["12345"]`, "markets:\n  tokens: [\"1\"]\n  limit: 2", 1), []string{"5:10: markets.limit applies to select only"}},
		{"markets bad conditions", strings.Replace(minimal, `markets: ["12345"]`, "markets:\n  conditions: [\"0x12\"]", 1), []string{`4:16: markets.conditions[0]: "0x12" is not a condition id`}},
		{"markets bad slots", strings.Replace(minimal, `markets: ["12345"]`, "markets:\n  slots:\n    main: abc\n    2x: 1\n    hedge: [1]\n    main: 5", 1), []string{
			`5:11: slot main: "abc" is neither a token id`, "6:5: markets.slots: slot names are identifiers",
			"7:12: slot hedge: must be a token id", "8:5: slot main is bound twice"}},
		{"selector errors are positioned", strings.Replace(minimal, `markets: ["12345"]`, "markets:\n  select: active && tik == 0.01\n  limit: -1", 1), []string{
			"4:21: unknown name tik (did you mean tick?)", "5:10: markets.limit: must be between 1"}},
		{"selector in a block scalar", strings.Replace(minimal, `markets: ["12345"]`, "markets:\n  select: |\n    active &&\n      closedd", 1), []string{
			"6:7: unknown name closedd (did you mean closed?)"}},
		{"strategy missing", strings.Replace(minimal, "strategy.yaml", "missing.yaml", 1), []string{"4:11: strategy file missing.yaml: file does not exist"}},
		{"strategy without file", strings.Replace(minimal, "strategy: strategy.yaml", "strategy:\n  params: {a: 1}", 1), []string{"5:3: strategy.file is required"}},
		{"strategy params", strings.Replace(minimal, "strategy: strategy.yaml", "strategy:\n  file: s.yaml\n  params:\n    a: [1]\n    2b: 1\n    c: 1\n    c: 2", 1), []string{
			"7:8: parameter a: must be a single value", "8:5: strategy.params: parameter names are identifiers",
			"10:5: parameter c is set twice (first at line 9)"}},
		{"guards values", minimal + "guards:\n  max_order_size: -1\n  max_order_notional: 1.0000001\n  price_band: 1\n  max_open_orders: 2.5\n  flatten_on_halt: 1\n  max_daily_loss: [1]\n", []string{
			`6:19: guards.max_order_size: "-1" is not an exact amount`,
			`7:23: guards.max_order_notional: "1.0000001" is not an exact amount (more than 6 decimal places)`,
			"8:15: guards.price_band: must be below 1",
			`9:20: guards.max_open_orders: must be a whole number, not "2.5"`,
			`10:20: guards.flatten_on_halt: must be true or false, not "1"`,
			"11:19: guards.max_daily_loss: must be a single value, not a list"}},
		{"custom guards", minimal + "guards:\n  custom:\n    - name: a\n      deny_if: notional > 10 &&\n    - name: a\n      deny_if: \"siez > 1\"\n    - deny_if: true\n", []string{
			"8:31: unexpected token EOF",
			`9:13: guards.custom[1].name: "a" is also the name of custom[0]`,
			"10:17: unknown name siez (did you mean size?)",
			"11:7: guards.custom[2].name: is required"}},
		{"heartbeat", minimal + "heartbeat: 5\n", []string{`5:12: heartbeat: "5" is not a duration such as 5s or 1m30s (add a unit: 5s)`}},
		{"heartbeat range", minimal + "heartbeat: 10m\n", []string{"5:12: heartbeat: 10m0s is outside 1s to 1m0s"}},
		{"log level", minimal + "log_level: loud\n", []string{`5:12: log_level: "loud" is not a level`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := opts.Parse("a.yaml", []byte(tt.src))
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error %v is not Problems", err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], "a.yaml:"+strings.SplitN(w, " ", 2)[0]) || !strings.Contains(got[i], strings.SplitN(w, " ", 2)[1]) {
					t.Errorf("problem %d\n got %s\nwant a.yaml:%s", i, got[i], w)
				}
			}
		})
	}
}

// TestSecretsAreRefusedAndNeverEchoed puts keys and phrases where they do not
// belong: each is refused, and no message contains it.
func TestSecretsAreRefusedAndNeverEchoed(t *testing.T) {
	const (
		hexKey   = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
		mnemonic = "legal winner thank year wave sausage worth useful legal winner thank yellow"
		xprv     = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
	)
	tests := []struct {
		name, src, secret, want string
	}{
		{"hex key as wallet", strings.Replace(minimal, "keyring:mm-1", hexKey, 1), hexKey, "2:9: wallet: this looks like a raw private key"},
		{"0x key as wallet", strings.Replace(minimal, "keyring:mm-1", "0x"+hexKey, 1), hexKey, "2:9: wallet: this looks like a raw private key"},
		{"quoted key as wallet", strings.Replace(minimal, "keyring:mm-1", `"`+hexKey+`"`, 1), hexKey, "2:9: wallet: this looks like a raw private key"},
		{"mnemonic as wallet", strings.Replace(minimal, "keyring:mm-1", mnemonic, 1), "sausage", "2:9: wallet: this looks like a mnemonic"},
		{"xprv as wallet", strings.Replace(minimal, "keyring:mm-1", xprv, 1), xprv[10:40], "2:9: wallet: this looks like an extended private key"},
		{"key after a scheme", strings.Replace(minimal, "keyring:mm-1", "keyring:"+hexKey, 1), hexKey, "2:9: wallet: this looks like a raw private key"},
		{"key under an unknown field", minimal + "private_key: " + hexKey + "\n", hexKey, "5:14: this value looks like a raw private key"},
		{"mnemonic in a parameter", strings.Replace(minimal, "strategy: strategy.yaml", "strategy:\n  file: s.yaml\n  params:\n    seed: "+mnemonic, 1), "sausage", "7:11: this value looks like a mnemonic"},
		{"key as a field name", minimal + hexKey + ": 1\n", hexKey, "5:1: this value looks like a raw private key"},
		{"key as a token id", strings.Replace(minimal, `["12345"]`, `["`+hexKey+`"]`, 1), hexKey, "3:11: this value looks like a raw private key"},
		{"0x key where a duration goes", minimal + "heartbeat: 0x" + hexKey + "\n", hexKey, "5:12: heartbeat: (value not shown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := opts.Parse("a.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), tt.secret) {
				t.Fatalf("the message echoes the secret:\n%v", err)
			}
			if !strings.Contains(err.Error(), "a.yaml:"+tt.want) {
				t.Fatalf("problems\n%v\nlack a.yaml:%s", err, tt.want)
			}
		})
	}
	// a condition id (0x + 64 hex) is not a secret where ids belong
	src := strings.Replace(minimal, `markets: ["12345"]`, "markets:\n  select: condition == '0x"+hexKey+"'", 1)
	if _, err := opts.Parse("a.yaml", []byte(src)); err != nil {
		t.Fatalf("a condition id in a selector was refused: %v", err)
	}
}

func TestLoadReadsFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(path, []byte(minimal), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "strategy.yaml"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil || s.Strategy.File != filepath.Join(dir, "strategy.yaml") {
		t.Fatalf("%v %+v", err, s)
	}
	if _, err := Load(filepath.Join(dir, "nope.yaml")); err == nil || errors.As(err, new(Problems)) {
		t.Fatalf("a missing file: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a huge file: %v", err)
	}
}

func TestSelectorMatches(t *testing.T) {
	sel, err := CompileSelector("accepting_orders && tick == 0.01 && end_date - now < 86400 && yes_label == 'Yes'", exprOrigin)
	if err != nil {
		t.Fatal(err)
	}
	m := &market.Info{TickSize: 10_000, AcceptingOrders: true, EndDate: 1000, Outcomes: [2]string{"Yes", "No"}}
	if ok, err := sel.Match(nil, m, 900); err != nil || !ok {
		t.Fatalf("match %v %v", ok, err)
	}
	if ok, _ := sel.Match(nil, m, 1000-86400-1); ok {
		t.Fatal("matched a market ending too late")
	}
	if sel.Source() == "" {
		t.Fatal("no source")
	}
}

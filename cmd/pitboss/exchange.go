package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
	"github.com/pitbossdev/pitboss/sandbox/questions"
	"github.com/pitbossdev/pitboss/sandbox/rfq"
	"github.com/pitbossdev/pitboss/sandbox/server"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/sim"
	"github.com/pitbossdev/pitboss/sandbox/sim/simhost"
)

func init() {
	register(command{name: "exchange", summary: "run the local exchange: the service's CLOB API over the exchange core (paper money)", run: runExchange})
}

const exchangeUsage = `[flags]

Runs the local exchange: the CLOB service of the specification (orders, market
data, API keys, balances, WebSockets) over the exchange core, with a durable
journal in --data-dir (or nothing kept with --ephemeral). Wallets get
--paper-balance of collateral when their first API key is created. Without
--markets, a built-in demo catalogue of a dozen markets is listed.

Prints the base URLs of its listeners, then serves until interrupted
(SIGINT/SIGTERM: in-flight requests finish, the journal is flushed and a final
snapshot written). See docs/exchange.md.`

// exchangeEnv is what the listeners of `pitboss exchange` are built from. Other files
// of this command add listeners with registerExchangeParts.
type exchangeEnv struct {
	Host    *host.Host
	Server  *server.Server
	Hub     *ws.Hub // the WebSocket hub: the catalogue service mounts CommentsHandler and publishes comments
	Catalog *catalog.Catalog
	Logger  *zap.Logger
	Clock   func() int64
	// Conns caps the connections of the public listeners (per peer and in all);
	// every service listener is wrapped with it.
	Conns *server.ConnLimit
	// SimOpen (--sim) opens the simulation routes (/sim/*) to every client;
	// otherwise they need OperatorToken ("" when there is none: closed).
	SimOpen       bool
	OperatorToken string
	// Addr is the CLOB service's --addr as given: the services' "auto" addresses
	// derive from it (serviceAddr).
	Addr string
}

// exchangeService is an extra listener of `pitboss exchange` (the catalogue, data
// and bridge services; WebSocket routes mount on the CLOB server instead). Flags
// registers its flags; Start is called once the host and the CLOB server exist and
// returns the base URL to print ("" for none) and a function that serves until ctx
// ends, draining gracefully, and returns nil then.
type exchangeService struct {
	Name  string
	Flags func(fs *flag.FlagSet)
	Start func(ctx context.Context, env exchangeEnv) (url string, serve func(ctx context.Context) error, err error)
}

// exchangeHook is a part of `pitboss exchange` that another file of this command
// contributes before extensions are fixed (its host extensions, e.g. bridge
// records) and after the server exists (routes mounted on it, e.g. WebSockets).
type exchangeHook struct {
	Name string
	// Extensions returns host extensions to register, called before host.Open.
	Extensions func() []host.Extension
	// Mount is called once the CLOB server exists and before it serves.
	Mount func(env exchangeEnv) error
}

// exchangeParts are what the other files of this command contribute to one run of
// `pitboss exchange`.
type exchangeParts struct {
	Hooks    []exchangeHook
	Services []exchangeService
}

// exchangePartMakers are the registered constructors of exchangeParts.
var exchangePartMakers []func() exchangeParts

// registerExchangeParts adds a constructor of parts to `pitboss exchange`; call it
// from init. Every run calls every constructor afresh, so that a part keeps its
// per-run state (flag values, extensions) in values of its own: two exchanges in one
// process (the tests) share nothing.
func registerExchangeParts(mk func() exchangeParts) {
	exchangePartMakers = append(exchangePartMakers, mk)
}

// newExchangeParts builds the parts of one run, in registration order.
func newExchangeParts() exchangeParts {
	var all exchangeParts
	for _, mk := range exchangePartMakers {
		p := mk()
		all.Hooks = append(all.Hooks, p.Hooks...)
		all.Services = append(all.Services, p.Services...)
	}
	return all
}

// exchangeFlags are the command's flags (issue 3's names).
type exchangeFlags struct {
	addr, internalAddr, dataDir, markets, prefix  string
	geoBlocked, geoCloseOnly                      string
	exchangeAddr, negRiskAddr, paperBalance       string
	chainID                                       uint64
	ephemeral, invitations, sim                   bool
	simSeed                                       uint64
	simConfig, logLevel, syncMode                 string
	simPricesOrigin                               string
	simUpDown                                     time.Duration
	rateLimit                                     int
	snapshotEvery                                 int
	trustedProxies                                string
	connsPerIP                                    int
	disputeWindow, questionLead, heartbeatTimeout time.Duration
	secretsKey                                    string
	secrets                                       secretFlags
	sealKey                                       []byte // resolved from secretsKey
}

func runExchange(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("exchange", exchangeUsage, io)
	var f exchangeFlags
	parts := newExchangeParts()
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address of the CLOB service (port 0 picks a free port)")
	fs.StringVar(&f.internalAddr, "internal-addr", "", "listen address of the internal listener (/metrics, /internal/*); off when empty")
	fs.StringVar(&f.dataDir, "data-dir", "", "directory of the journal and snapshots (default: the user's data directory, e.g. ~/.local/share/pitboss/exchange)")
	fs.BoolVar(&f.ephemeral, "ephemeral", false, "keep nothing: no journal, no snapshots (everything is lost on exit)")
	fs.Uint64Var(&f.chainID, "chain-id", server.DefaultChainID, "chain id of L1 and order signatures")
	fs.StringVar(&f.exchangeAddr, "exchange-address", server.DefaultExchange.String(), "verifying contract of order signatures (normal markets)")
	fs.StringVar(&f.negRiskAddr, "neg-risk-exchange-address", server.DefaultNegRiskExchange.String(), "verifying contract of order signatures (neg-risk markets)")
	fs.StringVar(&f.prefix, "header-prefix", "SERVICE_", "prefix of the authentication headers (POLY_ aliases are always accepted)")
	fs.StringVar(&f.paperBalance, "paper-balance", "1000", "collateral credited to a wallet when it is first registered (0 for none)")
	fs.BoolVar(&f.invitations, "invitation-mode", false, "require an invitation code (from an approved waitlist entry) on a wallet's first API key")
	fs.StringVar(&f.markets, "markets", "", "YAML catalogue of the markets to list (default: the built-in demo catalogue)")
	fs.StringVar(&f.geoBlocked, "geoblock-blocked", strings.Join(server.DefaultBlocked, ","), "comma-separated country codes (ISO 3166-1 alpha-2) that may not trade; empty: none")
	fs.StringVar(&f.geoCloseOnly, "geoblock-close-only", strings.Join(server.DefaultCloseOnly, ","), "comma-separated country codes that may only reduce positions; empty: none")
	fs.BoolVar(&f.sim, "sim", false, "run synthetic market participants (sandbox/sim) so the markets have live flow, and open the simulation routes (/sim/*) to every client")
	fs.Uint64Var(&f.simSeed, "sim-seed", 1, "seed of the synthetic flow (with --sim)")
	fs.StringVar(&f.simConfig, "sim-config", "", "YAML parameters of the synthetic flow (with --sim; see docs/sim.md)")
	fs.StringVar(&f.simPricesOrigin, "sim-prices-origin", "", "with --sim: the time the synthetic prices of /ws/rtds start from (Unix ms or RFC 3339; default: when the exchange starts); the same seed and origin give the same prices as the embedded venue started then")
	fs.DurationVar(&f.simUpDown, "sim-updown-window", sim.DefaultUpDownWindow, "with --sim: list rolling BTC up/down markets with windows of this length from the prices' origin, each resolved at its end from the /ws/rtds price process (a whole number of seconds; 0: none)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error (logs go to stderr)")
	fs.StringVar(&f.syncMode, "sync", "data", "journal sync: data (fdatasync), full (fsync) or none (survives a process crash only)")
	fs.IntVar(&f.rateLimit, "rate-limit", server.DefaultRateLimit, "requests per client IP per 60 s (negative disables)")
	fs.IntVar(&f.snapshotEvery, "snapshot-every", host.DefaultSnapshotEvery, "journal records between snapshots")
	fs.StringVar(&f.trustedProxies, "trusted-proxies", "", "comma-separated CIDR prefixes of proxies whose client and country headers are believed (default: none; see docs/exchange.md)")
	fs.StringVar(&f.secretsKey, "secrets-key", "", "secret reference (env:VAR, keyring:NAME or file:NAME) of the 32-byte key that seals API secrets in the journal and snapshots; a keyring or file item is created on first use (default: secrets written in clear, files 0600)")
	f.secrets.register(fs)
	fs.IntVar(&f.connsPerIP, "max-conns-per-ip", server.DefaultConnsPerIP, "open connections per client address on the public listeners (trusted proxies exempt; negative: no cap)")
	fs.DurationVar(&f.heartbeatTimeout, "heartbeat-timeout", server.DefaultHeartbeatTimeout, "the dead man's switch: an API key that sent a heartbeat has its orders cancelled when no next one comes within this (at least 1s)")
	fs.DurationVar(&f.disputeWindow, "dispute-window", 0, "dispute window of agent-created questions (default: each template's, 2h); shorten it to try a question's life quickly")
	fs.DurationVar(&f.questionLead, "question-min-lead", questions.DefaultMinLead, "how far ahead a new question's end date must be (0: none)")
	for _, s := range parts.Services {
		if s.Flags != nil {
			s.Flags(fs)
		}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	cfg, hcfg, err := f.configs(io)
	if err != nil {
		return err
	}
	lvl, err := zapcore.ParseLevel(f.logLevel)
	if err != nil {
		return usagef("--log-level must be debug, info, warn or error, not %q", f.logLevel)
	}
	log := newExchangeLogger(io, lvl)
	defer log.Sync() //nolint:errcheck // nothing to do about a failed flush of stderr
	cfg.Logger, hcfg.Logger = log, log
	if f.secretsKey != "" {
		key, err := exchangeSecretKey(ctx, io, &f.secrets, f.secretsKey, log)
		if err != nil {
			return err
		}
		defer clear(key)
		f.sealKey = key
	}
	return serveExchange(ctx, io, f, parts, cfg, hcfg)
}

// configs turns the flags into the server's and the host's configuration.
func (f *exchangeFlags) configs(io stdio) (server.Config, host.Config, error) {
	var cfg server.Config
	var hcfg host.Config
	var err error
	if cfg.Exchange, err = market.ParseAddress(f.exchangeAddr); err != nil {
		return cfg, hcfg, usagef("--exchange-address %q is not an address", f.exchangeAddr)
	}
	if cfg.NegRiskExchange, err = market.ParseAddress(f.negRiskAddr); err != nil {
		return cfg, hcfg, usagef("--neg-risk-exchange-address %q is not an address", f.negRiskAddr)
	}
	bal, err := market.ParseMicros(f.paperBalance)
	if err != nil {
		return cfg, hcfg, usagef("--paper-balance %q: %v", f.paperBalance, err)
	}
	cfg.PaperBalance = bal
	if bal == 0 {
		cfg.PaperBalance = -1
	}
	if f.chainID == 0 {
		return cfg, hcfg, usagef("--chain-id must be positive")
	}
	cfg.ChainID, cfg.HeaderPrefix, cfg.InvitationMode, cfg.RateLimit = f.chainID, f.prefix, f.invitations, f.rateLimit
	if f.rateLimit == 0 {
		return cfg, hcfg, usagef("--rate-limit must be positive (or negative to disable)")
	}
	if cfg.TrustedProxies, err = server.ParseTrustedProxies(f.trustedProxies); err != nil {
		return cfg, hcfg, usagef("--trusted-proxies: %v", err)
	}
	if f.connsPerIP == 0 {
		return cfg, hcfg, usagef("--max-conns-per-ip must be positive (or negative for no cap)")
	}
	if strings.ContainsAny(f.prefix, " :\r\n") || f.prefix == "" {
		return cfg, hcfg, usagef("--header-prefix %q is not a header name prefix", f.prefix)
	}
	switch f.syncMode {
	case "data":
		hcfg.Sync = journal.SyncData
	case "full":
		hcfg.Sync = journal.SyncFull
	case "none":
		hcfg.Sync = journal.SyncNone
	default:
		return cfg, hcfg, usagef("--sync must be data, full or none, not %q", f.syncMode)
	}
	for _, fl := range [...]struct{ name, v string }{{"geoblock-blocked", f.geoBlocked}, {"geoblock-close-only", f.geoCloseOnly}} {
		for _, c := range countryList(fl.v) {
			if len(c) != 2 || !isASCIILetter(c[0]) || !isASCIILetter(c[1]) {
				return cfg, hcfg, usagef("--%s: %q is not a two-letter country code (ISO 3166-1 alpha-2)", fl.name, c)
			}
		}
	}
	cfg.Geoblock = server.Geoblock{Blocked: countryList(f.geoBlocked), CloseOnly: countryList(f.geoCloseOnly)}
	if f.snapshotEvery <= 0 {
		return cfg, hcfg, usagef("--snapshot-every must be positive")
	}
	if f.heartbeatTimeout < time.Second {
		return cfg, hcfg, usagef("--heartbeat-timeout must be at least 1s, not %v", f.heartbeatTimeout)
	}
	cfg.HeartbeatTimeout = f.heartbeatTimeout
	if f.disputeWindow < 0 || f.disputeWindow > 0 && f.disputeWindow < time.Millisecond || f.questionLead < 0 {
		return cfg, hcfg, usagef("--dispute-window and --question-min-lead must not be negative (the window at least 1ms)")
	}
	hcfg.SnapshotEvery = f.snapshotEvery
	switch {
	case f.ephemeral && f.dataDir != "":
		return cfg, hcfg, usagef("--ephemeral and --data-dir exclude each other")
	case f.ephemeral:
	case f.dataDir != "":
		hcfg.Dir = f.dataDir
	default:
		dir, err := defaultDataDir(io.getenv)
		if err != nil {
			return cfg, hcfg, fmt.Errorf("no --data-dir given and no user data directory: %w", err)
		}
		hcfg.Dir = dir
	}
	if f.markets != "" {
		cat, err := catalog.Load(f.markets)
		if err != nil {
			var probs catalog.Problems
			if errors.As(err, &probs) {
				for _, p := range probs {
					fmt.Fprintln(io.stderr, p.String())
				}
				return cfg, hcfg, &exitError{code: 1}
			}
			return cfg, hcfg, err
		}
		cfg.Catalog = cat
	} else {
		cfg.Catalog = catalog.Demo()
	}
	hcfg.Genesis = catalog.Genesis(cfg.Catalog, 0)
	return cfg, hcfg, nil
}

// defaultDataDir is the user's data directory for the exchange: $XDG_DATA_HOME (or
// ~/.local/share) on Unix, the OS's application-data directory elsewhere, plus
func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// countryList splits a comma-separated flag value into country codes; an empty
// value is an empty, non-nil list (nobody restricted). The server checks the codes.
func countryList(v string) []string {
	out := []string{}
	for _, c := range strings.Split(v, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// pitboss/exchange.
func defaultDataDir(getenv func(string) string) (string, error) {
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
			return filepath.Join(x, "pitboss", "exchange"), nil
		}
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("$HOME is not set")
		}
		return filepath.Join(home, ".local", "share", "pitboss", "exchange"), nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "pitboss", "exchange"), nil
}

func newExchangeLogger(io stdio, lvl zapcore.Level) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(io.stderr), lvl)
	return zap.New(core).Named("exchange")
}

// questionsConfig is the configuration of agent-created questions the flags ask for.
func (f *exchangeFlags) questionsConfig() questions.Config {
	cfg := questions.Config{MinLead: f.questionLead}
	if f.questionLead == 0 {
		cfg.MinLead = -1
	}
	if f.disputeWindow > 0 {
		cfg.Templates = questions.DefaultTemplates()
		for i := range cfg.Templates {
			cfg.Templates[i].Window = f.disputeWindow.Milliseconds()
		}
	}
	return cfg
}

// serveExchange opens the store, starts every part and serves until ctx ends; then
// it stops accepting, drains in-flight requests, stops the simulator, and stops the
// host (final snapshot, journal flushed).
func serveExchange(ctx context.Context, io stdio, f exchangeFlags, parts exchangeParts, cfg server.Config, hcfg host.Config) error {
	log := cfg.Logger
	st := server.NewState(server.StateConfig{SecretKey: f.sealKey})
	qs, err := questions.New(f.questionsConfig())
	if err != nil {
		return err
	}
	cfg.Questions = qs
	cfg.RFQ = rfq.New()
	hcfg.Extensions = append(hcfg.Extensions, st.Extension(), qs, cfg.RFQ)
	for _, hk := range parts.Hooks {
		if hk.Extensions != nil {
			hcfg.Extensions = append(hcfg.Extensions, hk.Extensions()...)
		}
	}
	hcfg.AdmittedIDs = true // the server's admission refuses duplicate order ids before the engine (docs/design/0169)
	h, err := host.Open(ctx, hcfg)
	if err != nil {
		return err
	}
	srv, err := server.New(h, st, cfg)
	if err != nil {
		h.Close(context.Background())
		return err
	}
	clock := func() int64 { return time.Now().UnixMilli() }
	wcfg := ws.Config{Source: h, Credentials: srv, TradeID: srv.TradeID, Orders: srv.OrderMeta, Describe: describeMarket(cfg.Catalog),
		ClientKey: srv.ClientKey, Logger: log.Named("ws")}
	var prices *sim.PriceService
	var updown *sim.UpDown
	if f.sim {
		origin, err := parseOrigin(f.simPricesOrigin, clock())
		if err != nil {
			h.Close(context.Background())
			return usagef("--sim-prices-origin: %v", err)
		}
		prices = sim.NewPriceService(f.simSeed, origin)
		wcfg.Prices = prices
		if f.simUpDown != 0 {
			if updown, err = sim.NewUpDown(f.simSeed, origin, sim.DefaultUpDownSymbol, f.simUpDown); err != nil {
				h.Close(context.Background())
				return usagef("--sim-updown-window: %v", err)
			}
		}
	}
	hub, err := ws.New(wcfg)
	if err != nil {
		h.Close(context.Background())
		return err
	}
	for _, r := range []struct {
		path string
		h    http.Handler
	}{{"/ws/market", hub.MarketHandler()}, {"/ws/user", hub.UserHandler()}, {"/ws/rtds", hub.RTDSHandler()}, {"/ws/sports", hub.SportsHandler()}} {
		srv.Handle(r.path, r.h)
	}
	token, tokenFile, err := operatorToken(io, hcfg.Dir)
	if err != nil {
		h.Close(context.Background())
		return err
	}
	if f.internalAddr != "" && !server.IsLoopback(f.internalAddr) && token == "" {
		h.Close(context.Background())
		return usagef("--internal-addr %s is not on loopback: it needs an operator token ($%s, or a --data-dir where one is kept)", f.internalAddr, envOperatorToken)
	}
	conns := server.NewConnLimit(f.connsPerIP, 0, cfg.TrustedProxies)
	env := exchangeEnv{Host: h, Server: srv, Hub: hub, Catalog: cfg.Catalog, Logger: log, Clock: clock, Conns: conns,
		SimOpen: f.sim, OperatorToken: token, Addr: f.addr}
	for _, hk := range parts.Hooks {
		if hk.Mount != nil {
			if err := hk.Mount(env); err != nil {
				h.Close(context.Background())
				return fmt.Errorf("%s: %w", hk.Name, err)
			}
		}
	}

	// The host runs until everything that submits to it has stopped.
	hostCtx, stopHost := context.WithCancel(context.Background())
	hostDone := make(chan error, 1)
	go func() { hostDone <- h.Run(hostCtx) }()
	stopAll := func() error {
		stopHost()
		return <-hostDone
	}

	// A catalogue file that gained markets since the store was created lists them.
	if err := listMissing(ctx, h, cfg.Catalog); err != nil {
		stopAll()
		return err
	}

	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		stopAll()
		return fmt.Errorf("--addr: %w", err)
	}
	var iln net.Listener
	if f.internalAddr != "" {
		if iln, err = net.Listen("tcp", f.internalAddr); err != nil {
			ln.Close()
			stopAll()
			return fmt.Errorf("--internal-addr: %w", err)
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	goServe := func(name string, fn func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := fn(runCtx)
			if err != nil && runCtx.Err() != nil && errors.Is(err, context.Canceled) {
				err = nil // stopped while starting (the hub's initial load): a clean stop
			}
			if err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
				cancel()
			}
		}()
	}
	goServe("CLOB service", httpServer(conns.Listener(ln), srv.Handler(), log))
	if iln != nil {
		// The internal listener has its own cap, so that a flood of the public
		// ones never locks the operator out.
		internal := srv.InternalHandler()
		if !server.IsLoopback(f.internalAddr) {
			internal = server.RequireToken(internal, token)
		}
		goServe("internal listener", httpServer(server.NewConnLimit(f.connsPerIP, 256, nil).Listener(iln), internal, log))
	}
	goServe("server", srv.Run)
	goServe("WebSocket hub", hub.Run)

	fmt.Fprintf(io.stdout, "pitboss exchange: CLOB service        http://%s\n", ln.Addr())
	for _, s := range parts.Services {
		url, serve, err := s.Start(runCtx, env)
		if err != nil {
			cancel()
			wg.Wait()
			stopAll()
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if url != "" {
			fmt.Fprintf(io.stdout, "pitboss exchange: %-20s %s\n", s.Name, url)
		}
		if serve != nil {
			goServe(s.Name, serve)
		}
	}
	if iln != nil {
		fmt.Fprintf(io.stdout, "pitboss exchange: internal listener   http://%s\n", iln.Addr())
	}
	if hcfg.Dir == "" {
		fmt.Fprintln(io.stdout, "pitboss exchange: ephemeral (nothing is kept)")
	} else {
		fmt.Fprintf(io.stdout, "pitboss exchange: data directory      %s\n", hcfg.Dir)
	}
	switch {
	case tokenFile != "":
		fmt.Fprintf(io.stdout, "pitboss exchange: operator token      %s\n", tokenFile)
	case token != "":
		fmt.Fprintf(io.stdout, "pitboss exchange: operator token      $%s\n", envOperatorToken)
	}
	if f.sim {
		scfg := sim.Config{}
		if f.simConfig != "" {
			if scfg, err = sim.LoadConfig(f.simConfig); err != nil {
				cancel()
				wg.Wait()
				stopAll()
				return fmt.Errorf("--sim-config: %w", err)
			}
		}
		d := sim.NewDriver(sim.New(scfg, f.simSeed), simhost.Venue(h), sim.DriverConfig{Clock: clock, Logger: log.Named("sim")})
		goServe("sim", d.Run)
		fmt.Fprintf(io.stdout, "pitboss exchange: synthetic flow      seed %d\n", f.simSeed)
		fmt.Fprintf(io.stdout, "pitboss exchange: synthetic prices    from %d (%s) on /ws/rtds\n", prices.Origin(),
			time.UnixMilli(prices.Origin()).UTC().Format(time.RFC3339Nano))
		if updown != nil {
			// The up/down markets resolve on the host's clock, as the prices of
			// /ws/rtds follow it: REST, WebSockets and prices agree.
			goServe("up/down markets", func(ctx context.Context) error {
				return updown.Run(ctx, simhost.Venue(h), clock, nil)
			})
			fmt.Fprintf(io.stdout, "pitboss exchange: up/down markets     %s every %v\n", sim.DefaultUpDownSymbol, f.simUpDown)
		}
	}

	<-runCtx.Done()
	cancel()
	wg.Wait() // listeners drained, simulator and background work stopped
	var first error
	select {
	case first = <-errs:
	default:
	}
	if err := stopAll(); err != nil && first == nil {
		first = err
	}
	if first == nil {
		log.Info("stopped cleanly")
	}
	return first
}

// envOperatorToken names the variable holding the operator token of `pitboss
// exchange` (docs/exchange.md, "Running it for others").
const envOperatorToken = "PITBOSS_EXCHANGE_TOKEN"

// operatorTokenFile is the operator token's file in a data directory.
const operatorTokenFile = "operator-token"

// operatorToken returns the operator token: $PITBOSS_EXCHANGE_TOKEN, else the one
// kept in dir (created on first use: 32 random bytes in hex, mode 0600), else none
// (an ephemeral exchange without the variable). file is the token's path when it
// came from one.
func operatorToken(io stdio, dir string) (token, file string, err error) {
	if t := strings.TrimSpace(io.getenv(envOperatorToken)); t != "" {
		return t, "", nil
	}
	if dir == "" {
		return "", "", nil
	}
	file = filepath.Join(dir, operatorTokenFile)
	if b, err := os.ReadFile(file); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, file, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("operator token: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", "", err
	}
	t := hex.EncodeToString(raw[:])
	if err := os.WriteFile(file, []byte(t+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("operator token: %w", err)
	}
	return t, file, nil
}

// describeMarket gives the WebSocket hub the catalogue's metadata of a market.
func describeMarket(cat *catalog.Catalog) func(market.ConditionID) (ws.Description, bool) {
	return func(c market.ConditionID) (ws.Description, bool) {
		m, ev, ok := cat.Market(c)
		if !ok {
			return ws.Description{}, false
		}
		d := ws.Description{ID: m.ID, Description: m.Description, Icon: m.Icon}
		if ev != nil {
			d.Event = &api.WSEventMessage{ID: ev.ID, Ticker: ev.Ticker, Slug: ev.Slug, Title: ev.Title, Description: ev.Description}
		}
		return d, true
	}
}

// listMissing lists the catalogue's markets the store does not have yet.
func listMissing(ctx context.Context, h *host.Host, cat *catalog.Catalog) error {
	var listed []market.Info
	if err := h.Read(ctx, func(e *exchange.Engine) { listed = e.Markets(nil) }); err != nil {
		return err
	}
	cmds := catalog.Missing(cat, listed, 0)
	if len(cmds) == 0 {
		return nil
	}
	res, err := h.SubmitBatch(ctx, cmds)
	if err != nil {
		return err
	}
	for i, r := range res {
		if r.Err != nil {
			return fmt.Errorf("listing market %s: %w", cmds[i].Spec.Slug, r.Err)
		}
	}
	return nil
}

// httpServer serves handler on ln until ctx ends (server.Serve: the exchange's
// header limits and timeouts), then shuts down gracefully: no new connections,
// in-flight requests get up to 10 seconds.
func httpServer(ln net.Listener, handler http.Handler, log *zap.Logger) func(context.Context) error {
	return func(ctx context.Context) error { return server.Serve(ctx, ln, handler, 10*time.Second, log) }
}

// exchangeSecretKey resolves --secrets-key: env:VAR holds the key in hex; a
// keyring: or file: reference names the item exchange/NAME of that store, created
// with a random key on first use. The key is never printed or logged.
func exchangeSecretKey(ctx context.Context, io stdio, sf *secretFlags, refStr string, log *zap.Logger) ([]byte, error) {
	ref, err := secrets.ParseRef(refStr)
	if err != nil {
		return nil, usagef("--secrets-key: %v", err)
	}
	fromHex := func(b []byte) ([]byte, error) {
		key := make([]byte, server.SecretKeyLen)
		if n, err := hex.Decode(key, bytes.TrimSpace(b)); err != nil || n != server.SecretKeyLen {
			return nil, fmt.Errorf("--secrets-key %s: not %d bytes in hex", ref, server.SecretKeyLen)
		}
		return key, nil
	}
	switch ref.Scheme {
	case secrets.SchemeEnv:
		v := io.getenv(ref.Name)
		if v == "" {
			return nil, fmt.Errorf("--secrets-key %s: the variable is not set", ref)
		}
		return fromHex([]byte(v))
	case secrets.SchemeKeyring, secrets.SchemeFile:
	default:
		return nil, usagef("--secrets-key must be env:VAR, keyring:NAME or file:NAME")
	}
	env, err := newSecretEnv(io, sf)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	var vault secrets.Vault = env.keyring
	if ref.Scheme == secrets.SchemeFile {
		vault = env.file
	}
	item := secrets.ExchangeKeyItem(ref.Name)
	s, err := vault.Get(ctx, item)
	if errors.Is(err, secrets.ErrNotFound) {
		raw := make([]byte, server.SecretKeyLen)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		hexKey := []byte(hex.EncodeToString(raw))
		clear(raw)
		if err := vault.Add(ctx, secrets.Entry{Name: item}, secrets.NewSecret(hexKey)); err != nil {
			return nil, fmt.Errorf("--secrets-key %s: creating the key: %w", ref, err)
		}
		log.Info("created the key that seals API secrets", zap.Stringer("ref", ref), zap.String("store", vault.Location()))
		s, err = vault.Get(ctx, item)
	}
	if err != nil {
		return nil, fmt.Errorf("--secrets-key %s: %w", ref, err)
	}
	defer s.Destroy()
	return fromHex(s.Reveal())
}

// parseOrigin reads --sim-prices-origin: Unix milliseconds or an RFC 3339 time;
// empty is now.
func parseOrigin(s string, now int64) (int64, error) {
	if s == "" {
		return now, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither Unix milliseconds nor an RFC 3339 time", s)
	}
	return t.UnixMilli(), nil
}

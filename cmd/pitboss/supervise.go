package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/dashboard"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

func init() {
	register(command{name: "supervise", summary: "run a fleet of agents (one process each) over NATS, with a dashboard", run: runSupervise})
}

const superviseUsage = `[flags] FLEET.yaml

Starts one 'pitboss run --supervised' process per agent of the fleet file, holds each
agent's wallet lock in the fleet's NATS, restarts crashed agents with backoff and
stops a crash loop, and serves the dashboard. Ctrl-C stops every agent (cancelling
their orders) and exits. By default it embeds a NATS server on 127.0.0.1; --nats
joins an existing cluster, so that supervisors on several machines form one fleet.
'pitboss ctl' lists and controls the fleet. See docs/fleet.md.`

func runSupervise(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("supervise", superviseUsage, io)
	natsURL := fs.String("nats", "", "join this NATS cluster (nats://host:4222[,…]) instead of embedding a server")
	creds := fs.String("nats-creds", "", "the supervisor's credentials for --nats: a .creds file or a pitboss endpoint file (0600)")
	agentCreds := fs.String("agent-creds", "", "the agents' credentials for --nats (default: the supervisor's)")
	httpAddr := fs.String("http-addr", "", "dashboard address (default: the fleet file's http_addr, 127.0.0.1:8740); off: none")
	allowRemote := fs.Bool("allow-remote-http", false, "allow a dashboard address that is not loopback (it then needs an access token in $PITBOSS_DASHBOARD_TOKEN)")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus metrics here (default: the fleet file's metrics_addr)")
	name := fs.String("name", "", "this supervisor's name (default: host-pid)")
	ctlFile := fs.String("ctl-file", "", "where to write the endpoint file for pitboss ctl (default: $XDG_RUNTIME_DIR/pitboss/fleet-<name>.json)")
	format := fs.String("log-format", "text", "text or json")
	adopt := fs.Bool("adopt-fleet-config", false, "run with the fleet's stored settings (lock_ttl, heartbeat, replicas, budget limits) where this file differs, instead of refusing to start")
	setConfig := fs.Bool("set-fleet-config", false, "make this file's settings the fleet's (supervisors already running keep theirs until restarted)")
	raise := fs.Bool("raise-replicas", false, "raise streams and buckets that have fewer replicas than the fleet's (replicas are never lowered)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("name one fleet file")
	}
	if *adopt && *setConfig {
		return usagef("--adopt-fleet-config and --set-fleet-config contradict each other: choose one")
	}
	f, err := supervisor.Options{Getenv: io.getenv}.LoadFile(fs.Arg(0))
	if err != nil {
		return problems(io, "supervise", fs.Arg(0), err)
	}
	if *natsURL != "" {
		f.NATS.URL, f.NATS.StoreDir, f.NATS.Port = *natsURL, "", 0
	}
	if *creds != "" {
		f.NATS.Credentials = *creds
	}
	if *agentCreds != "" {
		f.NATS.AgentCredentials = *agentCreds
	}
	if *httpAddr != "" {
		f.HTTPAddr = *httpAddr
	}
	if *allowRemote {
		f.AllowRemoteHTTP = true
	}
	if *metricsAddr != "" {
		f.MetricsAddr = *metricsAddr
	}

	// A live agent on the remote venue is locked on its wallet's real address: the
	// resolver reads it where it is recorded in the clear (keystore file, keyring
	// index), else unlocks the key (env: references, the file store).
	var res *secrets.Resolver
	for _, e := range f.Agents {
		if e.Live && res == nil {
			env, err := newSecretEnv(io, &secretFlags{})
			if err != nil {
				return err
			}
			defer env.Close()
			res = env.resolver(&fdFlag{})
		}
	}
	var agentsList []supervisor.Agent
	bad := 0
	for _, e := range f.Agents {
		a, err := wire.ResolveFleetAgent(ctx, f, e, io.getenv, res)
		if err != nil {
			bad++
			var probs agents.Problems
			if errors.As(err, &probs) {
				for _, p := range probs {
					fmt.Fprintln(io.stderr, p.String())
				}
				continue
			}
			fmt.Fprintf(io.stderr, "%s:%d:%d: %v\n", f.Path, e.Line, e.Col, err)
			continue
		}
		agentsList = append(agentsList, a)
	}
	if bad > 0 {
		fmt.Fprintf(io.stderr, "pitboss supervise: %d agent(s) of %s cannot run (nothing was started)\n", bad, f.Path)
		return &exitError{code: 1}
	}
	// The file's agents are published to the fleet's definitions; defined agents
	// of other supervisors are claimed as capacity and labels allow (design 0142).
	var defs []supervisor.Definition
	for _, e := range f.Agents {
		d, err := wire.FleetDefinition(e, io.getenv, "supervisor "+*name)
		if err != nil {
			return fmt.Errorf("%s:%d:%d: %w", f.Path, e.Line, e.Col, err)
		}
		defs = append(defs, d)
	}
	resolveDef := func(ctx context.Context, d supervisor.Definition) (supervisor.Agent, error) {
		e, err := wire.DefinitionEntry(f.StateDir, d)
		if err != nil {
			return supervisor.Agent{}, err
		}
		fc := *f // ResolveFleetAgent settles the market-data mode in it: not after the start
		return wire.ResolveFleetAgent(ctx, &fc, e, io.getenv, res)
	}

	log, err := supervisorLogger(io.stderr, *format)
	if err != nil {
		return usagef("%v", err)
	}
	defer log.Sync() //nolint:errcheck // nothing to do about a failed flush

	cfg := supervisor.Config{Fleet: f.Name, Name: *name, Agents: agentsList, Heartbeat: f.Heartbeat, StopTimeout: f.StopTimeout,
		LockTTL: f.LockTTL, MarketData: f.MarketData, Budget: f.Budget, Output: io.stdout, Logger: log,
		NATS:     supervisor.NATSConfig{StoreDir: f.NATS.StoreDir, Port: f.NATS.Port},
		Replicas: f.NATS.Replicas, RaiseReplicas: *raise, AdoptFleetConfig: *adopt, SetFleetConfig: *setConfig,
		Definitions: defs, Resolve: resolveDef, MaxAgents: f.MaxAgents, Labels: f.Labels, StateDir: f.StateDir}
	if f.NATS.URL != "" {
		if cfg.NATS.Endpoint, err = fleetEndpoint(f.NATS.URL, f.NATS.Credentials); err != nil {
			return err
		}
		switch {
		case f.NATS.SigningKey != "" && f.NATS.AgentCredentials != "":
			return usagef("--agent-creds and the fleet file's nats.signing_key contradict each other: with a signing key every agent gets credentials of its own")
		case f.NATS.SigningKey != "":
			if cfg.NATS.Minter, err = fleetMinter(f.NATS.SigningKey, f.NATS.CredentialsTTL, cfg.NATS.Endpoint); err != nil {
				return fmt.Errorf("%s: nats.signing_key: %w", f.Path, err)
			}
			if dir, err := wire.FleetRuntimeDir(io.getenv); err == nil {
				cfg.NATS.CredsDir = dir
			}
		case f.NATS.AgentCredentials != "":
			if cfg.NATS.AgentEndpoint, err = fleetEndpoint(f.NATS.URL, f.NATS.AgentCredentials); err != nil {
				return err
			}
		default:
			log.Warn("the agents get the supervisor's NATS credentials (set nats.agent_credentials to an agent-role user)")
		}
		// Mutual TLS: the supervisor, its agents and the ctl endpoint file use the
		// same CA and this machine's certificate.
		for _, ep := range []*natsbus.Endpoint{&cfg.NATS.Endpoint, &cfg.NATS.AgentEndpoint} {
			ep.TLSCA, ep.TLSCert, ep.TLSKey = f.NATS.TLS.CA, f.NATS.TLS.Cert, f.NATS.TLS.Key
		}
	}
	if *ctlFile == "" {
		dir, err := wire.FleetRuntimeDir(io.getenv)
		if err != nil {
			return err
		}
		*ctlFile = filepath.Join(dir, "fleet-"+f.Name+".json")
	}
	cfg.NATS.CtlFile = *ctlFile
	// Not fleet-*.json: ctl takes the only such file as the fleet to control.
	cfg.NATS.ReaderFile = filepath.Join(filepath.Dir(*ctlFile), "reader-"+f.Name+".json")
	if f.MarketData.Mode == supervisor.MarketDataFanout && f.MarketData.Publish {
		venue := f.MarketData.Venue
		cfg.VenueFeed = func(handler func(*market.Event)) (supervisor.VenueFeed, error) {
			return wsfeed.New(wsfeed.Config{URL: venue, Handler: handler, CustomFeatures: true, Logger: log.Named("venue")})
		}
	}
	alerts, stopAlerts, err := startAlerts(ctx, io, f.Alerts, f.Name, log)
	if err != nil {
		return err
	}
	defer stopAlerts()
	cfg.Alerts = alerts
	reg := prometheus.NewRegistry()
	cfg.Registry = reg
	sup, err := supervisor.New(cfg)
	if err != nil {
		return err
	}

	var ln, mln net.Listener
	dashToken := io.getenv(dashboard.TokenEnv)
	if f.HTTPAddr != "off" {
		if err := dashboard.CheckAddr(f.HTTPAddr, dashToken); err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
		if ln, err = dashboard.Listen(f.HTTPAddr, f.AllowRemoteHTTP); err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
	}
	if f.MetricsAddr != "" {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		if mln, err = net.Listen("tcp", f.MetricsAddr); err != nil {
			if ln != nil {
				ln.Close()
			}
			return fmt.Errorf("metrics: %w", err)
		}
	}

	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var servers []*http.Server
	serve := func(l net.Listener, h http.Handler) {
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, srv)
		wg.Add(1)
		go func() { defer wg.Done(); _ = srv.Serve(l) }() // returns at Shutdown
	}
	supErr := make(chan error, 1)
	wg.Add(1)
	go func() { defer wg.Done(); supErr <- sup.Run(runCtx) }()
	select {
	case <-sup.Ready():
	case err := <-supErr:
		wg.Wait()
		if ln != nil {
			ln.Close()
		}
		if mln != nil {
			mln.Close()
		}
		return err
	}
	if ln != nil {
		d, err := dashboard.New(dashboard.Config{Source: sup, Title: "pitboss fleet " + f.Name, Logger: log.Named("dashboard"), AccessToken: dashToken})
		if err != nil {
			cancel()
			wg.Wait()
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = d.Run(runCtx) }() // the charts' history; ends with runCtx
		serve(ln, d)
		fmt.Fprintf(io.stdout, "dashboard on http://%s/\n", ln.Addr())
	}
	if mln != nil {
		serve(mln, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		fmt.Fprintf(io.stdout, "metrics on http://%s/metrics\n", mln.Addr())
	}
	where := "embedded NATS on " + sup.AgentEndpoint().URL
	if f.NATS.URL != "" {
		where = "NATS cluster " + f.NATS.URL
	}
	fmt.Fprintf(io.stdout, "fleet %s: %d agent(s), supervisor %s, %s\n", f.Name, len(agentsList), sup.Name(), where)
	fmt.Fprintf(io.stdout, "control it with: pitboss ctl --fleet %s list   (endpoint file %s)\n", f.Name, *ctlFile)
	if f.NATS.URL == "" {
		fmt.Fprintf(io.stdout, "look only with: pitboss ctl --creds %s list   (read-only: list and tail)\n", cfg.NATS.ReaderFile)
	}
	err = <-supErr
	cancel() // the supervisor may end by itself: stop what runs beside it (the dashboard's sampler)
	for _, srv := range servers {
		sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close() // an open event stream does not end by itself
		}
		c()
	}
	wg.Wait()
	return err
}

// problems prints a file's positioned problems (agents.Problems) and returns exit 1;
// other errors are returned as they are.
func problems(io stdio, cmd, path string, err error) error {
	var probs agents.Problems
	if !errors.As(err, &probs) {
		return err
	}
	for _, p := range probs {
		fmt.Fprintln(io.stderr, p.String())
	}
	fmt.Fprintf(io.stderr, "pitboss %s: %d problem(s) in %s\n", cmd, len(probs), path)
	return &exitError{code: 1}
}

// fleetEndpoint makes the endpoint of an existing cluster from a credentials file:
// a pitboss endpoint file (JSON, from natsbus.Endpoint.WriteFile; its URL is
// replaced by url when url is set) or a NATS JWT .creds file.
func fleetEndpoint(url, path string) (natsbus.Endpoint, error) {
	if path == "" {
		return natsbus.Endpoint{URL: url}, nil
	}
	if ep, err := natsbus.ReadEndpointFile(path); err == nil {
		if url != "" {
			ep.URL = url
		}
		return ep, nil
	} else if errors.Is(err, natsbus.ErrLooseFileMode) {
		return natsbus.Endpoint{}, err
	}
	ep := natsbus.Endpoint{URL: url, CredsFile: path}
	return ep, ep.Validate()
}

// fleetMinter reads the account signing key at path (mode 0600) and makes the
// minter of the agents' credentials, living ttl (zero: the default), in the
// account of the supervisor's credentials sup (a user JWT). The seed stays in the
// minter; its errors never hold it.
func fleetMinter(path string, ttl time.Duration, sup natsbus.Endpoint) (*natsbus.Minter, error) {
	seed, err := natsbus.ReadSigningKey(path)
	if err != nil {
		return nil, err
	}
	defer clear(seed)
	account, err := natsbus.AccountOf(sup)
	if err != nil {
		return nil, err
	}
	return natsbus.NewMinter(natsbus.MinterConfig{Seed: seed, Account: account, TTL: ttl})
}

// supervisorLogger logs to w: a console line per record (text) or zap JSON.
func supervisorLogger(w io.Writer, format string) (*zap.Logger, error) {
	ec := zap.NewProductionEncoderConfig()
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch format {
	case "text":
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	case "json":
		enc = zapcore.NewJSONEncoder(ec)
	default:
		return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), zapcore.InfoLevel)), nil
}

package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/alert"
)

// Agent is one agent as a supervisor runs it: its fleet entry resolved against its
// agent file (the composition root resolves it; see runtime/wire.ResolveFleetAgent).
type Agent struct {
	// ID is the agent's id in the fleet (the file's name or the fleet's override).
	ID market.AgentID
	// Wallet is the address whose lock the supervisor takes before starting the
	// agent: the address the agent trades (on the embedded venue, the paper address
	// of its wallet reference).
	Wallet market.Address
	// WalletRef is the wallet reference (keyring:NAME, …), for display; never a key.
	WalletRef string
	// WalletOverride passes WalletRef to the child as an override of its file's.
	WalletOverride bool
	// File is the agent file.
	File string
	// Live passes --live (the file says dry_run: false; checked when resolving).
	Live bool
	// StateDir, if set, passes --state-dir.
	StateDir string
	// Args are extra `pitboss run` flags.
	Args []string
	// EnvVars names variables of the supervisor's environment the child needs (the
	// variable of an env: wallet reference); nothing else of it is passed on beyond
	// the basic ones (PATH, HOME, locale, XDG directories).
	EnvVars []string
	// Restart and Limits: resolved (defaults filled).
	Restart Restart
	Limits  Limits
}

// NATSConfig says how a supervisor reaches the fleet's NATS.
type NATSConfig struct {
	// Endpoint joins an existing cluster with the supervisor's credentials. If its
	// URL is empty, the supervisor embeds a server (StoreDir, Port).
	Endpoint natsbus.Endpoint
	// AgentEndpoint is what children get on an existing cluster. If its URL is
	// empty, Endpoint. Not with Minter.
	AgentEndpoint natsbus.Endpoint
	// Minter, on an existing cluster in operator mode, mints each agent process a
	// user JWT of its own (natsbus.Minter: the account's signing key, the agent's
	// allow lists, a bounded lifetime renewed by the supervisor), handed to the
	// child as a .creds file (mode 0600) named in its environment. Endpoint must
	// then be a user of the same account. The supervisor checks at start that the
	// cluster accepts what it mints.
	Minter *natsbus.Minter
	// CredsDir is where the supervisor makes its own directory (mode 0700, removed
	// when it stops) for the agents' minted .creds files. If empty, the system's
	// temporary directory.
	CredsDir string
	// StoreDir and Port configure the embedded server (natsbus.ServerConfig).
	StoreDir string
	Port     int
	// CtlFile is where the supervisor writes its own endpoint (mode 0600) for
	// `pitboss ctl`; it is removed on exit. If empty, none is written.
	CtlFile string
	// ReaderFile is where a supervisor embedding the server writes the endpoint
	// of the read-only operator role (natsbus.RoleReader: `pitboss ctl list` and
	// `tail`, nothing that controls), mode 0600, removed on exit. If empty, or on
	// an existing cluster (whose operator makes such a user), none is written.
	ReaderFile string
}

// Config configures a Supervisor. Fleet, Agents and NATS are required; every other
// field has a default.
type Config struct {
	// Fleet is the fleet's name.
	Fleet string
	// Name identifies this supervisor in locks, statuses and audit records. If
	// empty, "<host>-<pid>".
	Name string
	// Agents are the agents this supervisor runs.
	Agents []Agent
	// NATS: embedded or an existing cluster.
	NATS NATSConfig
	// Heartbeat is the agents' status interval. If zero, DefaultHeartbeat.
	Heartbeat time.Duration
	// StopTimeout is the wait between SIGTERM and SIGKILL. If zero,
	// DefaultStopTimeout.
	StopTimeout time.Duration
	// LockTTL is the lock bucket's TTL. If zero, DefaultLockTTL.
	LockTTL time.Duration
	// MarketData and Budget: as in the fleet file.
	MarketData MarketData
	Budget     Budget
	// Replicas of the fleet's streams and buckets on a cluster. If zero: the
	// fleet's stored configuration, or 3 when the cluster has at least three
	// JetStream servers, else 1.
	Replicas int
	// RaiseReplicas raises streams and buckets that have fewer replicas than the
	// fleet's (without it a mismatch is only reported). Replicas are never lowered.
	RaiseReplicas bool
	// AdoptFleetConfig runs with the fleet's stored configuration (lock TTL,
	// heartbeat, replicas, budget limits) where this one differs, instead of
	// refusing to start (ConfigMismatchError).
	AdoptFleetConfig bool
	// SetFleetConfig replaces the fleet's stored configuration with this one's.
	SetFleetConfig bool
	// VenueFeed builds the venue feed of the market-data fan-out publisher (the
	// command line passes adapters/wsfeed). Needed when MarketData.Mode is fanout
	// and MarketData.Publish is set.
	VenueFeed func(handler func(*market.Event)) (VenueFeed, error)
	// Command is the pitboss executable and any leading arguments; a child runs
	// Command + ["run", "--supervised", …]. If empty, os.Executable().
	Command []string
	// Environ is the supervisor's environment, filtered for children (see
	// ChildConfig). If nil, os.Environ().
	Environ []string
	// ExtraEnv is added to every child's environment as is (tests; GOCOVERDIR).
	ExtraEnv []string
	// Dir is the children's working directory. If empty, the supervisor's.
	Dir string
	// Output receives the children's output, one "<agent> | line" per line. If nil,
	// os.Stderr.
	Output io.Writer
	// Logger is the supervisor's log. If nil, nothing is logged.
	Logger *zap.Logger
	// Registry receives the fleet's Prometheus metrics. If nil, none.
	Registry prometheus.Registerer
	// Rand returns a uniform float64 in [0, 1) for restart jitter. If nil,
	// math/rand/v2.
	Rand func() float64
	// Alerts receives the fleet's alerts (runtime/alert; alerts.go says which).
	// The caller owns it and runs its Run. If nil, none are sent.
	Alerts *alert.Sender
	// Definitions are published to the fleet's agent definitions at start (the
	// agents of this supervisor's fleet file, docs/design/0142).
	Definitions []Definition
	// Resolve turns a definition of the fleet into an agent this supervisor can
	// run (its files written under this supervisor's state directory; the command
	// line passes runtime/wire). If nil, this supervisor runs only Agents and
	// claims nothing.
	Resolve func(context.Context, Definition) (Agent, error)
	// MaxAgents bounds the agents this supervisor runs, its own included: it
	// claims defined agents only below it. If zero, no bound.
	MaxAgents int
	// Labels describe this supervisor (region: eu-west); it claims a definition
	// only when they include every label of its placement.
	Labels map[string]string
	// StateDir is this supervisor's own directory. Lifecycle records the AUDIT
	// stream does not take within 5 s (the cluster unreachable, no quorum) are
	// spooled under it (SpoolDir) and stored, each once, when it answers again —
	// by this run or the next one under the same Name (docs/design/0155). If
	// empty, they wait in memory only and what is left at exit is lost (logged).
	StateDir string
	// CPUs is how many CPUs the agents share, for the automatic GOMAXPROCS of
	// agents (Limits.GoMaxProcs). If zero, this process's runtime.GOMAXPROCS(0)
	// (the machine's cores, or its container's CPU limit).
	CPUs int
}

// ProcState is what a supervisor knows of an agent's process.
type ProcState string

// Process states.
const (
	ProcPending   ProcState = "pending"   // not started yet
	ProcRunning   ProcState = "running"   // the process is alive
	ProcBackoff   ProcState = "backoff"   // crashed; waiting before the next start
	ProcCrashLoop ProcState = "crashloop" // crashed too often; not restarted until an operator restarts it
	ProcRefused   ProcState = "refused"   // its wallet or id is locked by another agent or supervisor
	ProcStopping  ProcState = "stopping"  // asked to stop; waiting for it
	ProcStopped   ProcState = "stopped"   // stopped by an operator (desired state stopped)
	ProcExited    ProcState = "exited"    // ended by itself with status 0 and not restarted (policy)
	ProcFailed    ProcState = "failed"    // could not start, or crashed with restart policy never
	ProcLockLost  ProcState = "lock_lost" // its lock expired; stopped, relocking
	ProcHung      ProcState = "hung"      // alive but silent past its hang (or start) timeout: being stopped, then restarted as after a crash
)

// Supervisor runs one `pitboss run --supervised` child per agent, holds their
// wallet and agent locks in the fleet's lock bucket, restarts crashed children with
// exponential backoff and stops a crash loop, answers lifecycle requests (stop,
// restart), converges agents to the fleet's desired state, watches heartbeats, and
// publishes the fleet's metrics. Create it with New and call Run once; View,
// KillAll, Bus and Ready are safe for concurrent use.
type Supervisor struct {
	cfg   Config
	log   *zap.Logger
	out   *output
	host  string
	ready chan struct{}
	// start identifies this start of the supervisor in its lifecycle records' ids
	// (a restart under the same name must not repeat them: the AUDIT stream would
	// drop the new records as duplicates of the old ones for two minutes).
	start string

	memMu     sync.RWMutex
	members   []*member
	byID      map[market.AgentID]*member
	claimErrs map[market.AgentID]string // the claim loop's last error per definition (logged once)

	// Set by Run before ready is closed; read-only afterwards.
	bus     *natsbus.Bus
	server  *natsbus.Server
	agentEP natsbus.Endpoint
	minted  *mintedCreds // with NATSConfig.Minter
	locks   *natsbus.Locks
	desired *natsbus.DesiredStore
	roster  *natsbus.Roster
	budget  *natsbus.Budget
	pub     *publisher
	defs    *natsbus.Records // the fleet's agent definitions
	sups    *natsbus.Records // the supervisors' entries

	replicas natsbus.Replicas // the fleet's, settled by settleConfig
	trails   *trails          // the lifecycle records' writers (set by Run)

	mu       sync.Mutex
	fleet    natsbus.Desired // the fleet-wide desired entry (watched)
	warnings []string        // replica mismatches, shown in the view
	rand     func() float64

	metrics *metrics

	busMu      sync.Mutex
	busSteady  time.Time // since when the supervisor's NATS connection has been up without a reconnect
	busReconns uint64    // its reconnect count when last looked at

	envGoMaxProcs bool          // the supervisor's environment sets GOMAXPROCS (children inherit it)
	agentMetrics  *agentMetrics // the agents' own metrics, re-exported (with Registry)
}

// New checks cfg and returns a supervisor ready to Run.
func New(cfg Config) (*Supervisor, error) {
	if !market.ValidAgentID(cfg.Fleet) {
		return nil, fmt.Errorf("supervisor: invalid fleet name %q", cfg.Fleet)
	}
	host, _ := os.Hostname()
	if cfg.Name == "" {
		cfg.Name = host + "-" + strconv.Itoa(os.Getpid())
	}
	cfg.Name = sanitizeName(cfg.Name)
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.LockTTL == 0 {
		cfg.LockTTL = DefaultLockTTL
	}
	if cfg.MarketData.Mode == "" || cfg.MarketData.Mode == MarketDataAuto {
		// Auto became fanout while the agents were resolved if any of them is on
		// the remote venue (runtime/wire.ResolveFleetAgent): none is.
		cfg.MarketData.Mode = MarketDataOwn
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = runtime.GOMAXPROCS(0)
	}
	if cfg.Budget.Key == "" {
		cfg.Budget.Key = "default"
	}
	if cfg.MarketData.Mode == MarketDataFanout && cfg.MarketData.Publish && cfg.VenueFeed == nil {
		return nil, errors.New("supervisor: the market-data fan-out needs a venue feed")
	}
	if len(cfg.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("supervisor: the pitboss executable: %w", err)
		}
		cfg.Command = []string{exe}
	}
	if cfg.Environ == nil {
		cfg.Environ = os.Environ()
	}
	if cfg.Output == nil {
		cfg.Output = os.Stderr
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.NATS.Endpoint.URL == "" && cfg.NATS.StoreDir == "" {
		return nil, errors.New("supervisor: the embedded NATS server needs a store directory")
	}
	s := &Supervisor{cfg: cfg, log: cfg.Logger.With(zap.String("supervisor", cfg.Name)), out: newOutput(cfg.Output),
		host: host, ready: make(chan struct{}), byID: map[market.AgentID]*member{}, claimErrs: map[market.AgentID]string{}, rand: cfg.Rand,
		start: strconv.FormatInt(time.Now().UnixMilli(), 36)}
	for _, kv := range cfg.Environ {
		s.envGoMaxProcs = s.envGoMaxProcs || strings.HasPrefix(kv, "GOMAXPROCS=")
	}
	wallets := map[market.Address]market.AgentID{}
	for _, a := range cfg.Agents {
		if !a.ID.Valid() {
			return nil, fmt.Errorf("supervisor: invalid agent id %q", string(a.ID))
		}
		if _, dup := s.byID[a.ID]; dup {
			return nil, fmt.Errorf("supervisor: agent %s is listed twice", a.ID)
		}
		if other, dup := wallets[a.Wallet]; dup && !a.Wallet.IsZero() {
			// Not refused here: the lock refuses the second one with the holder's
			// name, exactly as it would across supervisors.
			s.log.Warn("two agents of this fleet file trade one wallet: the second will be refused",
				zap.String("agent", string(a.ID)), zap.String("other", string(other)), zap.Stringer("wallet", a.Wallet))
		} else {
			wallets[a.Wallet] = a.ID
		}
		a.Restart = a.Restart.withDefaults().withWatchdog(cfg.Heartbeat)
		for _, d := range []time.Duration{a.Restart.HangTimeout, a.Restart.StartTimeout} {
			if shortWatchdog(d, cfg.Heartbeat) {
				return nil, fmt.Errorf("supervisor: agent %s: watchdog timeout %s is shorter than %d heartbeats (%s)", a.ID, d,
					minWatchdogBeats, minWatchdogBeats*cfg.Heartbeat)
			}
		}
		m := newMember(s, a)
		s.members = append(s.members, m)
		s.byID[a.ID] = m
	}
	if n := AutoGoMaxProcs(len(cfg.Agents), cfg.CPUs); n > 0 && !s.envGoMaxProcs {
		s.log.Info("more agents than CPUs: agents whose limits leave gomaxprocs out run with GOMAXPROCS=1 (gomaxprocs: 0 keeps Go's default)",
			zap.Int("agents", len(cfg.Agents)), zap.Int("cpus", cfg.CPUs))
	}
	if cfg.Registry != nil {
		m, err := newMetrics(s, cfg.Registry)
		if err != nil {
			return nil, err
		}
		s.metrics = m
		s.agentMetrics = newAgentMetrics(s)
		if err := cfg.Registry.Register(s.agentMetrics); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// sanitizeName keeps a supervisor name usable in audit record ids and logs.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// Name returns the supervisor's name.
func (s *Supervisor) Name() string { return s.cfg.Name }

// Ready is closed once Run has connected, prepared the streams and buckets and
// started the agents' loops.
func (s *Supervisor) Ready() <-chan struct{} { return s.ready }

// Bus returns the supervisor's NATS connection (after Ready).
func (s *Supervisor) Bus() *natsbus.Bus { return s.bus }

// Endpoint returns how `pitboss ctl` reaches the fleet with the supervisor's rights
// (after Ready). It holds secrets: write it with Endpoint.WriteFile, never log it
// unredacted.
func (s *Supervisor) Endpoint() natsbus.Endpoint {
	if s.server != nil {
		return s.server.Endpoint(natsbus.RoleSupervisor)
	}
	return s.cfg.NATS.Endpoint
}

// AgentEndpoint returns the endpoint children share when they have no identity
// of their own (after Ready): on an existing cluster without a signing key, the
// agents' credentials; with one (NATSConfig.Minter), the URL and TLS files only.
// See AgentEndpointOf.
func (s *Supervisor) AgentEndpoint() natsbus.Endpoint { return s.agentEP }

// AgentEndpointOf returns the endpoint agent id's process gets (after Ready): on
// the embedded server, an identity of its own that may publish only under its
// name, make only its own JetStream calls and read only its own subjects
// (natsbus.Server.AgentEndpoint, scoped to the agent's wallet and the fleet's
// budget); with a signing key, the .creds file of its current minted
// credentials; otherwise AgentEndpoint. It holds secrets.
func (s *Supervisor) AgentEndpointOf(id market.AgentID) (natsbus.Endpoint, error) {
	sc := s.scopeOf(id)
	switch {
	case s.server != nil:
		return s.server.AgentEndpoint(sc)
	case s.minted != nil:
		path, err := s.minted.current(sc)
		return s.credsEndpoint(path), err
	}
	return s.agentEP, nil
}

// scopeOf returns what agent id's identity reaches: its wallet's lock (when the
// supervisor runs it) and the fleet's budget.
func (s *Supervisor) scopeOf(id market.AgentID) natsbus.AgentScope {
	s.memMu.RLock()
	m := s.byID[id]
	s.memMu.RUnlock()
	if m != nil {
		return m.scope()
	}
	return natsbus.AgentScope{Agent: id, Budget: s.cfg.Budget.Key}
}

// processEndpoint returns the endpoint of a new process of the agent of sc: with
// a signing key, newly minted credentials (a user key per process); otherwise
// AgentEndpointOf's.
func (s *Supervisor) processEndpoint(sc natsbus.AgentScope) (natsbus.Endpoint, error) {
	switch {
	case s.server != nil:
		return s.server.AgentEndpoint(sc)
	case s.minted != nil:
		path, err := s.minted.mint(sc)
		return s.credsEndpoint(path), err
	}
	return s.agentEP, nil
}

func (s *Supervisor) credsEndpoint(path string) natsbus.Endpoint {
	ep := s.agentEP
	ep.CredsFile = path
	return ep
}

// Run connects to the fleet's NATS (embedding a server unless an endpoint is
// configured), prepares the AUDIT stream and the lock, desired-state and budget
// buckets, starts every agent and keeps them running until ctx ends. Then it stops
// the children (SIGTERM, SIGKILL after StopTimeout), releases their locks, records
// it in the audit trail, and shuts the embedded server down last. It returns nil
// after a clean stop, or the error that kept it from starting.
func (s *Supervisor) Run(ctx context.Context) error {
	outCtx, stopOut := context.WithCancel(context.Background())
	var outWG sync.WaitGroup
	outWG.Add(1)
	go func() { defer outWG.Done(); s.out.run(outCtx) }()
	defer func() { stopOut(); outWG.Wait() }()

	if err := s.connect(ctx); err != nil {
		return err
	}
	defer s.disconnect()

	// Infrastructure goroutines live until the members are done: a stopping agent
	// still publishes its status and audit records.
	infraCtx, stopInfra := context.WithCancel(context.Background())
	var infra sync.WaitGroup
	defer func() { stopInfra(); infra.Wait() }()
	goInfra := func(name string, fn func(context.Context) error) {
		infra.Add(1)
		go func() {
			defer infra.Done()
			if err := fn(infraCtx); err != nil && infraCtx.Err() == nil {
				s.log.Error(name+" stopped", zap.Error(err))
			}
		}()
	}

	// Lifecycle records: a writer per agent, spooling what the cluster cannot
	// take; an earlier run's spools are stored first.
	s.trails = newTrails(s, goInfra)
	s.trails.resume()

	roster, err := s.bus.NewRoster(natsbus.RosterConfig{DefaultInterval: s.cfg.Heartbeat, OnChange: s.onRoster})
	if err != nil {
		return err
	}
	s.roster = roster
	goInfra("roster", roster.Run)
	rosterSrv, err := s.serveRoster()
	if err != nil {
		return err
	}
	goInfra("roster server", rosterSrv)
	goInfra("desired-state watch", s.watchDesired)
	if s.minted != nil {
		goInfra("agent credentials renewal", s.minted.run)
	}
	if s.cfg.Alerts != nil {
		goInfra("alerts", s.watchAlerts)
	}
	if s.cfg.MarketData.Mode == MarketDataFanout && s.cfg.MarketData.Publish {
		pub, err := newPublisher(s)
		if err != nil {
			return err
		}
		s.pub = pub
		goInfra("market-data fan-out", pub.run)
	}
	if s.metrics != nil {
		goInfra("metrics", s.metrics.run)
		serve, err := s.agentMetrics.serve()
		if err != nil {
			return err
		}
		goInfra("agent metrics", serve)
	}

	// Lifecycle servers, then the members.
	var lifeSrv []*natsbus.ControlServer
	for _, m := range s.memberList() {
		cs, err := s.bus.ServeLifecycle(m.a.ID, m.lifecycle)
		if err != nil {
			return err
		}
		lifeSrv = append(lifeSrv, cs)
	}
	for _, cs := range lifeSrv {
		goInfra("lifecycle server", cs.Run)
	}
	s.busSteadySince(time.Now()) // the watchdog counts silence from here at the earliest
	// Locks in file order first, then every agent's loop.
	for _, m := range s.memberList() {
		m.prepare(ctx)
	}
	var members sync.WaitGroup
	for _, m := range s.memberList() {
		members.Add(1)
		go func() { defer members.Done(); m.run(ctx) }()
	}
	// Claimed agents: each with its lifecycle server, removed when it ends.
	startClaimed := func(m *member) {
		cs, err := s.bus.ServeLifecycle(m.a.ID, m.lifecycle)
		if err != nil {
			s.log.Error("claimed agent not started: no lifecycle server", zap.String("agent", string(m.a.ID)), zap.Error(err))
			m.unlock()
			return
		}
		mctx, release := context.WithCancel(ctx)
		m.release = release
		s.addMember(m)
		s.publishEntry(ctx, true)
		members.Add(1)
		go func() {
			defer members.Done()
			lctx, stopLife := context.WithCancel(infraCtx)
			var lwg sync.WaitGroup
			lwg.Add(1)
			go func() { defer lwg.Done(); _ = cs.Run(lctx) }()
			m.run(mctx)
			release()
			stopLife()
			lwg.Wait()
			s.removeMember(m)
			s.publishEntry(ctx, true)
		}()
	}
	claimCtx, stopClaim := context.WithCancel(ctx)
	var claimWG sync.WaitGroup
	if s.claiming() {
		claimWG.Add(1)
		go func() { defer claimWG.Done(); s.claim(claimCtx, startClaimed) }()
	}
	s.publishEntry(ctx, true)
	convCtx, stopConv := context.WithCancel(ctx)
	var conv sync.WaitGroup
	conv.Add(1)
	go func() { defer conv.Done(); s.converge(convCtx) }()

	close(s.ready)
	s.log.Info("supervisor running", zap.String("fleet", s.cfg.Fleet), zap.Int("agents", len(s.memberList())),
		zap.Object("nats", s.agentEP))
	<-ctx.Done()
	s.log.Info("supervisor stopping: stopping the agents")
	stopConv()
	conv.Wait()
	stopClaim()
	claimWG.Wait()
	members.Wait()
	s.trails.close() // the writers drain with the infrastructure, spooling what is left
	s.publishEntry(context.Background(), false)
	s.log.Info("supervisor stopped")
	return nil
}

// connect joins or embeds the NATS server and prepares the fleet's streams and
// buckets.
func (s *Supervisor) connect(ctx context.Context) error {
	nc := s.cfg.NATS
	copts := natsbus.ConnectOptions{Name: "supervisor " + s.cfg.Name, Logger: s.log}
	if nc.Minter != nil && (nc.Endpoint.URL == "" || nc.AgentEndpoint.URL != "") {
		return errors.New("supervisor: a signing key (NATSConfig.Minter) is for an existing cluster, instead of agent credentials")
	}
	if nc.Endpoint.URL == "" {
		// The server's notices (its banner) are not the operator's business; its
		// warnings and errors are.
		srv, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: nc.StoreDir, Port: nc.Port, Name: "pitboss-" + s.cfg.Fleet,
			Logger: s.log.WithOptions(zap.IncreaseLevel(zap.WarnLevel))})
		if err != nil {
			return fmt.Errorf("supervisor: embedded NATS: %w", err)
		}
		s.server = srv
		bus, err := srv.Connect(ctx, natsbus.RoleSupervisor, copts)
		if err != nil {
			srv.Shutdown()
			return fmt.Errorf("supervisor: %w", err)
		}
		s.bus, s.agentEP = bus, srv.Endpoint(natsbus.RoleAgent)
	} else {
		bus, err := s.dial(ctx, nc.Endpoint, copts)
		if err != nil {
			return fmt.Errorf("supervisor: %w", err)
		}
		s.bus, s.agentEP = bus, nc.AgentEndpoint
		if s.agentEP.URL == "" {
			s.agentEP = nc.Endpoint
		}
	}
	fail := func(err error) error {
		s.disconnect()
		return fmt.Errorf("supervisor: %w", err)
	}
	if nc.Minter != nil {
		s.agentEP = withoutAuth(nc.Endpoint)
		minted, err := newMintedCreds(nc.Minter, nc.CredsDir, s.cfg.Fleet, s.log)
		if err != nil {
			return fail(err)
		}
		s.minted = minted
		if err := natsbus.ProbeMinted(ctx, nc.Minter, s.agentEP, minted.dir); err != nil {
			return fail(fmt.Errorf("signing key: %w", err))
		}
		s.log.Info("agents get credentials of their own", zap.Stringer("minter", nc.Minter), zap.Duration("jwt_ttl", nc.Minter.TTL()))
	}
	if err := s.prepareStreams(ctx); err != nil {
		return fail(err)
	}
	if f := nc.CtlFile; f != "" {
		if err := s.Endpoint().WriteFile(f); err != nil {
			return fail(fmt.Errorf("write the ctl endpoint file: %w", err))
		}
	}
	if f := nc.ReaderFile; f != "" && s.server != nil {
		if err := s.server.Endpoint(natsbus.RoleReader).WriteFile(f); err != nil {
			return fail(fmt.Errorf("write the read-only endpoint file: %w", err))
		}
	}
	return nil
}

// dial connects to an existing cluster, retrying with a backoff (250 ms doubling
// to 5 s) while no server of it answers — a supervisor started with its machine
// may come up before the cluster does — and saying so in its log. Refused
// credentials, a missing credentials file or a bad URL fail at once.
func (s *Supervisor) dial(ctx context.Context, ep natsbus.Endpoint, copts natsbus.ConnectOptions) (*natsbus.Bus, error) {
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		bus, err := natsbus.Connect(ctx, ep, copts)
		if err == nil {
			if attempt > 1 {
				s.log.Info("connected to the fleet's NATS", zap.Int("attempts", attempt))
			}
			return bus, nil
		}
		if !natsbus.Unreachable(err) || ctx.Err() != nil {
			return nil, err
		}
		s.log.Warn("the fleet's NATS is not reachable; retrying", zap.Int("attempt", attempt), zap.Duration("in", wait), zap.Error(err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (s *Supervisor) disconnect() {
	if s.cfg.NATS.CtlFile != "" {
		_ = os.Remove(s.cfg.NATS.CtlFile)
	}
	if s.cfg.NATS.ReaderFile != "" && s.server != nil {
		_ = os.Remove(s.cfg.NATS.ReaderFile)
	}
	if s.bus != nil {
		s.bus.Close()
	}
	if s.minted != nil {
		s.minted.close()
	}
	if s.server != nil {
		s.server.Shutdown()
	}
}

// onRoster logs liveness changes (the roster's goroutine).
func (s *Supervisor) onRoster(c natsbus.RosterChange) {
	fields := []zap.Field{zap.String("agent", string(c.Agent)), zap.Stringer("from", c.From), zap.Stringer("to", c.To)}
	switch c.To {
	case natsbus.LivenessDead:
		s.log.Warn("agent heartbeats stopped: agent is dead", fields...)
	case natsbus.LivenessAlive:
		s.log.Info("agent heartbeats", fields...)
	default:
		s.log.Info("agent liveness", fields...)
	}
}

// watchDesired follows the desired-state bucket and tells the members, retrying
// after a failed watch.
func (s *Supervisor) watchDesired(ctx context.Context) error {
	for ctx.Err() == nil {
		err := s.desired.Watch(ctx, func(id market.AgentID, d natsbus.Desired, cleared bool) {
			if id == "" {
				s.mu.Lock()
				s.fleet = d
				s.mu.Unlock()
				for _, m := range s.memberList() {
					m.desiredChanged()
				}
				return
			}
			if m := s.member(id); m != nil {
				m.setAgentDesired(d)
			}
		})
		if err != nil && ctx.Err() == nil {
			s.log.Warn("desired-state watch failed, retrying", zap.Error(err))
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
	return nil
}

func (s *Supervisor) fleetDesired() natsbus.Desired {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fleet
}

// converge sends kill and pause to running agents whose reported state is less
// restrictive than their desired state (a kill switch thrown while they were away),
// every heartbeat interval, until ctx ends. It never resumes an agent on its own:
// a resume is always an operator's explicit request.
func (s *Supervisor) converge(ctx context.Context) {
	t := time.NewTicker(s.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, m := range s.memberList() {
			if ctx.Err() != nil {
				return
			}
			m.converge(ctx)
		}
	}
}

// KillResult is the outcome of a fleet-wide kill switch.
type KillResult struct {
	Replies []natsbus.ControlReply `json:"replies"`
	// Missing are agents that were alive and did not answer; the desired state
	// reaches them when they come back (their supervisors converge them).
	Missing []market.AgentID `json:"missing,omitempty"`
}

// KillAll throws the fleet-wide kill switch: it records the fleet's desired state
// as killed (so it survives restarts and reaches agents that are away) and sends
// kill to every agent of the fleet, waiting for the replies of those alive.
func (s *Supervisor) KillAll(ctx context.Context, by, reason string) (KillResult, error) {
	if reason == "" {
		reason = "fleet kill switch"
	}
	if err := s.desired.Set(ctx, "", natsbus.Desired{State: natsbus.DesiredKilled, By: by, Reason: reason, Time: time.Now().UnixMilli()}); err != nil {
		return KillResult{}, err
	}
	var expect []market.AgentID
	for _, e := range s.roster.Snapshot() {
		if e.Liveness == natsbus.LivenessAlive {
			expect = append(expect, e.Status.Agent)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if len(expect) == 0 {
		cctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
	}
	reps, err := s.bus.ControlAll(cctx, natsbus.ControlRequest{Op: natsbus.OpKill, Reason: reason, From: by, Time: time.Now().UnixMilli()}, expect)
	res := KillResult{Replies: reps}
	var me *natsbus.MissingRepliesError
	if errors.As(err, &me) {
		res.Missing = me.Missing
		err = nil
	}
	s.log.Warn("fleet kill switch thrown", zap.String("by", by), zap.Int("replies", len(reps)), zap.Int("missing", len(res.Missing)))
	return res, err
}

// View returns what this supervisor knows of its agents: process, locks, desired
// state, and each agent's last status and heartbeat age.
func (s *Supervisor) View() FleetView {
	now := time.Now()
	v := FleetView{V: 1, Fleet: s.cfg.Fleet, Supervisor: s.cfg.Name, Host: s.host, Time: now.UnixMilli(),
		FleetDesired: s.fleetDesired().State}
	s.mu.Lock()
	v.Warnings = append([]string(nil), s.warnings...)
	s.mu.Unlock()
	v.Labels, v.MaxAgents = s.cfg.Labels, s.cfg.MaxAgents
	for _, m := range s.memberList() {
		v.Agents = append(v.Agents, m.view(now))
	}
	return v
}

// rosterRequests bounds the pending list requests. Overflow policy: nats.go drops
// the newest (the requester sees fewer supervisors and may ask again).
const rosterRequests = 64

// serveRoster answers `pitboss ctl list` (SubjectRoster) with View. It subscribes
// before returning.
func (s *Supervisor) serveRoster() (func(context.Context) error, error) {
	return s.serveSubject(SubjectRoster, rosterRequests, func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		if data, err := json.Marshal(s.View()); err == nil {
			_ = m.Respond(data)
		}
	})
}

// serveSubject subscribes to subject (a queue of n messages: nats.go drops the
// newest when it is full) before returning, and returns the loop that hands each
// message to handle until its context ends, then unsubscribes.
func (s *Supervisor) serveSubject(subject string, n int, handle func(*nats.Msg)) (func(context.Context) error, error) {
	ch := make(chan *nats.Msg, n)
	sub, err := s.bus.Conn().ChanSubscribe(subject, ch)
	if err == nil {
		if err = s.bus.Conn().Flush(); err != nil {
			_ = sub.Unsubscribe()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("supervisor: subscribe to %s: %w", subject, err)
	}
	return func(ctx context.Context) error {
		defer func() { _ = sub.Unsubscribe() }()
		for {
			select {
			case <-ctx.Done():
				return nil
			case m := <-ch:
				handle(m)
			}
		}
	}, nil
}

// SubjectRoster is where supervisors answer list requests (`pitboss ctl list`, the
// dashboard of another supervisor) with their FleetView. It is under
// "pitboss.fleet.", which the agent role may not publish to.
const SubjectRoster = natsbus.Prefix + ".fleet.roster"

// Fleet asks every supervisor of the fleet (this one included) for its view: the
// dashboard's data. It waits 250 ms for the answers.
func (s *Supervisor) Fleet(ctx context.Context) (Fleet, error) {
	return NewClient(s.bus, "supervisor "+s.cfg.Name).List(ctx, 250*time.Millisecond)
}

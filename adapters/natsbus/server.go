package natsbus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/pitbossdev/pitboss/market"
)

// Role is what a connection may do on an embedded server. The zero value is the
// least privileged role, RoleAgent.
type Role uint8

// Roles.
const (
	// RoleAgent is for agent processes: they publish status, audit records, demand
	// and budget grants, answer control requests, read the fleet's streams and
	// buckets, but cannot send control requests, publish market data, write locks or
	// desired state, or create, change, purge or delete streams (see
	// AgentDenyPublish).
	RoleAgent Role = iota
	// RoleSupervisor may do everything: supervisors and `pitboss ctl`.
	RoleSupervisor
	// RoleReader is the read-only operator role: `pitboss ctl list` and `pitboss
	// ctl tail` (ReaderPublishAllow), nothing that controls or writes.
	RoleReader
)

// String returns "agent", "supervisor" or "reader".
func (r Role) String() string {
	switch r {
	case RoleSupervisor:
		return "supervisor"
	case RoleReader:
		return "reader"
	}
	return "agent"
}

// User names of the embedded server's roles. An agent's own identity
// (Server.AgentEndpoint) is UserAgent + "." + its id.
const (
	UserAgent      = "pitboss-agent"
	UserSupervisor = "pitboss-supervisor"
	UserReader     = "pitboss-reader"
)

// AgentDenyPublish lists the subjects the agent role may not publish to on an
// embedded server. Operators of an external cluster should give agent credentials
// the same deny list (docs/fleet.md).
var AgentDenyPublish = []string{
	"$JS.API.STREAM.CREATE.>",
	"$JS.API.STREAM.UPDATE.>",
	"$JS.API.STREAM.DELETE.>",
	"$JS.API.STREAM.PURGE.>",
	"$JS.API.STREAM.MSG.DELETE.>",
	"$JS.API.STREAM.RESTORE.>",
	"$JS.API.STREAM.PEER.>",
	"$JS.API.STREAM.LEADER.>",
	"$JS.API.ACCOUNT.>",
	"$JS.API.META.>",
	"$JS.API.SERVER.>",
	"$KV." + LockBucket + ".>",
	"$KV." + DesiredBucket + ".>",
	"$KV." + AgentsBucket + ".>",
	"$KV." + SupervisorsBucket + ".>",
	Prefix + ".agent.*.ctl",
	Prefix + ".agent.*.life",
	Prefix + ".fleet.>",
	Prefix + ".md.>", // market data comes from the fleet's feed, never from an agent
	"$SYS.>",
}

// ServerConfig configures an embedded nats-server. Only StoreDir is required.
type ServerConfig struct {
	// StoreDir is the JetStream file store directory; created with mode 0700 if it
	// does not exist. Reusing a directory recovers its streams (the AUDIT trail, the
	// lock and desired-state buckets). Required.
	StoreDir string
	// Host is the listen address. It must be a loopback address or "localhost"; the
	// embedded server never listens on other interfaces (use an external cluster
	// for several machines). If empty, 127.0.0.1.
	Host string
	// Port is the TCP port. If zero, the operating system picks a free port; read it
	// back with URL.
	Port int
	// InProcessOnly disables the TCP listener: only Connect on this Server works.
	// For tests and single-process tools; children cannot reach such a server.
	InProcessOnly bool
	// Name is the server name (logs, JetStream). If empty, "pitboss".
	Name string
	// SupervisorPassword, AgentPassword and ReaderPassword are the passwords of the
	// roles (at most 72 bytes). If empty, each is 32 random bytes (base64url), new
	// at every start. The server holds only their bcrypt hashes.
	SupervisorPassword string
	AgentPassword      string
	ReaderPassword     string
	// MaxMemory bounds JetStream memory storage in bytes. If zero, 256 MiB.
	MaxMemory int64
	// MaxStore bounds JetStream file storage in bytes. If zero, nats-server's
	// default: 75% of the free space of StoreDir's file system at start.
	MaxStore int64
	// ReadyTimeout bounds the wait for the server to accept clients. If zero, 10 s.
	ReadyTimeout time.Duration
	// Logger receives the server's log. If nil, nothing is logged.
	Logger *zap.Logger
}

// Server is an embedded nats-server with JetStream on local disk, listening on
// loopback only, requiring a user and password from every client, with fsync after
// every JetStream write (sync always: an acknowledged audit record survives a crash
// of the process or the machine). It never installs signal handlers.
//
// Methods are safe for concurrent use. The zero value is not usable: call
// StartServer. The owner calls Shutdown (or runs Run) exactly once.
type Server struct {
	ns    *server.Server
	cfg   ServerConfig
	log   *zap.Logger
	url   string
	creds [3]Endpoint
	auth  *serverAuth

	agentsMu sync.Mutex
	agents   map[market.AgentID]Endpoint   // identities made by AgentEndpoint
	scopes   map[market.AgentID]AgentScope // and their scopes
}

// ErrNotLoopback is returned by StartServer for a Host that is not a loopback address.
var ErrNotLoopback = errors.New("natsbus: the embedded server listens on loopback addresses only")

// StartServer starts an embedded server and waits until it accepts clients and
// JetStream is enabled, or ctx ends, or cfg.ReadyTimeout passes; on failure nothing
// is left running.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("natsbus: ServerConfig.StoreDir is required")
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if !isLoopback(cfg.Host) {
		return nil, fmt.Errorf("%w: %q", ErrNotLoopback, cfg.Host)
	}
	if cfg.Name == "" {
		cfg.Name = "pitboss"
	}
	if cfg.SupervisorPassword == "" {
		cfg.SupervisorPassword = randomSecret(32)
	}
	if cfg.AgentPassword == "" {
		cfg.AgentPassword = randomSecret(32)
	}
	if cfg.ReaderPassword == "" {
		cfg.ReaderPassword = randomSecret(32)
	}
	if cfg.SupervisorPassword == cfg.AgentPassword || cfg.ReaderPassword == cfg.SupervisorPassword || cfg.ReaderPassword == cfg.AgentPassword {
		return nil, errors.New("natsbus: the supervisor, agent and reader passwords must differ")
	}
	auth := &serverAuth{users: map[string]authUser{}}
	if err := auth.add(UserSupervisor, cfg.SupervisorPassword, nil); err != nil {
		return nil, fmt.Errorf("natsbus: supervisor password: %w", err)
	}
	if err := auth.add(UserAgent, cfg.AgentPassword, &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{">"}, Deny: AgentDenyPublish},
	}); err != nil {
		return nil, fmt.Errorf("natsbus: agent password: %w", err)
	}
	if err := auth.add(UserReader, cfg.ReaderPassword, &server.Permissions{
		Publish:  &server.SubjectPermission{Allow: ReaderPublishAllow},
		Response: &server.ResponsePermission{MaxMsgs: ResponseMaxMsgs, Expires: ResponseExpires},
	}); err != nil {
		return nil, fmt.Errorf("natsbus: reader password: %w", err)
	}
	if cfg.MaxMemory == 0 {
		cfg.MaxMemory = 256 << 20
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 10 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if err := os.MkdirAll(cfg.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("natsbus: store dir: %w", err)
	}

	port := cfg.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: cfg.Name,
		Host:       cfg.Host,
		Port:       port,
		DontListen: cfg.InProcessOnly,
		NoSigs:     true, // otherwise SIGINT/SIGTERM make the server call os.Exit
		// No early PING during the connect handshake: on a loaded machine a client
		// still waiting for its PONG would fail with "expected 'PONG', got 'PING'".
		DisableShortFirstPing: true,
		HTTPPort:              0, // no monitoring endpoint
		JetStream:             true,
		StoreDir:              cfg.StoreDir,
		SyncAlways:            true,
		JetStreamMaxMemory:    cfg.MaxMemory,
		// Users are checked by auth (the roles and every agent's own identity,
		// added while the server runs).
		CustomClientAuthentication: auth,
	}
	if cfg.MaxStore != 0 {
		opts.JetStreamMaxStore = cfg.MaxStore
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsbus: embedded server: %w", err)
	}
	ns.SetLoggerV2(serverLogger{log.Named("nats-server").Sugar()}, false, false, false)
	ns.Start()

	deadline := time.Now().Add(cfg.ReadyTimeout)
	for !ns.ReadyForConnections(50 * time.Millisecond) {
		if ctx.Err() != nil || time.Now().After(deadline) {
			ns.Shutdown()
			ns.WaitForShutdown()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("natsbus: embedded server not ready: %w", ctx.Err())
			}
			return nil, fmt.Errorf("natsbus: embedded server not ready after %s", cfg.ReadyTimeout)
		}
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, errors.New("natsbus: embedded server started without JetStream (see its log)")
	}
	s := &Server{ns: ns, cfg: cfg, log: log, auth: auth, agents: map[market.AgentID]Endpoint{},
		scopes: map[market.AgentID]AgentScope{}}
	if !cfg.InProcessOnly {
		addr, ok := ns.Addr().(*net.TCPAddr)
		if !ok {
			ns.Shutdown()
			ns.WaitForShutdown()
			return nil, errors.New("natsbus: embedded server has no TCP address")
		}
		s.url = "nats://" + net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port))
	}
	s.creds[RoleAgent] = Endpoint{URL: s.url, User: UserAgent, Password: cfg.AgentPassword}
	s.creds[RoleSupervisor] = Endpoint{URL: s.url, User: UserSupervisor, Password: cfg.SupervisorPassword}
	s.creds[RoleReader] = Endpoint{URL: s.url, User: UserReader, Password: cfg.ReaderPassword}
	log.Info("embedded nats-server ready", zap.String("url", s.url), zap.String("store_dir", cfg.StoreDir))
	return s, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL returns the client URL ("nats://127.0.0.1:port"), or "" for an in-process-only
// server.
func (s *Server) URL() string { return s.url }

// Endpoint returns the URL and credentials of role, to hand to a child process
// (Endpoint.Environ or Endpoint.WriteFile). Its URL is empty for an in-process-only
// server.
func (s *Server) Endpoint(role Role) Endpoint {
	if role > RoleReader {
		role = RoleAgent
	}
	return s.creds[role]
}

// AgentEndpoint returns the endpoint of the identity of agent sc.Agent: user
// UserAgent.<id>, a password of its own (32 random bytes, made at the first call
// and kept for the server's life), publish rights limited to the agent's own
// subjects and JetStream calls (AgentPublishAllow(sc) minus AgentDenyPublish) and
// subscribe rights to what it reads (AgentSubscribeAllow: its connection must use
// AgentInboxPrefix). A call with another scope for the same agent (its wallet
// changed) replaces the rights of new connections. Hand it to that agent's
// process only (Endpoint.Environ).
func (s *Server) AgentEndpoint(sc AgentScope) (Endpoint, error) {
	allow, err := AgentPublishAllow(sc)
	if err != nil {
		return Endpoint{}, err
	}
	subs, err := AgentSubscribeAllow(sc.Agent)
	if err != nil {
		return Endpoint{}, err
	}
	s.agentsMu.Lock()
	defer s.agentsMu.Unlock()
	id := sc.Agent
	ep, ok := s.agents[id]
	if ok && s.scopes[id] == sc {
		return ep, nil
	}
	if !ok {
		ep = Endpoint{URL: s.url, User: UserAgent + "." + string(id), Password: randomSecret(32)}
	}
	if err := s.auth.add(ep.User, ep.Password, &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: allow, Deny: AgentDenyPublish},
		Subscribe: &server.SubjectPermission{Allow: subs},
		Response:  &server.ResponsePermission{MaxMsgs: ResponseMaxMsgs, Expires: ResponseExpires},
	}); err != nil {
		return Endpoint{}, fmt.Errorf("natsbus: agent %s: %w", id, err)
	}
	s.agents[id], s.scopes[id] = ep, sc
	return ep, nil
}

// ConnectAgent opens an in-process connection with the identity of agent
// sc.Agent (and, unless opts says otherwise, its inbox prefix).
func (s *Server) ConnectAgent(ctx context.Context, sc AgentScope, opts ConnectOptions) (*Bus, error) {
	ep, err := s.AgentEndpoint(sc)
	if err != nil {
		return nil, err
	}
	if opts.InboxPrefix == "" {
		opts.InboxPrefix = AgentInboxPrefix(sc.Agent)
	}
	return connect(ctx, ep, s.ns, opts)
}

// serverAuth checks the embedded server's users: the roles' and the agents'
// identities (nats-server's CustomClientAuthentication, so that identities can be
// added while the server runs). It keeps bcrypt hashes only (minimum cost: the
// passwords are 256-bit random, so the hash guards against reading memory, not
// against guessing). Safe for concurrent use.
type serverAuth struct {
	mu    sync.RWMutex
	users map[string]authUser
}

type authUser struct {
	hash  []byte
	perms *server.Permissions // nil: everything
}

func (a *serverAuth) add(user, password string, perms *server.Permissions) error {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.users[user] = authUser{hash: h, perms: perms}
	a.mu.Unlock()
	return nil
}

// Check implements server.Authentication.
func (a *serverAuth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if o == nil || o.Username == "" {
		return false
	}
	a.mu.RLock()
	u, ok := a.users[o.Username]
	a.mu.RUnlock()
	if !ok || bcrypt.CompareHashAndPassword(u.hash, []byte(o.Password)) != nil {
		return false
	}
	c.RegisterUser(&server.User{Username: o.Username, Permissions: u.perms})
	return true
}

// Connect opens an in-process connection (no TCP) with the credentials of role.
func (s *Server) Connect(ctx context.Context, role Role, opts ConnectOptions) (*Bus, error) {
	return connect(ctx, s.Endpoint(role), s.ns, opts)
}

// Shutdown stops the server and waits until it has stopped: clients are
// disconnected and JetStream is flushed and closed. Calling it again is a no-op.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	s.log.Info("embedded nats-server stopped")
}

// Run blocks until ctx ends, then shuts the server down. It returns nil after a clean
// shutdown caused by ctx.
func (s *Server) Run(ctx context.Context) error {
	<-ctx.Done()
	s.Shutdown()
	return nil
}

// serverLogger adapts zap to nats-server's Logger.
type serverLogger struct{ l *zap.SugaredLogger }

func (g serverLogger) Noticef(format string, v ...any) { g.l.Infof(format, v...) }
func (g serverLogger) Warnf(format string, v ...any)   { g.l.Warnf(format, v...) }
func (g serverLogger) Fatalf(format string, v ...any)  { g.l.Errorf("fatal: "+format, v...) }
func (g serverLogger) Errorf(format string, v ...any)  { g.l.Errorf(format, v...) }
func (g serverLogger) Debugf(format string, v ...any)  { g.l.Debugf(format, v...) }
func (g serverLogger) Tracef(format string, v ...any)  { g.l.Debugf(format, v...) }

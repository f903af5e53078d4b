package natsbus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"
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
)

// String returns "agent" or "supervisor".
func (r Role) String() string {
	if r == RoleSupervisor {
		return "supervisor"
	}
	return "agent"
}

// User names of the embedded server's two roles.
const (
	UserAgent      = "pitboss-agent"
	UserSupervisor = "pitboss-supervisor"
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
	// SupervisorPassword and AgentPassword are the passwords of the two roles (at most
	// 72 bytes). If empty, each is 32 random bytes (base64url), new at every start.
	// The server holds only their bcrypt hashes.
	SupervisorPassword string
	AgentPassword      string
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
	creds [2]Endpoint
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
	if cfg.SupervisorPassword == cfg.AgentPassword {
		return nil, errors.New("natsbus: the supervisor and agent passwords must differ")
	}
	// The server keeps only bcrypt hashes (minimum cost: the passwords are 256-bit
	// random, so the hash guards against reading the options, not against guessing).
	supHash, err := bcrypt.GenerateFromPassword([]byte(cfg.SupervisorPassword), bcrypt.MinCost)
	if err != nil {
		return nil, fmt.Errorf("natsbus: supervisor password: %w", err)
	}
	agentHash, err := bcrypt.GenerateFromPassword([]byte(cfg.AgentPassword), bcrypt.MinCost)
	if err != nil {
		return nil, fmt.Errorf("natsbus: agent password: %w", err)
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
		Users: []*server.User{
			{Username: UserSupervisor, Password: string(supHash)},
			{Username: UserAgent, Password: string(agentHash), Permissions: &server.Permissions{
				Publish: &server.SubjectPermission{Allow: []string{">"}, Deny: AgentDenyPublish},
			}},
		},
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
	s := &Server{ns: ns, cfg: cfg, log: log}
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
	if role > RoleSupervisor {
		role = RoleAgent
	}
	return s.creds[role]
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

package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/market"
)

func TestServerListensOnLoopbackOnly(t *testing.T) {
	tests := []struct {
		host string
		ok   bool
	}{
		{"", true},
		{"127.0.0.1", true},
		{"localhost", true},
		{"::1", true},
		{"0.0.0.0", false},
		{"::", false},
		{"192.168.1.10", false},
		{"example.com", false},
	}
	for _, tt := range tests {
		t.Run("host="+tt.host, func(t *testing.T) {
			if !tt.ok {
				_, err := StartServer(context.Background(), ServerConfig{StoreDir: t.TempDir(), Host: tt.host})
				if !errors.Is(err, ErrNotLoopback) {
					t.Fatalf("StartServer(host %q) err = %v, want ErrNotLoopback", tt.host, err)
				}
				return
			}
			if tt.host == "::1" {
				if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
					t.Skip("no IPv6 loopback on this machine")
				} else {
					ln.Close()
				}
			}
			s := startServer(t, "", func(c *ServerConfig) { c.Host = tt.host })
			u, err := url.Parse(s.URL())
			if err != nil {
				t.Fatal(err)
			}
			ip := net.ParseIP(u.Hostname())
			if ip == nil || !ip.IsLoopback() || u.Port() == "" || u.Port() == "0" {
				t.Fatalf("URL %q is not a loopback address with a port", s.URL())
			}
		})
	}
}

func TestServerStartsAndStopsRepeatedlyOnOneStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jetstream") // created by StartServer, 0700
	for i := 0; i < 3; i++ {
		s, err := StartServer(context.Background(), ServerConfig{StoreDir: dir})
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		b, err := Connect(context.Background(), s.Endpoint(RoleSupervisor), ConnectOptions{})
		if err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
		if err := b.EnsureAudit(context.Background(), AuditConfig{}); err != nil {
			t.Fatalf("ensure audit %d: %v", i, err)
		}
		b.Close()
		s.Shutdown()
		s.Shutdown() // idempotent
	}
	if leaked := waitNoLeaks(5 * time.Second); leaked != "" {
		t.Fatalf("goroutines survive Shutdown:\n%s", leaked)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("store dir mode: %v %v", st.Mode(), err)
	}
}

func TestServerRunStopsOnCancel(t *testing.T) {
	s, err := StartServer(context.Background(), ServerConfig{StoreDir: t.TempDir(), InProcessOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.URL() != "" {
		t.Fatalf("in-process server has URL %q", s.URL())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	b, err := s.Connect(context.Background(), RoleAgent, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestAuthenticationIsRequired(t *testing.T) {
	s := startServer(t, "")
	good := s.Endpoint(RoleAgent)
	tests := []struct {
		name string
		ep   Endpoint
		ok   bool
	}{
		{"agent password", good, true},
		{"supervisor password", s.Endpoint(RoleSupervisor), true},
		{"wrong password", Endpoint{URL: good.URL, User: UserAgent, Password: "not-it"}, false},
		{"other role's password", Endpoint{URL: good.URL, User: UserAgent, Password: s.Endpoint(RoleSupervisor).Password}, false},
		{"no credentials", Endpoint{URL: good.URL}, false},
		{"token instead", Endpoint{URL: good.URL, Token: good.Password}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Connect(ctxT(t, 5*time.Second), tt.ep, ConnectOptions{Timeout: 2 * time.Second})
			if tt.ok {
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				b.Close()
				return
			}
			if err == nil {
				b.Close()
				t.Fatal("Connect succeeded")
			}
			if strings.Contains(err.Error(), good.Password) || (tt.ep.Password != "" && strings.Contains(err.Error(), tt.ep.Password)) {
				t.Fatalf("error leaks the password: %v", err)
			}
		})
	}
}

func TestPasswordsAreFreshAndDistinct(t *testing.T) {
	a := startServer(t, "")
	b := startServer(t, "")
	pw := map[string]bool{}
	for _, s := range []*Server{a, b} {
		for _, r := range []Role{RoleAgent, RoleSupervisor} {
			p := s.Endpoint(r).Password
			if len(p) < 40 || pw[p] {
				t.Fatalf("weak or repeated password for %s", r)
			}
			pw[p] = true
		}
	}
	if _, err := StartServer(context.Background(), ServerConfig{StoreDir: t.TempDir(), SupervisorPassword: "x", AgentPassword: "x"}); err == nil {
		t.Fatal("equal role passwords accepted")
	}
}

func TestAgentRoleIsDeniedFleetAdministration(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	agent := connectRole(t, s, RoleAgent, "agent")
	if err := sup.EnsureAudit(ctxT(t, 5*time.Second), AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	locks, err := sup.EnsureLocks(ctxT(t, 5*time.Second), LockConfig{})
	if err != nil {
		t.Fatal(err)
	}
	log, err := agent.AuditLog("a1", [20]byte{1}, "r")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := log.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: AuditIntent}); err != nil {
		t.Fatalf("agent cannot append audit: %v", err)
	}
	tests := []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"delete the audit stream", func(ctx context.Context) error { return agent.js.DeleteStream(ctx, AuditStream) }},
		{"create a stream", func(ctx context.Context) error {
			_, err := agent.js.CreateStream(ctx, jetstream.StreamConfig{Name: "X", Subjects: []string{"x.>"}})
			return err
		}},
		{"write a lock", func(ctx context.Context) error {
			l, err := agent.OpenLocks(ctx)
			if err != nil {
				return err
			}
			_, err = l.Acquire(ctx, "wallet.0x01", Holder{Agent: "a1"})
			return err
		}},
		{"send a control request", func(ctx context.Context) error {
			_, err := agent.Control(ctx, ControlRequest{Op: OpKill, Target: "a2"})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do(ctxT(t, 300*time.Millisecond))
			if err == nil {
				t.Fatal("agent role was allowed")
			}
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, market.ErrAgentNoAnswer) {
				t.Fatalf("refused for another reason than a permission (a timeout): %v", err)
			}
		})
	}
	// Market data: an agent cannot feed other agents a fake book.
	got := make(chan string, 4)
	sub, err := sup.Conn().Subscribe("pitboss.md.123", func(m *nats.Msg) { got <- string(m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := sup.Flush(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	_ = agent.Conn().Publish("pitboss.md.123", []byte("forged"))
	_ = agent.Flush(ctxT(t, 5*time.Second)) // the server has seen (and refused) it
	if err := sup.Conn().Publish("pitboss.md.123", []byte("real")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != "real" {
			t.Fatalf("agent published market data: %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the supervisor's market data did not arrive")
	}
	if h, held, err := locks.Holder(ctxT(t, 5*time.Second), "wallet.0x01"); err != nil || held {
		t.Fatalf("agent wrote a lock: %v %v %v", h, held, err)
	}
	if _, err := sup.js.Stream(ctxT(t, 5*time.Second), AuditStream); err != nil {
		t.Fatalf("audit stream gone: %v", err)
	}
}

func TestEndpointNeverPrintsSecrets(t *testing.T) {
	ep := Endpoint{URL: "nats://127.0.0.1:4222", User: "u", Password: "hunter2-secret"}
	tok := Endpoint{URL: "nats://127.0.0.1:4222", Token: "tok-secret-xyz"}
	inURL := Endpoint{URL: "nats://u:hunter2-in-url@10.0.0.1:4222,tls://tok-secret-url@10.0.0.2:4222"}
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(core)
	for _, e := range []Endpoint{ep, tok, inURL} {
		secret := e.Password + e.Token
		if e == inURL {
			secret = "hunter2-in-url"
		}
		j, _ := json.Marshal(e)
		log.Info("endpoint", zap.Object("ep", e), zap.Any("any", e), zap.Stringer("s", e))
		outs := []string{fmt.Sprint(e), fmt.Sprintf("%v %+v %#v %s", e, e, e, e), string(j)}
		for _, o := range outs {
			if strings.Contains(o, secret) {
				t.Fatalf("secret printed: %s", o)
			}
		}
	}
	for _, entry := range logs.All() {
		b, _ := json.Marshal(entry.ContextMap())
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "tok-secret") {
			t.Fatalf("secret logged: %s", b)
		}
	}
	if logs.Len() != 3 {
		t.Fatalf("logged %d entries", logs.Len())
	}
	if got := inURL.String(); got != "url=nats://[redacted]@10.0.0.1:4222,tls://[redacted]@10.0.0.2:4222" {
		t.Fatalf("String() = %q", got)
	}
}

func TestEndpointFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nats.json")
	ep := Endpoint{URL: "nats://127.0.0.1:1", User: "u", Password: "p"}
	if err := ep.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, err %v", st.Mode().Perm(), err)
	}
	got, err := ReadEndpointFile(p)
	if err != nil || got != ep {
		t.Fatalf("ReadEndpointFile = %v, %v", got, err)
	}
	env := map[string]string{EnvFile: p}
	got, err = EndpointFromEnv(func(k string) string { return env[k] })
	if err != nil || got != ep {
		t.Fatalf("EndpointFromEnv(file) = %v, %v", got, err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEndpointFile(p); !errors.Is(err, ErrLooseFileMode) {
		t.Fatalf("loose file accepted: %v", err)
	}
	creds := filepath.Join(dir, "user.creds")
	if err := os.WriteFile(creds, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(context.Background(), Endpoint{URL: "nats://127.0.0.1:1", CredsFile: creds}, ConnectOptions{}); !errors.Is(err, ErrLooseFileMode) {
		t.Fatalf("loose creds file accepted: %v", err)
	}
}

func TestEndpointTravelsThroughTheEnvironment(t *testing.T) {
	tests := []struct {
		name string
		ep   Endpoint
		ok   bool
	}{
		{"user and password", Endpoint{URL: "nats://127.0.0.1:1", User: "u", Password: "p"}, true},
		{"token", Endpoint{URL: "nats://a:1,nats://b:2", Token: "t"}, true},
		{"creds file", Endpoint{URL: "nats://a:1", CredsFile: "/x/y.creds"}, true},
		{"no URL", Endpoint{User: "u", Password: "p"}, false},
		{"two kinds of auth", Endpoint{URL: "nats://a:1", User: "u", Token: "t"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for _, kv := range tt.ep.Environ() {
				k, v, _ := strings.Cut(kv, "=")
				if !strings.HasPrefix(k, "PITBOSS_NATS_") {
					t.Fatalf("unexpected variable %s", k)
				}
				env[k] = v
			}
			got, err := EndpointFromEnv(func(k string) string { return env[k] })
			if (err == nil) != tt.ok {
				t.Fatalf("EndpointFromEnv err = %v", err)
			}
			if tt.ok && got != tt.ep {
				t.Fatalf("round trip = %v, want %v", got, tt.ep)
			}
		})
	}
}

func TestChildConnectsOverTCPWithHandedEndpoint(t *testing.T) {
	s := startServer(t, "")
	ep := s.Endpoint(RoleAgent)
	env := map[string]string{}
	for _, kv := range ep.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	got, err := EndpointFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	b, err := Connect(ctxT(t, 5*time.Second), got, ConnectOptions{Name: "child"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !strings.HasPrefix(b.Conn().ConnectedUrl(), "nats://127.0.0.1:") {
		t.Fatalf("connected to %s", b.Conn().ConnectedUrl())
	}
}

func TestServerLogsThroughInjectedLogger(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	s := startServer(t, "", func(c *ServerConfig) { c.Logger = zap.New(core) })
	pw := s.Endpoint(RoleSupervisor).Password
	// A failed login is logged by nats-server; the password must not be.
	if b, err := Connect(ctxT(t, 5*time.Second), Endpoint{URL: s.URL(), User: UserAgent, Password: pw + "x"}, ConnectOptions{Timeout: time.Second}); err == nil {
		b.Close()
		t.Fatal("bad password accepted")
	}
	waitFor(t, 5*time.Second, "server log entries", func() bool { return logs.FilterMessageSnippet("ready").Len() > 0 })
	if logs.FilterLoggerName("nats-server").Len() == 0 {
		t.Fatal("no nats-server log entries")
	}
	for _, e := range logs.All() {
		b, _ := json.Marshal(e.ContextMap())
		if strings.Contains(e.Message, pw) || strings.Contains(string(b), pw) {
			t.Fatalf("password logged: %s", e.Message)
		}
	}
}

// TestClientsReconnectAfterServerRestart restarts an embedded server on the same
// store, port and passwords: a child's connection comes back by itself, its control
// subscription answers again, and the audit trail written before is still there.
func TestClientsReconnectAfterServerRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	cfg := ServerConfig{StoreDir: dir, Port: port, SupervisorPassword: "sup-pw-0123456789", AgentPassword: "agent-pw-0123456789"}
	s1, err := StartServer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sup1, err := s1.Connect(context.Background(), RoleSupervisor, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sup1.EnsureAudit(ctxT(t, 5*time.Second), AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	agent, err := Connect(ctxT(t, 5*time.Second), s1.Endpoint(RoleAgent), ConnectOptions{Name: "child", ReconnectWait: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(agent.Close)
	log, _ := agent.AuditLog("c1", wallet1, "")
	if _, err := log.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: AuditLifecycle, Lifecycle: &LifecycleRecord{Event: "started"}}); err != nil {
		t.Fatal(err)
	}
	srv, err := agent.ServeAgentControl("c1", func(context.Context, ControlRequest) (AgentState, error) { return StateRunning, nil })
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, srv.Run)
	sup1.Close()
	s1.Shutdown()

	s2 := startServer(t, dir, func(c *ServerConfig) { *c = cfg; c.Logger = testLogger(t) })
	sup := connectRole(t, s2, RoleSupervisor, "sup-2")
	// The child resubscribes as it reconnects; until the server has its
	// subscriptions, the agent is "not running".
	var rep ControlReply
	waitFor(t, 10*time.Second, "the child to answer again", func() bool {
		rep, err = sup.Control(ctxT(t, time.Second), ControlRequest{Op: OpStatus, Target: "c1"})
		return err == nil
	})
	if rep.State != StateRunning {
		t.Fatalf("control after restart: %+v", rep)
	}
	if got := readAudit(t, sup, AuditFilter{Agent: "c1"}); len(got) != 1 {
		t.Fatalf("%d audit records after restart", len(got))
	}
}

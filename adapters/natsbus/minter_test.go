package natsbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	"github.com/pitbossdev/pitboss/market"
)

// TestMintedCredentialsOnAnOperatorModeServer: on a real nats-server in operator
// mode (an operator, an account with JetStream and a signing key, a memory
// resolver), credentials minted with the account's signing key let agent a1
// publish and read its own subjects and are refused a2's (publish and subscribe);
// a JWT renewed before it expires keeps the connection going across several
// lifetimes (the agent reconnects with the renewed file), while one that is not
// renewed is cut off when it expires.
func TestMintedCredentialsOnAnOperatorModeServer(t *testing.T) {
	const ttl = 3 * time.Second
	url, sup, supEP, op, m := operatorFleet(t, ttl)
	if err := ProbeMinted(ctxT(t, 5*time.Second), m, supEP, t.TempDir()); err != nil {
		t.Fatalf("probe: %v", err)
	}
	for _, s := range []string{m.String(), fmt.Sprintf("%v %+v %#v %s", m, m, m, m)} {
		if strings.Contains(s, op.SigningSeed) {
			t.Fatalf("the minter printed its seed: %s", s)
		}
	}

	dir := t.TempDir()
	connectMinted := func(id string, log *zap.Logger) (*Bus, string, AgentCreds) {
		c, err := m.Mint(AgentScope{Agent: market.AgentID(id), Wallet: market.Address{1}, Budget: "egress"})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ExpiresAt.Sub(c.IssuedAt); got != ttl {
			t.Fatalf("lifetime %s, want %s", got, ttl)
		}
		path := filepath.Join(dir, id+".creds")
		if err := WriteCredsFile(path, c); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("creds file mode: %v %v", st, err)
		}
		b, err := Connect(ctxT(t, 5*time.Second), Endpoint{URL: url, CredsFile: path},
			ConnectOptions{Name: "agent " + id, Logger: log, InboxPrefix: AgentInboxPrefix(market.AgentID(id)), ReconnectWait: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		return b, path, c
	}
	core, logs := observer.New(zap.InfoLevel)
	v := violations{logs}
	a1, path1, c1 := connectMinted("a1", zap.New(core))
	a2, _, c2 := connectMinted("a2", zap.NewNop())
	if c1.JWT == c2.JWT || string(c1.Seed) == string(c2.Seed) {
		t.Fatal("two agents got the same credentials")
	}

	// Renew a1's credentials as a supervisor does (from half their lifetime), not
	// a2's.
	renewCtx, stopRenew := context.WithCancel(context.Background())
	renewed := make(chan int, 1)
	go func() {
		n, c := 0, c1
		defer func() { renewed <- n }()
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-time.After(time.Until(c.RenewAt())):
			}
			nc, err := m.Renew(c)
			if err != nil {
				t.Error(err)
				return
			}
			if err := WriteCredsFile(path1, nc); err != nil {
				t.Error(err)
				return
			}
			c, n = nc, n+1
		}
	}()

	checkOwnNameOnly(t, a1, sup, v)
	checkReadsOnlyOwn(t, a1, sup, v)

	// Across more than two lifetimes a1 keeps publishing its status; a2's JWT
	// expires and its connection ends.
	statuses := make(chan *nats.Msg, 256)
	sub, err := sup.Conn().ChanSubscribe("pitboss.agent.a1.status", statuses)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = sup.Flush(ctxT(t, 5*time.Second))
	end := c1.ExpiresAt.Add(ttl + 500*time.Millisecond)
	for time.Now().Before(end) {
		if err := a1.PublishStatus(&Status{Agent: "a1"}); err != nil && !errors.Is(err, nats.ErrReconnectBufExceeded) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := a1.PublishStatus(&Status{Agent: "a1"}); err != nil {
		t.Fatal(err)
	}
	if err := a1.Flush(ctxT(t, 5*time.Second)); err != nil {
		t.Fatalf("a1 after two lifetimes: %v", err)
	}
	waitFor(t, 5*time.Second, "a1's status after its first JWT expired", func() bool {
		for {
			select {
			case <-statuses:
				if time.Now().After(c1.ExpiresAt.Add(ttl)) {
					return true
				}
			default:
				return false
			}
		}
	})
	stopRenew()
	if n := <-renewed; n < 2 {
		t.Fatalf("renewed %d times", n)
	}
	if len(v.logs.FilterMessage("nats credentials renewed: reconnecting with them").All()) < 2 {
		t.Fatalf("a1 did not reconnect with its renewed credentials: %v", v.logs.All())
	}
	for _, e := range v.logs.All() {
		if err, ok := e.ContextMap()["error"].(string); ok && strings.Contains(strings.ToLower(err), "expired") {
			t.Fatalf("a1's credentials expired: %v", e)
		}
	}
	waitFor(t, 5*time.Second, "a2's connection to end after its JWT expired", func() bool { return !a2.Conn().IsConnected() })
}

// operatorFleet starts a nats-server in operator mode (natsbustest), connects a
// supervisor with its user JWT, makes the AUDIT stream and the "egress" budget,
// and returns a minter of credentials living ttl, signed with the account's
// signing key.
func operatorFleet(t *testing.T, ttl time.Duration) (url string, sup *Bus, supEP Endpoint, op *natsbustest.Operator, m *Minter) {
	t.Helper()
	op = natsbustest.NewOperator(t)
	url = natsbustest.StartServer(t, op.Configure)
	supEP = Endpoint{URL: url, CredsFile: op.SupervisorCreds}
	sup, err := Connect(ctxT(t, 5*time.Second), supEP, ConnectOptions{Name: "sup"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	if err := sup.EnsureAudit(ctxT(t, 5*time.Second), AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sup.EnsureBudget(ctxT(t, 5*time.Second), BudgetConfig{Key: "egress", Limit: 100, Window: time.Minute}); err != nil {
		t.Fatal(err)
	}
	account, err := AccountOf(supEP)
	if err != nil || account != op.Account {
		t.Fatalf("account of the supervisor's creds: %q %v (want %s)", account, err, op.Account)
	}
	seed, err := ReadSigningKey(op.SigningKey)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = NewMinter(MinterConfig{Seed: seed, Account: account, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
	return url, sup, supEP, op, m
}

// TestMintedCredentialsMakeOnlyTheirOwnJetStreamCalls: on the operator-mode
// server, agent a1's minted credentials (the minter's default lifetime) make an
// agent's JetStream calls on a1's own keys and are refused a2's
// (checkJetStreamOwnOnly).
func TestMintedCredentialsMakeOnlyTheirOwnJetStreamCalls(t *testing.T) {
	url, sup, _, _, m := operatorFleet(t, 0)
	c, err := m.Mint(AgentScope{Agent: "a1", Wallet: market.Address{1}, Budget: "egress"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a1.creds")
	if err := WriteCredsFile(path, c); err != nil {
		t.Fatal(err)
	}
	log, v := observed()
	a1, err := Connect(ctxT(t, 5*time.Second), Endpoint{URL: url, CredsFile: path},
		ConnectOptions{Name: "agent a1", Logger: log, InboxPrefix: AgentInboxPrefix("a1")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a1.Close)
	checkJetStreamOwnOnly(t, a1, sup, c.AgentScope, v)
}

// TestMinterRefusesWhatIsNotASigningKey: a user's seed, a short lifetime and a
// bad account are refused without the seed in the error; ReadSigningKey refuses a
// file others can read.
func TestMinterRefusesWhatIsNotASigningKey(t *testing.T) {
	op := natsbustest.NewOperator(t)
	ukp, _ := nkeys.CreateUser()
	us, _ := ukp.Seed()
	userSeed := string(us)
	if _, err := NewMinter(MinterConfig{Seed: []byte(userSeed)}); !errors.Is(err, ErrNotSigningKey) || strings.Contains(err.Error(), userSeed) {
		t.Fatalf("a user seed: %v", err)
	}
	if _, err := NewMinter(MinterConfig{Seed: []byte("garbage")}); !errors.Is(err, ErrNotSigningKey) {
		t.Fatalf("garbage: %v", err)
	}
	seed, _ := ReadSigningKey(op.SigningKey)
	if _, err := NewMinter(MinterConfig{Seed: seed, TTL: time.Second}); err == nil || strings.Contains(err.Error(), op.SigningSeed) {
		t.Fatalf("a 1 s lifetime: %v", err)
	}
	if _, err := NewMinter(MinterConfig{Seed: seed, Account: "Axyz"}); err == nil {
		t.Fatal("a bad account")
	}
	if err := os.Chmod(op.SigningKey, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSigningKey(op.SigningKey); !errors.Is(err, ErrLooseFileMode) {
		t.Fatalf("a 0640 key file: %v", err)
	}
	if _, err := AccountOf(Endpoint{URL: "nats://127.0.0.1:1", User: "u", Password: "p"}); err == nil {
		t.Fatal("the account of a user/password endpoint")
	}
}

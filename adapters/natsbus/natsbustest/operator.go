package natsbustest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Operator is NATS decentralized authentication made for one test (operator
// mode): an operator, a system account, and the fleet's account with JetStream
// and a signing key, resolved from memory; files in a temporary directory hold
// the signing key's seed (SigningKey, mode 0600) and a supervisor's credentials
// (SupervisorCreds: a user of the fleet's account without limits, signed by the
// account's own key, mode 0600).
type Operator struct {
	SigningKey      string // file: the account signing key's seed
	SigningSeed     string // the same seed (a test looks for it where it must not be)
	SupervisorCreds string // file: a .creds file of an unrestricted user
	Account         string // the fleet account's public key
	operator        *jwt.OperatorClaims
	sysPub          string
	jwts            map[string]string // account public key → JWT
	t               testing.TB
}

// NewOperator makes the keys, JWTs and files.
func NewOperator(t testing.TB) *Operator {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	okp, err := nkeys.CreateOperator()
	must(err)
	opub, _ := okp.PublicKey()
	account := func(name string, js bool) (nkeys.KeyPair, *jwt.AccountClaims) {
		kp, err := nkeys.CreateAccount()
		must(err)
		pub, _ := kp.PublicKey()
		ac := jwt.NewAccountClaims(pub)
		ac.Name = name
		if js {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		return kp, ac
	}
	_, sys := account("SYS", false)
	akp, acc := account("FLEET", true)
	skp, err := nkeys.CreateAccount() // the signing key: an account-type key
	must(err)
	spub, _ := skp.PublicKey()
	acc.SigningKeys.Add(spub)
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "pitboss-test"
	oc.SystemAccount = sys.Subject
	ojwt, err := oc.Encode(okp)
	must(err)
	o := &Operator{Account: acc.Subject, sysPub: sys.Subject, jwts: map[string]string{}, t: t}
	if o.operator, err = jwt.DecodeOperatorClaims(ojwt); err != nil {
		t.Fatal(err)
	}
	for _, ac := range []*jwt.AccountClaims{sys, acc} {
		tok, err := ac.Encode(okp)
		must(err)
		o.jwts[ac.Subject] = tok
	}
	dir := t.TempDir()
	seed, _ := skp.Seed()
	o.SigningSeed = string(seed)
	o.SigningKey = filepath.Join(dir, "account-signing.nk")
	must(os.WriteFile(o.SigningKey, append(seed, '\n'), 0o600))
	ukp, err := nkeys.CreateUser()
	must(err)
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = "supervisor"
	utok, err := uc.Encode(akp)
	must(err)
	useed, _ := ukp.Seed()
	creds, err := jwt.FormatUserConfig(utok, useed)
	must(err)
	o.SupervisorCreds = filepath.Join(dir, "supervisor.creds")
	must(os.WriteFile(o.SupervisorCreds, creds, 0o600))
	return o
}

// Configure makes a server trust the operator and resolve its accounts from
// memory. Use it as (or in) ClusterConfig.Configure, or with StartServer.
func (o *Operator) Configure(_ int, opts *server.Options) {
	res := &server.MemAccResolver{}
	for pub, tok := range o.jwts {
		if err := res.Store(pub, tok); err != nil {
			o.t.Fatal(err)
		}
	}
	opts.TrustedOperators = []*jwt.OperatorClaims{o.operator}
	opts.AccountResolver = res
	opts.SystemAccount = o.sysPub
}

// StartServer starts one nats-server with JetStream on a loopback port,
// configured by configure (Operator.Configure, say), and returns its client URL;
// the test's cleanup shuts it down.
func StartServer(t testing.TB, configure func(node int, o *server.Options)) string {
	t.Helper()
	opts := &server.Options{ServerName: "single", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		DisableShortFirstPing: true, JetStream: true, StoreDir: t.TempDir(), JetStreamMaxMemory: 64 << 20,
		JetStreamMaxStore: 64 << 30} // a limit, not an allocation: AUDIT reserves 8 GiB
	if configure != nil {
		configure(0, opts)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(20 * time.Second) {
		t.Fatal("the server did not accept clients")
	}
	return srv.ClientURL()
}

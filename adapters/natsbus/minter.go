package natsbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
	"go.uber.org/zap"
)

// Per-agent credentials on a cluster in operator mode (decentralized JWT
// authentication, docs/design/0154): the supervisor holds a signing key of the
// fleet's NATS account and mints each agent process a user JWT of its own, with
// the publish and subscribe allow lists the embedded server gives an agent's
// identity (AgentPublishAllow, AgentDenyPublish, AgentSubscribeAllow) and a
// bounded lifetime.
//
// The renewal rule: a JWT minted at iat expiring at exp (lifetime L = exp − iat)
// is renewed by the supervisor from iat + L/2 (a new JWT for the same user key,
// written over the agent's creds file); the agent's connection re-reads its creds
// file from iat + 3L/4 and, once the file holds a JWT that expires later,
// reconnects with it (CredsRefresh). Each step has a quarter of the lifetime of
// slack; a supervisor that is gone renews nothing and its agents' connections end
// when their JWTs expire.

// DefaultAgentJWTTTL is the lifetime of a minted agent JWT when none is set.
const DefaultAgentJWTTTL = time.Hour

// MinAgentJWTTTL is the shortest lifetime a Minter accepts: a JWT's times are
// whole seconds, and a quarter of the lifetime must leave room for a reconnection.
const MinAgentJWTTTL = 2 * time.Second

// ErrNotSigningKey is returned for a seed that is not an account's (a signing key
// of an account is an account key: its seed starts with "SA").
var ErrNotSigningKey = errors.New("natsbus: not an account signing key (an nkey seed starting with SA)")

// Minter mints agent user JWTs signed by an account signing key. The key's seed
// never leaves it: String and the zap form show only its public key. Safe for
// concurrent use.
type Minter struct {
	key     nkeys.KeyPair
	pub     string // the signing key's public key
	account string // the account's public key (the JWTs' issuer account)
	ttl     time.Duration
	now     func() time.Time
}

// MinterConfig configures NewMinter.
type MinterConfig struct {
	// Seed is the account signing key's nkey seed, bare or decorated (an .nk file's
	// content). Required; NewMinter does not keep this slice.
	Seed []byte
	// Account is the account's public key ("A…"). If empty, the signing key must
	// be the account's own key, whose public key it is.
	Account string
	// TTL is the lifetime of a minted JWT. If zero, DefaultAgentJWTTTL; at least
	// MinAgentJWTTTL.
	TTL time.Duration
	// Now is the wall clock (JWT times are wall-clock seconds). If nil, time.Now.
	Now func() time.Time
}

// NewMinter makes a Minter. Its errors never contain the seed.
func NewMinter(cfg MinterConfig) (*Minter, error) {
	kp, err := nkeys.ParseDecoratedNKey(cfg.Seed)
	if err != nil {
		return nil, ErrNotSigningKey // the parser's error may quote the input
	}
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicAccountKey(pub) {
		kp.Wipe()
		return nil, ErrNotSigningKey
	}
	if cfg.Account == "" {
		cfg.Account = pub
	}
	if !nkeys.IsValidPublicAccountKey(cfg.Account) {
		kp.Wipe()
		return nil, fmt.Errorf("natsbus: %q is not an account's public key", cfg.Account)
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultAgentJWTTTL
	}
	if cfg.TTL < MinAgentJWTTTL {
		kp.Wipe()
		return nil, fmt.Errorf("natsbus: agent JWT lifetime %s is shorter than %s", cfg.TTL, MinAgentJWTTTL)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Minter{key: kp, pub: pub, account: cfg.Account, ttl: cfg.TTL, now: cfg.Now}, nil
}

// ReadSigningKey reads an account signing key's seed from path, which must be a
// regular file that neither the group nor others can access (ErrLooseFileMode).
// Its errors never contain the file's content.
func ReadSigningKey(path string) ([]byte, error) {
	if err := checkSecretFile(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("natsbus: signing key: %w", err)
	}
	return b, nil
}

// AccountOf returns the account of an endpoint that authenticates with a user
// JWT (a .creds file, or JWT and seed): the JWT's issuer account, or its issuer
// when the account's own key signed it. It fails for other kinds of
// authentication: a signing key needs the supervisor in the same account.
func AccountOf(ep Endpoint) (string, error) {
	token := ep.JWT
	if ep.CredsFile != "" {
		if err := checkSecretFile(ep.CredsFile); err != nil {
			return "", err
		}
		b, err := os.ReadFile(ep.CredsFile)
		if err != nil {
			return "", fmt.Errorf("natsbus: %w", err)
		}
		if token, err = jwt.ParseDecoratedJWT(b); err != nil {
			return "", fmt.Errorf("natsbus: %s holds no user JWT", ep.CredsFile)
		}
	}
	if token == "" {
		return "", errors.New("natsbus: the credentials are not a NATS user JWT (a .creds file): a signing key needs the supervisor's account")
	}
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return "", fmt.Errorf("natsbus: the credentials' JWT: %w", err)
	}
	if uc.IssuerAccount != "" {
		return uc.IssuerAccount, nil
	}
	return uc.Issuer, nil
}

// String names the minter by its public keys (never the seed).
func (m *Minter) String() string {
	return "signing key " + m.pub + " of account " + m.account
}

// Account returns the account's public key.
func (m *Minter) Account() string { return m.account }

// TTL returns the lifetime of the JWTs it mints.
func (m *Minter) TTL() time.Duration { return m.ttl }

// AgentCreds are one agent process's minted credentials: a user key of its own
// and its current JWT. Seed is a secret.
type AgentCreds struct {
	AgentScope // whose they are, and what their JetStream calls reach
	JWT        string
	Seed       []byte // the user's nkey seed
	IssuedAt   time.Time
	ExpiresAt  time.Time
}

// RenewAt returns when the supervisor renews c: half its lifetime after it was
// issued.
func (c AgentCreds) RenewAt() time.Time {
	return c.IssuedAt.Add(c.ExpiresAt.Sub(c.IssuedAt) / 2)
}

// Mint makes credentials for a new process of agent sc.Agent: a fresh user key,
// and a JWT for it named UserAgent.<id>, limited to the agent's subjects and the
// JetStream calls of sc (AgentPublishAllow), expiring after the minter's TTL.
func (m *Minter) Mint(sc AgentScope) (AgentCreds, error) {
	user, err := nkeys.CreateUser()
	if err != nil {
		return AgentCreds{}, fmt.Errorf("natsbus: user key: %w", err)
	}
	seed, err := user.Seed()
	if err != nil {
		return AgentCreds{}, fmt.Errorf("natsbus: user key: %w", err)
	}
	return m.Renew(AgentCreds{AgentScope: sc, Seed: seed})
}

// Renew returns c with a new JWT for the same user key, expiring the minter's
// TTL from now.
func (m *Minter) Renew(c AgentCreds) (AgentCreds, error) {
	pubAllow, err := AgentPublishAllow(c.AgentScope)
	if err != nil {
		return AgentCreds{}, err
	}
	subAllow, err := AgentSubscribeAllow(c.Agent)
	if err != nil {
		return AgentCreds{}, err
	}
	user, err := nkeys.FromSeed(c.Seed)
	if err != nil {
		return AgentCreds{}, errors.New("natsbus: agent credentials hold no valid user seed")
	}
	upub, err := user.PublicKey()
	if err != nil {
		return AgentCreds{}, errors.New("natsbus: agent credentials hold no valid user seed")
	}
	now := m.now()
	uc := jwt.NewUserClaims(upub)
	uc.Name = UserAgent + "." + string(c.Agent)
	if m.account != m.pub {
		uc.IssuerAccount = m.account
	}
	uc.Pub.Allow.Add(pubAllow...)
	uc.Pub.Deny.Add(AgentDenyPublish...)
	uc.Sub.Allow.Add(subAllow...)
	uc.Resp = &jwt.ResponsePermission{MaxMsgs: ResponseMaxMsgs, Expires: ResponseExpires}
	// Encode stamps its own issue time (the wall clock's second): when a second
	// passed since now, the expiry is set again from that stamp, so that every JWT
	// lives the whole TTL (two tries; a third keeps whatever it got).
	var token string
	var back *jwt.UserClaims
	issued := now.Unix()
	for try := 0; try < 3; try++ {
		uc.IssuedAt = issued
		uc.Expires = time.Unix(issued, 0).Add(m.ttl).Unix()
		if token, err = uc.Encode(m.key); err != nil {
			return AgentCreds{}, fmt.Errorf("natsbus: mint the JWT of agent %s: %w", c.Agent, err)
		}
		if back, err = jwt.DecodeUserClaims(token); err != nil {
			return AgentCreds{}, fmt.Errorf("natsbus: mint the JWT of agent %s: %w", c.Agent, err)
		}
		if back.IssuedAt == issued {
			break
		}
		issued = back.IssuedAt
	}
	c.JWT = token
	c.IssuedAt, c.ExpiresAt = time.Unix(back.IssuedAt, 0), time.Unix(back.Expires, 0)
	return c, nil
}

// WriteCredsFile writes c as a NATS .creds file (JWT and seed) to path, mode
// 0600, atomically (nats.go reads the file at every connection, so a reader never
// sees half of it).
func WriteCredsFile(path string, c AgentCreds) error {
	b, err := jwt.FormatUserConfig(c.JWT, c.Seed)
	if err != nil {
		return fmt.Errorf("natsbus: creds of agent %s: %w", c.Agent, err)
	}
	if err := writeSecretFile(path, b); err != nil {
		return fmt.Errorf("natsbus: creds of agent %s: %w", c.Agent, err)
	}
	return nil
}

// credsExpiry returns the issue and expiry times of the user JWT in a .creds
// file; zero times for a JWT that does not expire.
func credsExpiry(path string) (iat, exp time.Time, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	token, err := jwt.ParseDecoratedJWT(b)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	if uc.Expires == 0 {
		return time.Time{}, time.Time{}, nil
	}
	return time.Unix(uc.IssuedAt, 0), time.Unix(uc.Expires, 0), nil
}

// refreshCreds keeps a connection authenticated by an expiring .creds file alive
// across renewals (the rule above): from three quarters of the connected JWT's
// lifetime it re-reads the file every twentieth of the lifetime, and when the file
// holds a JWT that expires later it reconnects (nats.go reads the file again to
// connect). It returns when the connection is closed, at once for a JWT without
// expiry.
func (b *Bus) refreshCreds(path string) {
	iat, exp, err := credsExpiry(path)
	if err != nil || exp.IsZero() {
		return
	}
	for {
		life := exp.Sub(iat)
		step := max(life/20, 100*time.Millisecond)
		wait := time.Until(iat.Add(life * 3 / 4))
		for {
			t := time.NewTimer(max(wait, 0))
			select {
			case <-b.closed:
				t.Stop()
				return
			case <-t.C:
			}
			niat, nexp, err := credsExpiry(path)
			if err == nil && nexp.After(exp) {
				iat, exp = niat, nexp
				break
			}
			wait = step
		}
		b.log.Info("nats credentials renewed: reconnecting with them", zap.Time("expires", exp))
		if err := b.nc.ForceReconnect(); err != nil {
			return // closed
		}
	}
}

// ProbeMinted connects to ep's servers once with credentials minted for a probe
// identity and closes: a supervisor's check that the cluster accepts what its
// signing key signs, before any agent depends on it. The probe's creds file is
// written in dir (mode 0600) and removed.
func ProbeMinted(ctx context.Context, m *Minter, ep Endpoint, dir string) error {
	c, err := m.Mint(AgentScope{Agent: "pitboss-probe"})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe-*.creds")
	if err != nil {
		return fmt.Errorf("natsbus: probe creds: %w", err)
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	if err := WriteCredsFile(path, c); err != nil {
		return err
	}
	ep.User, ep.Password, ep.Token, ep.JWT, ep.Seed, ep.CredsFile = "", "", "", "", "", path
	bus, err := Connect(ctx, ep, ConnectOptions{Name: "pitboss signing-key probe"})
	if err != nil {
		msg := err.Error()
		if strings.Contains(strings.ToLower(msg), "authorization") {
			return fmt.Errorf("natsbus: the cluster refused a user signed with %s (is it a signing key of that account, known to the cluster's resolver?): %w", m, err)
		}
		return err
	}
	bus.Close()
	return nil
}

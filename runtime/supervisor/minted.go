package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// mintedCreds are the agents' own credentials on a cluster in operator mode
// (NATSConfig.Minter, docs/design/0154): a .creds file per agent (mode 0600, in a
// 0700 directory of the supervisor's own, removed when it stops) holding the
// current process's user key and JWT. Each process of an agent gets a new user
// key; its JWT is renewed from half its lifetime (natsbus.AgentCreds.RenewAt) and
// the file rewritten, which the agent's connection picks up (natsbus: the renewal
// rule). Safe for concurrent use.
type mintedCreds struct {
	m   *natsbus.Minter
	dir string
	log *zap.Logger

	mu  sync.Mutex
	cur map[market.AgentID]natsbus.AgentCreds
}

// newMintedCreds makes the supervisor's creds directory under parent (the
// system's temporary directory when empty).
func newMintedCreds(m *natsbus.Minter, parent, fleet string, log *zap.Logger) (*mintedCreds, error) {
	dir, err := os.MkdirTemp(parent, "pitboss-creds-"+fleet+"-") // mode 0700
	if err != nil {
		return nil, fmt.Errorf("agent credentials directory: %w", err)
	}
	return &mintedCreds{m: m, dir: dir, log: log, cur: map[market.AgentID]natsbus.AgentCreds{}}, nil
}

func (c *mintedCreds) path(id market.AgentID) string {
	return filepath.Join(c.dir, string(id)+".creds")
}

// mint gives the next process of the agent of sc credentials of its own and
// returns their file.
func (c *mintedCreds) mint(sc natsbus.AgentScope) (string, error) {
	id := sc.Agent
	cr, err := c.m.Mint(sc)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := natsbus.WriteCredsFile(c.path(id), cr); err != nil {
		return "", err
	}
	c.cur[id] = cr
	return c.path(id), nil
}

// current returns the creds file of the agent of sc, minting it the first time.
func (c *mintedCreds) current(sc natsbus.AgentScope) (string, error) {
	c.mu.Lock()
	_, ok := c.cur[sc.Agent]
	c.mu.Unlock()
	if ok {
		return c.path(sc.Agent), nil
	}
	return c.mint(sc)
}

// run renews credentials that are half through their lifetime, checking every
// tenth of it (at most every minute), until ctx ends.
func (c *mintedCreds) run(ctx context.Context) error {
	t := time.NewTicker(min(max(c.m.TTL()/10, 100*time.Millisecond), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			c.renewDue(now)
		}
	}
}

func (c *mintedCreds) renewDue(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, cr := range c.cur {
		if now.Before(cr.RenewAt()) {
			continue
		}
		n, err := c.m.Renew(cr)
		if err == nil {
			err = natsbus.WriteCredsFile(c.path(id), n)
		}
		if err != nil {
			c.log.Error("agent credentials not renewed; retrying", zap.String("agent", string(id)),
				zap.Time("expires", cr.ExpiresAt), zap.Error(err))
			continue
		}
		c.cur[id] = n
	}
}

// drop removes agent id's credentials (its process ended and is not restarted).
func (c *mintedCreds) drop(id market.AgentID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[id]; ok {
		delete(c.cur, id)
		_ = os.Remove(c.path(id))
	}
}

// close removes the credentials.
func (c *mintedCreds) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = os.RemoveAll(c.dir)
	c.cur = map[market.AgentID]natsbus.AgentCreds{}
}

// dropCreds forgets agent id's minted credentials, if any (member.run).
func (s *Supervisor) dropCreds(id market.AgentID) {
	if s.minted != nil {
		s.minted.drop(id)
	}
}

// withoutAuth returns ep's URL and TLS files without its credentials.
func withoutAuth(ep natsbus.Endpoint) natsbus.Endpoint {
	return natsbus.Endpoint{URL: ep.URL, TLSCA: ep.TLSCA, TLSCert: ep.TLSCert, TLSKey: ep.TLSKey}
}

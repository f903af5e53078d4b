package natsbus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pitbossdev/pitboss/market"
)

// BudgetConfig configures a fleet request budget. The zero value is the service's
// CLOB limit for one egress IP.
type BudgetConfig struct {
	// Key names the shared budget: the egress IP address the agents' requests leave
	// from (agents behind one NAT share one budget). If empty, "default".
	Key string
	// Limit is the number of requests allowed per Window. If zero, 500 (the service's
	// limit per client IP).
	Limit int
	// Window is the service's sliding window. If zero, 60 s.
	Window time.Duration
	// Hold is the longest a caller may wait between a grant and sending its request:
	// a grant counts against the window for Window+Hold+Slack after it was given, so a
	// request sent within Hold never exceeds the limit in the service's window. If
	// zero, 2 s.
	Hold time.Duration
	// Slack covers clock-rate differences and the server's expiry tick. If zero,
	// 1 s.
	Slack time.Duration
	// Replicas in a clustered JetStream. If zero, 1.
	Replicas int
	// Memory stores grants in memory instead of on disk: a restart of the NATS server
	// then forgets the grants of the last window, and the fleet may send up to Limit
	// extra requests in it. The default is a file store with asynchronous persistence
	// (the stream opts out of the embedded server's fsync-per-write): grants survive
	// a restart of the server process and are lost only in a machine crash, and no
	// request waits for the disk.
	Memory bool
}

func (c *BudgetConfig) defaults() {
	if c.Key == "" {
		c.Key = "default"
	}
	if c.Limit == 0 {
		c.Limit = 500
	}
	if c.Window == 0 {
		c.Window = 60 * time.Second
	}
	if c.Hold == 0 {
		c.Hold = 2 * time.Second
	}
	if c.Slack == 0 {
		c.Slack = time.Second
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
}

// Budget is a fleet-wide sliding-window request budget, shared by every process on
// every machine connected to the same NATS: one JetStream stream per key whose
// messages are the grants. The stream keeps at most Limit messages (discard-new) for
// Window+Hold+Slack each (max age), so the server atomically refuses a grant when the
// window is full and forgets grants as they age out; no client clock is involved. See
// docs/design/0047. Safe for concurrent use.
type Budget struct {
	bus    *Bus
	cfg    BudgetConfig
	stream string
	subj   string
	n      atomic.Uint64
	id     string
}

// budgetName turns a key into a stream-safe name: "PITBOSS_BUDGET_<sanitized>_<hash>".
func budgetName(key string) (stream, token string) {
	var b strings.Builder
	for i := 0; i < len(key) && b.Len() < 40; i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(key))
	token = b.String() + "_" + hex.EncodeToString(sum[:4])
	return "PITBOSS_BUDGET_" + token, token
}

// EnsureBudget creates the budget stream of cfg.Key (supervisor role) or, if it
// exists, updates it to cfg, and returns the budget.
func (b *Bus) EnsureBudget(ctx context.Context, cfg BudgetConfig) (*Budget, error) {
	cfg.defaults()
	if cfg.Limit < 0 || cfg.Window < 0 || cfg.Hold < 0 || cfg.Slack < 0 {
		return nil, errors.New("natsbus: negative budget setting")
	}
	name, tok := budgetName(cfg.Key)
	storage, persist := jetstream.FileStorage, jetstream.AsyncPersistMode
	if cfg.Memory {
		storage, persist = jetstream.MemoryStorage, jetstream.DefaultPersistMode
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	_, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        name,
		Description: "pitboss request budget for " + cfg.Key,
		Subjects:    []string{SubjectBudgetPrefix + tok},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardNew,
		MaxMsgs:     int64(cfg.Limit),
		MaxAge:      cfg.Window + cfg.Hold + cfg.Slack,
		Storage:     storage,
		PersistMode: persist,
		Replicas:    cfg.Replicas,
		Duplicates:  min(2*time.Second, cfg.Window+cfg.Hold+cfg.Slack),
		MaxMsgSize:  256,
		Metadata: map[string]string{
			"limit": fmt.Sprint(cfg.Limit), "window": cfg.Window.String(),
			"hold": cfg.Hold.String(), "slack": cfg.Slack.String(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: budget %s: %w", cfg.Key, err)
	}
	return &Budget{bus: b, cfg: cfg, stream: name, subj: SubjectBudgetPrefix + tok, id: randomSecret(6)}, nil
}

// OpenBudget binds to the existing budget stream of key (agent role); its settings
// are those the supervisor stored.
func (b *Bus) OpenBudget(ctx context.Context, key string) (*Budget, error) {
	cfg := BudgetConfig{Key: key}
	cfg.defaults()
	name, tok := budgetName(cfg.Key)
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	s, err := b.js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("natsbus: budget %s: %w", cfg.Key, err)
	}
	sc := s.CachedInfo().Config
	cfg.Limit = int(sc.MaxMsgs)
	if d, err := time.ParseDuration(sc.Metadata["window"]); err == nil {
		cfg.Window = d
	}
	if d, err := time.ParseDuration(sc.Metadata["hold"]); err == nil {
		cfg.Hold = d
	}
	if d, err := time.ParseDuration(sc.Metadata["slack"]); err == nil {
		cfg.Slack = d
	}
	return &Budget{bus: b, cfg: cfg, stream: name, subj: SubjectBudgetPrefix + tok, id: randomSecret(6)}, nil
}

// Config returns the budget's settings.
func (g *Budget) Config() BudgetConfig { return g.cfg }

// TryAcquire asks for one request grant. It returns true when granted: the caller
// must then send its request within Hold, or not at all. It returns false, nil when
// the window is full. A grant whose acknowledgement is lost is retried under the same
// ID, so it is counted once.
func (g *Budget) TryAcquire(ctx context.Context) (bool, error) {
	m := nats.NewMsg(g.subj)
	m.Header.Set(jetstream.MsgIDHeader, g.id+"."+fmt.Sprint(g.n.Add(1)))
	m.Header.Set(jetstream.ExpectedStreamHeader, g.stream)
	ctx, cancel := g.bus.withTimeout(ctx)
	defer cancel()
	wait := 5 * time.Millisecond
	for {
		_, err := g.bus.js.PublishMsg(ctx, m, jetstream.WithRetryAttempts(0))
		if err == nil {
			return true, nil
		}
		if isFull(err) {
			return false, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return false, fmt.Errorf("natsbus: budget %s: %w", g.cfg.Key, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, fmt.Errorf("natsbus: budget %s: %w", g.cfg.Key, err)
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// isFull reports the stream's refusal of a grant: "maximum messages exceeded".
func isFull(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == 10077 && strings.Contains(apiErr.Description, "maximum messages")
}

// Acquire waits for one request grant until ctx ends. The wait polls the stream with
// a backoff from 10 ms to 250 ms; waiters are not served in order. When ctx ends
// first, the error matches market.ErrRateLimited (what the service itself would have
// answered), so callers treat a fleet refusal like a 429.
func (g *Budget) Acquire(ctx context.Context) error {
	wait := 10 * time.Millisecond
	for {
		ok, err := g.TryAcquire(ctx)
		if ok {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("natsbus: budget %s: %w", g.cfg.Key, market.Errorf(market.CodeRateLimited))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("natsbus: budget %s: %w", g.cfg.Key, market.Errorf(market.CodeRateLimited))
		case <-t.C:
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// Used returns the number of grants currently counted in the window (for metrics).
func (g *Budget) Used(ctx context.Context) (int, error) {
	ctx, cancel := g.bus.withTimeout(ctx)
	defer cancel()
	s, err := g.bus.js.Stream(ctx, g.stream)
	if err != nil {
		return 0, fmt.Errorf("natsbus: budget %s: %w", g.cfg.Key, err)
	}
	return int(s.CachedInfo().State.Msgs), nil
}

package natsbus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
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
	// Reserve is the part of Limit kept for urgent requests (AcquireUrgent: cancels,
	// the kill switch): ordinary requests get at most Limit-Reserve grants per
	// window, so an operator's cancel-all never waits behind quote refreshes. If zero,
	// Limit/10; -1 keeps nothing in reserve.
	Reserve int
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
	switch {
	case c.Reserve == 0:
		c.Reserve = c.Limit / 10
	case c.Reserve < 0:
		c.Reserve = 0
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
// window is full and forgets grants as they age out; no client clock is involved. A
// second stream with Limit-Reserve messages gates ordinary requests, which take a
// grant in both. See docs/design/0047. Safe for concurrent use.
type Budget struct {
	bus *Bus
	cfg BudgetConfig
	all gate // every request
	std gate // ordinary requests (nil subject when nothing is reserved)
	n   atomic.Uint64
	id  string
}

// gate is one budget stream.
type gate struct{ stream, subj string }

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
	if cfg.Limit < 0 || cfg.Window < 0 || cfg.Hold < 0 || cfg.Slack < 0 || cfg.Reserve >= cfg.Limit {
		return nil, errors.New("natsbus: invalid budget setting (negative, or reserve not below the limit)")
	}
	g := newBudget(b, cfg)
	storage, persist := jetstream.FileStorage, jetstream.AsyncPersistMode
	if cfg.Memory {
		storage, persist = jetstream.MemoryStorage, jetstream.DefaultPersistMode
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	age := cfg.Window + cfg.Hold + cfg.Slack
	streams := []struct {
		g     gate
		limit int
		what  string
	}{{g.all, cfg.Limit, "all requests"}, {g.std, cfg.Limit - cfg.Reserve, "ordinary requests"}}
	for _, st := range streams {
		_, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        st.g.stream,
			Description: "pitboss request budget for " + cfg.Key + ": " + st.what,
			Subjects:    []string{st.g.subj},
			Retention:   jetstream.LimitsPolicy,
			Discard:     jetstream.DiscardNew,
			MaxMsgs:     int64(st.limit),
			MaxAge:      age,
			Storage:     storage,
			PersistMode: persist,
			Replicas:    cfg.Replicas,
			Duplicates:  min(2*time.Second, age),
			MaxMsgSize:  256,
			Metadata: map[string]string{
				"limit": fmt.Sprint(cfg.Limit), "reserve": fmt.Sprint(cfg.Reserve),
				"window": cfg.Window.String(), "hold": cfg.Hold.String(), "slack": cfg.Slack.String(),
			},
		})
		if err != nil {
			return nil, fmt.Errorf("natsbus: budget %s: %w", cfg.Key, err)
		}
	}
	return g, nil
}

func newBudget(b *Bus, cfg BudgetConfig) *Budget {
	name, tok := budgetName(cfg.Key)
	return &Budget{
		bus: b, cfg: cfg, id: randomSecret(6),
		all: gate{stream: name, subj: SubjectBudgetPrefix + tok},
		std: gate{stream: name + "_STD", subj: SubjectBudgetPrefix + tok + ".std"},
	}
}

// OpenBudget binds to the existing budget stream of key (agent role); its settings
// are those the supervisor stored.
func (b *Bus) OpenBudget(ctx context.Context, key string) (*Budget, error) {
	cfg := BudgetConfig{Key: key}
	cfg.defaults()
	g := newBudget(b, cfg)
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	st, err := b.js.Stream(ctx, g.all.stream)
	if err != nil {
		return nil, fmt.Errorf("natsbus: budget %s: %w", cfg.Key, err)
	}
	if _, err := b.js.Stream(ctx, g.std.stream); err != nil {
		return nil, fmt.Errorf("natsbus: budget %s: %w", cfg.Key, err)
	}
	sc := st.CachedInfo().Config
	cfg.Limit = int(sc.MaxMsgs)
	if n, err := strconv.Atoi(sc.Metadata["reserve"]); err == nil {
		cfg.Reserve = n
	}
	for k, d := range map[string]*time.Duration{"window": &cfg.Window, "hold": &cfg.Hold, "slack": &cfg.Slack} {
		if v, err := time.ParseDuration(sc.Metadata[k]); err == nil {
			*d = v
		}
	}
	g.cfg = cfg
	return g, nil
}

// Config returns the budget's settings.
func (g *Budget) Config() BudgetConfig { return g.cfg }

// TryAcquire asks for one grant for an ordinary request. It returns true when
// granted: the caller must then send its request within Hold, or not at all. It
// returns false, nil when the window is full for ordinary requests. A grant whose
// acknowledgement is lost is retried under the same ID, so it is counted once.
func (g *Budget) TryAcquire(ctx context.Context) (bool, error) {
	if g.cfg.Reserve == 0 {
		return g.take(ctx, g.all)
	}
	ok, err := g.take(ctx, g.std)
	if !ok || err != nil {
		return ok, err
	}
	// The ordinary share had room; the whole budget may not (urgent requests used
	// it). The ordinary grant is then wasted, which errs on the safe side.
	return g.take(ctx, g.all)
}

// TryAcquireUrgent is TryAcquire for urgent requests (cancels, the kill switch): it
// may use the reserved share.
func (g *Budget) TryAcquireUrgent(ctx context.Context) (bool, error) {
	return g.take(ctx, g.all)
}

func (g *Budget) take(ctx context.Context, gt gate) (bool, error) {
	m := nats.NewMsg(gt.subj)
	m.Header.Set(jetstream.MsgIDHeader, g.id+"."+strconv.FormatUint(g.n.Add(1), 10))
	m.Header.Set(jetstream.ExpectedStreamHeader, gt.stream)
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

// Acquire waits for one grant for an ordinary request until ctx ends. The wait polls
// the streams with a backoff from 10 ms to 250 ms; waiters are not served in order.
// When ctx ends first, the error matches market.ErrRateLimited (what the service
// itself would have answered), so callers treat a fleet refusal like a 429.
func (g *Budget) Acquire(ctx context.Context) error { return g.acquire(ctx, g.TryAcquire) }

// AcquireUrgent is Acquire for urgent requests: cancels and the kill switch, which
// may use the reserved share.
func (g *Budget) AcquireUrgent(ctx context.Context) error {
	return g.acquire(ctx, g.TryAcquireUrgent)
}

func (g *Budget) acquire(ctx context.Context, try func(context.Context) (bool, error)) error {
	wait := 10 * time.Millisecond
	for {
		ok, err := try(ctx)
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
	s, err := g.bus.js.Stream(ctx, g.all.stream)
	if err != nil {
		return 0, fmt.Errorf("natsbus: budget %s: %w", g.cfg.Key, err)
	}
	return int(s.CachedInfo().State.Msgs), nil
}

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
	"go.uber.org/zap"

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
	// PerAgent caps the ordinary grants one requester (an agent) may hold in the
	// window, and PerAgent+Reserve all of its grants, so that one runaway or hostile
	// agent cannot drain the budget of the others. If zero, half of Limit-Reserve
	// (at least 1); -1 sets no cap.
	PerAgent int
	// Replicas in a clustered JetStream (see Replicas). With more than one, the
	// streams store grants synchronously: JetStream refuses asynchronous
	// persistence on a replicated stream (error 10052), and a grant is then
	// acknowledged once a quorum of servers has it, so the budget survives the
	// loss of a server.
	Replicas Replicas
	// Memory stores grants in memory instead of on disk: a restart of the NATS server
	// then forgets the grants of the last window, and the fleet may send up to Limit
	// extra requests in it. The default with one replica is a file store with
	// asynchronous persistence (the stream opts out of the embedded server's
	// fsync-per-write): grants survive a restart of the server process and are lost
	// only in a machine crash, and no request waits for the disk.
	Memory bool
}

// Resolved returns c with every default filled in (what a budget made from c uses).
func (c BudgetConfig) Resolved() BudgetConfig {
	c.defaults()
	return c
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
	switch {
	case c.PerAgent == 0:
		c.PerAgent = max(1, (c.Limit-c.Reserve)/2)
	case c.PerAgent < 0 || c.PerAgent > c.Limit:
		c.PerAgent = c.Limit
	}
}

// Budget is a fleet-wide sliding-window request budget, shared by every process on
// every machine connected to the same NATS: one JetStream stream per key whose
// messages are the grants. The stream keeps at most Limit messages (discard-new) for
// Window+Hold+Slack each (max age), so the server atomically refuses a grant when the
// window is full and forgets grants as they age out; no client clock is involved. A
// second stream with Limit-Reserve messages gates ordinary requests, which take a
// grant in both. Each requester publishes on a subject of its own, capped at
// PerAgent grants (discard-new per subject), so one requester cannot take them all;
// with per-agent NATS credentials it cannot publish under another's name. See
// docs/design/0047. Safe for concurrent use.
type Budget struct {
	bus *Bus
	cfg BudgetConfig
	all gate // every request
	std gate // ordinary requests (nil subject when nothing is reserved)
	who string
	n   atomic.Uint64
	id  string
}

// gate is one budget stream: its name and subject prefix (the requester is the
// last token).
type gate struct{ stream, subj string }

// SupervisorRequester is the requester token of a supervisor's own budget (agent
// ids cannot start with '_').
const SupervisorRequester = "_supervisor"

// BudgetSubject returns the subject requester publishes its grants of the budget
// of key on: "pitboss.budget.<key>_<hash>.all.<requester>" (ordinary requests also
// "….std.<requester>"). Per-agent credentials allow an agent only its own.
func BudgetSubject(key string, requester market.AgentID) (all, std string, err error) {
	if err := checkAgent(requester); err != nil {
		return "", "", err
	}
	_, tok := budgetName(key)
	return SubjectBudgetPrefix + tok + ".all." + string(requester), SubjectBudgetPrefix + tok + ".std." + string(requester), nil
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
	if cfg.Limit < 0 || cfg.Window < 0 || cfg.Hold < 0 || cfg.Slack < 0 || cfg.Reserve >= cfg.Limit {
		return nil, errors.New("natsbus: invalid budget setting (negative, or reserve not below the limit)")
	}
	if cfg.PerAgent > cfg.Limit-cfg.Reserve {
		cfg.PerAgent = cfg.Limit - cfg.Reserve
	}
	g := newBudget(b, cfg, SupervisorRequester)
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	age := cfg.Window + cfg.Hold + cfg.Slack
	streams := []struct {
		g           gate
		limit, each int
		what        string
	}{{g.all, cfg.Limit, cfg.PerAgent + cfg.Reserve, "all requests"}, {g.std, cfg.Limit - cfg.Reserve, cfg.PerAgent, "ordinary requests"}}
	for _, st := range streams {
		replicas, err := b.replicasFor(ctx, st.g.stream, cfg.Replicas)
		if err != nil {
			return nil, err
		}
		storage, persist := jetstream.FileStorage, jetstream.AsyncPersistMode
		switch {
		case cfg.Memory:
			storage, persist = jetstream.MemoryStorage, jetstream.DefaultPersistMode
		case replicas > 1:
			persist = jetstream.DefaultPersistMode // asynchronous persistence is refused on a replicated stream (10052)
		}
		sc := jetstream.StreamConfig{
			Name:                 st.g.stream,
			Description:          "pitboss request budget for " + cfg.Key + ": " + st.what,
			Subjects:             []string{st.g.subj + ".*"},
			Retention:            jetstream.LimitsPolicy,
			Discard:              jetstream.DiscardNew,
			DiscardNewPerSubject: true,
			MaxMsgs:              int64(st.limit),
			MaxMsgsPerSubject:    int64(st.each),
			MaxAge:               age,
			Storage:              storage,
			PersistMode:          persist,
			Replicas:             replicas,
			Duplicates:           min(2*time.Second, age),
			MaxMsgSize:           256,
			Metadata: map[string]string{
				"limit": fmt.Sprint(cfg.Limit), "reserve": fmt.Sprint(cfg.Reserve), "per_agent": fmt.Sprint(cfg.PerAgent),
				"window": cfg.Window.String(), "hold": cfg.Hold.String(), "slack": cfg.Slack.String(),
			},
		}
		if _, err := b.js.CreateOrUpdateStream(ctx, sc); err != nil {
			if !b.recreateBudget(ctx, sc, err) {
				return nil, fmt.Errorf("natsbus: budget %s: %w", cfg.Key, err)
			}
		}
	}
	return g, nil
}

// recreateBudget replaces a budget stream whose storage or persistence cannot be
// updated in place (a stream of one replica with asynchronous persistence raised
// to three), reporting whether it did. The grants of the current window are
// forgotten: the fleet may exceed the limit once, which the venue answers with
// 429s that agents handle.
func (b *Bus) recreateBudget(ctx context.Context, sc jetstream.StreamConfig, cause error) bool {
	st, err := b.js.Stream(ctx, sc.Name)
	if err != nil {
		return false
	}
	have := st.CachedInfo().Config
	if have.PersistMode == sc.PersistMode && have.Storage == sc.Storage {
		return false
	}
	b.log.Warn("budget stream recreated: its storage cannot be changed in place (the current window's grants are forgotten)",
		zap.String("stream", sc.Name), zap.Error(cause))
	if err := b.js.DeleteStream(ctx, sc.Name); err != nil {
		return false
	}
	_, err = b.js.CreateStream(ctx, sc)
	return err == nil
}

func newBudget(b *Bus, cfg BudgetConfig, who string) *Budget {
	name, tok := budgetName(cfg.Key)
	return &Budget{
		bus: b, cfg: cfg, id: randomSecret(6), who: who,
		all: gate{stream: name, subj: SubjectBudgetPrefix + tok + ".all"},
		std: gate{stream: name + "_STD", subj: SubjectBudgetPrefix + tok + ".std"},
	}
}

// OpenBudget binds agent who to the existing budget streams of key (agent role):
// its grants are published on its own subjects (BudgetSubject) and count against
// its share; the settings are those the supervisor stored.
func (b *Bus) OpenBudget(ctx context.Context, key string, who market.AgentID) (*Budget, error) {
	if err := checkAgent(who); err != nil {
		return nil, err
	}
	cfg := BudgetConfig{Key: key}
	cfg.defaults()
	g := newBudget(b, cfg, string(who))
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
	if n, err := strconv.Atoi(sc.Metadata["per_agent"]); err == nil {
		cfg.PerAgent = n
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
	m := nats.NewMsg(gt.subj + "." + g.who)
	m.Header.Set(jetstream.MsgIDHeader, g.id+"."+strconv.FormatUint(g.n.Add(1), 10))
	m.Header.Set(jetstream.ExpectedStreamHeader, gt.stream)
	ctx, cancel := g.bus.withTimeout(ctx)
	defer cancel()
	wait := 5 * time.Millisecond
	for {
		actx, acancel := withAttempt(ctx, budgetAttempt)
		_, err := g.bus.js.PublishMsg(actx, m, jetstream.WithRetryAttempts(0))
		acancel()
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

// budgetAttempt bounds one grant request (see attemptTimeout): a grant is on the
// path of a venue request, so a lost one is asked again sooner.
const budgetAttempt = time.Second

// isFull reports the stream's refusal of a grant: "maximum messages exceeded" (the
// window is full), or "maximum messages per subject exceeded" (the requester's
// share is).
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

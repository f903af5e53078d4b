package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// LockBucket is the JetStream KV bucket of fleet locks. Its keys are made by
// WalletLockKey, AgentLockKey and FeedLockKey; its values are JSON Holders.
const LockBucket = "PITBOSS_LOCKS"

// LockConfig configures the lock bucket. The zero value is usable.
type LockConfig struct {
	// TTL is how long a lock outlives its holder's last renewal. A live holder
	// renews every TTL/3, so a holder that dies (process, machine or network) loses
	// its locks between TTL and TTL plus the server's expiry tick later. If zero,
	// 15 s. The bucket has one TTL for all keys: every supervisor of a fleet must use
	// the same value (the last EnsureLocks wins).
	TTL time.Duration
	// Replicas of the bucket in a clustered JetStream (see Replicas).
	Replicas Replicas
}

func (c *LockConfig) defaults() {
	if c.TTL == 0 {
		c.TTL = 15 * time.Second
	}
}

// Holder says who holds a lock. It is the lock's value and what a refused Acquire
// names. Addresses and ids are public; a Holder never carries a secret.
type Holder struct {
	Agent      market.AgentID `json:"agent,omitempty"`
	Supervisor string         `json:"supervisor,omitempty"`
	Host       string         `json:"host,omitempty"`
	PID        int            `json:"pid,omitempty"`
	// Since is when the lock was acquired (Unix milliseconds, holder's clock); set
	// by Acquire.
	Since int64 `json:"since,omitempty"`
	// Lease identifies one acquisition (random); set by Acquire.
	Lease string `json:"lease,omitempty"`
}

// String names the holder for humans: "agent mm-1 (supervisor s1, host h1, pid 42)".
func (h Holder) String() string {
	var b strings.Builder
	if h.Agent != "" {
		b.WriteString("agent ")
		b.WriteString(string(h.Agent))
	} else {
		b.WriteString("an unnamed holder")
	}
	var extra []string
	if h.Supervisor != "" {
		extra = append(extra, "supervisor "+h.Supervisor)
	}
	if h.Host != "" {
		extra = append(extra, "host "+h.Host)
	}
	if h.PID != 0 {
		extra = append(extra, "pid "+strconv.Itoa(h.PID))
	}
	if len(extra) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(extra, ", "))
		b.WriteString(")")
	}
	return b.String()
}

// WalletLockKey returns the lock key of a wallet: "wallet.0x<40 hex>". At most one
// agent of the fleet trades a wallet.
func WalletLockKey(a market.Address) string { return "wallet." + a.String() }

// AgentLockKey returns the lock key of an agent id: "agent.<id>". At most one
// process of the fleet runs an agent id.
func AgentLockKey(id market.AgentID) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	return "agent." + string(id), nil
}

// FeedLockKey returns the lock key of a token's market-data fan-out: "feed.<token>".
// At most one process of the fleet publishes a token's market data.
func FeedLockKey(t market.TokenID) (string, error) {
	if err := checkToken(t); err != nil {
		return "", err
	}
	return "feed." + string(t), nil
}

// describeKey turns "wallet.0xab…" into "wallet 0xab…" for messages.
func describeKey(key string) string { return strings.Replace(key, ".", " ", 1) }

// LockHeldError is the refusal of Acquire: Key is held by Holder. It unwraps to the
// catalog error market.ErrLockHeld, whose message names the holder.
type LockHeldError struct {
	Key    string
	Holder Holder
	err    *market.Error
}

// Error returns the catalog message, which names the holder.
func (e *LockHeldError) Error() string { return e.err.Error() }

// Unwrap returns the catalog error.
func (e *LockHeldError) Unwrap() error { return e.err }

func lockHeld(key string, h Holder) *LockHeldError {
	return &LockHeldError{Key: key, Holder: h, err: market.Errorf(market.CodeLockHeld, describeKey(key), h.String())}
}

// Locks is the fleet's lock bucket: exclusive, expiring leases on wallets, agent ids
// and feeds, held across processes and machines. Safe for concurrent use.
type Locks struct {
	bus *Bus
	kv  jetstream.KeyValue
	ttl time.Duration
	log *zap.Logger
	now func() time.Time
}

// EnsureLocks creates the lock bucket, or updates its TTL and replicas, and returns
// it. It needs the supervisor role.
func (b *Bus) EnsureLocks(ctx context.Context, cfg LockConfig) (*Locks, error) {
	cfg.defaults()
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	replicas, err := b.replicasFor(ctx, "KV_"+LockBucket, cfg.Replicas)
	if err != nil {
		return nil, err
	}
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      LockBucket,
		Description: "pitboss fleet locks: wallet, agent and feed leases",
		History:     1,
		TTL:         cfg.TTL,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: lock bucket: %w", err)
	}
	return &Locks{bus: b, kv: kv, ttl: cfg.TTL, log: b.log, now: time.Now}, nil
}

// OpenLocks binds to an existing lock bucket (read-only for the agent role).
func (b *Bus) OpenLocks(ctx context.Context) (*Locks, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	kv, err := b.js.KeyValue(ctx, LockBucket)
	if err != nil {
		return nil, fmt.Errorf("natsbus: lock bucket: %w", err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("natsbus: lock bucket: %w", err)
	}
	return &Locks{bus: b, kv: kv, ttl: st.TTL(), log: b.log, now: time.Now}, nil
}

// TTL returns the bucket's lock lifetime.
func (l *Locks) TTL() time.Duration { return l.ttl }

// Holder returns the current holder of key, and false if nobody holds it.
func (l *Locks) Holder(ctx context.Context, key string) (Holder, bool, error) {
	e, err := l.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Holder{}, false, nil
	}
	if err != nil {
		return Holder{}, false, fmt.Errorf("natsbus: lock %s: %w", key, err)
	}
	var h Holder
	if err := json.Unmarshal(e.Value(), &h); err != nil {
		return Holder{}, true, fmt.Errorf("natsbus: lock %s: malformed holder", key)
	}
	return h, true, nil
}

// Check returns a *LockHeldError naming the holder when someone holds key, and nil
// when nobody does. It only reads: a caller that would be refused finds out without
// writing (Acquire may still be refused by a holder that came in between).
func (l *Locks) Check(ctx context.Context, key string) error {
	cur, held, err := l.Holder(ctx, key)
	if err != nil {
		return err
	}
	if held {
		return lockHeld(key, cur)
	}
	return nil
}

// Acquire takes the lock key for h, if nobody holds it (an atomic create-if-absent on
// the server). When someone does, it fails with a *LockHeldError naming the holder
// (errors.Is(err, market.ErrLockHeld)). The caller owns the returned Lease: it must
// run Lease.Run (or call Renew at least every TTL/3) and Release it on a clean stop.
func (l *Locks) Acquire(ctx context.Context, key string, h Holder) (*Lease, error) {
	h.Since = l.now().UnixMilli()
	h.Lease = randomSecret(12)
	val, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	sent := l.now()
	rev, err := l.kv.Create(ctx, key, val)
	if err == nil {
		l.log.Info("lock acquired", zap.String("key", key), zap.Stringer("holder", h), zap.Uint64("rev", rev))
		return &Lease{locks: l, key: key, holder: h, val: val, rev: rev, renewed: sent}, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return nil, fmt.Errorf("natsbus: acquire %s: %w", key, err)
	}
	cur, held, herr := l.Holder(ctx, key)
	if herr != nil {
		return nil, herr
	}
	if !held { // released or expired in between: try once more
		return l.Acquire(ctx, key, h)
	}
	return nil, lockHeld(key, cur)
}

// Lease is one held lock. Its methods are safe for concurrent use.
type Lease struct {
	locks  *Locks
	key    string
	holder Holder
	val    []byte

	mu  sync.Mutex
	rev uint64
	// renewed is when the last successful write was sent (before the request
	// left: the server stored it later, so the lock lives at least until
	// renewed + TTL by this process's monotonic clock).
	renewed  time.Time
	lost     bool
	released bool
}

// Key returns the lock key.
func (l *Lease) Key() string { return l.key }

// Holder returns the holder stored in the lock.
func (l *Lease) Holder() Holder { return l.holder }

func (l *Lease) lostErr() error {
	return fmt.Errorf("natsbus: %w", market.Errorf(market.CodeLockLost, describeKey(l.key)))
}

// Renew extends the lease by one TTL with a compare-and-set on the revision this
// lease wrote last. It fails with an error matching market.ErrLockLost when the lock
// expired or changed hands; then the caller must stop what the lock protects. Other
// errors (a timeout, a disconnection) are transient. A refused compare-and-set is
// decided by the lock as its stream's leader holds it (settle): a renewal whose
// acknowledgement was lost is recognized by the lease id stored in the lock, so it
// does not count as a loss, and neither does a refusal while nothing newer than
// the lease's revision is stored (a renewal still in flight after a leader change:
// transient).
func (l *Lease) Renew(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return l.lostErr()
	}
	for attempt := 1; ; attempt++ {
		// After a lost acknowledgement the lock's life counts from the earlier
		// of the two writes, which we do not know: count from the retry's.
		sent := l.locks.now()
		rev, err := l.locks.kv.Update(ctx, l.key, l.val, l.rev)
		if err == nil {
			l.rev, l.renewed = rev, sent
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("natsbus: renew %s: %w", l.key, err)
		}
		if err := l.settle(ctx, err); err != nil {
			return err
		}
		if attempt == 3 {
			return fmt.Errorf("natsbus: renew %s: refused %d times, each time after a write of this lease", l.key, attempt)
		}
	}
}

// ValidUntil returns when the lock may expire at the earliest, on this process's
// monotonic clock: one TTL after the last successful write was sent. The server
// stores a write after it was sent and expires it one TTL (by its own clock) after
// storing it, so before ValidUntil nobody else can hold the lock — up to the rate
// difference of the two clocks, which a caller's safety margin covers. After a
// loss or a release it returns the zero time.
func (l *Lease) ValidUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return time.Time{}
	}
	return l.renewed.Add(l.locks.ttl)
}

// settle decides a refused compare-and-set (refused) on the lock from the entry
// its stream's leader holds — not a KV Get, which a replica still catching up
// after a leader change may answer. A newer entry holding this lease (an earlier
// write of ours succeeded but its acknowledgement was lost) gives its revision to
// the lease: nil, try again. Nothing newer than the lease's revision (the server
// refused while a write on the key was still in flight, 10164): a transient
// error. Anything else — someone else's entry, a deletion, no entry — loses the
// lease: an error matching market.ErrLockLost.
func (l *Lease) settle(ctx context.Context, refused error) error {
	m, err := l.locks.bus.lastMsg(ctx, "KV_"+LockBucket, "$KV."+LockBucket+"."+l.key)
	if err != nil {
		return fmt.Errorf("natsbus: %s: %w (reading the lock after: %w)", l.key, refused, err)
	}
	if m != nil && m.Seq <= l.rev {
		return fmt.Errorf("natsbus: %s: %w, with nothing newer than revision %d stored (a write still in flight)", l.key, refused, l.rev)
	}
	var h Holder
	if m != nil && !deleted(m) && json.Unmarshal(m.Data, &h) == nil && h.Lease == l.holder.Lease {
		l.rev = m.Seq
		return nil
	}
	l.lost = true
	return l.lostErr()
}

// Run renews the lease every TTL/3 until ctx ends (it returns nil, keeping the lock:
// call Release for a clean stop) or the lock is lost. A renewal may take up to
// TTL/3 or 2 s, whichever is shorter (one without an answer — a stream leader
// lost — is retried rather than waited for); a failed one is retried every TTL/20. When no renewal has succeeded for a whole TTL
// the lock may have expired, and Run returns an error matching market.ErrLockLost.
func (l *Lease) Run(ctx context.Context) error {
	ttl := l.locks.ttl
	every, retry := ttl/3, ttl/20
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, min(every, attemptTimeout))
		err := l.Renew(rctx)
		cancel()
		switch {
		case err == nil:
			t.Reset(every)
		case errors.Is(err, market.ErrLockLost):
			l.locks.log.Error("lock lost", zap.String("key", l.key))
			return err
		case ctx.Err() != nil:
			return nil
		default:
			l.mu.Lock()
			since := l.locks.now().Sub(l.renewed)
			if since >= ttl {
				l.lost = true
			}
			l.mu.Unlock()
			if since >= ttl {
				l.locks.log.Error("lock lost: no renewal for a whole TTL", zap.String("key", l.key), zap.Error(err))
				return l.lostErr()
			}
			l.locks.log.Warn("lock renewal failed, retrying", zap.String("key", l.key), zap.Error(err))
			t.Reset(retry)
		}
	}
}

// Release deletes the lock if this lease still holds it (compare-and-set on the
// revision, so a lock taken over by someone else is never deleted). A lost lease
// returns an error matching market.ErrLockLost; releasing twice is a no-op.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	if l.lost {
		return l.lostErr()
	}
	err := l.locks.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		if err := l.settle(ctx, err); err != nil {
			return err
		}
		err = l.locks.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
	}
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			l.lost = true
			return l.lostErr()
		}
		return fmt.Errorf("natsbus: release %s: %w", l.key, err)
	}
	l.lost, l.released = true, true // no further renewals
	l.locks.log.Info("lock released", zap.String("key", l.key))
	return nil
}

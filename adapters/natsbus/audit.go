package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// AuditStream is the JetStream stream holding the fleet's audit trail. It captures
// SubjectAllAudit ("pitboss.agent.*.audit.*").
const AuditStream = "AUDIT"

// AuditKind says what an audit record is about. It is the last token of the record's
// subject, so consumers filter by kind on the server.
type AuditKind string

// Audit kinds.
const (
	AuditIntent    AuditKind = "intent"    // a strategy produced an intent
	AuditDecision  AuditKind = "decision"  // the guard chain allowed or denied an intent
	AuditOrder     AuditKind = "order"     // an order was sent, accepted, rejected, cancelled or changed
	AuditFill      AuditKind = "fill"      // an order of the agent traded
	AuditControl   AuditKind = "control"   // an operator's control request and its outcome
	AuditLifecycle AuditKind = "lifecycle" // a supervisor started, stopped or restarted the agent
)

// Valid reports whether k is one of the audit kinds.
func (k AuditKind) Valid() bool {
	switch k {
	case AuditIntent, AuditDecision, AuditOrder, AuditFill, AuditControl, AuditLifecycle:
		return true
	}
	return false
}

// AuditConfig configures the AUDIT stream. The zero value gives the documented
// defaults.
type AuditConfig struct {
	// MaxAge is how long records are kept. If zero, 90 days.
	MaxAge time.Duration
	// MaxBytes bounds the stream's size; the oldest records go first. If zero, 8 GiB.
	MaxBytes int64
	// Duplicates is the window in which a record re-published with the same ID is
	// stored once. If zero, 2 minutes.
	Duplicates time.Duration
	// Replicas in a clustered JetStream (see Replicas). On an external cluster
	// use 3: with one replica, durability rests on that server's fsync policy.
	Replicas Replicas
	// AsyncPersist opts the stream out of fsync-per-write: records are written in
	// the background, so a crash of the server process or machine can lose the last
	// few milliseconds of acknowledged records. The default (false) fsyncs every record
	// before acknowledging it, which bounds the whole fleet's audit rate by the disk's
	// synchronous write rate (about 4,300 records/s on the reference machine; see
	// docs/benchmarks.md). Use it only when that rate is too low. It is fixed when
	// the stream is created: EnsureAudit fails if it differs from the existing stream.
	AsyncPersist bool
}

func (c *AuditConfig) defaults() {
	if c.MaxAge == 0 {
		c.MaxAge = 90 * 24 * time.Hour
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = 8 << 30
	}
	if c.Duplicates == 0 {
		c.Duplicates = 2 * time.Minute
	}
}

// EnsureAudit creates the AUDIT stream, or updates its limits (supervisor role).
// The stream is file-backed, append-only (no message delete, no purge), deduplicates
// by record ID, and keeps records until MaxAge or MaxBytes. Durability of
// acknowledged records across a crash comes from the server's sync-always setting
// (always on for the embedded server; see docs/design/0046).
func (b *Bus) EnsureAudit(ctx context.Context, cfg AuditConfig) error {
	cfg.defaults()
	persist := jetstream.DefaultPersistMode
	if cfg.AsyncPersist {
		persist = jetstream.AsyncPersistMode
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	replicas, err := b.replicasFor(ctx, AuditStream, cfg.Replicas)
	if err != nil {
		return err
	}
	_, err = b.ensureStream(ctx, jetstream.StreamConfig{
		Name:        AuditStream,
		PersistMode: persist,
		Description: "pitboss audit trail: intents, guard decisions, orders, fills, control, lifecycle",
		Subjects:    []string{SubjectAllAudit},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      cfg.MaxAge,
		MaxBytes:    cfg.MaxBytes,
		MaxMsgSize:  1 << 20,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  cfg.Duplicates,
		DenyDelete:  true,
		DenyPurge:   true,
		AllowDirect: true,
	})
	if err != nil {
		return fmt.Errorf("natsbus: audit stream: %w", err)
	}
	return nil
}

// AuditRecord is one entry of the audit trail. Exactly one of the payload pointers
// matching Kind is set. Amounts are exact decimal strings in JSON.
type AuditRecord struct {
	V int `json:"v"`
	// ID identifies the record for deduplication: a retried publish with the same ID
	// is stored once. AuditLog fills it ("<agent>.<run>.<seq>") when empty.
	ID     string         `json:"id"`
	Agent  market.AgentID `json:"agent"`
	Wallet market.Address `json:"wallet"`
	Kind   AuditKind      `json:"kind"`
	// Time is the event time in Unix milliseconds (the venue's clock as the agent
	// saw it, or the supervisor's clock for lifecycle and control records).
	Time   int64 `json:"time"`
	DryRun bool  `json:"dry_run"`

	Intent    *IntentRecord    `json:"intent,omitempty"`
	Decision  *DecisionRecord  `json:"decision,omitempty"`
	Order     *OrderRecord     `json:"order,omitempty"`
	Fill      *FillRecord      `json:"fill,omitempty"`
	Control   *ControlRecord   `json:"control,omitempty"`
	Lifecycle *LifecycleRecord `json:"lifecycle,omitempty"`
}

// IntentRecord is a market.Intent in audit form.
type IntentRecord struct {
	Kind       string             `json:"kind"`
	Key        string             `json:"key,omitempty"`
	Market     market.ConditionID `json:"market,omitempty"`
	Token      market.TokenID     `json:"token,omitempty"`
	Outcome    string             `json:"outcome,omitempty"`
	Side       string             `json:"side,omitempty"`
	Price      Amount             `json:"price"`
	Size       Amount             `json:"size"`
	Type       string             `json:"type,omitempty"`
	PostOnly   bool               `json:"post_only,omitempty"`
	Expiration int64              `json:"expiration,omitempty"`
	OrderID    market.OrderID     `json:"order_id,omitempty"`
	Reason     string             `json:"reason,omitempty"`
}

// NewIntentRecord converts an intent.
func NewIntentRecord(in *market.Intent) *IntentRecord {
	a := &IntentRecord{
		Kind: in.Kind.String(), Key: in.Key, Market: in.Market, Token: in.Token,
		Price: Amount(in.Price), Size: Amount(in.Size), PostOnly: in.PostOnly,
		Expiration: in.Expiration, OrderID: in.OrderID, Reason: in.Reason,
	}
	if in.Kind.Opens() {
		a.Outcome, a.Side, a.Type = in.Outcome.String(), in.Side.String(), in.Type.String()
	}
	return a
}

// DecisionRecord is the verdict of the guard chain on one intent.
type DecisionRecord struct {
	Allow bool `json:"allow"`
	// Guard names the guard that decided (the first that denied); empty when all
	// allowed.
	Guard  string        `json:"guard,omitempty"`
	Reason string        `json:"reason,omitempty"`
	Intent *IntentRecord `json:"intent,omitempty"`
}

// OrderRecord is an order-related action and the venue's answer.
type OrderRecord struct {
	// Action is what happened: "place", "cancel", "replace", "take", "flatten"
	// (sent by the agent), "placed", "rejected", "canceled", "updated", "expired"
	// (reported by the venue); "cancel_all" and "flatten_start" (closing a
	// market's positions begins) name no order, only Market and, in IntentKey,
	// why; "merge" (complete sets turned into collateral) names Market, the sets
	// as Size and why in IntentKey; "redeem" (a resolved market's tokens turned
	// into collateral) names Market, the collateral paid as Size and why in
	// IntentKey; "adopt_position" (a holding taken over at an agent's start) names its
	// Token, Size, average cost as Price and, in IntentKey, where the cost came
	// from.
	Action     string             `json:"action"`
	ID         market.OrderID     `json:"id,omitempty"`
	Market     market.ConditionID `json:"market,omitempty"`
	Token      market.TokenID     `json:"token,omitempty"`
	Outcome    string             `json:"outcome,omitempty"`
	Side       string             `json:"side,omitempty"`
	Price      Amount             `json:"price"`
	Size       Amount             `json:"size"`
	Matched    Amount             `json:"matched"`
	Type       string             `json:"type,omitempty"`
	PostOnly   bool               `json:"post_only,omitempty"`
	Expiration int64              `json:"expiration,omitempty"`
	Status     string             `json:"status,omitempty"`
	IntentKey  string             `json:"intent_key,omitempty"`
	// Code and Error carry a rejection (a market catalog code and its message).
	Code  market.Code `json:"code,omitempty"`
	Error string      `json:"error,omitempty"`
}

// NewOrderRecord converts an order; action says what happened to it.
func NewOrderRecord(action string, o *market.Order) *OrderRecord {
	return &OrderRecord{
		Action: action, ID: o.ID, Market: o.Market, Token: o.Token,
		Outcome: o.Outcome.String(), Side: o.Side.String(), Price: Amount(o.Price),
		Size: Amount(o.Size), Matched: Amount(o.Matched), Type: o.Type.String(),
		PostOnly: o.PostOnly, Expiration: o.Expiration, Status: o.Status.String(),
	}
}

// FillRecord is a market.Fill in audit form.
type FillRecord struct {
	Trade   market.TradeID     `json:"trade"`
	Order   market.OrderID     `json:"order"`
	Market  market.ConditionID `json:"market,omitempty"`
	Token   market.TokenID     `json:"token"`
	Outcome string             `json:"outcome"`
	Side    string             `json:"side"`
	Role    string             `json:"role"`
	Price   Amount             `json:"price"`
	Size    Amount             `json:"size"`
	Fee     Amount             `json:"fee"`
	Time    int64              `json:"time"`
}

// NewFillRecord converts a fill.
func NewFillRecord(f *market.Fill) *FillRecord {
	return &FillRecord{
		Trade: f.Trade, Order: f.Order, Market: f.Market, Token: f.Token,
		Outcome: f.Outcome.String(), Side: f.Side.String(), Role: f.Role.String(),
		Price: Amount(f.Price), Size: Amount(f.Size), Fee: Amount(f.Fee), Time: f.Time,
	}
}

// ControlRecord records a control request and its outcome.
type ControlRecord struct {
	Request ControlRequest `json:"request"`
	OK      bool           `json:"ok"`
	Error   string         `json:"error,omitempty"`
}

// LifecycleRecord records what a supervisor did to an agent's process.
type LifecycleRecord struct {
	// Event: "started", "exited", "crashed", "restarting", "crash_loop", "stopped",
	// "lock_refused", "lock_lost".
	Event    string `json:"event"`
	PID      int    `json:"pid,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// AuditAck is the stream's acknowledgement of a stored record.
type AuditAck struct {
	Seq       uint64 // stream sequence
	Duplicate bool   // the ID was already stored (a retry of a stored record)
}

// AuditLog appends one agent's records to the AUDIT stream. Methods are safe for
// concurrent use. Create with Bus.AuditLog.
type AuditLog struct {
	bus    *Bus
	agent  market.AgentID
	wallet market.Address
	run    string
	seq    atomic.Uint64
}

// AuditLog returns the audit log of agent id trading wallet. run distinguishes this
// process start from earlier ones in record IDs (a random string, or the supervisor's
// restart counter); it must not contain '.'. If empty, a random one is drawn.
func (b *Bus) AuditLog(id market.AgentID, wallet market.Address, run string) (*AuditLog, error) {
	if err := checkAgent(id); err != nil {
		return nil, err
	}
	if run == "" {
		run = randomSecret(6)
	}
	for i := 0; i < len(run); i++ {
		if run[i] == '.' || run[i] <= ' ' || run[i] >= 0x7f {
			return nil, fmt.Errorf("natsbus: invalid audit run id %q", run)
		}
	}
	return &AuditLog{bus: b, agent: id, wallet: wallet, run: run}, nil
}

// fill fills V, Agent, Wallet and an empty ID, and checks Kind.
func (l *AuditLog) fill(rec *AuditRecord) error {
	if !rec.Kind.Valid() {
		return fmt.Errorf("natsbus: invalid audit kind %q", string(rec.Kind))
	}
	rec.V = 1
	if rec.Agent == "" {
		rec.Agent = l.agent
	} else if rec.Agent != l.agent {
		return fmt.Errorf("natsbus: audit record of agent %s on the log of %s", rec.Agent, l.agent)
	}
	if rec.Wallet.IsZero() {
		rec.Wallet = l.wallet
	}
	if rec.ID == "" {
		rec.ID = string(l.agent) + "." + l.run + "." + strconv.FormatUint(l.seq.Add(1), 10)
	}
	return nil
}

// prepare fills rec (see fill) and encodes it.
func (l *AuditLog) prepare(rec *AuditRecord) (*nats.Msg, error) {
	if err := l.fill(rec); err != nil {
		return nil, err
	}
	subj, err := AuditSubject(l.agent, rec.Kind)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("natsbus: encode audit record: %w", err)
	}
	m := nats.NewMsg(subj)
	m.Data = data
	m.Header.Set(jetstream.MsgIDHeader, rec.ID)
	m.Header.Set(jetstream.ExpectedStreamHeader, AuditStream)
	return m, nil
}

// Append stores rec and waits for the stream's acknowledgement. It fills rec.V,
// rec.Agent, rec.Wallet and an empty rec.ID. A publish that gets no answer (timeout,
// reconnection in progress, stream leader election) is retried with the same ID until
// ctx ends, so the record is stored exactly once within the duplicate window. If ctx
// has no deadline, the bus's default timeout applies to the whole call.
func (l *AuditLog) Append(ctx context.Context, rec *AuditRecord) (AuditAck, error) {
	m, err := l.prepare(rec)
	if err != nil {
		return AuditAck{}, err
	}
	ctx, cancel := l.bus.withTimeout(ctx)
	defer cancel()
	return l.bus.publishRetry(ctx, m)
}

func (b *Bus) publishRetry(ctx context.Context, m *nats.Msg) (AuditAck, error) {
	wait := 10 * time.Millisecond
	for {
		actx, cancel := withAttempt(ctx, attemptTimeout)
		ack, err := b.js.PublishMsg(actx, m)
		cancel()
		if err == nil {
			return AuditAck{Seq: ack.Sequence, Duplicate: ack.Duplicate}, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return AuditAck{}, fmt.Errorf("natsbus: append audit %s: %w", m.Header.Get(jetstream.MsgIDHeader), err)
		}
		b.log.Debug("audit publish retry", zap.Error(err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return AuditAck{}, fmt.Errorf("natsbus: append audit %s: %w", m.Header.Get(jetstream.MsgIDHeader), err)
		case <-t.C:
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// retryable reports whether a JetStream publish error may succeed when repeated.
func retryable(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code >= 500 // 503: no leader, store temporarily unavailable
	}
	return isTimeout(err) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrDisconnected)
}

// AppendBatch stores every record of recs, pipelining the publishes (one round trip
// for the batch instead of one per record), and returns when all are acknowledged.
// Records that fail are retried one by one with their IDs, as Append does. On error,
// some records may be stored: calling AppendBatch again with the same slice (IDs are
// now filled) stores each of them exactly once.
func (l *AuditLog) AppendBatch(ctx context.Context, recs []AuditRecord) error {
	ctx, cancel := l.bus.withTimeout(ctx)
	defer cancel()
	msgs := make([]*nats.Msg, len(recs))
	futures := make([]jetstream.PubAckFuture, len(recs))
	for i := range recs {
		m, err := l.prepare(&recs[i])
		if err != nil {
			return err
		}
		msgs[i] = m
		f, err := l.bus.js.PublishMsgAsync(m)
		if err == nil {
			futures[i] = f
		}
	}
	for i, f := range futures {
		if f != nil {
			select {
			case <-f.Ok():
				continue
			case <-f.Err():
			case <-ctx.Done():
				return fmt.Errorf("natsbus: append audit batch: %w", ctx.Err())
			}
		}
		if _, err := l.bus.publishRetry(ctx, msgs[i]); err != nil {
			return err
		}
	}
	return nil
}

// AuditFilter selects records for TailAudit. The zero value selects every record from
// the first, and stops when caught up.
type AuditFilter struct {
	Agent market.AgentID // one agent; empty for all
	Kinds []AuditKind    // some kinds; empty for all
	// StartSeq starts at this stream sequence; Since starts at the first record
	// stored at or after this time. StartSeq wins when both are set; with neither,
	// from the first record.
	StartSeq uint64
	Since    time.Time
	// Follow keeps waiting for new records until ctx ends; otherwise TailAudit returns
	// once it has delivered every record stored when it started.
	Follow bool
}

// AuditEntry is a record read back from the stream.
type AuditEntry struct {
	Seq    uint64    // stream sequence
	Stored time.Time // when the server stored it
	Record AuditRecord
}

// TailAudit calls fn, in stream order, with every record matching f. It returns nil
// when caught up (without Follow) or when ctx ends (with Follow), fn's error if fn
// fails, or a read error. Records that do not decode are skipped and logged.
func (b *Bus) TailAudit(ctx context.Context, f AuditFilter, fn func(AuditEntry) error) error {
	var filters []string
	if len(f.Kinds) == 0 {
		s, err := auditFilter(f.Agent, "")
		if err != nil {
			return err
		}
		filters = []string{s}
	}
	for _, k := range f.Kinds {
		s, err := auditFilter(f.Agent, k)
		if err != nil {
			return err
		}
		filters = append(filters, s)
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: filters, DeliverPolicy: jetstream.DeliverAllPolicy}
	switch {
	case f.StartSeq > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, f.StartSeq
	case !f.Since.IsZero():
		t := f.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
	}
	cctx, cancel := b.withTimeout(ctx)
	cons, err := b.js.OrderedConsumer(cctx, AuditStream, cfg)
	if err != nil {
		cancel()
		return fmt.Errorf("natsbus: tail audit: %w", err)
	}
	info, err := cons.Info(cctx)
	cancel()
	if err != nil {
		return fmt.Errorf("natsbus: tail audit: %w", err)
	}
	if !f.Follow && info.NumPending == 0 {
		return nil
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("natsbus: tail audit: %w", err)
	}
	defer it.Stop()
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				if f.Follow {
					return nil
				}
				return ctx.Err()
			}
			return fmt.Errorf("natsbus: tail audit: %w", err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("natsbus: tail audit: %w", err)
		}
		var e AuditEntry
		if err := json.Unmarshal(msg.Data(), &e.Record); err != nil {
			b.log.Warn("undecodable audit record skipped", zap.Uint64("seq", md.Sequence.Stream))
		} else {
			e.Seq, e.Stored = md.Sequence.Stream, md.Timestamp
			if err := fn(e); err != nil {
				return err
			}
		}
		if !f.Follow && md.NumPending == 0 {
			return nil
		}
	}
}

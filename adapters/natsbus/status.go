package natsbus

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// Status is an agent's status and heartbeat, published on its status subject at least
// every Interval. Addresses and ids are public; a Status never carries a secret.
// Amounts are exact decimal strings in JSON.
type Status struct {
	V       int                  `json:"v"`
	Agent   market.AgentID       `json:"agent"`
	Wallet  market.Address       `json:"wallet"`
	State   AgentState           `json:"state"`
	DryRun  bool                 `json:"dry_run"`
	Mode    string               `json:"mode,omitempty"` // market.AccountMode.String()
	Markets []market.ConditionID `json:"markets,omitempty"`
	// MarketLabels name Markets for people, in the same order (market.Info.Label:
	// the slug, else the question, else the condition id).
	MarketLabels []string         `json:"market_labels,omitempty"`
	Positions    []PositionStatus `json:"positions,omitempty"`
	OpenOrders   int              `json:"open_orders"`
	Balance      Amount           `json:"balance"`
	Reserved     Amount           `json:"reserved"`
	Realized     Amount           `json:"realized_pnl"`
	Unrealized   Amount           `json:"unrealized_pnl"`
	// LastEvent is the venue time (Unix ms) of the last market event the agent
	// applied: a stale value with fresh heartbeats means a stuck feed.
	LastEvent int64 `json:"last_event"`
	// Time is when the status was sent (sender's clock, Unix ms); Seq counts the
	// statuses of this process from 1.
	Time int64  `json:"time"`
	Seq  uint64 `json:"seq"`
	// IntervalMS is the heartbeat period the agent promises (milliseconds); watchers
	// declare it dead after a few missed periods.
	IntervalMS int64  `json:"interval_ms"`
	PID        int    `json:"pid"`
	Host       string `json:"host"`
	Supervisor string `json:"supervisor,omitempty"`
	Version    string `json:"version,omitempty"`
	Error      string `json:"error,omitempty"` // the last failure, when State is failed
	// Equity is balance plus reserved plus the positions at their marks; PnL is
	// it minus the equity of the agent's first start (agent.Status.PnL). Both are
	// "0" from senders that do not fill them.
	Equity Amount `json:"equity"`
	PnL    Amount `json:"pnl"`
	// Books are the tops of the books of the agent's markets (one per YES token),
	// Orders its open orders (at most MaxStatusOrders, oldest first; OpenOrders
	// counts all) and Guards its limits with their use: what `pitboss ctl status`
	// and the dashboard show. Empty from senders that do not fill them.
	Books  []BookStatus  `json:"books,omitempty"`
	Orders []OrderStatus `json:"orders,omitempty"`
	Guards []GuardStatus `json:"guards,omitempty"`
}

// MaxStatusOrders bounds Status.Orders, so that a heartbeat stays small.
const MaxStatusOrders = 50

// BookStatus is the top of one token's book. Bid and Ask are 0 when the side is
// empty; Mid and Spread are 0 unless both sides are set.
type BookStatus struct {
	Market  market.ConditionID `json:"market"`
	Label   string             `json:"label,omitempty"`
	Token   market.TokenID     `json:"token"`
	Outcome string             `json:"outcome"`
	Bid     Amount             `json:"bid"`
	Ask     Amount             `json:"ask"`
	Mid     Amount             `json:"mid"`
	Spread  Amount             `json:"spread"`
}

// OrderStatus is one open order of the agent. Placed is the agent's time of the
// placement (Unix ms); Distance is Price minus the mid of the order's book on its
// own side's terms (buy: mid − price, sell: price − mid; positive means away from
// the market, negative through it), 0 without a mid.
type OrderStatus struct {
	ID       market.OrderID     `json:"id"`
	Market   market.ConditionID `json:"market"`
	Label    string             `json:"label,omitempty"`
	Outcome  string             `json:"outcome"`
	Side     string             `json:"side"`
	Price    Amount             `json:"price"`
	Size     Amount             `json:"size"`
	Matched  Amount             `json:"matched"`
	Placed   int64              `json:"placed"`
	Mid      Amount             `json:"mid"`
	Distance Amount             `json:"distance"`
	Key      string             `json:"key,omitempty"`
}

// GuardStatus is one limit of the agent's guard chain and how much of it is used
// (both in the guard's unit: shares, collateral or a count, as Unit says). Use is
// Used / Limit in per cent, rounded down.
type GuardStatus struct {
	Guard string `json:"guard"`
	Unit  string `json:"unit"`
	Used  Amount `json:"used"`
	Limit Amount `json:"limit"`
	Use   int    `json:"use_pct"`
}

// PositionStatus is one position in a Status.
type PositionStatus struct {
	Market market.ConditionID `json:"market,omitempty"`
	// Label names the market for people (market.Info.Label); Outcome is YES or NO.
	Label      string         `json:"label,omitempty"`
	Token      market.TokenID `json:"token"`
	Outcome    string         `json:"outcome"`
	Size       Amount         `json:"size"`
	AvgPrice   Amount         `json:"avg_price"`
	Mark       Amount         `json:"mark"`
	Realized   Amount         `json:"realized_pnl"`
	Unrealized Amount         `json:"unrealized_pnl"`
}

// NewPositionStatus summarizes p marked at mark.
func NewPositionStatus(p *market.Position, mark market.Micros) PositionStatus {
	return PositionStatus{
		Market: p.Market, Token: p.Token, Outcome: p.Outcome.String(),
		Size: Amount(p.Size), AvgPrice: Amount(p.AvgPrice()), Mark: Amount(mark),
		Realized: Amount(p.Realized), Unrealized: Amount(p.Unrealized(mark)),
	}
}

// PublishStatus publishes st on its agent's status subject (fire and forget: a lost
// heartbeat is replaced by the next). It sets st.V.
func (b *Bus) PublishStatus(st *Status) error {
	subj, err := StatusSubject(st.Agent)
	if err != nil {
		return err
	}
	st.V = 1
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("natsbus: encode status: %w", err)
	}
	return b.nc.Publish(subj, data)
}

// RunHeartbeat publishes snapshot() every interval (and once at once) until ctx ends,
// then returns nil. It fills Seq, Time and IntervalMS. snapshot is called from this
// goroutine and must be safe to call concurrently with the agent's loop. Publish
// errors (a disconnected client) are logged and the beat goes on.
func (b *Bus) RunHeartbeat(ctx context.Context, interval time.Duration, snapshot func() Status) error {
	return b.RunHeartbeatWith(ctx, interval, func() (Status, bool) { return snapshot(), true }, nil)
}

// RunHeartbeatWith is RunHeartbeat for a supervised agent: a status is also
// published at once after each receive from kick (a control request; nil: never),
// and a snapshot whose second result is false is skipped (nothing published, Seq
// not advanced: the agent's loop is stuck and its heartbeats stop).
func (b *Bus) RunHeartbeatWith(ctx context.Context, interval time.Duration, snapshot func() (Status, bool), kick <-chan struct{}) error {
	if interval <= 0 {
		return fmt.Errorf("natsbus: heartbeat interval must be positive")
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var seq uint64
	for {
		if st, publish := snapshot(); publish {
			seq++
			st.Seq, st.Time, st.IntervalMS = seq, time.Now().UnixMilli(), interval.Milliseconds()
			if err := b.PublishStatus(&st); err != nil {
				b.log.Warn("heartbeat not sent", zap.Error(err))
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-kick:
		}
	}
}

// Liveness is what a Roster concludes about an agent.
type Liveness uint8

// Liveness values. The zero value is LivenessUnknown (never seen).
const (
	LivenessUnknown Liveness = iota
	LivenessAlive            // heartbeats arrive on time
	LivenessDead             // heartbeats stopped without a clean stop
	LivenessStopped          // the agent said it stopped (State stopped)
)

// String returns "unknown", "alive", "dead" or "stopped".
func (l Liveness) String() string {
	switch l {
	case LivenessAlive:
		return "alive"
	case LivenessDead:
		return "dead"
	case LivenessStopped:
		return "stopped"
	}
	return "unknown"
}

// RosterEntry is what a Roster knows of one agent.
type RosterEntry struct {
	Status   Status    // the last status received
	Seen     time.Time // when it was received (watcher's clock)
	Liveness Liveness
}

// RosterChange reports a change of an agent's liveness.
type RosterChange struct {
	Agent market.AgentID
	From  Liveness
	To    Liveness
	Entry RosterEntry
}

// RosterConfig configures a Roster. The zero value is usable.
type RosterConfig struct {
	// Misses is how many heartbeat periods may pass without a status before an agent
	// is declared dead. If zero, 3.
	Misses int
	// DefaultInterval is the period assumed for statuses without IntervalMS. If zero,
	// 1 s.
	DefaultInterval time.Duration
	// Check is how often deadlines are checked. If zero, 50 ms.
	Check time.Duration
	// OnChange is called, from Run's goroutine, when an agent is first seen, dies,
	// comes back or stops. It must not block for long.
	OnChange func(RosterChange)
	// Now is the clock (for tests). If nil, time.Now.
	Now func() time.Time
}

// rosterQueue bounds the statuses waiting for Run. Overflow policy: nats.go drops the
// newest (logged as a slow consumer); a heartbeat is superseded by the next one.
const rosterQueue = 1024

// Roster watches the status subjects of the fleet and tells which agents are alive:
// the supervisor's view of its agents, and `pitboss ctl status`. Create with
// NewRoster (subscribed on return), then call Run. Snapshot and Get are safe for
// concurrent use.
type Roster struct {
	cfg RosterConfig
	sub *nats.Subscription
	ch  chan *nats.Msg
	log *zap.Logger

	mu      sync.RWMutex
	entries map[market.AgentID]*RosterEntry
}

// NewRoster subscribes to every agent's status.
func (b *Bus) NewRoster(cfg RosterConfig) (*Roster, error) {
	if cfg.Misses == 0 {
		cfg.Misses = 3
	}
	if cfg.DefaultInterval == 0 {
		cfg.DefaultInterval = time.Second
	}
	if cfg.Check == 0 {
		cfg.Check = 50 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Roster{cfg: cfg, ch: make(chan *nats.Msg, rosterQueue), log: b.log, entries: make(map[market.AgentID]*RosterEntry)}
	sub, err := b.nc.ChanSubscribe(SubjectAllStatus, r.ch)
	if err != nil {
		return nil, fmt.Errorf("natsbus: roster: %w", err)
	}
	r.sub = sub
	if err := b.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("natsbus: roster: %w", err)
	}
	return r, nil
}

// Run applies statuses and checks deadlines until ctx ends; then it unsubscribes and
// returns nil.
func (r *Roster) Run(ctx context.Context) error {
	defer func() { _ = r.sub.Unsubscribe() }()
	t := time.NewTicker(r.cfg.Check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-r.ch:
			r.apply(m)
		case <-t.C:
			r.expire()
		}
	}
}

func (r *Roster) apply(m *nats.Msg) {
	var st Status
	if err := json.Unmarshal(m.Data, &st); err != nil || !st.Agent.Valid() {
		r.log.Debug("malformed status ignored", zap.String("subject", m.Subject))
		return
	}
	if want, _ := StatusSubject(st.Agent); want != m.Subject {
		r.log.Warn("status on another agent's subject ignored", zap.String("subject", m.Subject), zap.String("agent", string(st.Agent)))
		return
	}
	now := r.cfg.Now()
	to := LivenessAlive
	if st.State == StateStopped {
		to = LivenessStopped
	}
	r.mu.Lock()
	e := r.entries[st.Agent]
	if e == nil {
		e = &RosterEntry{}
		r.entries[st.Agent] = e
	}
	from := e.Liveness
	e.Status, e.Seen, e.Liveness = st, now, to
	entry := *e
	r.mu.Unlock()
	if from != to && r.cfg.OnChange != nil {
		r.cfg.OnChange(RosterChange{Agent: st.Agent, From: from, To: to, Entry: entry})
	}
}

func (r *Roster) expire() {
	now := r.cfg.Now()
	var changes []RosterChange
	r.mu.Lock()
	for id, e := range r.entries {
		if e.Liveness != LivenessAlive {
			continue
		}
		iv := time.Duration(e.Status.IntervalMS) * time.Millisecond
		if iv <= 0 {
			iv = r.cfg.DefaultInterval
		}
		if now.Sub(e.Seen) > time.Duration(r.cfg.Misses)*iv {
			e.Liveness = LivenessDead
			changes = append(changes, RosterChange{Agent: id, From: LivenessAlive, To: LivenessDead, Entry: *e})
		}
	}
	r.mu.Unlock()
	slices.SortFunc(changes, func(a, b RosterChange) int {
		if a.Agent < b.Agent {
			return -1
		}
		if a.Agent > b.Agent {
			return 1
		}
		return 0
	})
	if r.cfg.OnChange != nil {
		for _, c := range changes {
			r.cfg.OnChange(c)
		}
	}
}

// Get returns what the roster knows of agent id.
func (r *Roster) Get(id market.AgentID) (RosterEntry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[id]
	if !ok {
		return RosterEntry{}, false
	}
	return *e, true
}

// Snapshot returns every known agent, sorted by id.
func (r *Roster) Snapshot() []RosterEntry {
	r.mu.RLock()
	out := make([]RosterEntry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, *e)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b RosterEntry) int {
		if a.Status.Agent < b.Status.Agent {
			return -1
		}
		if a.Status.Agent > b.Status.Agent {
			return 1
		}
		return 0
	})
	return out
}

// Forget removes agent id (an agent removed from the fleet).
func (r *Roster) Forget(id market.AgentID) {
	r.mu.Lock()
	delete(r.entries, id)
	r.mu.Unlock()
}

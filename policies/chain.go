package policies

import (
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
)

// Chain is the ordered, default-deny guard chain of one agent. An intent is allowed
// only when it is of a known, non-withdrawing kind and every guard allows it; the
// first denial ends the evaluation. Every decision, and every trip and resume of the
// kill switch, is delivered to the Sink.
//
// The guards, in order: allowlist, kill_switch, geoblock, account_mode,
// market_state, preflight, max_order_size, max_order_notional, max_position,
// max_market_position, max_gross_exposure, max_open_orders, price_band,
// max_orders_per_minute, then any guards given with WithGuards, then the custom
// deny_if guards of the configuration.
//
// A Chain is not safe for concurrent use: the agent's loop owns it and calls every
// method, operator commands (Trip, Resume) included. It keeps no reference to the
// intents it is given, and to a state only until the next batch starts. Evaluations
// that allow do not allocate, nor do denials with a fixed reason (kill switch,
// geoblock, account mode, market state, most of pre-flight).
type Chain struct {
	cfg    Config
	agent  string
	sink   Sink
	geo    Geoblock
	guards []Guard
	kill   KillState
	// undated: the baseline was set before any event time (an agent's start, whose
	// state has no time yet): the first dated Observe dates it instead of starting a
	// new day from its equity, so the day starts at the equity at start.
	undated bool
	rate    window
	view    View
	batch   Batch
	custom  *customSet

	// Reuse of decisions (keep.go) and the positions' valuation (value.go).
	builtin int    // the built-in guards are c.guards[:builtin]
	grossAt int    // the index of max_gross_exposure
	reuse   bool   // no opaque guard (WithGuards): decisions may be reused
	epoch   uint64 // counts changes of the kill switch, its baselines and the geoblock
	version uint64 // the declared version of vstate (0: unknown)
	vstate  *market.State
	memos   map[string]*memo
	recent  [4]keyMemo // the memos found last, looked at before memos (keep.go)
	nrecent int        // where the next one found in memos goes in recent
	values  valuation
	books   bookCache   // the books of the markets decided on (keep.go)
	limits  []lastLimit // the last denial of each limit guard (guards.go)
	// The memos of the decisions of the current batch and of the last one, in
	// order, while every decision was one a memo remembers (traceOK, lastOK), and
	// the last batch's pending set at its end: what Batch.Repeat replays.
	trace, lastTrace []*memo
	traceOK, lastOK  bool
	lastPending      *pending   // the last batch's pending set: one of pend
	pend             [2]pending // the pending sets of this batch and the last, swapped by pointer
	repeats          uint64     // calls of Batch.Repeat
	// revalidated counts the decisions kept over a move of the top of the books
	// (keep.go), for tests.
	revalidated uint64
	discard     bool // the sink is Discard: no record is built
	// the indexes of pre-flight and price_band, the built-in guards that read the
	// books (keep.go)
	preflightAt, bandAt int

	denyKind, denyHalted, denyGeoBlocked, denyGeoUnknown, denyBanned, denyCloseOnly *Denied
}

// Option configures a Chain at construction.
type Option func(*Chain)

// WithAgent names the agent in audit records.
func WithAgent(name string) Option { return func(c *Chain) { c.agent = name } }

// WithSink delivers audit records to s. If not given (or nil), records are discarded.
func WithSink(s Sink) Option { return func(c *Chain) { c.sink = s } }

// WithGeoblock sets the initial geoblock status (see SetGeoblock). If not given, the
// status is GeoUnknown and every order is denied until SetGeoblock is called.
func WithGeoblock(g Geoblock) Option { return func(c *Chain) { c.geo = g } }

// WithKillState restores the kill switch saved by a previous run (see KillState), so
// a tripped switch stays tripped across restarts.
func WithKillState(k KillState) Option { return func(c *Chain) { c.kill = k } }

// WithGuards appends guards written in Go after the built-in ones and before the
// custom expression guards.
func WithGuards(g ...Guard) Option {
	return func(c *Chain) { c.guards = append(c.guards, g...) }
}

// WithAddress sets the wallet address quoted in account-mode denials, as the venue
// quotes it ("'0x…' address banned").
func WithAddress(a market.Address) Option {
	return func(c *Chain) { c.denyBanned, c.denyCloseOnly = accountDenials(a) }
}

func accountDenials(a market.Address) (banned, closeOnly *Denied) {
	return deny(GuardAccountMode, market.Errorf(market.CodeAddressBanned, a.String())),
		deny(GuardAccountMode, market.Errorf(market.CodeAddressCloseOnly, a.String()))
}

// New builds a chain from cfg (zero limits take their defaults). It fails when cfg
// has problems (see Config.Problems); the error lists all of them.
func New(cfg Config, opts ...Option) (*Chain, error) {
	if probs := cfg.Problems(); len(probs) > 0 {
		msgs := make([]error, len(probs))
		for i, p := range probs {
			msgs[i] = errors.New(p.String())
		}
		return nil, fmt.Errorf("policies: invalid guard configuration: %w", errors.Join(msgs...))
	}
	c := &Chain{cfg: cfg.Resolved(), sink: Discard}
	c.denyBanned, c.denyCloseOnly = accountDenials(market.Address{})
	c.denyKind = &Denied{Guard: GuardAllowlist, Reason: "intent kind is not allowed (only quote, take, cancel, cancel_all, flatten, pause)", Err: ErrNotAllowed}
	c.denyHalted = &Denied{Guard: GuardKillSwitch, Reason: ErrHalted.Error(), Err: ErrHalted}
	c.denyGeoBlocked = deny(GuardGeoblock, market.ErrGeoblocked)
	c.denyGeoUnknown = &Denied{Guard: GuardGeoblock, Reason: "geoblock status unknown: no order until it is checked", Err: ErrGeoUnknown}
	c.guards = []Guard{allowlistGuard{c}, killGuard{c}, geoGuard{c}, accountGuard{c}, marketGuard{}, preflightGuard{}}
	c.guards = append(c.guards, limitGuards(c)...)
	c.builtin = len(c.guards)
	for i, g := range c.guards {
		switch g.Name() {
		case GuardGross:
			c.grossAt = i
		case GuardPreflight:
			c.preflightAt = i
		case GuardPriceBand:
			c.bandAt = i
		}
	}
	for _, o := range opts {
		o(c)
	}
	c.reuse = len(c.guards) == c.builtin
	if c.sink == nil {
		c.sink = Discard
	}
	c.discard = c.sink == Discard
	if c.geo.Status > GeoBlocked {
		return nil, fmt.Errorf("policies: invalid geoblock status %d", c.geo.Status)
	}
	if len(c.cfg.Custom) > 0 {
		cs, err := newCustomSet(c, c.cfg.Custom)
		if err != nil {
			return nil, err
		}
		c.custom = cs
		for i := range cs.guards {
			c.guards = append(c.guards, &cs.guards[i])
		}
	}
	c.rate.ts = make([]int64, c.cfg.MaxOrdersPerMinute)
	c.view.Config = &c.cfg
	return c, nil
}

// Config returns the resolved configuration (every limit set).
func (c *Chain) Config() Config { return c.cfg }

// Guards returns the names of the guards in evaluation order.
func (c *Chain) Guards() []string {
	out := make([]string, len(c.guards))
	for i, g := range c.guards {
		out[i] = g.Name()
	}
	return out
}

// SetGeoblock sets the geoblock status (from /api/geoblock; GeoAllowed for the
// embedded venue). It applies from the next evaluation.
func (c *Chain) SetGeoblock(g Geoblock) {
	if g != c.geo {
		c.geo = g
		c.epoch++
	}
}

// Geoblock returns the current geoblock status.
func (c *Chain) Geoblock() Geoblock { return c.geo }

// Evaluate decides intent it against state s, alone (a batch of one; see Batch for
// the intents of one strategy evaluation). It first re-checks the loss limits (see
// Observe); if that trips the kill switch, Decision.Action says what to do.
func (c *Chain) Evaluate(s *market.State, it *market.Intent) Decision {
	return c.evaluate(c.Batch(s), it, "", false)
}

// EvaluateReplacing is Evaluate for an intent that replaces the open order
// replaces (a re-quote): that order's reservations and its slot among the open
// orders are not counted against the new one. An id that is not open is ignored.
func (c *Chain) EvaluateReplacing(s *market.State, it *market.Intent, replaces market.OrderID) Decision {
	return c.evaluate(c.Batch(s), it, replaces, false)
}

// evaluate decides it within batch b. keep marks the re-check of the open order
// replaces that stays (see Batch.EvaluateKeeping).
func (c *Chain) evaluate(b *Batch, it *market.Intent, replaces market.OrderID, keep bool) Decision {
	s := b.state
	m := c.memoFor(b, it, replaces, keep)
	var order, rep *market.Order
	if replaces != "" {
		order = c.order(s, m, replaces)
		if rep = order; rep != nil && b.p.isReplaced(rep) {
			rep = nil // already replaced earlier in the batch
		}
	}
	if m != nil {
		if d, ok := c.reused(b, m, it, replaces, rep); ok {
			if d.Denied != nil || !d.Reused {
				c.audit(s, it, d.Denied)
			}
			c.trace = append(c.trace, m)
			return d
		}
	}
	d := Decision{Action: b.action}
	b.action = Action{}
	v := &c.view
	v.reset(s, it, rep)
	v.Geoblock, v.Halted, v.positionsValue, v.claims, v.pending, v.keep = c.geo, c.kill.Tripped, b.posValue, b.claims, b.p, keep
	c.locate(v)
	at := 0
	for i, g := range c.guards {
		if den := g.Check(v); den != nil {
			d.Denied, at = den, i
			break
		}
	}
	d.Allowed = d.Denied == nil
	if m != nil {
		c.remember(b, m, v, replaces, order, keep, d.Denied, at, b.p)
	}
	if m != nil && m.valid {
		c.trace = append(c.trace, m)
	} else {
		c.traceOK = false
	}
	if d.Allowed {
		b.p.add(v, keep)
	}
	c.audit(s, it, d.Denied)
	v.State, v.Intent, v.Replaces, v.Market, v.pending = nil, nil, nil, nil, nil // keep no references
	return d
}

// audit delivers the record of one decision (den nil: allowed) to the sink.
func (c *Chain) audit(s *market.State, it *market.Intent, den *Denied) {
	if c.discard {
		return
	}
	r := Record{Kind: RecordDecision, Agent: c.agent, Time: s.Time, Intent: *it, Allowed: den == nil}
	if den != nil {
		r.Guard, r.Reason = den.Guard, den.Reason
		if e, ok := den.Err.(*market.Error); ok { // no errors.As: it would allocate
			r.Code = e.Code
		}
	}
	c.sink.Audit(r)
}

// locate finds the intent's market and outcome and its notional.
func (c *Chain) locate(v *View) {
	s, it := v.State, v.Intent
	switch {
	case it.Token != "" && it.Market != "":
		if m := s.Markets[it.Market]; m != nil {
			if o, ok := m.OutcomeOf(it.Token); ok {
				v.Market, v.Outcome = m, o
			}
		}
	case it.Token != "":
		if m, o, ok := s.MarketOf(it.Token); ok {
			v.Market, v.Outcome = m, o
		}
	case it.Market != "":
		v.Market = s.Markets[it.Market]
	}
	if v.Market != nil && c.versioned(s) {
		v.mb = c.books.of(s, c.version, v.Market)
	}
	if it.Kind.Opens() && it.Price > 0 && it.Size > 0 {
		if n, ok := market.Notional(it.Price, it.Size); ok {
			v.Notional = n
		} else {
			v.Notional = market.MaxMicros + 1
		}
	}
}

// RecordOrder tells the chain that an order was sent to the venue at event time t
// (Unix milliseconds), for max_orders_per_minute. The agent (its reconciler) calls it
// once per order placed, whatever intent it came from.
func (c *Chain) RecordOrder(t int64) { c.rate.add(t) }

// KillState is the kill switch and loss-limit baseline, serializable (JSON, amounts
// as decimal strings) so that the agent can keep it in its state directory and a
// tripped switch survives a restart. The zero value is "not tripped, no baseline
// yet".
type KillState struct {
	Tripped   bool
	Reason    string
	TrippedAt int64 // event time, Unix milliseconds
	// Baseline reports whether Day, DayStart and HighWater are set (after the first
	// Observe, or a Resume).
	Baseline  bool
	Day       int64         // UTC day number (Unix days) that DayStart belongs to
	DayStart  market.Micros // equity at the first observation of Day
	HighWater market.Micros // highest equity observed since the baseline was set
}

// KillState returns the current kill switch state, to persist.
func (c *Chain) KillState() KillState { return c.kill }

// Halted reports whether the kill switch is tripped.
func (c *Chain) Halted() bool { return c.kill.Tripped }

const day = 86_400_000

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Observe updates the loss-limit baselines from s (equity, see Equity; the UTC day of
// s.Time; a baseline set at time 0, before any event, belongs to the day of the
// first event after it) and trips the kill switch when the daily loss reaches max_daily_loss or the
// drawdown reaches max_drawdown. It returns the Action to take when it trips, the
// zero Action otherwise. The agent calls it after applying each event, so that the
// limits trip even when the strategy intends nothing; Evaluate calls it too. Call it
// only once the state holds the account's balance and positions: the first call sets
// the baseline.
func (c *Chain) Observe(s *market.State) Action {
	open, claims := c.positionsValue(s)
	return c.observe(s, s.Balance+s.Reserved+open+claims)
}

// observe is Observe with the equity of s given. A trip starts a new epoch
// (decisions made before are not reused), and so does a change of the baselines
// when a custom guard reads them (day_pnl, drawdown).
func (c *Chain) observe(s *market.State, eq market.Micros) Action {
	if c.custom == nil || !c.custom.valued {
		return c.observeLimits(s, eq)
	}
	old := c.kill
	a := c.observeLimits(s, eq)
	if c.kill != old {
		c.epoch++
	}
	return a
}

func (c *Chain) observeLimits(s *market.State, eq market.Micros) Action {
	k := &c.kill
	d := floorDiv(s.Time, day)
	if !k.Baseline {
		k.Baseline, k.Day, k.DayStart, k.HighWater = true, d, eq, eq
		c.undated = s.Time == 0
	}
	if c.undated && s.Time != 0 {
		k.Day, c.undated = d, false
	}
	if d > k.Day {
		k.Day, k.DayStart = d, eq
	}
	if eq > k.HighWater {
		k.HighWater = eq
	}
	if k.Tripped {
		return Action{}
	}
	if loss := k.DayStart - eq; loss >= c.cfg.MaxDailyLoss {
		return c.trip(s.Time, fmt.Sprintf("daily loss %s reached max_daily_loss %s (equity %s, day start %s)", loss, c.cfg.MaxDailyLoss, eq, k.DayStart))
	}
	if dd := k.HighWater - eq; dd >= c.cfg.MaxDrawdown {
		return c.trip(s.Time, fmt.Sprintf("drawdown %s reached max_drawdown %s (equity %s, high-water %s)", dd, c.cfg.MaxDrawdown, eq, k.HighWater))
	}
	return Action{}
}

// Trip trips the kill switch on an operator's (or the agent's) request at event time
// t and returns the Action to take. Tripping a tripped switch keeps its first reason
// and asks for the action again.
func (c *Chain) Trip(t int64, reason string) Action {
	if reason == "" {
		reason = "operator"
	}
	if c.kill.Tripped {
		return c.action(c.kill.Reason)
	}
	return c.trip(t, reason)
}

func (c *Chain) trip(t int64, reason string) Action {
	c.kill.Tripped, c.kill.Reason, c.kill.TrippedAt = true, reason, t
	c.epoch++
	c.sink.Audit(Record{Kind: RecordTrip, Agent: c.agent, Time: t, Guard: GuardKillSwitch, Reason: reason})
	return c.action(reason)
}

func (c *Chain) action(reason string) Action {
	return Action{CancelAll: true, Flatten: c.cfg.FlattenOnHalt, Halt: true, Reason: reason}
}

// Resume clears a tripped kill switch on an operator's explicit request and resets
// the loss-limit baselines (day start and high-water mark) to the equity of s, so
// that the same loss does not trip it again at once. It reports whether the switch
// was tripped; resuming an untripped switch changes nothing.
func (c *Chain) Resume(s *market.State, reason string) bool {
	if !c.kill.Tripped {
		return false
	}
	eq := s.Equity()
	c.kill = KillState{Baseline: true, Day: floorDiv(s.Time, day), DayStart: eq, HighWater: eq}
	c.epoch++
	if reason == "" {
		reason = "operator"
	}
	c.sink.Audit(Record{Kind: RecordResume, Agent: c.agent, Time: s.Time, Guard: GuardKillSwitch, Allowed: true, Reason: reason})
	return true
}

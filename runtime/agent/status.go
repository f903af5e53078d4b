package agent

import (
	"slices"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/market"
)

// RunState is what the agent is doing. The values are those of the fleet's agent
// states (adapters/natsbus), so a supervisor maps them one to one.
type RunState string

// Run states.
const (
	StateStarting RunState = "starting"
	StateRunning  RunState = "running"
	StatePaused   RunState = "paused"   // no new orders until resumed; resting orders stay
	StateKilled   RunState = "killed"   // kill switch tripped: orders cancelled, nothing opens
	StateFailed   RunState = "failed"   // the strategy failed (or startup did): no new orders
	StateStopping RunState = "stopping" // cancelling and saving
	StateStopped  RunState = "stopped"
)

// Counts are the agent's running totals since it started.
type Counts struct {
	Events    uint64 // events applied (feed, venue and timers)
	Intents   uint64 // intents from the strategy
	Denials   uint64 // intents the guards denied
	Orders    uint64 // orders sent (placements, replacements, takes, flattening sells)
	Cancels   uint64 // orders cancelled
	Rejects   uint64 // placements the venue refused
	Fills     uint64 // fills of the wallet's orders
	Throttled uint64 // re-prices held back by the replace budget
}

// PositionStatus is one position in a Status.
type PositionStatus struct {
	Market market.ConditionID
	// Label names the market for people (market.Info.Label: its slug, else its
	// question, else the condition id); Outcome says which side (YES or NO).
	Label      string
	Token      market.TokenID
	Outcome    market.Outcome
	Size       market.Micros
	AvgPrice   market.Micros
	Mark       market.Micros
	Realized   market.Micros
	Unrealized market.Micros
	Fees       market.Micros
}

// Status is a snapshot of the agent, safe to keep and to read from any goroutine.
// Amounts are exact micro-units. PnL is equity minus the equity of the agent's very
// first start (with this state directory).
type Status struct {
	Agent  market.AgentID
	Wallet market.Address
	DryRun bool
	State  RunState
	Reason string // why the agent is killed, failed or paused
	// Halted reports a tripped kill switch (State is killed while the agent runs,
	// stopped after it stopped; Reason says why in both).
	Halted bool
	// Failed reports a strategy failure (Reason says which): no new orders, in
	// this run and the next ones, until an operator clears it.
	Failed     bool
	Runs       uint64 // starts with this state directory
	Time       int64  // event time of the last event applied (Unix ms)
	Balance    market.Micros
	Reserved   market.Micros
	Equity     market.Micros
	PnL        market.Micros
	Realized   market.Micros
	Unrealized market.Micros
	Fees       market.Micros
	Positions  []PositionStatus
	OpenOrders int
	Counts     Counts
	// Books are the tops of the YES books of the agent's markets (by condition id);
	// Orders its open orders in placement order (at most MaxStatusOrders; OpenOrders
	// counts all); Limits its guards' limits and their use, when its Guards report
	// them (LimitReporter). What `pitboss status` prints.
	Books  []BookTop
	Orders []OpenOrder
	Limits []LimitUse
}

// MaxStatusOrders bounds Status.Orders.
const MaxStatusOrders = 50

// BookTop is the top of one token's book; Bid and Ask are 0 on an empty side, Mid
// and Spread 0 unless both sides are set.
type BookTop struct {
	Market  market.ConditionID
	Label   string
	Token   market.TokenID
	Outcome market.Outcome
	Bid     market.Micros
	Ask     market.Micros
	Mid     market.Micros
	Spread  market.Micros
}

// OpenOrder is one open order of the agent. Placed is the event time (Unix ms) of
// the decision that placed it; Mid the mid of its token's book (0 without one) and
// Distance how far the price is from it away from the market (buy: mid − price,
// sell: price − mid; negative means through the mid), 0 without a mid.
type OpenOrder struct {
	ID       market.OrderID
	Key      string
	Market   market.ConditionID
	Label    string
	Token    market.TokenID
	Outcome  market.Outcome
	Side     market.Side
	Price    market.Micros
	Size     market.Micros
	Matched  market.Micros
	Placed   int64
	Mid      market.Micros
	Distance market.Micros
}

// LimitUse is one limit of the agent's guards and how much of it is used, in its
// unit ("shares", "USDC", "orders"; counts are whole numbers in micro-units).
type LimitUse struct {
	Guard string
	Unit  string
	Used  market.Micros
	Limit market.Micros
}

// LimitReporter is implemented by Guards that report the use of their limits
// (runtime/wire's Guards over policies.Chain). The agent calls it from its loop when
// it builds a status.
type LimitReporter interface {
	Limits(st *market.State) []LimitUse
}

// Status returns the last published snapshot (the loop publishes every
// StatusInterval, on control requests and when it stops).
func (a *Agent) Status() Status {
	s := *a.status.Load()
	s.Positions = slices.Clone(s.Positions)
	s.Books, s.Orders, s.Limits = slices.Clone(s.Books), slices.Clone(s.Orders), slices.Clone(s.Limits)
	return s
}

// setState publishes a new run state (and reason) without rebuilding the rest.
func (a *Agent) setState(st RunState, reason string) {
	old := a.status.Load()
	n := *old
	n.State = st
	switch st {
	case StateKilled:
		n.Reason = a.killReason()
	case StateFailed:
		if reason == "" {
			reason = a.failed
		}
		n.Reason = reason
	case StateRunning, StateStopping:
		n.Reason = ""
	default:
		if reason != "" {
			n.Reason = reason
		}
	}
	a.status.Store(&n)
}

func (a *Agent) killReason() string {
	if r := a.guards.KillReason(); r != "" {
		return r
	}
	return "kill switch tripped"
}

// sortedPositions returns the positions ordered by token id.
func (a *Agent) sortedPositions() []*market.Position {
	ps := make([]*market.Position, 0, len(a.st.Positions))
	for _, p := range a.st.Positions {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(x, y *market.Position) int { return strings.Compare(string(x.Token), string(y.Token)) })
	return ps
}

// snapshot builds a complete Status from the loop's state.
func (a *Agent) snapshot() *Status {
	s := a.summary()
	s.Books = a.bookTops()
	s.Orders = a.openOrders()
	if lr, ok := a.guards.(LimitReporter); ok {
		s.Limits = lr.Limits(&a.st)
	}
	return s
}

// summary builds a Status from the loop's state without its details (Books,
// Orders, Limits): what the status line logs.
func (a *Agent) summary() *Status {
	st := a.runState()
	if a.stopping {
		st = StateStopping
	}
	s := &Status{Agent: a.cfg.ID, Wallet: a.cfg.Wallet, DryRun: a.cfg.DryRun, State: st, Runs: a.runs,
		Time: a.st.Time, Balance: a.st.Balance, Reserved: a.st.Reserved, Counts: a.counts}
	s.Halted = a.guards.Halted()
	s.Failed = a.failed != ""
	switch {
	case s.Halted:
		s.Reason = a.killReason()
	case a.failed != "":
		s.Reason = a.failed
	}
	s.Equity = a.st.Equity()
	s.PnL = s.Equity - a.startEquity
	for _, p := range a.sortedPositions() {
		if p.Size == 0 && p.Realized == 0 && p.Fees == 0 {
			continue
		}
		mark := a.st.Mark(p.Token)
		ps := PositionStatus{Market: p.Market, Label: a.marketLabel(p.Market), Token: p.Token, Outcome: p.Outcome, Size: p.Size,
			AvgPrice: p.AvgPrice(), Mark: mark, Realized: p.Realized, Fees: p.Fees}
		if p.Size > 0 {
			ps.Unrealized = p.Unrealized(mark)
		}
		s.Realized += ps.Realized
		s.Unrealized += ps.Unrealized
		s.Fees += ps.Fees
		s.Positions = append(s.Positions, ps)
	}
	for _, o := range a.st.Orders {
		if !o.Status.Final() {
			s.OpenOrders++
		}
	}
	return s
}

// bookTops returns the top of the YES book of every market the agent knows, by
// condition id.
func (a *Agent) bookTops() []BookTop {
	ids := make([]market.ConditionID, 0, len(a.st.Markets))
	for id := range a.st.Markets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]BookTop, 0, len(ids))
	for _, id := range ids {
		m := a.st.Markets[id]
		t := BookTop{Market: id, Label: m.Label(), Token: m.Tokens[market.Yes], Outcome: market.Yes}
		if b := a.st.Books[t.Token]; b != nil {
			if l, ok := b.BestBid(); ok {
				t.Bid = l.Price
			}
			if l, ok := b.BestAsk(); ok {
				t.Ask = l.Price
			}
			t.Mid, _ = b.Mid()
			t.Spread, _ = b.Spread()
		}
		out = append(out, t)
	}
	return out
}

// openOrders returns the agent's open orders with an id, in placement order, at
// most MaxStatusOrders.
func (a *Agent) openOrders() []OpenOrder {
	var out []OpenOrder
	for _, r := range a.open {
		if !r.open() || r.id == "" || r.take {
			continue
		}
		if len(out) == MaxStatusOrders {
			break
		}
		q := &r.req
		o := OpenOrder{ID: r.id, Key: r.key, Market: q.Market, Label: a.marketLabel(q.Market), Token: q.Token, Outcome: q.Outcome,
			Side: q.Side, Price: q.Price, Size: q.Size, Matched: r.matched, Placed: q.Time}
		if b := a.st.Books[q.Token]; b != nil {
			if mid, ok := b.Mid(); ok {
				o.Mid = mid
				if q.Side == market.Buy {
					o.Distance = mid - q.Price
				} else {
					o.Distance = q.Price - mid
				}
			}
		}
		out = append(out, o)
	}
	return out
}

// publishStatus publishes a fresh snapshot and hands it to the metrics.
func (a *Agent) publishStatus() {
	s := a.snapshot()
	a.storeStatus(s)
	a.metrics.Status(s)
}

// storeStatus publishes s (keeping the stopped state once it is set).
func (a *Agent) storeStatus(s *Status) {
	if old := a.status.Load(); old.State == StateStopped {
		s.State = StateStopped
	}
	a.status.Store(s)
}

// statusDuty is the status duty of every StatusInterval: publish a snapshot and
// consider the status line. With Config.StatusAfterRun and no metrics, nothing
// reads a snapshot but the status line, so none is built unless the logger writes
// it, and then only the line's part (summary).
func (a *Agent) statusDuty() {
	switch {
	case !a.cfg.StatusAfterRun || !a.nopMetrics:
		a.publishStatus()
	case a.log.Core().Enabled(zap.InfoLevel):
		a.storeStatus(a.summary())
	default:
		return
	}
	a.logStatus("status")
}

// logStatus writes the position and PnL line. A "status" line is left out while
// nothing but marks changed since the last one, for up to StatusQuiet of event
// time; "final" is always written.
func (a *Agent) logStatus(msg string) {
	ce := a.log.Check(zap.InfoLevel, msg)
	if ce == nil {
		return
	}
	s := a.status.Load()
	sig := statusSig{state: s.State, halted: s.Halted, fills: s.Counts.Fills}
	for _, p := range s.Positions {
		sig.positions += p.Size.String() + ","
	}
	if msg == "status" && a.cfg.StatusQuiet > 0 && a.loggedAt > 0 && sig == a.logged &&
		s.Time-a.loggedAt < a.cfg.StatusQuiet.Milliseconds() {
		return
	}
	a.logged, a.loggedAt = sig, s.Time
	ce.Write(zap.Int64("t", s.Time), zap.String("state", string(s.State)), zap.Stringer("equity", s.Equity),
		zap.Stringer("pnl", s.PnL), zap.Stringer("realized", s.Realized), zap.Stringer("unrealized", s.Unrealized),
		zap.Stringer("fees", s.Fees), zap.Stringer("balance", s.Balance), zap.Array("positions", heldPositions(s.Positions)),
		zap.Int("open_orders", s.OpenOrders), zap.Uint64("orders", s.Counts.Orders), zap.Uint64("fills", s.Counts.Fills),
		zap.Uint64("denials", s.Counts.Denials))
}

// statusSig is what makes a status line worth writing when it changes: the state
// and what the agent holds (orders have their own lines; marks move all the time).
type statusSig struct {
	state     RunState
	halted    bool
	fills     uint64
	positions string
}

// heldPositions logs the positions held (size > 0) as structured objects: the
// market's label, the outcome, size, average price and mark, and the ids.
type heldPositions []PositionStatus

// MarshalLogArray implements zapcore.ArrayMarshaler.
func (ps heldPositions) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for i := range ps {
		if ps[i].Size == 0 {
			continue
		}
		if err := enc.AppendObject(&ps[i]); err != nil {
			return err
		}
	}
	return nil
}

// MarshalLogObject implements zapcore.ObjectMarshaler: amounts as exact decimal
// strings.
func (p *PositionStatus) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("market", p.Label)
	enc.AddString("outcome", p.Outcome.String())
	enc.AddString("size", p.Size.String())
	enc.AddString("avg_price", p.AvgPrice.String())
	enc.AddString("mark", p.Mark.String())
	enc.AddString("condition", string(p.Market))
	enc.AddString("token", string(p.Token))
	return nil
}

// tokenLabel names a token for people: its market's label and YES or NO
// (market.Info.TokenLabel), or the token id when the agent does not know it.
func (a *Agent) tokenLabel(t market.TokenID) string {
	if m, o, ok := a.st.MarketOf(t); ok {
		return m.TokenLabel(o)
	}
	return string(t)
}

// marketLabel names market m for people (market.Info.Label), or is its id when the
// agent does not know it.
func (a *Agent) marketLabel(m market.ConditionID) string {
	if info := a.st.Markets[m]; info != nil {
		return info.Label()
	}
	return string(m)
}

// checkpoint builds the checkpoint of this instant.
func (a *Agent) checkpoint() *Checkpoint {
	a.prune()
	c := &Checkpoint{Version: CheckpointVersion, Agent: a.cfg.ID, Identity: a.cfg.Identity, Wallet: a.cfg.Wallet, Runs: a.runs, Time: a.st.Time,
		StartEquity: Amount(a.startEquity), Paused: a.paused, Failed: a.failed}
	if k, err := a.guards.KillState(); err == nil {
		c.Kill = k
	} else {
		a.log.Error("kill switch state not saved", zap.Error(err))
	}
	for _, p := range a.sortedPositions() {
		c.Positions = append(c.Positions, checkpointPosition(p))
	}
	for _, r := range a.open {
		if !r.open() || r.id == "" {
			continue
		}
		c.Orders = append(c.Orders, CheckpointOrder{ID: r.id, Client: r.client, Key: r.key, Market: r.req.Market,
			Token: r.req.Token, Outcome: r.req.Outcome, Side: r.req.Side, Price: Amount(r.req.Price),
			Size: Amount(r.req.Size), Matched: Amount(r.matched), Type: r.req.Type, PostOnly: r.req.PostOnly,
			Expiration: r.req.Expiration, InFlight: r.phase == phPlacing || r.phase == phLookup})
	}
	if p, ok := a.venue.(Persistent); ok {
		if b, err := p.Snapshot(); err == nil {
			c.Venue = b
		} else {
			a.log.Error("venue state not saved", zap.Error(err))
		}
	}
	return c
}

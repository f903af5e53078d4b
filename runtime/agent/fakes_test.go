package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// Fixtures: one binary market with a 0.01 tick.
const (
	cond market.ConditionID = "0x00000000000000000000000000000000000000000000000000000000000000c1"
	yes  market.TokenID     = "101"
	no   market.TokenID     = "102"
)

var wallet = market.Address{0xaa}

func info() market.Info {
	return market.Info{Condition: cond, Tokens: [2]market.TokenID{yes, no}, TickSize: 10_000, MinSize: 5 * market.One,
		Active: true, AcceptingOrders: true, Slug: "m"}
}

func mic(s string) market.Micros {
	m, err := market.ParseMicros(s)
	if err != nil {
		panic(err)
	}
	return m
}

// book returns a YES book event at time t (ms) with one bid and one ask level.
func book(t int64, bid, ask string) market.Event {
	return market.Event{Kind: market.EventBook, Time: t, Market: cond, Token: yes,
		Bids: []market.Level{{Price: mic(bid), Size: 100 * market.One}},
		Asks: []market.Level{{Price: mic(ask), Size: 100 * market.One}}}
}

// scriptFeed emits its events, then (when hold is false) ends; with hold it waits
// for ctx.
type scriptFeed struct {
	events []market.Event
	hold   bool
	more   chan market.Event
}

func (f *scriptFeed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	for i := range f.events {
		if !emit(&f.events[i]) {
			return nil
		}
	}
	if f.more != nil {
		for {
			select {
			case ev := <-f.more:
				if !emit(&ev) {
					return nil
				}
			case <-ctx.Done():
				return nil
			}
		}
	}
	if f.hold {
		<-ctx.Done()
	}
	return nil
}

// fakeVenue is an in-memory venue that records every call. Its knobs make
// submissions fail in chosen ways.
type fakeVenue struct {
	mu        sync.Mutex
	sync      bool
	orders    map[market.OrderID]market.Order // accepted, any status
	calls     []string
	submits   []market.OrderID
	cancels   []market.OrderID
	balance   market.Micros
	positions []market.Position
	basis     map[market.TokenID]agent.Basis
	// submitFail, when set, is consulted on each Submit: accept reports whether the
	// venue takes the order anyway; err is returned to the agent.
	submitFail func(n int, id market.OrderID) (accept bool, err error)
	beats      int
	reject     error // returned by every Submit when set
}

func newFakeVenue() *fakeVenue {
	return &fakeVenue{orders: map[market.OrderID]market.Order{}, balance: 1000 * market.One}
}

func (v *fakeVenue) Synchronous() bool { return v.sync }

func (v *fakeVenue) record(s string) {
	v.mu.Lock()
	v.calls = append(v.calls, s)
	v.mu.Unlock()
}

func (v *fakeVenue) Markets(_ context.Context, ids []market.ConditionID) ([]market.Info, error) {
	v.record("markets")
	out := []market.Info{}
	for _, id := range ids {
		if id != cond {
			return nil, market.ErrMarketNotFound
		}
		out = append(out, info())
	}
	return out, nil
}

func (v *fakeVenue) Account(context.Context) (agent.Account, error) {
	v.record("account")
	v.mu.Lock()
	defer v.mu.Unlock()
	return agent.Account{Address: wallet, Balance: v.balance, Positions: append([]market.Position(nil), v.positions...), Basis: v.basis}, nil
}

func (v *fakeVenue) OpenOrders(context.Context) ([]market.Order, error) {
	v.record("open_orders")
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []market.Order
	for _, o := range v.orders {
		if o.Status == market.StatusLive {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (v *fakeVenue) Order(_ context.Context, id market.OrderID) (market.Order, error) {
	v.record("order")
	v.mu.Lock()
	defer v.mu.Unlock()
	if o, ok := v.orders[id]; ok {
		return o, nil
	}
	return market.Order{}, market.ErrUnknownOrder
}

func (v *fakeVenue) Prepare(_ context.Context, req agent.OrderRequest) (agent.PreparedOrder, error) {
	return agent.PreparedOrder{ID: agent.DeriveOrderID(wallet, req.ClientID), Request: req}, nil
}

func (v *fakeVenue) Submit(_ context.Context, p *agent.PreparedOrder) (market.Order, error) {
	v.record("submit")
	v.mu.Lock()
	defer v.mu.Unlock()
	v.submits = append(v.submits, p.ID)
	if v.reject != nil {
		return market.Order{}, v.reject
	}
	if _, dup := v.orders[p.ID]; dup {
		return market.Order{}, market.Errorf(market.CodeDuplicated, string(p.ID))
	}
	q := p.Request
	o := market.Order{ID: p.ID, Owner: wallet, Market: q.Market, Token: q.Token, Outcome: q.Outcome, Side: q.Side,
		Price: q.Price, Size: q.Size, Type: q.Type, PostOnly: q.PostOnly, Expiration: q.Expiration, Status: market.StatusLive}
	if !q.Type.Rests() {
		o.Matched, o.Status = q.Size, market.StatusMatched
	}
	if v.submitFail != nil {
		accept, err := v.submitFail(len(v.submits), p.ID)
		if accept {
			v.orders[p.ID] = o
		}
		if err != nil {
			return market.Order{}, err
		}
	}
	v.orders[p.ID] = o
	return o, nil
}

func (v *fakeVenue) Cancel(_ context.Context, id market.OrderID) error {
	v.record("cancel")
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cancels = append(v.cancels, id)
	o, ok := v.orders[id]
	if !ok || o.Status != market.StatusLive {
		return market.ErrUnknownOrder
	}
	o.Status = market.StatusCanceled
	v.orders[id] = o
	return nil
}

func (v *fakeVenue) CancelAll(_ context.Context, m market.ConditionID) error {
	v.record("cancel_all")
	v.mu.Lock()
	defer v.mu.Unlock()
	for id, o := range v.orders {
		if o.Status == market.StatusLive && (m == "" || o.Market == m) {
			o.Status = market.StatusCanceled
			v.orders[id] = o
		}
	}
	return nil
}

func (v *fakeVenue) Heartbeat(context.Context) error {
	v.mu.Lock()
	v.beats++
	v.mu.Unlock()
	return nil
}

// live returns the venue's live orders.
func (v *fakeVenue) live() []market.Order {
	o, _ := v.OpenOrders(context.Background())
	return o
}

func (v *fakeVenue) submitCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.submits)
}

// funcDecider adapts a function.
type funcDecider func(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error)

func (f funcDecider) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	return f(ev, st, out)
}

// bidQuoter quotes one bid one tick under the best bid of each YES book it sees.
func bidQuoter(size string) funcDecider {
	return func(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
		b := st.Books[yes]
		if b == nil {
			return out, nil
		}
		l, ok := b.BestBid()
		if !ok {
			return out, nil
		}
		return append(out, market.Intent{Kind: market.IntentQuote, Key: "m/bid", Market: cond, Token: yes,
			Outcome: market.Yes, Side: market.Buy, Price: l.Price - 10_000, Size: mic(size), Type: market.GTC}), nil
	}
}

// fakeGuards allows everything unless told otherwise.
type fakeGuards struct {
	mu       sync.Mutex
	deny     map[market.IntentKind]string // guard name denying this kind
	rate     bool                         // deny every opening intent by the rate guard
	halted   bool
	reason   string
	tripOn   func(st *market.State) bool // trips on Observe when true
	flatten  bool
	checks   int
	recorded int
	restored []byte
	encoded  int // KillState calls (checkpoints built)
}

func (g *fakeGuards) Observe(st *market.State) agent.Action {
	if g.tripOn != nil && !g.halted && g.tripOn(st) {
		return g.Trip(st.Time, "test trip")
	}
	return agent.Action{}
}
func (g *fakeGuards) Begin(*market.State) agent.Action { return agent.Action{} }
func (g *fakeGuards) Check(it *market.Intent, _ market.OrderID) agent.Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checks++
	if g.halted && it.Kind.Opens() {
		return agent.Verdict{Guard: "kill_switch", Reason: "halted", Err: errors.New("halted")}
	}
	if g.rate && it.Kind.Opens() {
		return agent.Verdict{Guard: "max_orders_per_minute", Reason: "rate", RateLimited: true, Err: errors.New("rate")}
	}
	if name, ok := g.deny[it.Kind]; ok {
		return agent.Verdict{Guard: name, Reason: "denied in test", Err: errors.New("denied")}
	}
	return agent.Verdict{Allowed: true}
}
func (g *fakeGuards) RecordOrder(int64) { g.recorded++ }
func (g *fakeGuards) Trip(_ int64, reason string) agent.Action {
	g.halted, g.reason = true, reason
	return agent.Action{CancelAll: true, Flatten: g.flatten, Halt: true, Reason: reason}
}
func (g *fakeGuards) Resume(*market.State, string) bool {
	was := g.halted
	g.halted, g.reason = false, ""
	return was
}
func (g *fakeGuards) Halted() bool       { return g.halted }
func (g *fakeGuards) KillReason() string { return g.reason }
func (g *fakeGuards) KillState() ([]byte, error) {
	g.encoded++
	if g.halted {
		return []byte(`{"tripped":true,"reason":"` + g.reason + `"}`), nil
	}
	return []byte(`{"tripped":false}`), nil
}
func (g *fakeGuards) RestoreKill(b []byte) error {
	g.restored = b
	if string(b) != "" && string(b) != `{"tripped":false}` {
		g.halted, g.reason = true, "restored"
	}
	return nil
}

// auditLog collects audit records.
type auditLog struct {
	mu   sync.Mutex
	recs []agent.AuditRecord
}

func (l *auditLog) Audit(r *agent.AuditRecord) {
	l.mu.Lock()
	l.recs = append(l.recs, *r)
	l.mu.Unlock()
}

func (l *auditLog) kinds() map[agent.AuditKind]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[agent.AuditKind]int{}
	for _, r := range l.recs {
		out[r.Kind]++
	}
	return out
}

// run starts a and returns a function that stops it and returns Run's error.
func run(t *testing.T, a *agent.Agent) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("agent did not stop")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func baseConfig() agent.Config {
	return agent.Config{ID: "t1", Wallet: wallet, Markets: []market.ConditionID{cond}, Heartbeat: -1,
		TimerInterval: -1, RequestTimeout: 2 * time.Second, ShutdownTimeout: 5 * time.Second}
}

func statMode(dir string) (os.FileMode, error) {
	fi, err := os.Stat(filepath.Join(dir, agent.CheckpointFile))
	if err != nil {
		return 0, err
	}
	return fi.Mode().Perm(), nil
}

// fresh asks the running agent for a status built now.
func fresh(a *agent.Agent) agent.Status {
	a.Control(context.Background(), agent.ControlRequest{Op: agent.OpStatus})
	return a.Status()
}

package embedded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// DefaultHeartbeatTimeout is how long (event time) the embedded venue waits for a
// heartbeat before it cancels a wallet's open orders, as the service does.
const DefaultHeartbeatTimeout = 10 * time.Second

// Config configures an Exchange. The zero value runs as fast as possible from the
// wall clock's current time.
type Config struct {
	// Start is the event time (Unix ms) the market starts at. If zero, the wall
	// clock's time when New runs.
	Start int64
	// Paced makes event time follow the wall clock (Speed times as fast): what a
	// person watching a dry run wants. If false, the flow runs as fast as the
	// agent consumes it, and event time depends only on the flow (deterministic).
	Paced bool
	// Speed multiplies the pace of a Paced exchange. If zero, 1.
	Speed int
	// End stops the feed once event time reaches it (Unix ms). If zero, never.
	End int64
	// HeartbeatTimeout cancels the open orders of a wallet that started sending
	// heartbeats and stopped for this long (event time). If zero,
	// DefaultHeartbeatTimeout (10s).
	HeartbeatTimeout time.Duration
	// Now is the wall clock used for pacing. If nil, time.Now.
	Now func() time.Time
	// Prices are the underlyings whose synthetic prices (sandbox/sim.Prices,
	// seeded with PriceSeed) the feed delivers as EventFeed events, one per
	// symbol every sim.PriceStep of event time from Start. If empty, none.
	Prices    []market.FeedSymbol
	PriceSeed uint64
	// UpDown lists rolling up/down markets of sim.DefaultUpDownSymbol (BTC) with
	// windows of this length from Start and resolves each at its end from the same
	// price process (sim.UpDown, seeded with PriceSeed): window 0 is listed by New,
	// after the flow's markets. If zero, none.
	UpDown time.Duration
}

// Exchange is an in-process exchange: a sandbox/exchange.Engine with a Flow of other
// participants and a clock. It serves one agent: a Feed of its markets and its
// wallet's orders, and a Venue that places that wallet's orders in the same engine.
// It is safe for concurrent use: one mutex serializes the engine; the Feed's Run
// drives the flow.
type Exchange struct {
	cfg  Config
	flow Flow

	mu        sync.Mutex
	eng       *exchange.Engine
	tokens    map[market.TokenID]tokenInfo
	hb        map[market.Address]int64 // wallets that sent heartbeats: engine time of the last one
	sub       *subscription
	wallStart time.Time
	notify    chan struct{}
	cmds      []exchange.Command
	prices    *sim.Prices // nil without Config.Prices
	priceEvs  []market.Event
	updown    *sim.UpDown // nil without Config.UpDown
}

type tokenInfo struct {
	market  market.ConditionID
	outcome market.Outcome
	other   market.TokenID
	feeBps  uint32
}

// New creates the engine, applies the flow's setup at cfg.Start and returns the
// exchange.
func New(cfg Config, flow Flow) (*Exchange, error) {
	if flow == nil {
		return nil, errors.New("embedded: no flow")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if cfg.Start == 0 {
		cfg.Start = cfg.Now().UnixMilli()
	}
	x := &Exchange{cfg: cfg, flow: flow, eng: exchange.New(exchange.Config{ForgetFinal: false}),
		tokens: map[market.TokenID]tokenInfo{}, hb: map[market.Address]int64{}, notify: make(chan struct{}, 1),
		wallStart: cfg.Now()}
	if len(cfg.Prices) > 0 {
		x.prices = sim.NewPrices(cfg.PriceSeed, cfg.Start, cfg.Prices)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.eng.Apply(&exchange.Command{Kind: exchange.AdvanceTime, Time: cfg.Start})
	for _, c := range flow.Setup(cfg.Start) {
		if _, err := x.apply(&c); err != nil {
			return nil, fmt.Errorf("embedded: flow setup: %s: %w", c.Kind, err)
		}
	}
	if cfg.UpDown != 0 {
		u, err := sim.NewUpDown(cfg.PriceSeed, cfg.Start, sim.DefaultUpDownSymbol, cfg.UpDown)
		if err != nil {
			return nil, fmt.Errorf("embedded: %w", err)
		}
		x.updown = u
		x.stepUpDown(u.Next())
	}
	return x, nil
}

// now returns the event time for a command arriving now: the wall clock mapped to
// event time when paced, else the engine's clock.
func (x *Exchange) now() int64 {
	t := x.eng.Time()
	if x.cfg.Paced {
		el := x.cfg.Now().Sub(x.wallStart).Milliseconds() * int64(x.cfg.Speed)
		t = max(t, x.cfg.Start+el)
	}
	return t
}

// apply runs one command (the lock held) and hands its events to the subscriber.
func (x *Exchange) apply(c *exchange.Command) ([]exchange.Event, error) {
	evs, err := x.eng.Apply(c)
	x.record(evs)
	return evs, err
}

// record learns the markets from one command's events and hands them to the
// subscriber (the lock held).
func (x *Exchange) record(evs []exchange.Event) {
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case exchange.MarketCreated, exchange.MarketUpdated:
			x.tokens[e.Token] = tokenInfo{market: e.Market, outcome: market.Yes, other: e.Other, feeBps: e.FeeBps}
			x.tokens[e.Other] = tokenInfo{market: e.Market, outcome: market.No, other: e.Token, feeBps: e.FeeBps}
		}
	}
	if x.sub != nil {
		x.sub.convert(x, evs)
	}
}

// Fund deposits amount of collateral for wallet a (the live embedded venue's
// starting balance).
func (x *Exchange) Fund(a market.Address, amount market.Micros) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, err := x.apply(&exchange.Command{Kind: exchange.Deposit, Time: x.now(), Owner: a, Amount: amount})
	return err
}

// Markets returns the metadata of the given markets, or of every market (in listing
// order) when ids is empty. An unknown id is an error wrapping
// market.ErrMarketNotFound. It is the paper venue's market source in dry run.
func (x *Exchange) Markets(_ context.Context, ids []market.ConditionID) ([]market.Info, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(ids) == 0 {
		return x.eng.Markets(nil), nil
	}
	out := make([]market.Info, 0, len(ids))
	for _, id := range ids {
		info, ok := x.eng.Market(id)
		if !ok {
			return nil, fmt.Errorf("embedded: %w: %s", market.ErrMarketNotFound, id)
		}
		out = append(out, info)
	}
	return out, nil
}

// TokenMarket returns the market token t belongs to.
func (x *Exchange) TokenMarket(t market.TokenID) (market.ConditionID, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	c, _, ok := x.eng.TokenMarket(t)
	return c, ok
}

// Time returns the exchange's event time (Unix ms).
func (x *Exchange) Time() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.now()
}

// SetEnd sets Config.End: the feed ends once event time reaches end (Unix ms; 0:
// never).
func (x *Exchange) SetEnd(end int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.cfg.End = end
}

// Read calls f with the engine, under the lock, for views (tests, summaries). f must
// not keep the engine nor call Apply.
func (x *Exchange) Read(f func(eng *exchange.Engine)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	f(x.eng)
}

// maxActionsPerStep bounds the flow's actions applied in one step (the feed delivers
// their events before the next step).
const maxActionsPerStep = 256

// step applies the flow's actions due at t and checks heartbeats (the lock held).
func (x *Exchange) step(t int64) error {
	for a, last := range x.hb {
		if t-last > x.cfg.HeartbeatTimeout.Milliseconds() {
			delete(x.hb, a)
			x.apply(&exchange.Command{Kind: exchange.CancelAll, Time: t, Owner: a})
		}
	}
	for x.prices != nil && x.prices.Next() <= t {
		x.priceEvs = x.prices.Step(x.priceEvs[:0])
		if x.sub != nil {
			for i := range x.priceEvs {
				x.sub.push(&x.priceEvs[i])
			}
		}
	}
	x.stepUpDown(t)
	n := x.eng.Seq()
	for range maxActionsPerStep {
		due := x.flow.Next()
		if due > t {
			break
		}
		x.cmds = x.flow.Step(t, x.eng, x.cmds[:0])
		for i := range x.cmds {
			// A participant's order refused (balance, a crossing post-only, ...) is
			// part of the market's life, not a failure: the flow reads the state
			// again at each action.
			x.apply(&x.cmds[i])
		}
		if len(x.cmds) == 0 && x.flow.Next() == due {
			break // nothing happened and nothing moved: do not spin
		}
	}
	if x.eng.Seq() == n && t > x.eng.Time() {
		x.apply(&exchange.Command{Kind: exchange.AdvanceTime, Time: t})
	}
	return nil
}

// stepUpDown performs the up/down boundaries due by t, before the flow acts at t
// (the lock held).
func (x *Exchange) stepUpDown(t int64) {
	for x.updown != nil && x.updown.Next() <= t {
		x.cmds = x.updown.Step(x.eng, x.cmds[:0])
		for i := range x.cmds {
			x.apply(&x.cmds[i]) // a listing or resolution the engine refuses has nothing to undo
		}
	}
}

// next returns the event time of the next thing due: the flow's action, a price,
// an up/down boundary (the lock held).
func (x *Exchange) next() int64 {
	next := x.flow.Next()
	if x.prices != nil {
		next = min(next, x.prices.Next())
	}
	if x.updown != nil {
		next = min(next, x.updown.Next())
	}
	return next
}

// poke wakes the feed after a venue call produced events.
func (x *Exchange) poke() {
	select {
	case x.notify <- struct{}{}:
	default:
	}
}

// wallUntil returns how long to wait on the wall clock until event time t.
func (x *Exchange) wallUntil(t int64) time.Duration {
	if t == math.MaxInt64 {
		return time.Hour
	}
	target := x.wallStart.Add(time.Duration((t-x.cfg.Start)/int64(x.cfg.Speed)) * time.Millisecond)
	return target.Sub(x.cfg.Now())
}

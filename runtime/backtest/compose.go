package backtest

import (
	"context"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
	"github.com/pitbossdev/pitboss/runtime/wire"
	"github.com/pitbossdev/pitboss/strategy"
)

// parts are the pieces of one backtest's agent, composed as a dry run composes
// them (runtime/wire): the strategy bound to the agent file's markets, the guard
// chain, the paper venue.
type parts struct {
	cfg      *Config
	strategy *strategy.Strategy
	decider  agent.Decider
	guards   *wire.Guards
	venue    *paper.Venue
	wallet   market.Address
	infos    []market.Info // the bound markets' metadata, in binding order
	conds    []market.ConditionID
	audit    agent.AuditSink // the report's, if set
}

// catalog is the data's markets as the paper venue's market source, with the fee
// override applied.
type catalog []market.Info

// Markets implements paper.MarketSource.
func (c catalog) Markets(_ context.Context, ids []market.ConditionID) ([]market.Info, error) {
	out := make([]market.Info, 0, len(ids))
	for _, id := range ids {
		found := false
		for i := range c {
			if c[i].Condition == id {
				out = append(out, c[i])
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("backtest: market %s: %w", id, market.ErrMarketNotFound)
		}
	}
	return out, nil
}

func compose(cfg *Config) (*parts, error) {
	spec := cfg.Spec
	p := &parts{cfg: cfg}
	markets := catalog(cfg.Source.Markets())
	if cfg.FeeBps != nil {
		for i := range markets {
			markets[i].FeeBps = *cfg.FeeBps
		}
	}
	first, _ := spanOf(cfg.Source, cfg.From, cfg.To)
	binds, err := wire.BindMarkets(&spec.Markets, markets, first)
	if err != nil {
		return nil, fmt.Errorf("%s (markets of the recording): %w", spec.File, err)
	}
	st := cfg.Strategy
	if st == nil {
		if st, err = spec.LoadStrategy(); err != nil {
			return nil, err
		}
	}
	p.strategy = st
	inst, err := st.NewInstanceWith(binds, spec.Sources())
	if err != nil {
		return nil, err
	}
	p.decider = inst
	for _, b := range binds {
		p.conds = append(p.conds, b.Market)
		for _, m := range markets {
			if m.Condition == b.Market {
				p.infos = append(p.infos, m)
			}
		}
	}
	p.wallet = wire.PaperAddress(spec.Wallet)
	p.guards, err = wire.NewGuards(spec.Guards, append([]policies.Option{policies.WithAgent(spec.Name), policies.WithAddress(p.wallet),
		policies.WithGeoblock(policies.Geoblock{Status: policies.GeoAllowed, Country: "backtest"})}, wire.SignalGuard(spec)...)...)
	if err != nil {
		return nil, err
	}
	balance := cfg.Balance
	if balance == 0 {
		balance = wire.DefaultBalance
	}
	p.venue, err = paper.New(paper.Config{Address: p.wallet, Balance: balance, Latency: cfg.Latency}, markets)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// feedQueue is the agent's event queue in a backtest (agent.Config.QueueSize).
// The feed never waits for the network, so a deep queue buys nothing: the loop
// takes at most 64 events per wake-up, and a recording is read far faster than
// it is handled. Each slot is an Event (472 bytes) that grows its own change and
// level slices on first use, so the default 1024 slots cost every run about
// 480 KB and 1,800 allocations more than 256 do. The events, their order and
// every result are the same whatever the size (the queue only decides when the
// feed goroutine waits).
const feedQueue = 256

// agent builds the agent over feed, with the strategy behind d.
func (p *parts) agent(feed agent.Feed, d agent.Decider) (*agent.Agent, error) {
	id, err := market.ParseAgentID(p.cfg.Spec.Name)
	if err != nil {
		return nil, err
	}
	cfg := agent.Config{ID: id, Wallet: p.wallet, DryRun: true, Markets: p.conds, Heartbeat: p.cfg.Spec.Heartbeat,
		QueueSize: feedQueue, FullPasses: p.cfg.fullPasses, StatusAfterRun: true}
	// No Store: a backtest keeps no checkpoint, so the agent never snapshots the
	// paper account (agent.Persistent) either. StatusAfterRun: Run reads the
	// agent's Status once it has returned, and nothing reads it before (no
	// metrics): the agent builds no periodic snapshot beyond what the status line
	// of the log needs (a complete one cost 57 % of a run's allocations).
	return agent.New(cfg, agent.Deps{Venue: p.venue, Feed: feed, Decider: d, Guards: p.guards, Audit: p.audit,
		Logger: p.cfg.Logger, Clock: agent.EventClock})
}

// filter returns the filter of the bound markets, feeds and signals.
func (p *parts) filter() *marketFilter {
	f := &marketFilter{conds: map[market.ConditionID]bool{}, tokens: map[market.TokenID]bool{}, inputs: map[inputKey]bool{}}
	for _, m := range p.infos {
		f.conds[m.Condition] = true
		f.tokens[m.Tokens[market.Yes]], f.tokens[m.Tokens[market.No]] = true, true
	}
	if p.cfg != nil && p.cfg.Spec != nil {
		for _, b := range p.cfg.Spec.Feeds {
			f.inputs[inputKey{market.EventFeed, b.Symbol.String()}] = true
		}
		for _, b := range p.cfg.Spec.Signals {
			f.inputs[inputKey{market.EventSignal, b.Name}] = true
		}
	}
	return f
}

// inputKey names a feed (by symbol) or a signal (by name) of a recording.
type inputKey struct {
	kind market.EventKind
	name string
}

// marketFilter tells whether an event concerns one of the bound markets (by
// condition id, else by token). A method rather than a closure: the feed calls
// it directly for every event.
type marketFilter struct {
	conds  map[market.ConditionID]bool
	tokens map[market.TokenID]bool
	// Nearly every event names the market of the one before: its answer is kept
	// and reused while the name is the same (a string comparison, which the
	// decoder's interned names make a pointer comparison, instead of hashing 66
	// characters).
	last           market.ConditionID
	lastKeep, seen bool
	// inputs are the feeds and signals the agent file binds: a dry run
	// subscribes to those alone.
	inputs map[inputKey]bool
}

// keep reports whether ev concerns a bound market, feed or signal.
func (f *marketFilter) keep(ev *market.Event) bool {
	if ev.Kind == market.EventFeed || ev.Kind == market.EventSignal {
		return f.inputs[inputKey{ev.Kind, ev.Name}]
	}
	if ev.Market != "" {
		if !f.seen || ev.Market != f.last {
			f.last, f.lastKeep, f.seen = ev.Market, f.conds[ev.Market], true
		}
		return f.lastKeep
	}
	return f.tokens[ev.Token] || f.tokens[ev.Winner]
}

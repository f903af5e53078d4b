package sim

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// SyntheticMarkets returns n CreateMarket commands for test and backtest venues:
// binary markets with ids shaped like the service's (a 0x-prefixed 32-byte condition
// id, decimal uint256 token ids) derived from "pitboss/sim/v1/market" and the index,
// tick sizes cycling 0.01, 0.01, 0.001, 0.01, a minimum size of 5 shares, no fee on
// even indices and 100 bps on odd ones, tradable, ending 30 days after endFrom (Unix
// s; 0 for no end date). The commands have no Time.
func SyntheticMarkets(n int, endFrom int64) []exchange.Command {
	ticks := [...]market.Micros{10_000, 10_000, 1_000, 10_000}
	out := make([]exchange.Command, 0, n)
	for i := 0; i < n; i++ {
		h := hashTuple("pitboss/sim/v1/market", u64(uint64(i)))
		cond := market.ConditionID("0x" + hex.EncodeToString(h[:]))
		var toks [2]market.TokenID
		for o := range toks {
			th := hashTuple("pitboss/sim/v1/token", h[:], []byte{byte(o)})
			toks[o] = market.TokenID(new(big.Int).SetBytes(th[:]).String())
		}
		var end int64
		if endFrom > 0 {
			end = endFrom + 30*24*3600
		}
		fee := uint32(0)
		if i%2 == 1 {
			fee = 100
		}
		out = append(out, exchange.Command{Kind: exchange.CreateMarket, Market: cond, Spec: exchange.MarketSpec{
			Tokens: toks, Question: fmt.Sprintf("Synthetic market %d?", i+1), Slug: fmt.Sprintf("synthetic-market-%d", i+1),
			Outcomes: [2]string{"Yes", "No"}, EndDate: end, TickSize: ticks[i%len(ticks)], MinSize: 5 * market.One,
			FeeBps: fee, Active: true, AcceptingOrders: true,
		}})
	}
	return out
}

// Converter turns the exchange's events into the public market-data events an
// agent consumes (market.Event), the way the service's market channel reports them:
//
//   - MarketCreated: an empty EventBook for each token;
//   - BookChanged: one EventPriceChange per run of consecutive level changes of a
//     market, with each change given for both tokens (YES, then the mirrored NO);
//   - OrderFilled: an EventLastTrade per maker fill (so a queue model sees every
//     level a sweep went through), for the YES token and then the NO token, with
//     the taker's side in each token's terms;
//   - MarketUpdated with a new tick: an EventTickSize for each token;
//   - MarketResolved: an EventResolved with the winning token.
//
// Other events (orders, balances, rejections) are private and produce nothing. Seq
// numbers the output 1, 2, …; Time is the engine's.
//
// The Changes of returned events share the Converter's buffer: they are valid until
// the next call. A Converter is not safe for concurrent use; its zero value is ready.
type Converter struct {
	seq     uint64
	changes []market.LevelChange
	tokens  map[market.ConditionID][2]market.TokenID
}

// Learn tells the converter the tokens of a market created before it started
// listening (it learns the others from MarketCreated events), so that its trades
// are reported for both tokens.
func (c *Converter) Learn(info market.Info) {
	if c.tokens == nil {
		c.tokens = map[market.ConditionID][2]market.TokenID{}
	}
	c.tokens[info.Condition] = info.Tokens
}

// Snapshot appends an EventBook of each of the market's two tokens, read from v.
// The levels are freshly allocated (the snapshot is safe to keep).
func (c *Converter) Snapshot(dst []market.Event, v View, info market.Info) []market.Event {
	c.Learn(info)
	for _, tok := range info.Tokens {
		c.seq++
		dst = append(dst, market.Event{Kind: market.EventBook, Seq: c.seq, Time: v.Time(), Market: info.Condition, Token: tok,
			Bids: v.Levels(tok, market.Buy, nil, 0), Asks: v.Levels(tok, market.Sell, nil, 0)})
	}
	return dst
}

// Append appends to dst the market events for one command's exchange events.
func (c *Converter) Append(dst []market.Event, evs []exchange.Event) []market.Event {
	c.changes = c.changes[:0]
	for i := 0; i < len(evs); i++ {
		ev := &evs[i]
		switch ev.Kind {
		case exchange.MarketCreated:
			if c.tokens == nil {
				c.tokens = map[market.ConditionID][2]market.TokenID{}
			}
			c.tokens[ev.Market] = [2]market.TokenID{ev.Token, ev.Other}
			for _, tok := range [2]market.TokenID{ev.Token, ev.Other} {
				dst = c.emit(dst, market.Event{Kind: market.EventBook, Time: ev.Time, Market: ev.Market, Token: tok})
			}
		case exchange.MarketUpdated:
			if ev.OldTick != ev.Tick && ev.OldTick != 0 {
				for _, tok := range [2]market.TokenID{ev.Token, ev.Other} {
					dst = c.emit(dst, market.Event{Kind: market.EventTickSize, Time: ev.Time, Market: ev.Market, Token: tok,
						OldTick: ev.OldTick, NewTick: ev.Tick})
				}
			}
		case exchange.MarketResolved:
			dst = c.emit(dst, market.Event{Kind: market.EventResolved, Time: ev.Time, Market: ev.Market, Token: ev.Token, Winner: ev.Token})
		case exchange.OrderFilled:
			dst = c.fill(dst, ev)
		case exchange.BookChanged:
			start := len(c.changes)
			j := i
			for ; j < len(evs) && evs[j].Kind == exchange.BookChanged && evs[j].Market == ev.Market; j++ {
				yes, no, _ := evs[j].LevelChanges()
				c.changes = append(c.changes, yes, no)
			}
			last := &evs[j-1]
			dst = c.emit(dst, market.Event{Kind: market.EventPriceChange, Time: last.Time, Market: ev.Market, Token: ev.Token,
				Changes: c.changes[start:len(c.changes):len(c.changes)]})
			i = j - 1
		}
	}
	return dst
}

// fill reports a maker fill as a last-trade print for both tokens.
func (c *Converter) fill(dst []market.Event, ev *exchange.Event) []market.Event {
	toks, known := c.tokens[ev.Market]
	// YES-book price and taker side: a maker of NO at q rests at 1−q on the other
	// side of the YES book.
	yesPx, takerSide := ev.Price, ev.Side.Opposite()
	if known && ev.Token == toks[market.No] {
		yesPx, takerSide = market.One-ev.Price, ev.Side
	}
	if !known {
		// Unknown market: report in the maker's token only.
		return c.emit(dst, market.Event{Kind: market.EventLastTrade, Time: ev.Time, Market: ev.Market, Token: ev.Token,
			Price: ev.Price, Size: ev.Size, Side: ev.Side.Opposite()})
	}
	dst = c.emit(dst, market.Event{Kind: market.EventLastTrade, Time: ev.Time, Market: ev.Market, Token: toks[market.Yes],
		Price: yesPx, Size: ev.Size, Side: takerSide})
	return c.emit(dst, market.Event{Kind: market.EventLastTrade, Time: ev.Time, Market: ev.Market, Token: toks[market.No],
		Price: market.One - yesPx, Size: ev.Size, Side: takerSide.Opposite()})
}

func (c *Converter) emit(dst []market.Event, ev market.Event) []market.Event {
	c.seq++
	ev.Seq = c.seq
	return append(dst, ev)
}

// TapeConfig configures RunTape and Tape.
type TapeConfig struct {
	// Seed seeds the Sim.
	Seed uint64
	// Start is the Unix time (ms) of the tape's first event. If zero,
	// 1,700,000,000,000 (14 November 2023).
	Start int64
	// Duration is the simulated time covered. It must be positive.
	Duration time.Duration
	// Sim configures the Sim (its Start is set to the tape's).
	Sim Config
	// Markets are the CreateMarket commands applied at Start, before the sim
	// starts (their Time is set). If empty, SyntheticMarkets(4, Start/1000).
	Markets []exchange.Command
	// Engine configures the private engine. ForgetFinal is always set: sim order
	// ids are unique by construction.
	Engine exchange.Config
	// Raw, if set, sees every command applied to the private engine and its events
	// (valid during the call): the market creations, then the sim's commands.
	Raw func(c *exchange.Command, evs []exchange.Event)
	// CheckEvery, if positive, runs the engine's invariant check (exchange.Engine.
	// Check) after every CheckEvery commands and at the end; RunTape fails on a
	// violation. For tests: a check walks the whole state.
	CheckEvery int
}

// DefaultTapeStart is TapeConfig.Start's default.
const DefaultTapeStart = 1_700_000_000_000

// RunTape runs a Sim on a private engine for cfg.Duration of simulated time, as fast
// as it can, and calls fn with every public market event (see Converter; ev and its
// Changes are valid only during the call). The tape starts with an empty book
// snapshot of each token. It returns the run's Summary; fn's error or ctx's stops
// the run and is returned (ctx is checked every 4096 actions). The same
// configuration gives the same events, byte for byte.
func RunTape(ctx context.Context, cfg TapeConfig, fn func(ev *market.Event) error) (Summary, error) {
	if cfg.Duration <= 0 {
		return Summary{}, fmt.Errorf("%w: tape duration must be positive", ErrConfig)
	}
	if err := cfg.Sim.Validate(); err != nil {
		return Summary{}, err
	}
	start := cfg.Start
	if start == 0 {
		start = DefaultTapeStart
	}
	creates := cfg.Markets
	if len(creates) == 0 {
		creates = SyntheticMarkets(4, start/1000)
	}
	ecfg := cfg.Engine
	ecfg.ForgetFinal = true
	e := exchange.New(ecfg)

	var conv Converter
	var out []market.Event
	var ferr error
	applied := 0
	emit := func(c *exchange.Command, evs []exchange.Event) {
		if cfg.Raw != nil {
			cfg.Raw(c, evs)
		}
		applied++
		if ferr != nil {
			return
		}
		out = conv.Append(out[:0], evs)
		for i := range out {
			if ferr = fn(&out[i]); ferr != nil {
				return
			}
		}
		if cfg.CheckEvery > 0 && applied%cfg.CheckEvery == 0 {
			if err := e.Check(); err != nil {
				ferr = fmt.Errorf("sim: after command %d (%s): %w", applied, c.Kind, err)
			}
		}
	}
	for i := range creates {
		c := creates[i]
		c.Time = start
		evs, err := e.Apply(&c)
		if err != nil {
			return Summary{}, fmt.Errorf("sim: creating market %s: %w", c.Market, err)
		}
		emit(&c, evs)
	}
	if ferr != nil {
		return Summary{}, ferr
	}

	scfg := cfg.Sim
	scfg.Start = start
	s := New(scfg, cfg.Seed)
	end := start + cfg.Duration.Milliseconds()
	for ferr == nil {
		if err := ctx.Err(); err != nil {
			return s.Summary(), err
		}
		due, ok := s.Next()
		if !ok || due > end {
			break
		}
		_, more := s.advance(end, e, 4096, emit)
		if !more {
			break
		}
	}
	if ferr == nil && cfg.CheckEvery > 0 {
		ferr = e.Check()
	}
	return s.Summary(), ferr
}

// Tape is RunTape collecting the events: it returns them (safe to keep) with the
// Summary.
func Tape(ctx context.Context, cfg TapeConfig) ([]market.Event, Summary, error) {
	var evs []market.Event
	var changes []market.LevelChange
	sum, err := RunTape(ctx, cfg, func(ev *market.Event) error {
		cp := *ev
		if len(ev.Changes) > 0 {
			if cap(changes)-len(changes) < len(ev.Changes) {
				changes = make([]market.LevelChange, 0, max(4096, len(ev.Changes)))
			}
			n := len(changes)
			changes = append(changes, ev.Changes...)
			cp.Changes = changes[n:len(changes):len(changes)]
		}
		evs = append(evs, cp)
		return nil
	})
	return evs, sum, err
}

package sim

import (
	"hash/fnv"
	"math/rand/v2"
	"sync"

	"github.com/pitbossdev/pitboss/market"
)

// Prices is the synthetic price process of underlyings (docs/sim.md, "Underlying
// prices"): for each symbol a geometric random walk stepped every PriceStep of event
// time from a start price, with a normal-like step (the sum of 12 uniform draws)
// of standard deviation PriceVolPPM millionths of the price. Like the rest of the
// sim it is a pure function of its seed, symbols and the times it is stepped at, in
// integer arithmetic: the same seed gives the same prices on every platform, so the
// embedded venue, `pitboss exchange --sim` and a backtest of a recording agree.
//
// Prices is not safe for concurrent use.
type Prices struct {
	syms  []market.FeedSymbol
	px    []int64 // micro-units of the quote currency
	rng   []*rand.Rand
	vol   int64
	step  int64
	next  int64 // event time of the next step
	count uint64
}

// Parameters of the price process.
const (
	// PriceStep is the time between two prices of a symbol (ms).
	PriceStep int64 = 1000
	// PriceVolPPM is the standard deviation of one step, in millionths of the
	// price: 0.02 % a second, ≈ 1.2 % an hour, ≈ 5.9 % a day.
	PriceVolPPM int64 = 200
)

// StartPrice is the price a symbol starts at (micro-units): btc 100 000, eth 3 500,
// sol 200, xrp 2.5, doge 0.25 (by the symbol's first three letters), else 100.
func StartPrice(s market.FeedSymbol) int64 {
	sym := s.Symbol
	if len(sym) >= 3 {
		switch sym[:3] {
		case "btc":
			return 100_000 * int64(market.One)
		case "eth":
			return 3_500 * int64(market.One)
		case "sol":
			return 200 * int64(market.One)
		case "xrp":
			return 2_500_000
		case "dog":
			return 250_000
		}
	}
	return 100 * int64(market.One)
}

// NewPrices returns the process of syms, seeded with seed (each symbol's stream
// keyed by its name, so adding a symbol does not change another's prices), whose
// first prices are at start (rounded up to a multiple of PriceStep).
func NewPrices(seed uint64, start int64, syms []market.FeedSymbol) *Prices {
	p := &Prices{syms: append([]market.FeedSymbol(nil), syms...), vol: PriceVolPPM, step: PriceStep}
	p.next = (start + p.step - 1) / p.step * p.step
	for _, s := range syms {
		h := fnv.New64a()
		_, _ = h.Write([]byte(s.String()))
		p.rng = append(p.rng, rand.New(rand.NewPCG(seed, h.Sum64())))
		p.px = append(p.px, StartPrice(s))
	}
	return p
}

// Next returns the event time of the next prices (math.MaxInt64 without symbols).
func (p *Prices) Next() int64 {
	if len(p.syms) == 0 {
		return 1<<63 - 1
	}
	return p.next
}

// Step appends the events of the prices due at Next (one EventFeed per symbol,
// Name the symbol's String, Value the price) and moves to the next step. The
// first call gives the start prices.
func (p *Prices) Step(out []market.Event) []market.Event {
	t := p.next
	for i, s := range p.syms {
		if p.count > 0 {
			p.px[i] = p.walk(p.px[i], p.rng[i])
		}
		out = append(out, market.Event{Kind: market.EventFeed, Time: t, Name: s.String(), Value: float64(p.px[i]) / 1e6})
	}
	p.count++
	p.next += p.step
	return out
}

// walk is one step: px·(1 + vol·z), z ≈ N(0, 1) as (Σ of 12 uniform 16-bit draws −
// 6·2^16) / 2^16, in integers (the price divided first so nothing overflows). The
// price never falls below one micro-unit.
func (p *Prices) walk(px int64, r *rand.Rand) int64 {
	var z int64
	for range 12 {
		z += int64(r.Uint32() & 0xffff)
	}
	z -= 6 << 16
	d := (px >> 16) * p.vol * z / 1_000_000
	return max(px+d, 1)
}

// Price returns the current price of symbol s (micro-units) and whether the
// process has it.
func (p *Prices) Price(s market.FeedSymbol) (int64, bool) {
	for i, x := range p.syms {
		if x == s {
			return p.px[i], true
		}
	}
	return 0, false
}

// PriceService serves the price process of any symbol asked for, from one origin:
// the process of a symbol is NewPrices(seed, origin, [symbol]), created on first
// use and stepped forward as later times are asked for, so it gives every symbol
// the path the embedded venue gives it when its run starts at origin with the same
// seed (`pitboss exchange --sim` serves its /ws/rtds price topics from one). It
// keeps only each symbol's current state: times it has stepped past are not asked
// for again. It is safe for concurrent use.
type PriceService struct {
	seed   uint64
	origin int64

	mu    sync.Mutex
	procs map[market.FeedSymbol]*symbolPrices
}

type symbolPrices struct {
	p    *Prices
	last market.Event // the newest price stepped (Time 0: none yet)
	buf  []market.Event
}

// NewPriceService returns the service of seed whose prices start at origin (Unix
// ms, rounded up to a multiple of PriceStep).
func NewPriceService(seed uint64, origin int64) *PriceService {
	return &PriceService{seed: seed, origin: origin, procs: map[market.FeedSymbol]*symbolPrices{}}
}

// Origin returns the time the service's prices start at (Unix ms).
func (s *PriceService) Origin() int64 { return s.origin }

// Prices steps sym's process up to upTo (Unix ms) and appends to out its prices
// stamped after after (Unix ms), oldest first — or, when latest is set, only the
// newest price at or before upTo (none before the origin). Name is sym's String
// and Value the price, as the embedded venue's events.
func (s *PriceService) Prices(sym market.FeedSymbol, after, upTo int64, latest bool, out []market.Event) []market.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.procs[sym]
	if sp == nil {
		sp = &symbolPrices{p: NewPrices(s.seed, s.origin, []market.FeedSymbol{sym})}
		s.procs[sym] = sp
	}
	for sp.p.Next() <= upTo {
		sp.buf = sp.p.Step(sp.buf[:0])
		sp.last = sp.buf[0]
		if !latest && sp.last.Time > after {
			out = append(out, sp.last)
		}
	}
	if latest && sp.last.Time != 0 && sp.last.Time > after {
		out = append(out, sp.last)
	}
	return out
}

package report

import (
	"fmt"
	"math"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Defaults of Config.
const (
	DefaultResolution   = time.Second
	DefaultPoints       = 1000
	DefaultBrierHorizon = time.Hour
	// MaxEvents bounds Report.Events and MaxRoundTrips Report.RoundTrips (the
	// rest are counted in a note).
	MaxEvents     = 2000
	MaxRoundTrips = 100_000
	// horizonSamples bounds the forecasts a market keeps for its horizon score.
	horizonSamples = 512
	// MaxPeriods bounds the return series: a period that would give more is
	// refused by NewCollector.
	MaxPeriods = 1 << 20
)

// Config configures a Collector. The zero value is usable: equity sampled every
// second of event time and after each fill, returns over an automatic period,
// charts of at most 1000 points.
type Config struct {
	// From and To bound the run's event time (Unix ms), when known in advance;
	// they choose the automatic return period and are reported in Run.
	From, To int64
	// Resolution is the grid of event time on which equity is sampled (it is
	// also sampled after each of the run's fills and resolutions). If zero,
	// DefaultResolution (1s).
	Resolution time.Duration
	// ReturnPeriod is the period of the returns Sharpe and Sortino are computed
	// from. If zero: the longest of 1 day, 1 hour, 15 minutes, 1 minute and 1
	// second that gives at least 30 periods over [From, To] (1 hour when the span
	// is unknown).
	ReturnPeriod time.Duration
	// Points bounds the equity curve's points (it is halved, keeping every other
	// point, whenever it fills). If zero, DefaultPoints (1000).
	Points int
	// BrierHorizon is how long before a market's resolution the forecast scored
	// by Summary.Brier is taken. If zero, DefaultBrierHorizon (1 hour).
	BrierHorizon time.Duration
	// Forecaster, if set, is asked for the strategy's probability of YES of each
	// open market at every sample (on the one-second grid): the time-averaged and
	// horizon Brier scores and the price chart's fair value come from it.
	Forecaster Forecaster
}

// Forecaster is implemented by strategies that declare a probability of YES for
// their markets (strategy.Instance: the strategy's value named "fair"). It is read
// on the run's loop only.
type Forecaster interface {
	Forecast(m market.ConditionID) (p float64, ok bool)
}

// Collector gathers a run's results as it happens and builds the Report. The run's
// loop calls Begin once, Fill for each of its fills, Event after each event it
// applied, Forecast when the strategy declares a probability, and Finish at the end.
// It reads the agent's market.State only during those calls and keeps no reference
// to it.
//
// A Collector is not safe for concurrent use: the loop that owns the State owns it.
// The hot path (Event on an event between grid points) is one comparison.
type Collector struct {
	cfg    Config
	res    int64 // ms
	period int64 // ms

	started     bool
	startTime   int64
	startEquity market.Micros
	lastTime    int64
	next        int64 // next grid time
	dirty       bool  // a fill or a resolution since the last sample

	// Own ledger, from fills and resolutions: positions per token.
	pos      map[market.TokenID]*market.Position
	mkts     []*mkt
	byCond   map[market.ConditionID]*mkt
	byToken  map[market.TokenID]*mkt
	fills    []FillRow
	realized []market.Micros // every realization (sell or settlement), in order

	// Online metrics.
	peak, maxDD  market.Micros
	maxDDPct     float64
	lastEq       market.Micros
	lastExp      market.Micros
	lastSample   int64
	expArea      float64 // ∫ exposure dt (micro-units × ms)
	heldTime     int64   // ms with a position
	periodEnd    int64
	periodEquity []market.Micros // equity at the end of each return period
	maxExposure  market.Micros
	held         bool
	points       []Point
	pointEvery   int64 // ms between kept chart points (doubles when full)
	nextPoint    int64
	notes        []string

	horizon  int64 // Brier horizon, ms
	marks    []Mark
	dropped  int // marks beyond MaxEvents
	denials  map[string]*Denial
	lastDeny *Denial // the denial Deny counted last: a guard usually denies again
	denied   int64
	trips    int // kill-switch trips
	merges   []MergeRow
	redeems  int                           // redeems of resolved markets' tokens
	redeemed market.Micros                 // the collateral they paid
	open     map[market.TokenID]*roundTrip // round trips in progress
	closed   []RoundTrip
	tripsOut int // round trips beyond MaxRoundTrips
	day      dayAcc
	days     []Day
	hold     [2]holdBaseline // buy and hold YES, NO
	quotes   []quote         // scratch: the agent's best quotes per market
	// mktIndex is each market's position in mkts, by condition id, for
	// samplePrices; nil when a market was added or its metadata changed since
	// it was built.
	mktIndex map[market.ConditionID]int
	// nets is where the points' Net slices are cut from, a chunk at a time
	// (one allocation per chunk instead of one per point).
	nets []Money
}

// mkt is the collector's view of one market.
type mkt struct {
	info       market.Info
	fills      int
	volume     market.Micros
	fees       market.Micros
	settlement market.Micros
	resolved   bool
	resolvedAt int64
	winner     market.Outcome
	forecast   float64 // last declared
	flattenWhy string  // why the last flatten of the market began
	prices     []PricePoint
	fc         forecastAcc
	brierH     float64 // at the horizon
	brierLast  float64
	brierAvg   float64 // time-averaged
	fcHorizon  float64 // the forecast scored by brierH
}

// NewCollector returns a Collector for cfg.
func NewCollector(cfg Config) (*Collector, error) {
	if cfg.Resolution == 0 {
		cfg.Resolution = DefaultResolution
	}
	if cfg.Resolution < time.Millisecond {
		return nil, fmt.Errorf("report: resolution %s is below a millisecond", cfg.Resolution)
	}
	if cfg.Points == 0 {
		cfg.Points = DefaultPoints
	}
	if cfg.Points < 2 {
		return nil, fmt.Errorf("report: %d chart points", cfg.Points)
	}
	if cfg.ReturnPeriod == 0 {
		cfg.ReturnPeriod = autoPeriod(cfg.To - cfg.From)
	}
	if cfg.ReturnPeriod < time.Millisecond {
		return nil, fmt.Errorf("report: return period %s is below a millisecond", cfg.ReturnPeriod)
	}
	if span := cfg.To - cfg.From; span > 0 && span/cfg.ReturnPeriod.Milliseconds() > MaxPeriods {
		return nil, fmt.Errorf("report: return period %s gives more than %d periods", cfg.ReturnPeriod, MaxPeriods)
	}
	if cfg.BrierHorizon == 0 {
		cfg.BrierHorizon = DefaultBrierHorizon
	}
	if cfg.BrierHorizon < 0 {
		return nil, fmt.Errorf("report: negative Brier horizon %s", cfg.BrierHorizon)
	}
	c := &Collector{cfg: cfg, res: cfg.Resolution.Milliseconds(), period: cfg.ReturnPeriod.Milliseconds(),
		pos: map[market.TokenID]*market.Position{}, byCond: map[market.ConditionID]*mkt{}, byToken: map[market.TokenID]*mkt{},
		horizon: cfg.BrierHorizon.Milliseconds(), denials: map[string]*Denial{}, open: map[market.TokenID]*roundTrip{}}
	return c, nil
}

// autoPeriod picks the return period for a span (see Config.ReturnPeriod).
func autoPeriod(span int64) time.Duration {
	if span <= 0 {
		return time.Hour
	}
	for _, p := range []time.Duration{24 * time.Hour, time.Hour, 15 * time.Minute, time.Minute} {
		if span/p.Milliseconds() >= 30 {
			return p
		}
	}
	return time.Second
}

// Begin starts the run at time t (Unix ms) with the agent's state after startup:
// its equity is the starting equity and its markets are the run's markets (more are
// learned from fills and events later).
func (c *Collector) Begin(t int64, st *market.State, markets []market.Info) {
	for i := range markets {
		c.market(markets[i].Condition, &markets[i])
	}
	c.started = true
	c.startTime = t
	c.lastTime = t
	c.startEquity = st.Equity()
	c.peak = c.startEquity
	c.lastEq = c.startEquity
	c.lastSample = t
	c.periodEnd = t + c.period
	c.next = t - t%c.res + c.res
	c.pointEvery = max(c.res, (c.cfg.To-c.cfg.From)/int64(c.cfg.Points))
	c.day = dayAcc{start: t - mod(t, dayMs), startEq: c.startEquity, peak: c.startEquity}
	c.beginHold()
	c.enterHold(st)
	c.addPoint(t, c.startEquity, exposure(st), st)
}

// market returns the collector's record of a market, creating it.
func (c *Collector) market(cond market.ConditionID, info *market.Info) *mkt {
	m := c.byCond[cond]
	if m == nil {
		m = &mkt{forecast: math.NaN(), brierH: math.NaN(), brierLast: math.NaN(), brierAvg: math.NaN(), fcHorizon: math.NaN()}
		m.info.Condition = cond
		c.byCond[cond] = m
		c.mkts = append(c.mkts, m)
		c.mktIndex = nil
	}
	if info != nil {
		m.info = *info
		c.mktIndex = nil
		for _, t := range info.Tokens {
			if t != "" {
				c.byToken[t] = m
			}
		}
	}
	return m
}

// Note adds a remark to the report.
func (c *Collector) Note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

// Fill records one of the run's fills (call it when the agent learns of it, before
// Event of the event that carries it). key is the quote or rule key of the order it
// filled ("" when unknown): round trips name what opened and closed them by it.
func (c *Collector) Fill(f *market.Fill, key string) {
	c.rollDay(f.Time)
	m := c.byCond[f.Market]
	if m == nil {
		m = c.byToken[f.Token]
	}
	if m == nil {
		m = c.market(f.Market, nil)
	}
	p := c.pos[f.Token]
	if p == nil {
		p = &market.Position{Market: m.info.Condition, Token: f.Token, Outcome: f.Outcome}
		c.pos[f.Token] = p
	}
	notional, _ := market.Notional(f.Price, f.Size)
	var realized market.Micros
	switch f.Side {
	case market.Buy:
		if p.Buy(f.Price, f.Size, f.Fee) {
			c.tripBuy(m, p, f, notional, key)
		}
	case market.Sell:
		r, ok := p.Sell(f.Price, f.Size, f.Fee)
		if ok {
			realized = r
			c.realized = append(c.realized, r)
			c.day.realize(r)
			c.tripSell(m, p, f, notional, r, key)
		} else {
			c.Note("fill %s sells %s shares of token %s, more than the %s held: not counted in the ledger", f.Trade, f.Size, f.Token, p.Size)
		}
	}
	m.fills++
	m.volume += notional
	m.fees += f.Fee
	c.day.fills++
	c.day.volume += notional
	c.day.fees += f.Fee
	c.fills = append(c.fills, FillRow{Time: f.Time, Market: m.info.Condition, Slug: m.label(), Token: f.Token,
		Outcome: f.Outcome.String(), Side: f.Side.String(), Role: f.Role.String(), Price: Money(f.Price), Size: Money(f.Size),
		Notional: Money(notional), Fee: Money(f.Fee), Realized: Money(realized), Order: f.Order, Trade: f.Trade, Key: key})
	c.dirty = true
}

// label names the market as reports do (market.Info.Label), "" when only its
// condition id is known.
func (m *mkt) label() string {
	if m.info.Slug == "" && m.info.Question == "" {
		return ""
	}
	return m.info.Label()
}

// Forecast records the strategy's declared probability of YES for a market at the
// time of the last event (the backtest calls it just before a resolution is
// applied, and at the end; Config.Forecaster is asked at every sample). Values
// outside [0, 1] and NaN are ignored.
func (c *Collector) Forecast(cond market.ConditionID, p float64) {
	if !(p >= 0 && p <= 1) {
		return
	}
	m := c.byCond[cond]
	if m == nil || m.resolved {
		return
	}
	m.forecast = p
	m.fc.add(c.lastTime, p, max(c.res, c.horizon/horizonSamples), c.horizon)
}

// Event is called after the agent applied ev to st (and handled it). It settles the
// ledger on a resolution and samples equity on the grid.
func (c *Collector) Event(ev *market.Event, st *market.State) {
	if ev.Kind == market.EventResolved {
		c.resolve(ev)
	}
	if ev.Time < c.next && !c.dirty {
		return
	}
	c.sample(max(ev.Time, c.lastTime), st)
}

func (c *Collector) resolve(ev *market.Event) {
	m := c.byCond[ev.Market]
	if m == nil {
		m = c.byToken[ev.Winner]
	}
	if m == nil || m.resolved {
		return
	}
	o, ok := m.info.OutcomeOf(ev.Winner)
	if !ok {
		return
	}
	c.rollDay(ev.Time)
	m.resolved, m.winner, m.resolvedAt = true, o, ev.Time
	for i, tok := range m.info.Tokens {
		p := c.pos[tok]
		if p == nil || p.Size == 0 {
			continue
		}
		size := p.Size
		r := p.Settle(market.Outcome(i) == o)
		m.settlement += r
		c.realized = append(c.realized, r)
		c.day.realize(r)
		c.tripSettle(tok, size, market.Outcome(i) == o, r, ev.Time)
	}
	c.settleHold(m, o)
	c.scoreForecasts(m, o, ev.Time)
	c.Mark(Mark{Time: ev.Time, Kind: MarkResolved, Market: m.info.Condition, Reason: o.String() + " won"})
	c.dirty = true
}

// sample takes an equity sample at t.
func (c *Collector) sample(t int64, st *market.State) {
	c.dirty = false
	if t < c.lastTime {
		t = c.lastTime
	}
	exp, claims, held := marks(st)
	eq := st.Balance + st.Reserved + exp + claims // st.Equity(), without a second pass
	// Time-weighted exposure and time in market over [lastSample, t), at the
	// previous sample's values.
	if dt := t - c.lastSample; dt > 0 {
		c.expArea += float64(c.lastExp) * float64(dt)
		if c.held {
			c.heldTime += dt
		}
	}
	c.rollDay(t)
	// Return periods that ended before t close at the previous sample's equity.
	for t >= c.periodEnd && len(c.periodEquity) < MaxPeriods {
		c.periodEquity = append(c.periodEquity, c.lastEq)
		c.periodEnd += c.period
	}
	c.lastSample, c.lastTime = t, t
	c.lastEq, c.lastExp = eq, exp
	c.held = held
	c.maxExposure = max(c.maxExposure, exp)
	if eq > c.peak {
		c.peak = eq
	}
	if dd := c.peak - eq; dd > c.maxDD {
		c.maxDD = dd
		if c.peak > 0 {
			c.maxDDPct = float64(dd) / float64(c.peak)
		}
	}
	c.day.observe(eq)
	if c.cfg.Forecaster != nil {
		c.sampleForecasts(t)
	}
	c.enterHold(st)
	c.next = t - t%c.res + c.res
	if t >= c.nextPoint {
		c.addPoint(t, eq, exp, st)
	}
}

// exposure is the value of every position of an open market at its mark.
func exposure(st *market.State) market.Micros {
	exp, _, _ := marks(st)
	return exp
}

// marks returns, in one pass over the positions, the exposure (the value of
// every position of an open market at its mark), the claims (the positions of
// resolved markets not yet redeemed, at their payout: 1 a winning share, 0 a losing
// one) and whether any open market's position is held (Size > 0). Equity counts the
// claims, exposure and time in market do not (a certain payout is no market risk;
// docs/design/0161). exposure + claims is exactly the sum market.State.Equity adds
// to the collateral, so Balance + Reserved + exposure + claims is Equity, integer
// addition being associative; TestSampleMatchesEquity pins the equality.
func marks(st *market.State) (exp, claims market.Micros, held bool) {
	for t, p := range st.Positions {
		if p.Size <= 0 {
			continue
		}
		if v, ok := st.PayoutOf(p); ok {
			claims += p.Value(v)
			continue
		}
		exp += p.Value(st.Mark(t))
		held = true
	}
	return exp, claims, held
}

// addPoint appends a chart point, halving the curve when it is full.
func (c *Collector) addPoint(t int64, eq, exp market.Micros, st *market.State) {
	if len(c.points) >= 2*c.cfg.Points {
		half := c.points[:0]
		for i := 0; i < len(c.points); i += 2 {
			half = append(half, c.points[i])
		}
		clear(c.points[len(half):])
		c.points = half
		c.pointEvery *= 2
		for _, m := range c.mkts {
			m.prices = halve(m.prices)
		}
	}
	net := c.net(len(c.mkts))
	for i, m := range c.mkts {
		if m.resolved { // its tokens await a redeem: no position in the market any more
			continue
		}
		var y, n market.Micros
		if p := st.Positions[m.info.Tokens[market.Yes]]; p != nil && m.info.Tokens[market.Yes] != "" {
			y = p.Size
		}
		if p := st.Positions[m.info.Tokens[market.No]]; p != nil && m.info.Tokens[market.No] != "" {
			n = p.Size
		}
		net[i] = Money(y - n)
	}
	if c.points == nil {
		c.points = make([]Point, 0, c.pointsCap())
	}
	c.points = append(c.points, Point{Time: t, Equity: Money(eq), Exposure: Money(exp), Net: net,
		Hold: Money(c.hold[market.Yes].value(st)), HoldNo: Money(c.hold[market.No].value(st))})
	c.samplePrices(t, st)
	c.nextPoint = t + c.pointEvery
}

// netChunk is how many points' Net slices one allocation holds.
const netChunk = 64

// net returns a zeroed slice of n Money for a point's Net, cut from c.nets (its
// capacity is n: an append, as Finish makes for markets added later, copies it).
func (c *Collector) net(n int) []Money {
	if n == 0 {
		return make([]Money, 0) // not nil: the JSON says [] for it
	}
	if len(c.nets) < n {
		c.nets = make([]Money, n*netChunk)
	}
	out := c.nets[:n:n]
	c.nets = c.nets[n:]
	return out
}

// pointsCap is the capacity the chart's points (and a market's prices) start
// with: as many as the period holds at the first spacing, within the bound that
// halves them (2 × Points), so that they are not copied while they grow.
func (c *Collector) pointsCap() int {
	n := 2 * c.cfg.Points
	if span := c.cfg.To - c.cfg.From; span > 0 && c.pointEvery > 0 {
		n = min(n, int(span/c.pointEvery)+2)
	}
	return max(n, 1)
}

package sim

import (
	"math"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// View is the read-only state of the exchange the sim acts on. *exchange.Engine
// satisfies it, so the embedded venue and backtests pass their engine, and the local
// server passes the engine inside a host read (sandbox/sim/simhost). Every method is
// one of the engine's views, with its contract.
type View interface {
	Time() int64
	Market(id market.ConditionID) (market.Info, bool)
	Markets(dst []market.Info) []market.Info
	Levels(t market.TokenID, side market.Side, dst []market.Level, max int) []market.Level
	BestBid(t market.TokenID) (market.Level, bool)
	BestAsk(t market.TokenID) (market.Level, bool)
	LastTrade(t market.TokenID) (price market.Micros, side market.Side, ok bool)
	Collateral(a market.Address) (available, reserved market.Micros)
	TokenBalance(a market.Address, t market.TokenID) (available, reserved market.Micros)
	OpenOrders(dst []market.Order, f exchange.Filter) []market.Order
	Nonce(a market.Address) uint64
}

// Engine is an exchange that applies commands at once: *exchange.Engine, or a host
// transaction (sandbox/sim/simhost). Apply has exchange.Engine.Apply's contract: the
// events are valid until the next call, the error is the catalog rejection.
type Engine interface {
	View
	Apply(c *exchange.Command) ([]exchange.Event, error)
}

var _ Engine = (*exchange.Engine)(nil)

// never is the due time of an actor that has nothing scheduled.
const never = math.MaxInt64

// Sim is the synthetic flow of one or more markets: per market, a latent fair value
// and the participants that trade around it (a market maker, noise traders, informed
// traders), producing exchange.Commands from the time and a View of the exchange.
//
// A Sim is deterministic: the same Config, seed, sequence of Step times and the
// same exchange state give the same commands, byte for byte, on every platform (all
// run-time arithmetic is integer; randomness comes only from PCG and ChaCha8 streams
// seeded from the seed). It is event-driven: Next says when the next action is due,
// so a backtest jumps from action to action.
//
// A Sim is not safe for concurrent use; its owner (a Driver, a venue, a backtest)
// calls it from one goroutine. Create it with New; the zero Sim is not usable.
type Sim struct {
	cfg     Config
	seed    uint64
	started bool
	start   int64
	last    int64 // time of the last action

	markets []*mstate
	byID    map[market.ConditionID]int32
	owners  map[market.Address]int32 // sim account → market index
	heap    []*mstate
	missing []market.ConditionID

	pathEvery int64
	pathMax   int
	rescan    int64 // ms; 0: never
	nextScan  int64 // time of the next rescan; never when none

	ids    idArena
	infos  []market.Info
	orders []market.Order
	levels []market.Level
	cmds   []exchange.Command
}

// New returns a Sim for cfg and seed. It panics if cfg.Validate fails (validate
// configurations from users first; ParseConfig does). The markets are found, and the
// participants funded, at the first Step.
func New(cfg Config, seed uint64) *Sim {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	s := &Sim{cfg: cfg, seed: seed, byID: map[market.ConditionID]int32{}, owners: map[market.Address]int32{}}
	s.pathEvery = cfg.PathEvery.Milliseconds()
	if s.pathEvery <= 0 {
		s.pathEvery = 60_000
	}
	s.pathMax = cfg.PathMax
	if s.pathMax <= 0 {
		s.pathMax = 4096
	}
	s.pathMax = max(s.pathMax, 2)
	s.nextScan = never
	if len(cfg.Markets) == 0 && cfg.Rescan >= 0 {
		s.rescan = cfg.Rescan.Milliseconds()
		if cfg.Rescan == 0 {
			s.rescan = 60_000
		}
		s.rescan = max(s.rescan, 1)
	}
	return s
}

// Seed returns the seed the Sim was created with.
func (s *Sim) Seed() uint64 { return s.seed }

// Next returns the time (Unix ms) at which the next action is due, and false when
// nothing is scheduled any more (every market resolved or closed, and no rescan for
// new markets). Before the first Step it returns Config.Start (0 when unset: due at
// once).
func (s *Sim) Next() (int64, bool) {
	if !s.started {
		return s.cfg.Start, true
	}
	due := int64(never)
	if len(s.heap) > 0 {
		due = s.heap[0].next
	}
	due = min(due, s.nextScan)
	return due, due != never
}

// Step performs the next action if it is due at or before now, appending its
// commands (possibly none) to dst, and reports whether it acted. (A rescan for new
// markets, Config.Rescan, is an action without commands.) Each command's Time
// is the action's due time. The commands of one action were computed from v as it
// is now: apply them, in order, before the next Step. The first Step finds the
// markets (Config.Markets, or every tradable one) and schedules the participants'
// funding at Config.Start, or at now when unset.
//
// Commands may be rejected by the exchange (a market paused meanwhile, an order id
// already taken, another client's order moving the book): the sim reads the state
// again at each action and never assumes its commands succeeded.
func (s *Sim) Step(now int64, v View, dst []exchange.Command) ([]exchange.Command, bool) {
	if !s.started {
		s.begin(now, v)
	}
	if s.nextScan <= now && (len(s.heap) == 0 || s.nextScan <= s.heap[0].next) {
		t := s.nextScan
		s.last = t
		s.nextScan += s.rescan
		s.scan(t, v)
		return dst, true
	}
	if len(s.heap) == 0 || s.heap[0].next > now {
		return dst, false
	}
	m := s.heap[0]
	t := m.next
	s.last = t
	dst = m.act(s, t, v, dst)
	s.reschedule(m)
	return dst, true
}

// AdvanceTo performs every action due at or before now against e, applying each
// command as soon as its action has produced it, so that each action sees the effect
// of the previous ones. fn, if not nil, is called with every command and its events
// (valid only during the call). The sim observes the events itself (Observe). It
// returns the number of commands applied.
func (s *Sim) AdvanceTo(now int64, e Engine, fn func(c *exchange.Command, evs []exchange.Event)) int {
	n, _ := s.advance(now, e, 0, fn)
	return n
}

// advance is AdvanceTo with a bound on the number of actions (0: none); more reports
// whether actions due by now remain.
func (s *Sim) advance(now int64, e Engine, maxActions int, fn func(c *exchange.Command, evs []exchange.Event)) (n int, more bool) {
	for actions := 0; maxActions <= 0 || actions < maxActions; actions++ {
		var acted bool
		s.cmds, acted = s.Step(now, e, s.cmds[:0])
		if !acted {
			return n, false
		}
		for i := range s.cmds {
			evs, _ := e.Apply(&s.cmds[i])
			s.Observe(evs)
			if fn != nil {
				fn(&s.cmds[i], evs)
			}
			n++
		}
	}
	due, ok := s.Next()
	return n, ok && due <= now
}

// SkipTo moves every participant whose action is overdue at now to act afresh from
// now (its next arrival drawn from now), and drops pending reactions to past news.
// No command is produced; the latent fair value catches up at the next action. A
// driver on the wall clock calls it after falling far behind (a suspended laptop) so
// that it does not replay the missed flow in a burst.
func (s *Sim) SkipTo(now int64) {
	if !s.started {
		return
	}
	for _, m := range s.markets {
		if m.done {
			continue
		}
		m.skipTo(now)
		s.reschedule(m)
	}
	if s.nextScan < now {
		s.nextScan = now
	}
}

// begin finds the markets and schedules their start.
func (s *Sim) begin(now int64, v View) {
	s.started = true
	s.start = s.cfg.Start
	if s.start == 0 {
		s.start = now
	}
	if s.rescan > 0 {
		s.nextScan = s.start + s.rescan
	}
	def := DefaultParams().Merge(s.cfg.Defaults)
	if len(s.cfg.Markets) == 0 {
		s.scan(s.start, v)
		return
	}
	for _, mc := range s.cfg.Markets {
		info, ok := v.Market(mc.Market)
		if !ok {
			// Not a condition id: perhaps a slug.
			if s.infos == nil {
				s.infos = v.Markets(s.infos[:0])
			}
			for i := range s.infos {
				if s.infos[i].Slug == string(mc.Market) {
					info, ok = s.infos[i], true
					break
				}
			}
		}
		if !ok {
			s.missing = append(s.missing, mc.Market)
			continue
		}
		s.add(&info, def.Merge(mc.Params), s.start)
	}
}

// scan adds every tradable market the sim does not drive yet, starting at t.
func (s *Sim) scan(t int64, v View) {
	s.infos = v.Markets(s.infos[:0])
	def := DefaultParams().Merge(s.cfg.Defaults)
	for i := range s.infos {
		if _, known := s.byID[s.infos[i].Condition]; !known && s.infos[i].Tradable() {
			s.add(&s.infos[i], def, t)
		}
	}
}

// add starts driving a market from time start.
func (s *Sim) add(info *market.Info, p Params, start int64) {
	if _, dup := s.byID[info.Condition]; dup {
		return
	}
	m := newMarket(s, int32(len(s.markets)), info, resolveParams(p), start)
	s.byID[info.Condition] = m.idx
	s.markets = append(s.markets, m)
	for _, a := range m.accounts() {
		s.owners[a.addr] = m.idx
	}
	m.hidx = len(s.heap)
	s.heap = append(s.heap, m)
	s.up(m.hidx)
}

// reschedule restores the heap after m's due time changed (or removes m when done).
func (s *Sim) reschedule(m *mstate) {
	i := m.hidx
	if i < 0 {
		return
	}
	if m.done || m.next == never {
		last := len(s.heap) - 1
		s.swap(i, last)
		s.heap = s.heap[:last]
		m.hidx = -1
		if i < last {
			s.down(i)
			s.up(i)
		}
		return
	}
	s.down(i)
	s.up(i)
}

func (s *Sim) less(i, j int) bool {
	a, b := s.heap[i], s.heap[j]
	return a.next < b.next || a.next == b.next && a.idx < b.idx
}

func (s *Sim) swap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.heap[i].hidx, s.heap[j].hidx = i, j
}

func (s *Sim) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			return
		}
		s.swap(i, p)
		i = p
	}
}

func (s *Sim) down(i int) {
	n := len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && s.less(r, l) {
			c = r
		}
		if !s.less(c, i) {
			return
		}
		s.swap(i, c)
		i = c
	}
}

// Observe updates the summary from exchange events: trades in the sim's markets
// (whoever traded) and rejections of the sim's own commands. AdvanceTo and the
// Driver call it with the events of the commands they apply; a caller that also
// feeds other clients' events (a host listener) must feed each event once.
func (s *Sim) Observe(evs []exchange.Event) {
	for i := range evs {
		ev := &evs[i]
		switch ev.Kind {
		case exchange.OrderFilled:
			if mi, ok := s.byID[ev.Market]; ok {
				sum := &s.markets[mi].sum
				sum.Fills++
				sum.Volume += ev.Size
				sum.Notional += ev.Amount
			}
		case exchange.TradeExecuted:
			if mi, ok := s.byID[ev.Market]; ok {
				s.markets[mi].sum.Trades++
			}
		case exchange.CommandRejected:
			if mi, ok := s.owners[ev.Owner]; ok {
				sum := &s.markets[mi].sum
				sum.Rejected++
				if sum.Rejections == nil {
					sum.Rejections = map[market.Code]int{}
				}
				sum.Rejections[ev.Code]++
			}
		}
	}
}

// Summary describes a run: per market, the activity of each participant, the trades,
// the fair value and its sampled path. The returned value shares nothing with the
// Sim.
type Summary struct {
	Seed    uint64
	Start   int64 // Unix ms of the first action
	Last    int64 // Unix ms of the last action
	Markets []MarketSummary
	// Missing lists configured markets the exchange did not know at the start.
	Missing []market.ConditionID
}

// MarketSummary is the part of a Summary about one market.
type MarketSummary struct {
	Market market.ConditionID
	// Fair is the latent fair value now; FairMin and FairMax its range so far.
	Fair, FairMin, FairMax market.Micros
	// News counts news jumps; Resolved and Winner tell whether and how the sim
	// resolved the market (or saw it resolved).
	News     int
	Resolved bool
	Winner   market.Outcome

	// Actions per participant kind (an action may produce no command).
	MakerRefreshes, NoiseArrivals, InformedArrivals int
	// Commands the sim produced for this market, and how many the exchange
	// rejected (Rejections by code).
	Commands, Rejected int
	Rejections         map[market.Code]int

	// Trades (taker orders that matched), Fills (maker orders met by them), Volume
	// (shares filled) and Notional (collateral of those fills), counted from the
	// events passed to Observe.
	Trades, Fills    int
	Volume, Notional market.Micros

	// Spreads counts the YES book's spread, in ticks, seen at each maker refresh
	// before it requoted: Spreads[k] for k ticks (the last bucket: that many or
	// more), Spreads[0] when a side was empty.
	Spreads [8]int

	// Path is the fair value sampled every Config.PathEvery (doubling when full)
	// and at each news jump.
	Path []FairPoint
}

// FairPoint is one sample of the latent fair value.
type FairPoint struct {
	Time int64 // Unix ms
	Fair market.Micros
	News bool // recorded at a news jump (or when the outcome was revealed)
}

// Summary returns the state of the run so far.
func (s *Sim) Summary() Summary {
	out := Summary{Seed: s.seed, Start: s.start, Last: s.last, Missing: append([]market.ConditionID(nil), s.missing...)}
	for _, m := range s.markets {
		ms := m.sum
		ms.Path = append([]FairPoint(nil), m.sum.Path...)
		if m.sum.Rejections != nil {
			ms.Rejections = make(map[market.Code]int, len(m.sum.Rejections))
			for k, v := range m.sum.Rejections {
				ms.Rejections[k] = v
			}
		}
		out.Markets = append(out.Markets, ms)
	}
	return out
}

// Accounts returns the addresses of every participant, in market order (the maker,
// then the noise accounts, then the informed accounts), after the first Step.
func (s *Sim) Accounts() []market.Address {
	var out []market.Address
	for _, m := range s.markets {
		for _, a := range m.accounts() {
			out = append(out, a.addr)
		}
	}
	return out
}

// Fair returns the latent fair value of market id now (as of the last action that
// touched it) and false for a market the sim does not drive.
func (s *Sim) Fair(id market.ConditionID) (market.Micros, bool) {
	mi, ok := s.byID[id]
	if !ok {
		return 0, false
	}
	return s.markets[mi].fair, true
}

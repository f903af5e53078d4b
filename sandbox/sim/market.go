package sim

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// mparams are a market's Params in the integer form the model runs on.
type mparams struct {
	fair       market.Micros
	step       int64 // ms between diffusion steps
	volStep    fix   // standard deviation of one diffusion step of the logit, Q32
	revK       fix   // fraction of the distance to the anchor removed per step, Q32
	newsMean   int64 // ms; 0: no news
	jumpMean   fix
	resolveAt  int64 // Unix ms; 0: none
	resolveEnd bool
	reveal     int64 // ms before the resolution at which the winner is drawn; 0: at it

	makerMean      int64 // ms; 0: no maker
	makers         int
	levels         int
	spread, gap    int
	size, sizeStep market.Micros
	volK           int64 // MakerVolSpread in millionths; 0: no widening
	skew, maxInv   market.Micros
	reaction       int64 // ms
	makerCap       market.Micros
	makerInv       market.Micros

	noiseMean  int64 // ms; 0: none
	noiseAccts int
	noiseSize  market.Micros
	noiseMax   market.Micros
	take       market.Micros // probability, millionths
	tilt       market.Micros // buy-probability change per tick of mispricing, millionths
	slip       int
	life       int64 // ms
	noiseCap   market.Micros

	infMean   int64 // ms; 0: none
	followers int
	delay     int64 // ms
	edge      int
	infMax    market.Micros
	infAccts  int
	infCap    market.Micros
}

// millis converts a duration to ms, mapping negative (off) to 0 and rounding a
// positive sub-millisecond value up to 1.
func millis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return max(d.Milliseconds(), 1)
}

// toFix converts a parameter to Q32. The product by a power of two is exact and
// Round is exact, so the result is the same on every platform.
func toFix(v float64) fix {
	if v <= 0 {
		return 0
	}
	return fix(math.Round(math.Ldexp(v, fracBits)))
}

// toMillionths converts a parameter to millionths with one correctly rounded
// multiplication and an exact Round.
func toMillionths(v float64) int64 {
	if v <= 0 {
		return 0
	}
	return int64(math.Round(v * 1e6))
}

// resolveParams turns merged, validated Params into mparams.
func resolveParams(p Params) mparams {
	step := millis(p.FairStep)
	var vol fix
	if p.Vol > 0 {
		// σ·√(step/1h): a division, a square root and a product, each correctly
		// rounded (no sum, so nothing a compiler could fuse), then an exact scaling.
		scale := math.Sqrt(float64(step) / 3_600_000)
		vol = toFix(float64(p.Vol * scale))
	}
	var rev fix
	if hl := millis(p.Reversion); hl > 0 {
		// ln 2 · step / half-life: a product and a quotient, each correctly rounded.
		rev = toFix(float64(math.Ln2*float64(step)) / float64(hl))
	}
	q := mparams{
		fair: p.Fair, step: step, volStep: vol, revK: rev, newsMean: millis(p.NewsEvery), jumpMean: toFix(p.NewsJump),
		resolveAt: p.ResolveAt, resolveEnd: p.ResolveAtEnd, reveal: millis(p.ResolveReveal),

		makerMean: millis(p.MakerRefresh), makers: max(p.Makers, 0), levels: p.MakerLevels, spread: max(p.MakerSpread, 1), gap: max(p.MakerGap, 1),
		size: p.MakerSize, sizeStep: p.MakerSizeStep, volK: toMillionths(p.MakerVolSpread), skew: p.MakerSkew,
		maxInv: p.MakerMaxInventory, reaction: millis(p.MakerReaction), makerCap: p.MakerCapital, makerInv: p.MakerInventory,

		noiseMean: millis(p.NoiseEvery), noiseAccts: p.NoiseAccounts, noiseSize: p.NoiseSize, noiseMax: p.NoiseMaxSize,
		take: market.Micros(toMillionths(p.NoiseTake)), tilt: market.Micros(toMillionths(p.NoiseTilt)), slip: max(p.NoiseSlip, 0), life: millis(p.NoiseLifetime),
		noiseCap: p.NoiseCapital,

		infMean: millis(p.InformedEvery), followers: max(p.InformedFollowers, 0), delay: millis(p.InformedDelay),
		edge: p.InformedEdge, infMax: p.InformedMaxSize, infAccts: p.InformedAccounts, infCap: p.InformedCapital,
	}
	if q.makerMean == 0 || q.levels <= 0 || q.makers == 0 {
		q.makerMean, q.levels, q.makers = 0, 0, 0
	}
	if q.noiseAccts <= 0 {
		q.noiseMean = 0
	}
	if q.infAccts <= 0 {
		q.infMean, q.followers = 0, 0
	}
	return q
}

// actor is one scheduled kind of action of a market. At equal times actors act in
// this order.
type actor uint8

const (
	actStart    actor = iota // fund the participants, initialise the fair value
	actResolve               // resolve the market
	actReveal                // the outcome becomes known; the fair value converges to it
	actNews                  // a news jump of the latent value
	actMaker                 // the maker requotes
	actInformed              // a background informed arrival
	actFollower              // an informed arrival after news
	actNoise                 // a noise arrival
	nActors
)

// account is one participant's account.
type account struct {
	addr    market.Address
	capital market.Micros
}

// maker is one market maker of a market.
type maker struct {
	acct   account
	due    int64
	spread int           // calm spread in ticks
	size   market.Micros // size at the best level
	step   market.Micros // size added per deeper level

	// It does not know news before until: it believes x − lag.
	until int64
	lag   fix

	// Its volatility estimate: an exponential average of (Δ belief)²/Δt in
	// micro-units² per ms.
	fair market.Micros
	t    int64
	v    int64

	// The last refresh sent nothing (idle) with these inputs (see quote).
	idle bool
	key  quoteKey
}

// mstate is one market of the sim: its latent value, participants and schedule.
type mstate struct {
	idx  int32
	hidx int // position in Sim.heap; -1 when not scheduled
	id   market.ConditionID
	yes  market.TokenID
	no   market.TokenID
	p    mparams
	info market.Info // refreshed at each action
	done bool

	// Latent value: the logit x moves on a grid of p.step ms and jumps at news.
	x        fix
	anchor   fix // the initial logit, which reversion pulls back to
	gridT    int64
	fair     market.Micros
	nextPath int64
	every    int64 // current path interval (doubles when the path is full)

	// Once the outcome is revealed the logit converges to target by resolveAt.
	revealed  bool
	winner    market.Outcome
	target    fix
	resolveAt int64

	rFair, rNews, rMaker, rNoise, rInf, rRes rand.PCG
	ids                                      rand.ChaCha8

	// expiries is a min-heap of the times (ms) after which the GTD orders the
	// sim placed in this market expire (see settle).
	expiries []int64

	due       [nActors]int64
	followers [MaxBurst]int64 // pending informed arrivals after news, ascending
	nFollow   int
	next      int64

	makers   []maker
	noise    []account
	informed []account
	nextInf  int

	sum MarketSummary
}

func newMarket(s *Sim, idx int32, info *market.Info, p mparams, start int64) *mstate {
	m := &mstate{idx: idx, hidx: -1, id: info.Condition, yes: info.Tokens[market.Yes], no: info.Tokens[market.No], p: p, info: *info}
	for i := range m.due {
		m.due[i] = never
	}
	m.due[actStart] = start
	m.next = start
	m.every = s.pathEvery
	stream(&m.rFair, s.seed, m.id, "fair")
	stream(&m.rNews, s.seed, m.id, "news")
	stream(&m.rMaker, s.seed, m.id, "maker")
	stream(&m.rNoise, s.seed, m.id, "noise")
	stream(&m.rInf, s.seed, m.id, "informed")
	stream(&m.rRes, s.seed, m.id, "resolve")
	m.ids.Seed(orderKey(s.seed, s.start, m.id))
	for k := 0; k < p.makers && p.makerMean > 0; k++ {
		m.makers = append(m.makers, maker{
			acct: account{addr: address(s.seed, m.id, roleMaker, k), capital: p.makerCap * market.Micros(k+1)},
			due:  never, spread: p.spread + 2*k, size: p.size * market.Micros(k+1), step: p.sizeStep * market.Micros(k+1),
		})
	}
	for i := 0; i < p.noiseAccts && p.noiseMean > 0; i++ {
		m.noise = append(m.noise, account{addr: address(s.seed, m.id, roleNoise, i), capital: p.noiseCap})
	}
	if p.infMean > 0 || p.followers > 0 {
		for i := 0; i < p.infAccts; i++ {
			m.informed = append(m.informed, account{addr: address(s.seed, m.id, roleInformed, i), capital: p.infCap})
		}
	}
	m.sum.Market = m.id
	return m
}

// accounts lists the market's participants: the maker (if any), noise, informed.
func (m *mstate) accounts() []account {
	var out []account
	for i := range m.makers {
		out = append(out, m.makers[i].acct)
	}
	out = append(out, m.noise...)
	return append(out, m.informed...)
}

// earliest returns the actor due first (ties in actor order).
func (m *mstate) earliest() (actor, int64) {
	best, at := actor(0), int64(never)
	for a := actor(0); a < nActors; a++ {
		t := m.due[a]
		if a == actFollower && m.nFollow > 0 {
			t = m.followers[0]
		}
		if t < at {
			best, at = a, t
		}
	}
	return best, at
}

func (m *mstate) refreshNext() { _, m.next = m.earliest() }

// act performs the earliest action (due at t) and schedules the actor's next one.
func (m *mstate) act(s *Sim, t int64, v View, dst []exchange.Command) []exchange.Command {
	if m.settle(t, v) {
		// An AdvanceTime first, so that the action sees the state after the
		// expirations due by t; the actor acts at the next Step.
		m.sum.Commands++
		return append(dst, exchange.Command{Kind: exchange.AdvanceTime, Time: t})
	}
	a, _ := m.earliest()
	n0 := len(dst)
	switch a {
	case actStart:
		m.due[actStart] = never
		dst = m.begin(s, t, v, dst)
	case actResolve:
		m.due[actResolve] = never
		dst = m.resolve(s, t, v, dst)
	case actReveal:
		m.due[actReveal] = never
		m.reveal(s, t)
	case actNews:
		m.news(s, t)
	case actMaker:
		k := 0
		for i := range m.makers {
			if m.makers[i].due < m.makers[k].due {
				k = i
			}
		}
		dst = m.quote(s, &m.makers[k], t, v, dst)
		m.makerDue()
	case actInformed:
		m.due[actInformed] = t + expMillis(&m.rInf, m.p.infMean)
		dst = m.inform(s, t, v, dst)
	case actFollower:
		copy(m.followers[:], m.followers[1:m.nFollow])
		m.nFollow--
		dst = m.inform(s, t, v, dst)
	case actNoise:
		m.due[actNoise] = t + expMillis(&m.rNoise, m.p.noiseMean)
		dst = m.trade(s, t, v, dst)
	}
	m.sum.Commands += len(dst) - n0
	if m.done {
		m.next = never
	} else {
		m.refreshNext()
	}
	return dst
}

// settle reports whether one of the sim's GTD orders in this market is due to
// expire by t but the engine has not expired it yet (the engine expires an order at
// the first command later than its expiration, and a view read before that command
// would still show the order and its reservation). Without this, an action's view
// would depend on whether other markets' commands happened to advance the clock.
func (m *mstate) settle(t int64, v View) bool {
	h := m.expiries
	if len(h) == 0 {
		return false
	}
	clock := v.Time()
	for len(h) > 0 && h[0] < clock { // expired already
		h = popExpiry(h)
	}
	m.expiries = h
	return len(h) > 0 && h[0] < t
}

func pushExpiry(h []int64, x int64) []int64 {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func popExpiry(h []int64) []int64 {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, c := 2*i+1, i
		if l < n && h[l] < h[c] {
			c = l
		}
		if r := l + 1; r < n && h[r] < h[c] {
			c = r
		}
		if c == i {
			return h
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// makerDue sets the maker actor's due time: the earliest of the makers'.
func (m *mstate) makerDue() {
	m.due[actMaker] = never
	for i := range m.makers {
		m.due[actMaker] = min(m.due[actMaker], m.makers[i].due)
	}
}

// skipTo reschedules every overdue actor from now.
func (m *mstate) skipTo(now int64) {
	if m.due[actStart] != never {
		return // not started: the start is done whenever it comes
	}
	m.nFollow = 0
	for i := range m.makers {
		mk := &m.makers[i]
		mk.lag, mk.until = 0, 0
		if mk.due < now {
			mk.due = now
		}
	}
	m.makerDue()
	if m.due[actNews] < now {
		m.due[actNews] = now + expMillis(&m.rNews, m.p.newsMean)
	}
	if m.due[actInformed] < now {
		m.due[actInformed] = now + expMillis(&m.rInf, m.p.infMean)
	}
	if m.due[actNoise] < now {
		m.due[actNoise] = now + expMillis(&m.rNoise, m.p.noiseMean)
	}
	if m.due[actResolve] < now {
		m.due[actResolve] = now
	}
	if m.due[actReveal] < now {
		m.due[actReveal] = now
	}
	m.refreshNext()
}

// mulDivFix returns x·a/c (a, c > 0) without overflow, truncated toward zero.
func mulDivFix(x fix, a, c int64) fix {
	hi, lo := bits.Mul64(uint64(abs64(x)), uint64(a))
	if hi >= uint64(c) {
		return x // |a/c| ≤ 1 in every use, so this cannot happen
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if x < 0 {
		return -fix(q)
	}
	return fix(q)
}

func abs64(x fix) fix {
	if x < 0 {
		return -x
	}
	return x
}

// setFair sets the fair value from x and tracks its range.
func (m *mstate) setFair() {
	m.fair = sigmoid(m.x)
	if m.sum.FairMin == 0 || m.fair < m.sum.FairMin {
		m.sum.FairMin = m.fair
	}
	m.sum.FairMax = max(m.sum.FairMax, m.fair)
	m.sum.Fair = m.fair
}

// advanceFair moves the latent value along its grid up to t: one normal step of
// the logit every p.step ms. The path depends only on the seed, the market, the
// start and the parameters, never on when the participants look at it.
func (m *mstate) advanceFair(s *Sim, t int64) {
	for m.gridT+m.p.step <= t {
		m.gridT += m.p.step
		if m.p.revK != 0 {
			d := m.x - m.anchor
			r := fix(mulQ32(uint64(abs64(d)), uint64(m.p.revK)))
			if d < 0 {
				r = -r
			}
			m.x -= r
		}
		if m.p.volStep != 0 {
			z := normDeviate(&m.rFair)
			m.x = clampLogit(m.x + fix(int64(m.p.volStep)*z>>16))
		}
		if m.revealed && m.gridT < m.resolveAt {
			// Close the remaining distance to the target linearly by resolveAt.
			m.x += mulDivFix(m.target-m.x, m.p.step, m.resolveAt-m.gridT+m.p.step)
		}
		if m.p.volStep != 0 || m.p.revK != 0 || m.revealed {
			m.setFair()
		}
		if m.gridT >= m.nextPath {
			m.record(s, m.gridT, false)
		}
	}
}

// record appends a path point, halving the path when it is full.
func (m *mstate) record(s *Sim, t int64, news bool) {
	p := &m.sum.Path
	if len(*p) >= s.pathMax {
		k := 0
		for i := 0; i < len(*p); i += 2 {
			(*p)[k] = (*p)[i]
			k++
		}
		*p = (*p)[:k]
		m.every *= 2
	}
	*p = append(*p, FairPoint{Time: t, Fair: m.fair, News: news})
	if !news {
		m.nextPath = t + m.every
	}
}

// refresh reads the market's state; it reports false when the market cannot be
// traded now (and marks it done when it never can again).
func (m *mstate) refresh(v View) bool {
	info, ok := v.Market(m.id)
	if !ok {
		m.done = true
		return false
	}
	m.info = info
	if info.Resolved || info.Closed {
		m.done = true
		if info.Resolved {
			m.sum.Resolved, m.sum.Winner = true, info.Winner
		}
		return false
	}
	return info.Tradable()
}

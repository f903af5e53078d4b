package sim

import (
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// The participants' actions. Each reads the exchange through the View, appends the
// commands it decides on, and schedules its own next action. Every random draw of
// an action is made whatever the state of the book, so a market's random streams
// advance the same way whatever other clients do.

// begin initialises the fair value, funds every participant and schedules them.
func (m *mstate) begin(s *Sim, t int64, v View, dst []exchange.Command) []exchange.Command {
	f := m.p.fair
	seeded := market.Micros(200_000) + market.Micros(uintN(&m.rFair, 600_001))
	if f == 0 {
		if px, _, ok := v.LastTrade(m.yes); ok {
			f = px
		} else if bb, ok := v.BestBid(m.yes); ok {
			if ba, ok := v.BestAsk(m.yes); ok {
				f = (bb.Price + ba.Price) / 2
			}
		}
	}
	if f == 0 {
		f = seeded
	}
	m.x = logit(f)
	m.anchor = m.x
	m.gridT = t
	m.setFair()
	m.record(s, t, false)
	if !m.refresh(v) && m.done {
		return m.gone(t, v, dst)
	}

	for i, a := range m.accounts() {
		avail, res := v.Collateral(a.addr)
		need := a.capital
		var split market.Micros
		if i < len(m.makers) { // makers come first
			ya, yr := v.TokenBalance(a.addr, m.yes)
			na, nr := v.TokenBalance(a.addr, m.no)
			if have := min(ya+yr, na+nr); have < m.p.makerInv {
				split = m.p.makerInv - have
			}
			need += split
		}
		if have := avail + res; have < need {
			dst = append(dst, exchange.Command{Kind: exchange.Deposit, Time: t, Owner: a.addr, Amount: min(need-have, market.MaxMicros)})
		}
		if split > 0 {
			dst = append(dst, exchange.Command{Kind: exchange.Split, Time: t, Owner: a.addr, Market: m.id, Amount: split})
		}
	}

	if m.p.newsMean > 0 {
		m.due[actNews] = t + expMillis(&m.rNews, m.p.newsMean)
	}
	for i := range m.makers {
		m.makers[i].due = t
	}
	m.makerDue()
	if m.p.noiseMean > 0 {
		m.due[actNoise] = t + expMillis(&m.rNoise, m.p.noiseMean)
	}
	if m.p.infMean > 0 {
		m.due[actInformed] = t + expMillis(&m.rInf, m.p.infMean)
	}
	at := m.p.resolveAt
	if m.p.resolveEnd && m.info.EndDate > 0 {
		if end := m.info.EndDate * 1000; at == 0 || end < at {
			at = end
		}
	}
	if at > 0 {
		m.resolveAt = max(at, t)
		m.due[actResolve] = m.resolveAt
		if m.p.reveal > 0 {
			m.due[actReveal] = max(m.resolveAt-m.p.reveal, t)
		}
	}
	return dst
}

// revealLogit is the logit the fair value converges to once the outcome is known:
// ln(0.99/0.01).
var revealLogit = logit(990_000)

// reveal draws the winner from the fair value and starts the convergence to it.
func (m *mstate) reveal(s *Sim, t int64) {
	u := uintN(&m.rRes, uint64(market.One))
	m.advanceFair(s, t)
	m.revealed, m.winner, m.target = true, market.No, -revealLogit
	if u < uint64(m.fair) {
		m.winner, m.target = market.Yes, revealLogit
	}
	m.record(s, t, true)
}

// gone handles a market that can no longer trade: after a resolution (by the sim or
// anyone else) the participants redeem what they hold.
func (m *mstate) gone(t int64, v View, dst []exchange.Command) []exchange.Command {
	if !m.info.Resolved {
		return dst
	}
	return m.redeemAll(t, v, dst)
}

func (m *mstate) redeemAll(t int64, v View, dst []exchange.Command) []exchange.Command {
	for _, a := range m.accounts() {
		ya, yr := v.TokenBalance(a.addr, m.yes)
		na, nr := v.TokenBalance(a.addr, m.no)
		if ya+yr+na+nr > 0 {
			dst = append(dst, exchange.Command{Kind: exchange.Redeem, Time: t, Owner: a.addr, Market: m.id})
		}
	}
	return dst
}

// resolve resolves the market: YES with probability equal to the fair value.
func (m *mstate) resolve(s *Sim, t int64, v View, dst []exchange.Command) []exchange.Command {
	u := uintN(&m.rRes, uint64(market.One))
	if !m.refresh(v) && m.done {
		return m.gone(t, v, dst)
	}
	m.advanceFair(s, t)
	winner := market.No
	if m.revealed {
		winner = m.winner
	} else if u < uint64(m.fair) {
		winner = market.Yes
	}
	dst = append(dst, exchange.Command{Kind: exchange.Resolve, Time: t, Market: m.id, Winner: winner})
	dst = m.redeemAll(t, v, dst)
	m.done = true
	m.sum.Resolved, m.sum.Winner = true, winner
	m.record(s, t, false)
	return dst
}

// news applies a jump to the latent logit: an exponential size with a random sign.
// The maker learns it only after its reaction delay; informed followers arrive soon.
func (m *mstate) news(s *Sim, t int64) {
	m.due[actNews] = t + expMillis(&m.rNews, m.p.newsMean)
	size := fix(mulQ32(uint64(expDeviate(&m.rNews)), uint64(m.p.jumpMean)))
	if uintN(&m.rNews, 2) == 0 {
		size = -size
	}
	var react [MaxMakers]int64
	for i := range m.makers {
		react[i] = m.p.reaction/2 + int64(uintN(&m.rNews, uint64(m.p.reaction/2+1)))
	}
	var delays [MaxBurst]int64
	for i := 0; i < m.p.followers; i++ {
		delays[i] = expMillis(&m.rNews, m.p.delay)
	}

	m.advanceFair(s, t)
	old := m.x
	m.x = clampLogit(m.x + size)
	m.setFair()
	m.sum.News++
	m.record(s, t, true)

	for i := range m.makers {
		mk := &m.makers[i]
		if mk.until <= t {
			mk.lag = 0
		}
		mk.lag += m.x - old
		mk.until = max(mk.until, t+react[i])
		if mk.due != never {
			mk.due = min(mk.due, mk.until)
		}
	}
	m.makerDue()
	for i := 0; i < m.p.followers; i++ {
		m.follow(t + delays[i])
	}
}

// follow schedules an informed arrival at t (dropped when MaxBurst are pending).
func (m *mstate) follow(t int64) {
	if m.nFollow == len(m.followers) {
		return
	}
	i := m.nFollow
	for i > 0 && m.followers[i-1] > t {
		m.followers[i] = m.followers[i-1]
		i--
	}
	m.followers[i] = t
	m.nFollow++
}

// quote is the market maker's requote: a ladder of levels around its belief of the
// fair value, skewed against its inventory, widened with volatility, reconciled
// with its open orders (orders at a wanted price with at least half the wanted size
// stay; the others are cancelled; missing levels are placed).
func (m *mstate) quote(s *Sim, mk *maker, t int64, v View, dst []exchange.Command) []exchange.Command {
	p := &m.p
	span := p.makerMean * 3 / 5
	mk.due = t + p.makerMean*7/10 + int64(uintN(&m.rMaker, uint64(span+1)))
	if !m.refresh(v) {
		if m.done {
			return m.gone(t, v, dst)
		}
		return dst
	}
	m.advanceFair(s, t)
	if t >= mk.until {
		mk.lag = 0
	} else {
		mk.due = min(mk.due, mk.until)
	}
	m.sum.MakerRefreshes++
	tick := m.info.TickSize

	bb, okb := v.BestBid(m.yes)
	ba, oka := v.BestAsk(m.yes)
	if okb && oka {
		m.sum.Spreads[min((ba.Price-bb.Price)/tick, market.Micros(len(m.sum.Spreads)-1))]++
	} else {
		m.sum.Spreads[0]++
	}

	belief := sigmoid(clampLogit(m.x - mk.lag))
	if mk.t != 0 && t > mk.t {
		d := int64(belief - mk.fair)
		mk.v += (d*d/(t-mk.t) - mk.v) / 8
	}
	mk.fair, mk.t = belief, t

	acct := &mk.acct
	n0 := len(dst)
	dst, coll, collRes := m.fundRes(acct, t, v, dst)
	ya, yr := v.TokenBalance(acct.addr, m.yes)
	na, nr := v.TokenBalance(acct.addr, m.no)
	if q := min(ya, na) - p.makerInv; q >= market.One {
		dst = append(dst, exchange.Command{Kind: exchange.Merge, Time: t, Owner: acct.addr, Market: m.id, Amount: q})
		ya, na, coll = ya-q, na-q, coll+q
	}
	inv := ya + yr - na - nr

	// The spread: MakerSpread ticks, wider when the one-second standard deviation
	// of the belief is large.
	ticks := market.Micros(mk.spread)
	if p.volK > 0 {
		sigma := market.Micros(isqrt(uint64(mk.v) * 1000))
		half, _ := market.MulDiv(sigma, market.Micros(p.volK), market.One)
		ticks = max(ticks, min((2*half+tick-1)/tick, 50))
	}
	// Reservation price: the belief moved one tick against the inventory per
	// MakerSkew shares, at most half the spread, so the belief stays within the
	// quotes.
	shift, _ := market.MulDiv(abs(inv), tick, p.skew)
	shift = min(shift, ticks*tick/2)
	if inv < 0 {
		shift = -shift
	}
	bid0 := roundTick(belief-shift-ticks*tick/2, tick)
	ask0 := bid0 + ticks*tick

	// Sizes: the side that adds to the inventory shrinks in proportion to
	// |inventory| / MakerMaxInventory, and is not quoted beyond it.
	minSize := ceilLot(m.info.MinSize)
	var scale [2]market.Micros // bids, asks: millionths of the full size
	scale[0], scale[1] = market.One, market.One
	if add := 0; inv != 0 {
		if inv < 0 {
			add = 1
		}
		f, _ := market.MulDiv(min(abs(inv), p.maxInv), market.One, p.maxInv)
		scale[add] = market.One - f
	}
	var want [2][MaxLevels]struct {
		px, size market.Micros
		kept     bool
	}
	var n [2]int
	for k := 0; k < p.levels; k++ {
		full := mk.size + market.Micros(k)*mk.step
		off := market.Micros(k*p.gap) * tick
		for bs, px := range [2]market.Micros{bid0 - off, ask0 + off} {
			if scale[bs] == 0 || px < tick || px > market.One-tick {
				continue
			}
			size, _ := market.MulDiv(full, scale[bs], market.One)
			want[bs][n[bs]].px, want[bs][n[bs]].size = px, max(size/market.Lot*market.Lot, minSize, market.Lot)
			n[bs]++
		}
	}

	// Fast path: if the last refresh found the orders as wanted (it sent nothing)
	// and neither the balances (a fill or a cancel changes them) nor the wanted
	// ladder changed since, the orders are still as wanted: reconciling would send
	// nothing. Exact, and it saves reading the open orders.
	key := quoteKey{coll: coll, collRes: collRes, ya: ya, yr: yr, na: na, nr: nr, bid0: bid0, ask0: ask0,
		scale: scale, tick: tick, minSize: minSize, fee: m.info.FeeBps, levels: n}
	if mk.idle && key == mk.key && len(dst) == n0 {
		return dst
	}
	mk.key = key

	budY, budN := ya, na
	s.orders = v.OpenOrders(s.orders[:0], exchange.Filter{Owner: acct.addr, Market: m.id})
	for i := range s.orders {
		o := &s.orders[i]
		bs, px := yesBook(o)
		keep := false
		for k := 0; k < n[bs]; k++ {
			w := &want[bs][k]
			if w.px == px && !w.kept && 2*o.Remaining() >= w.size {
				w.kept, keep = true, true
				break
			}
		}
		if keep {
			continue
		}
		dst = append(dst, exchange.Command{Kind: exchange.Cancel, Time: t, Owner: acct.addr, Order: o.ID})
		switch {
		case o.Side == market.Buy:
			res, _ := market.Notional(o.Price, o.Remaining())
			coll += res
		case o.Outcome == market.Yes:
			budY += o.Remaining()
		default:
			budN += o.Remaining()
		}
	}

	nonce := v.Nonce(acct.addr)
	for k := 0; k < max(n[0], n[1]); k++ {
		for bs := 0; bs < 2; bs++ {
			if k >= n[bs] || want[bs][k].kept {
				continue
			}
			w := &want[bs][k]
			// A bid sells NO when the maker has it, else buys YES; an ask sells YES,
			// else buys NO. Either way it rests at w.px in the YES book.
			own, tok, price := &budN, m.no, market.One-w.px
			buyTok, buyPrice := m.yes, w.px
			if bs == 1 {
				own, tok, price = &budY, m.yes, w.px
				buyTok, buyPrice = m.no, market.One-w.px
			}
			if *own >= w.size {
				*own -= w.size
				dst = m.place(s, dst, t, acct.addr, nonce, tok, market.Sell, market.GTC, price, w.size, 0)
				continue
			}
			if cost := m.cost(buyPrice, w.size); coll >= cost {
				coll -= cost
				dst = m.place(s, dst, t, acct.addr, nonce, buyTok, market.Buy, market.GTC, buyPrice, w.size, 0)
			}
		}
	}
	mk.idle = len(dst) == n0
	return dst
}

// quoteKey is what a maker's orders depend on, for the fast path of quote.
type quoteKey struct {
	coll, collRes, ya, yr, na, nr market.Micros
	bid0, ask0, tick, minSize     market.Micros
	scale                         [2]market.Micros
	fee                           uint32
	levels                        [2]int
}

// yesBook returns the YES-book side (0 bids, 1 asks) and price at which o rests.
func yesBook(o *market.Order) (int, market.Micros) {
	if o.Outcome == market.Yes {
		if o.Side == market.Buy {
			return 0, o.Price
		}
		return 1, o.Price
	}
	if o.Side == market.Buy {
		return 1, market.One - o.Price
	}
	return 0, market.One - o.Price
}

// trade is a noise trader's arrival: a random side and size, taking through the
// touch (FAK) or resting a GTD order near it.
func (m *mstate) trade(s *Sim, t int64, v View, dst []exchange.Command) []exchange.Command {
	p := &m.p
	a := &m.noise[uintN(&m.rNoise, uint64(len(m.noise)))]
	coin := market.Micros(uintN(&m.rNoise, uint64(market.One))) // buys when coin < P(buy)
	size := min(expMicros(&m.rNoise, p.noiseSize, market.Lot), p.noiseMax)
	take := chance(&m.rNoise, p.take)
	slip := market.Micros(uintN(&m.rNoise, uint64(p.slip+1)))
	off := market.Micros(uintN(&m.rNoise, 6)) - 4 // passive: 4 ticks behind the touch to 1 inside
	life := max(expMillis(&m.rNoise, p.life), 5000)
	if !m.refresh(v) {
		if m.done {
			return m.gone(t, v, dst)
		}
		return dst
	}
	m.sum.NoiseArrivals++
	m.advanceFair(s, t)
	tick := m.info.TickSize
	bb, okb := v.BestBid(m.yes)
	ba, oka := v.BestAsk(m.yes)
	pbuy := market.One / 2
	if okb && oka && p.tilt > 0 {
		// ½ + tilt × (fair − mid)/tick, within [0.1, 0.9].
		d := 2*m.fair - bb.Price - ba.Price // twice (fair − mid)
		pbuy += p.tilt * d / (2 * tick)
		pbuy = min(max(pbuy, market.One/10), market.One*9/10)
	}
	buy := coin < pbuy
	var px market.Micros
	typ, exp := market.FAK, int64(0)
	switch {
	case take && buy:
		if !oka {
			return dst
		}
		px = min(ba.Price+slip*tick, market.One-tick)
	case take:
		if !okb {
			return dst
		}
		px = max(bb.Price-slip*tick, tick)
	default:
		typ, exp = market.GTD, (t+life)/1000+1
		size = max(size, ceilLot(m.info.MinSize))
		switch {
		case buy && okb:
			px = bb.Price + off*tick
		case buy && oka:
			px = ba.Price - (2-off)*tick
		case !buy && oka:
			px = ba.Price - off*tick
		case !buy && okb:
			px = bb.Price + (2-off)*tick
		default:
			return dst
		}
		if buy && oka && px >= ba.Price {
			px = ba.Price - tick
		}
		if !buy && okb && px <= bb.Price {
			px = bb.Price + tick
		}
		if px < tick || px > market.One-tick {
			return dst
		}
	}
	side := market.Sell
	if buy {
		side = market.Buy
	}
	if take && !m.othersWithin(s, v, a.addr, side, px) {
		return dst // only its own resting orders there: a FAK would be refused
	}
	return m.order(s, dst, t, v, a, side, px, size, typ, exp)
}

// othersWithin reports whether the opposite side of the YES book holds liquidity of
// accounts other than owner at prices a taker of side with limit px reaches.
func (m *mstate) othersWithin(s *Sim, v View, owner market.Address, side market.Side, px market.Micros) bool {
	opp, bs := market.Sell, 1
	if side == market.Sell {
		opp, bs = market.Buy, 0
	}
	s.orders = v.OpenOrders(s.orders[:0], exchange.Filter{Owner: owner, Market: m.id})
	s.levels = v.Levels(m.yes, opp, s.levels[:0], 8)
	for _, l := range s.levels {
		if side == market.Buy && l.Price > px || side == market.Sell && l.Price < px {
			return false
		}
		own := market.Micros(0)
		for i := range s.orders {
			if obs, opx := yesBook(&s.orders[i]); obs == bs && opx == l.Price {
				own += s.orders[i].Remaining()
			}
		}
		if l.Size > own {
			return true
		}
	}
	return false
}

// inform is an informed trader's arrival: it buys every ask at least InformedEdge
// ticks below the fair value (or sells every such bid above it), up to its maximum
// size, with a FAK at the edge price.
func (m *mstate) inform(s *Sim, t int64, v View, dst []exchange.Command) []exchange.Command {
	if len(m.informed) == 0 {
		return dst
	}
	a := &m.informed[m.nextInf]
	m.nextInf = (m.nextInf + 1) % len(m.informed)
	if !m.refresh(v) {
		if m.done {
			return m.gone(t, v, dst)
		}
		return dst
	}
	m.advanceFair(s, t)
	m.sum.InformedArrivals++
	tick := m.info.TickSize
	edge := market.Micros(m.p.edge) * tick
	buyAt := (m.fair - edge) / tick * tick
	sellAt := (m.fair + edge + tick - 1) / tick * tick
	const depth = 32
	if buyAt >= tick {
		s.levels = v.Levels(m.yes, market.Sell, s.levels[:0], depth)
		if size := sizeThrough(s.levels, buyAt, true, m.p.infMax); size > 0 {
			return m.order(s, dst, t, v, a, market.Buy, buyAt, size, market.FAK, 0)
		}
	}
	if sellAt <= market.One-tick {
		s.levels = v.Levels(m.yes, market.Buy, s.levels[:0], depth)
		if size := sizeThrough(s.levels, sellAt, false, m.p.infMax); size > 0 {
			return m.order(s, dst, t, v, a, market.Sell, sellAt, size, market.FAK, 0)
		}
	}
	return dst
}

// sizeThrough sums the levels (best first) priced at or better than limit for a
// buyer (asks ≤ limit) or a seller (bids ≥ limit), up to most.
func sizeThrough(levels []market.Level, limit market.Micros, buy bool, most market.Micros) market.Micros {
	var sum market.Micros
	for _, l := range levels {
		if buy && l.Price > limit || !buy && l.Price < limit {
			break
		}
		sum += l.Size
		if sum >= most {
			return most
		}
	}
	return sum
}

// order places a YES-book order of a noise or informed trader: a bid at px sells NO
// at 1−px when the trader holds enough NO (closing a position), else buys YES; an ask
// sells YES, else buys NO. A buy larger than the trader's collateral is shrunk. The
// trader first tops up its collateral and merges complete sets it holds.
func (m *mstate) order(s *Sim, dst []exchange.Command, t int64, v View, a *account, side market.Side, px, size market.Micros,
	typ market.OrderType, exp int64) []exchange.Command {
	dst, coll := m.fund(a, t, v, dst)
	ya, _ := v.TokenBalance(a.addr, m.yes)
	na, _ := v.TokenBalance(a.addr, m.no)
	if q := min(ya, na); q >= market.One {
		dst = append(dst, exchange.Command{Kind: exchange.Merge, Time: t, Owner: a.addr, Market: m.id, Amount: q})
		ya, na, coll = ya-q, na-q, coll+q
	}
	held, tok, price := na, m.no, market.One-px
	buyTok, buyPrice := m.yes, px
	if side == market.Sell {
		held, tok, price = ya, m.yes, px
		buyTok, buyPrice = m.no, market.One-px
	}
	nonce := v.Nonce(a.addr)
	if held >= size {
		return m.place(s, dst, t, a.addr, nonce, tok, market.Sell, typ, price, size, exp)
	}
	if m.cost(buyPrice, size) > coll {
		size = m.affordable(buyPrice, coll)
		if size <= 0 || typ.Rests() && size < m.info.MinSize {
			return dst
		}
	}
	return m.place(s, dst, t, a.addr, nonce, buyTok, market.Buy, typ, buyPrice, size, exp)
}

// fund tops up a's collateral to its capital when it has fallen below a quarter of
// it, and returns its available collateral after the deposit.
func (m *mstate) fund(a *account, t int64, v View, dst []exchange.Command) ([]exchange.Command, market.Micros) {
	dst, avail, _ := m.fundRes(a, t, v, dst)
	return dst, avail
}

// fundRes is fund also returning the reserved collateral.
func (m *mstate) fundRes(a *account, t int64, v View, dst []exchange.Command) ([]exchange.Command, market.Micros, market.Micros) {
	avail, res := v.Collateral(a.addr)
	if have := avail + res; have < a.capital/4 {
		amt := min(a.capital-have, market.MaxMicros)
		dst = append(dst, exchange.Command{Kind: exchange.Deposit, Time: t, Owner: a.addr, Amount: amt})
		avail += amt
	}
	return dst, avail, res
}

// cost bounds what a BUY of size at price reserves: the notional plus the largest
// taker fee (bps × ½ × size; the engine's bound uses min(price, ½)).
func (m *mstate) cost(price, size market.Micros) market.Micros {
	n, _ := market.Notional(price, size)
	if bps := market.Micros(m.info.FeeBps); bps > 0 {
		f, _ := market.MulDiv(size, bps, 20_000)
		n += f + 1
	}
	return n
}

// affordable returns the largest size (whole lots) whose cost at price is within
// coll.
func (m *mstate) affordable(price, coll market.Micros) market.Micros {
	per := price + market.Micros(m.info.FeeBps)*market.One/20_000 + 1 // per share, with the fee bound
	q, ok := market.MulDiv(coll, market.One, per)
	if !ok {
		return 0
	}
	q = q / market.Lot * market.Lot
	for q > 0 && m.cost(price, q) > coll {
		q -= market.Lot
	}
	return q
}

// place appends a Place command with a fresh order id.
func (m *mstate) place(s *Sim, dst []exchange.Command, t int64, owner market.Address, nonce uint64, tok market.TokenID,
	side market.Side, typ market.OrderType, price, size market.Micros, exp int64) []exchange.Command {
	if typ == market.GTD {
		m.expiries = pushExpiry(m.expiries, exp*1000)
	}
	return append(dst, exchange.Command{
		Kind: exchange.Place, Time: t, Owner: owner, Market: m.id, Token: tok, Order: s.ids.next(&m.ids),
		Side: side, Type: typ, Price: price, Size: size, Expiration: exp, Nonce: nonce, FeeRateBps: m.info.FeeBps,
	})
}

func abs(x market.Micros) market.Micros {
	if x < 0 {
		return -x
	}
	return x
}

// roundTick rounds p to the nearest multiple of tick (halves up); negative p gives 0
// or less, which callers drop.
func roundTick(p, tick market.Micros) market.Micros {
	if p < 0 {
		return -((-p + tick/2) / tick * tick)
	}
	return (p + tick/2) / tick * tick
}

// ceilLot rounds a size up to a whole number of lots.
func ceilLot(x market.Micros) market.Micros { return (x + market.Lot - 1) / market.Lot * market.Lot }

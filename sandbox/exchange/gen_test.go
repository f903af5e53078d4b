package exchange

import (
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// source is where a generator draws its choices: a seeded PCG in property tests, the
// fuzzer's bytes in fuzz tests.
type source interface{ IntN(n int) int }

// byteSource draws from a byte string; it reports exhaustion so a fuzz run ends.
type byteSource struct {
	b []byte
	i int
}

func (s *byteSource) done() bool { return s.i >= len(s.b) }

func (s *byteSource) IntN(n int) int {
	var v uint32
	for k := 0; k < 4 && s.i < len(s.b); k++ {
		v = v<<8 | uint32(s.b[s.i])
		s.i++
		if n <= 1<<(8*(k+1)) {
			break
		}
	}
	return int(v % uint32(n))
}

// gen produces plausible command streams: mostly valid commands around a few markets
// and accounts, with a share of invalid ones (off tick, off lot, wrong nonce, reused
// ids, unknown orders, clocks going backwards) so that every rejection path runs.
type gen struct {
	r       source
	e       *Engine
	now     int64
	owners  []market.Address
	markets []market.ConditionID
	fair    map[market.ConditionID]market.Micros // a random walk the prices cluster around
	ids     []market.OrderID
	orders  int
	group   []market.ConditionID // markets of neg-risk events
}

func newGen(r source, e *Engine) *gen {
	g := &gen{r: r, e: e, now: 1_700_000_000_000, fair: map[market.ConditionID]market.Micros{}}
	for i := 1; i <= 6; i++ {
		g.owners = append(g.owners, addr(byte(i)))
	}
	return g
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) chance(percent int) bool { return g.r.IntN(100) < percent }

// setup lists three markets (ticks 0.01, 0.001 and 0.1, fees 0, 50 and 200 bps) and
// funds every owner.
func (g *gen) setup() []Command {
	var out []Command
	for i, p := range []struct {
		tick string
		fee  uint32
		min  string
	}{{"0.01", 0, "1"}, {"0.001", 50, "0"}, {"0.1", 200, "5"}} {
		out = append(out, g.createMarket(i, p.tick, p.fee, p.min))
	}
	// a neg-risk event of three markets, between which Convert moves positions
	for i := 0; i < 3; i++ {
		out = append(out, g.createGroupMarket("ev1"))
	}
	for _, o := range g.owners {
		out = append(out, Command{Kind: Deposit, Time: g.now, Owner: o, Amount: d("2000")})
	}
	return out
}

// createGroupMarket lists a market of neg-risk event ev (tick 0.01, no fee).
func (g *gen) createGroupMarket(ev string) Command {
	c := g.createMarket(len(g.markets), "0.01", 0, "1")
	c.Spec.NegRisk, c.Spec.NegRiskID = true, ev
	g.group = append(g.group, c.Market)
	return c
}

func (g *gen) createMarket(i int, tick string, fee uint32, min string) Command {
	id := market.ConditionID("0xm" + strconv.Itoa(i))
	s := spec(market.TokenID("t"+strconv.Itoa(i)+"y"), market.TokenID("t"+strconv.Itoa(i)+"n"), tick)
	s.FeeBps, s.MinSize = fee, d(min)
	g.markets = append(g.markets, id)
	g.fair[id] = market.One / 2
	return Command{Kind: CreateMarket, Time: g.now, Market: id, Spec: s}
}

func (g *gen) owner() market.Address {
	switch {
	case g.chance(1):
		return market.Address{}
	case g.chance(1):
		return feeAcct
	}
	return g.owners[g.pick(len(g.owners))]
}

// market picks a market, preferring (three draws) one that takes orders.
func (g *gen) market() (market.ConditionID, market.Info) {
	var id market.ConditionID
	var info market.Info
	for i := 0; i < 3; i++ {
		id = g.markets[g.pick(len(g.markets))]
		if info, _ = g.e.Market(id); info.Tradable() {
			break
		}
	}
	return id, info
}

func (g *gen) command() Command {
	g.now += int64(g.pick(2000))
	if g.chance(1) {
		g.now -= 10_000 // a clock that goes backwards is clamped by the engine
	}
	c := Command{Time: g.now}
	switch x := g.pick(1000); {
	case x < 560:
		g.place(&c)
	case x < 700:
		c.Kind = Cancel
		if open := g.e.OpenOrders(nil, Filter{Owner: g.owners[g.pick(len(g.owners))]}); len(open) > 0 && g.chance(75) {
			c.Order = open[g.pick(len(open))].ID
		} else if len(g.ids) > 0 {
			c.Order = g.ids[len(g.ids)-1-g.pick(min(len(g.ids), 60))]
		}
		switch {
		case g.chance(60):
			if o, ok := g.e.Order(c.Order); ok {
				c.Owner = o.Owner
			}
		case g.chance(20):
		default:
			c.Owner = g.owner()
		}
	case x < 720:
		c.Kind = CancelAll
		if g.chance(70) {
			c.Owner = g.owner()
		}
		if g.chance(40) {
			c.Market, _ = g.market()
		} else if g.chance(30) {
			_, info := g.market()
			c.Token = info.Tokens[g.pick(2)]
		}
	case x < 780:
		c.Kind, c.Owner, c.Amount = Deposit, g.owner(), market.Micros(1+g.pick(500_000_000))
	case x < 790:
		c.Kind, c.Owner, c.To = Transfer, g.owner(), g.owner()
		avail, _ := g.e.Collateral(c.Owner)
		c.Amount = market.Micros(g.pick(int(avail/2) + 2))
	case x < 820:
		c.Kind, c.Owner = Withdraw, g.owner()
		avail, _ := g.e.Collateral(c.Owner)
		c.Amount = market.Micros(g.pick(int(avail/2) + 2))
	case x < 865:
		c.Kind, c.Owner = Split, g.owner()
		c.Market, _ = g.market()
		c.Amount = market.Micros(1 + g.pick(100_000_000))
	case x < 880:
		c.Kind, c.Owner = Convert, g.owner()
		c.Market = g.group[g.pick(len(g.group))]
		if g.chance(3) {
			c.Market, _ = g.market() // maybe not neg-risk
		}
		info, _ := g.e.Market(c.Market)
		no, _ := g.e.TokenBalance(c.Owner, info.Tokens[market.No])
		c.Amount = market.Micros(g.pick(int(no) + 2))
	case x < 910:
		c.Kind, c.Owner = Merge, g.owner()
		var info market.Info
		c.Market, info = g.market()
		y, _ := g.e.TokenBalance(c.Owner, info.Tokens[0])
		n, _ := g.e.TokenBalance(c.Owner, info.Tokens[1])
		c.Amount = market.Micros(g.pick(int(min(y, n)) + 2))
	case x < 925:
		c.Kind = AdvanceTime
		g.now += int64(g.pick(180_000))
		c.Time = g.now
	case x < 932:
		c.Kind, c.Owner = IncrementNonce, g.owner()
	case x < 942:
		c.Kind, c.Owner = SetAccountMode, g.owner()
		c.Mode = market.ModeNormal
		if g.chance(25) {
			c.Mode = market.AccountMode(g.pick(4))
		}
	case x < 955:
		c.Kind = UpdateMarket
		var info market.Info
		c.Market, info = g.market()
		s := spec(info.Tokens[0], info.Tokens[1], "0.01")
		s.TickSize = market.TickSizes[g.pick(len(market.TickSizes))]
		s.FeeBps = []uint32{0, 10, 100}[g.pick(3)]
		s.MinSize = market.Micros(g.pick(3)) * market.One
		s.AcceptingOrders = !g.chance(10)
		s.Closed = g.chance(5)
		c.Spec = s
	case x < 956:
		c.Kind, c.Winner = Resolve, market.Outcome(g.pick(2))
		c.Market, _ = g.market()
	case x < 985:
		c.Kind, c.Owner = Redeem, g.owner()
		c.Market, _ = g.market()
	case x < 987 && len(g.markets) < 12:
		c = g.createMarket(len(g.markets), []string{"0.01", "0.001", "0.1", "0.0001"}[g.pick(4)], uint32(g.pick(3))*25, "1")
	case x < 990 && len(g.markets) < 12:
		c = g.createGroupMarket([]string{"ev1", "ev2"}[g.pick(2)]) // ev1 refuses it once it converted
	default:
		g.place(&c)
	}
	return c
}

func (g *gen) place(c *Command) {
	c.Kind = Place
	id, info := g.market()
	c.Token = info.Tokens[g.pick(2)]
	c.Side = market.Side(1 + g.pick(2))
	c.Owner = g.owner()
	tick := info.TickSize
	if tick == 0 {
		tick = d("0.01")
	}
	// prices cluster around the market's fair value, which drifts
	f := g.fair[id] + market.Micros(g.pick(5)-2)*tick
	f = max(tick, min(market.One-tick, f/tick*tick))
	g.fair[id] = f
	p := f + market.Micros(g.pick(9)-4)*tick
	if g.chance(20) {
		p = tick * market.Micros(1+g.pick(int(market.One/tick)-1))
	}
	if info.Tokens[1] == c.Token {
		p = market.One - p
	}
	c.Price = max(tick, min(market.One-tick, p))
	c.Size = market.Lot * market.Micros(1+g.pick(3000))
	if held, _ := g.e.TokenBalance(c.Owner, c.Token); c.Side == market.Sell && held >= market.Lot && g.chance(80) {
		c.Size = market.Lot * market.Micros(1+g.pick(int(held/market.Lot)))
	}
	switch x := g.pick(100); {
	case x < 45:
		c.Type = market.GTC
	case x < 60:
		c.Type = market.GTD
		c.Expiration = g.now/1000 + int64(g.pick(300)) - 5
	case x < 75:
		c.Type = market.FOK
	default:
		c.Type = market.FAK
	}
	c.PostOnly = g.chance(10)
	c.Nonce = g.e.Nonce(c.Owner)
	if g.chance(3) {
		c.Nonce++
	}
	c.FeeRateBps = info.FeeBps
	if g.chance(3) && c.FeeRateBps > 0 {
		c.FeeRateBps--
	}
	if g.chance(3) {
		c.Price++
	}
	if g.chance(2) {
		c.Size += 1
	}
	if g.chance(3) && len(g.ids) > 0 {
		c.Order = g.ids[g.pick(len(g.ids))]
	} else {
		g.orders++
		c.Order = market.OrderID("g" + strconv.Itoa(g.orders))
		g.ids = append(g.ids, c.Order)
	}
}

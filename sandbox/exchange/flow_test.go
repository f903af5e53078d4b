package exchange

import (
	"fmt"
	"math"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// flowGen generates the command stream of BenchmarkMixedFlow (and its deep variant)
// ahead of the timed code, in blocks: every command is decided from the state of a
// shadow engine (the core itself, with ForgetFinal since the stream's ids are unique)
// that applies it as it is generated, so the stream is valid (no rejection), depends
// only on the seed, and the engines under measurement only read finished blocks.
// Every consumer of the same flowGen parameters sees the same commands, byte for byte.
type flowGen struct {
	v      *benchVenue // the shadow
	r      rng
	deep   int       // keep this many orders resting outside the band (the wall)
	next   int       // next order number
	live   []int32   // order numbers resting in the shadow, placed near the top
	wall   []int32   // order numbers resting in the shadow, placed deep
	where  []int32   // by order number: see noWhere
	chunks []string  // order ids, flowIDs per string
	setup  []Command // markets, deposits, splits (and the deep book): apply before timing
}

const (
	flowMarkets, flowMakers, flowTakers = 8, 48, 16
	flowBlock                           = 1024 // commands per generated block (≈ 300 KB: stays in L2)
	idWidth, flowIDs                    = 9, 4096

	// wallGap: with a deep book, deep orders rest at YES prices at least wallGap
	// from ½ on either side (over the rest of the range), and marketable orders take
	// only levels strictly inside that band, where the near-the-top flow trades.
	wallGap = market.One / 10
)

// newFlowGen returns the generator of the mixed flow: 8 markets (six with tick 0.01,
// two with 0.001; half with a 1% taker fee), 48 makers and 16 takers funded in every
// market. With deep > 0 the setup also rests deep orders (the wall) at random levels
// over the whole price range outside the band ½ ± wallGap of every market, and the
// flow keeps the wall at deep orders: one cancel in five takes a wall order and the
// next passive placement replaces it, while marketable orders take only levels
// inside the band.
func newFlowGen(tb testing.TB, deep int) *flowGen {
	g := &flowGen{r: rng(0x9e3779b97f4a7c15), deep: deep}
	g.v = newBenchVenue(tb, flowMarkets, flowMakers, flowTakers, 16_384)
	g.v.e.cfg.ForgetFinal = true // ids are unique: the shadow need not remember them
	g.setup = append(g.setup, g.v.setup...)
	if deep > 0 {
		for len(g.wall) < deep {
			block := g.block(tb, nil, 1024, true)
			g.setup = append(g.setup, block...)
		}
	}
	return g
}

// newFlowEngine returns an engine with the generator's setup applied, configured as
// the server is (every id remembered; admitted: the server's admission refuses
// duplicate ids before the engine, docs/design/0169).
func (g *flowGen) newFlowEngine(tb testing.TB) *Engine {
	e := New(Config{FeeAccount: feeAcct, Orders: 16_384, Accounts: flowMakers + flowTakers + 1, Markets: flowMarkets})
	e.SetAdmitted(true) // the stream's ids are unique, as the server's admission makes them
	for i := range g.setup {
		if _, err := e.Apply(&g.setup[i]); err != nil {
			tb.Fatalf("setup %d (%s): %v", i, g.setup[i].Kind, err)
		}
	}
	return e
}

// block appends the next n commands of the stream to dst and returns it. With
// fill, every command is a deep placement (for the setup).
func (g *flowGen) block(tb testing.TB, dst []Command, n int, fill bool) []Command {
	for n > 0 {
		if g.step(tb, fill) {
			dst = append(dst, g.v.cmd)
			n--
		}
	}
	return dst
}

// id returns the id of order number k, cut from strings of flowIDs ids made as the
// numbers are reached (the engines keep the ids, so the strings stay).
func (g *flowGen) id(k int) market.OrderID {
	for k/flowIDs >= len(g.chunks) {
		b := make([]byte, flowIDs*idWidth)
		for i := range flowIDs {
			for j, x := idWidth-1, len(g.chunks)*flowIDs+i; j >= 0; j, x = j-1, x/10 {
				b[i*idWidth+j] = byte('0' + x%10)
			}
		}
		g.chunks = append(g.chunks, string(b))
	}
	i := k % flowIDs * idWidth
	return market.OrderID(g.chunks[k/flowIDs][i : i+idWidth])
}

// step decides the next command, applies it to the shadow and reports whether it
// produced one (a marketable order with nothing to take is skipped).
func (g *flowGen) step(tb testing.TB, fill bool) bool {
	v, r := g.v, &g.r
	m := &v.markets[r.intn(len(v.markets))]
	x := r.intn(100)
	if fill {
		x = 0
	}
	if x >= 50 && x < 85 && len(g.live)+len(g.wall) == 0 {
		x = 0
	}
	var band [2]market.Micros
	wall := false
	switch {
	case x < 50 && len(g.wall) < g.deep: // a deep placement anywhere outside the band
		bidSide := r.intn(2) == 0
		n := int((market.One/2 - wallGap) / m.tick) // levels on each side of the band
		px := market.Micros(1+r.intn(n)) * m.tick
		switch {
		case bidSide && m.ask != 0: // never cross the near-the-top flow
			px = min(px, m.ask-m.tick)
		case !bidSide:
			px = market.One - px
			if m.bid != 0 {
				px = max(px, m.bid+m.tick)
			}
		}
		v.restAt(m, g.id(g.next), v.makers[r.intn(len(v.makers))], bidSide, px,
			market.Lot*market.Micros(100+r.intn(1900)), r.intn(2) == 0)
		g.next++
		wall = true
	case x < 50: // passive near the top
		v.passive(m, g.id(g.next), v.makers[r.intn(len(v.makers))], r.intn(2) == 0, r.intn(5),
			market.Lot*market.Micros(100+r.intn(1900)), r.intn(2) == 0)
		v.cmd.PostOnly = r.intn(5) == 0
		g.next++
	case x < 85: // cancel
		set := &g.live
		if len(g.wall) > 0 && (len(g.live) == 0 || r.intn(5) == 0) {
			set = &g.wall
		}
		n := int((*set)[r.intn(len(*set))])
		g.remove(n)
		v.cmd = Command{Kind: Cancel, Order: g.id(n), Owner: market.Address{}}
	default: // marketable, inside the band when the book is deep
		if g.deep > 0 {
			band = [2]market.Micros{market.One/2 - wallGap, market.One/2 + wallGap}
		}
		if !v.marketable(m, g.id(g.next), v.takers[r.intn(len(v.takers))], r.intn(2) == 0, 1+r.intn(3), r.intn(2) == 0, band) {
			return false
		}
		switch r.intn(4) {
		case 0:
			v.cmd.Type = market.FAK
		case 1:
			v.cmd.Type = market.FOK
		}
		g.next++
	}
	evs, err := v.apply()
	if err != nil {
		tb.Fatalf("flow: %+v: %v", v.cmd, err)
	}
	for i := range evs {
		switch ev := &evs[i]; ev.Kind {
		case OrderRested:
			n := orderNum(ev.Order)
			for len(g.where) <= n {
				g.where = append(g.where, noWhere)
			}
			if wall {
				g.where[n] = -2 - int32(len(g.wall))
				g.wall = append(g.wall, int32(n))
			} else {
				g.where[n] = int32(len(g.live))
				g.live = append(g.live, int32(n))
			}
		case OrderFilled:
			if ev.Status == market.StatusMatched {
				g.remove(orderNum(ev.Order))
			}
		}
	}
	return true
}

// noWhere marks an order number that does not rest; where holds i for live[i] and
// -2-i for wall[i].
const noWhere = math.MinInt32

// remove forgets order number n from the resting sets.
func (g *flowGen) remove(n int) {
	if n >= len(g.where) || g.where[n] == noWhere {
		return
	}
	set, i, enc := &g.live, g.where[n], func(i int) int32 { return int32(i) }
	if i < 0 {
		set, i, enc = &g.wall, -2-i, func(i int) int32 { return -2 - int32(i) }
	}
	last := (*set)[len(*set)-1]
	(*set)[i] = last
	g.where[last] = enc(int(i))
	*set = (*set)[:len(*set)-1]
	g.where[n] = noWhere
}

func orderNum(id market.OrderID) int {
	n := 0
	for i := 0; i < len(id); i++ {
		n = n*10 + int(id[i]-'0')
	}
	return n
}

// newLadder returns a reference book with the generator's setup applied.
func (g *flowGen) newLadder() *ladder {
	l := newLadder(16_384)
	for i := range g.setup {
		l.apply(&g.setup[i])
	}
	return l
}

// TestLadderMakesTheEngineFills runs the stream of the flow benchmarks (shallow and
// deep) through the engine and the reference book and checks, command by command,
// that both make the same fills (maker, YES price, size, in order), and at the end
// that both books hold the same levels: the ratio of their speeds compares the same
// work.
func TestLadderMakesTheEngineFills(t *testing.T) {
	n := 60_000
	if raceEnabled || testing.Short() {
		n = 12_000
	}
	for _, deep := range []int{0, flowDeep} {
		t.Run(fmt.Sprintf("deep=%d", deep), func(t *testing.T) {
			g := newFlowGen(t, deep)
			e := g.newFlowEngine(t)
			l := g.newLadder()
			var fills, takes, foks, fillsOfFOK int
			var block []Command
			for done := 0; done < n; done += len(block) {
				block = g.block(t, block[:0], flowBlock, false)
				for i := range block {
					c := &block[i]
					evs, err := e.Apply(c)
					if err != nil {
						t.Fatalf("engine: %+v: %v", c, err)
					}
					l.apply(c)
					k := 0
					for j := range evs {
						ev := &evs[j]
						if ev.Kind != OrderFilled {
							continue
						}
						px := own(ev.Price, ev.Outcome)
						if k >= len(l.fills) || l.fills[k] != (ladderFill{maker: ev.Order, price: px, size: ev.Size}) {
							t.Fatalf("command %d (%+v): engine fill %d is %s %s×%s, ladder made %+v",
								done+i, c, k, ev.Order, px, ev.Size, l.fills)
						}
						k++
					}
					if k != len(l.fills) {
						t.Fatalf("command %d (%+v): engine made %d fills, ladder %d", done+i, c, k, len(l.fills))
					}
					fills += k
					if c.Kind == Place && k > 0 {
						takes++
						if c.Type == market.FOK {
							foks++
							fillsOfFOK += k
						}
					}
				}
			}
			for bi := range l.books {
				yesTok := g.v.markets[bi].tokens[market.Yes]
				for s, side := range []market.Side{market.Buy, market.Sell} {
					want := e.Levels(yesTok, side, nil, 0)
					var got []market.Level
					ls := &l.books[bi].side[s]
					for li := ls.best; li >= 0; li = ls.after(uint8(s), li) {
						got = append(got, market.Level{Price: market.Micros(li) * l.books[bi].unit, Size: ls.lv[li].size})
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("market %d side %s: ladder %v, engine %v", bi, side, got, want)
					}
				}
			}
			// the comparison is vacuous unless the stream trades, partly and wholly
			if takes < n/20 || foks == 0 || fills < takes+takes/4 {
				t.Fatalf("stream too tame: %d fills in %d takes (%d FOK) over %d commands", fills, takes, foks, n)
			}
			t.Logf("%d commands: %d fills in %d takes (%d FOK with %d fills), %d orders resting", n, fills, takes, foks, fillsOfFOK, len(g.live)+len(g.wall))
		})
	}
}

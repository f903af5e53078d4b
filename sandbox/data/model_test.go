package data

import (
	"cmp"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/market"
)

// model is an independent reference for the data service: average-cost positions,
// realized PnL, volume and activity computed with shopspring decimals from the fills
// the test script expects, without market.Position or the index. Its only rounding
// rule is the documented one: the cost removed by a partial sale is rounded down to
// the micro-unit.
type model struct {
	pos  map[mkey]*mpos
	rows []mrow
}

type mkey struct {
	who  market.Address
	slug string
	o    market.Outcome
}

type mpos struct {
	size, cost, realized, bought, invested decimal.Decimal
}

type mrow struct {
	time     int64
	who      market.Address
	kind     string
	vol      decimal.Decimal
	realized decimal.Decimal
}

func newModel() *model { return &model{pos: map[mkey]*mpos{}} }

func num(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func floor6(d decimal.Decimal) decimal.Decimal { return d.Truncate(6) }

func (m *model) p(who market.Address, slug string, o market.Outcome) *mpos {
	k := mkey{who, slug, o}
	if m.pos[k] == nil {
		m.pos[k] = &mpos{}
	}
	return m.pos[k]
}

func (p *mpos) buy(size, cash, fee decimal.Decimal) {
	p.size = p.size.Add(size)
	p.cost = p.cost.Add(cash).Add(fee)
	p.bought = p.bought.Add(size)
	p.invested = p.invested.Add(cash).Add(fee)
}

func (p *mpos) sell(size, proceeds, fee decimal.Decimal) decimal.Decimal {
	removed := p.cost
	if size.LessThan(p.size) {
		removed = floor6(p.cost.Mul(size).Div(p.size))
	}
	p.size = p.size.Sub(size)
	p.cost = p.cost.Sub(removed)
	r := proceeds.Sub(removed).Sub(fee)
	p.realized = p.realized.Add(r)
	return r
}

// fill books one expected trade fill.
func (m *model) fill(t int64, who market.Address, slug string, o market.Outcome, side market.Side, price, size, fee string) {
	cash := num(price).Mul(num(size))
	p := m.p(who, slug, o)
	r := decimal.Zero
	if side == market.Buy {
		p.buy(num(size), cash, num(fee))
	} else {
		r = p.sell(num(size), cash, num(fee))
	}
	m.rows = append(m.rows, mrow{t, who, "TRADE", cash, r})
}

func (m *model) split(t int64, who market.Address, slug, amount string) {
	a := num(amount)
	half := floor6(a.Div(decimal.NewFromInt(2)))
	m.p(who, slug, market.Yes).buy(a, half, decimal.Zero)
	m.p(who, slug, market.No).buy(a, a.Sub(half), decimal.Zero)
	m.rows = append(m.rows, mrow{t, who, "SPLIT", decimal.Zero, decimal.Zero})
}

func (m *model) merge(t int64, who market.Address, slug, amount string) {
	a := num(amount)
	half := floor6(a.Div(decimal.NewFromInt(2)))
	r := m.p(who, slug, market.Yes).sell(a, half, decimal.Zero).Add(m.p(who, slug, market.No).sell(a, a.Sub(half), decimal.Zero))
	m.rows = append(m.rows, mrow{t, who, "MERGE", decimal.Zero, r})
}

func (m *model) redeem(t int64, who market.Address, slug string, winner market.Outcome) {
	r := decimal.Zero
	if p := m.p(who, slug, winner); p.size.IsPositive() {
		r = r.Add(p.sell(p.size, p.size, decimal.Zero))
	}
	if p := m.p(who, slug, winner.Other()); p.size.IsPositive() {
		r = r.Add(p.sell(p.size, decimal.Zero, decimal.Zero))
	}
	m.rows = append(m.rows, mrow{t, who, "REDEEM", decimal.Zero, r})
}

// expectedPosition is what /positions must say about one holding at mark.
type expectedPosition struct {
	size, avgPrice, initial, current, cashPnl, percentPnl, realized, percentRealized, curPrice, bought decimal.Decimal
}

func (m *model) position(who market.Address, slug string, o market.Outcome, mark string) expectedPosition {
	p := m.p(who, slug, o)
	mk := num(mark)
	cur := floor6(p.size.Mul(mk))
	cash := cur.Sub(p.cost)
	e := expectedPosition{size: p.size, initial: p.cost, current: cur, cashPnl: cash, realized: p.realized,
		curPrice: mk, bought: p.bought}
	if p.size.IsPositive() {
		e.avgPrice = floor6(p.cost.Div(p.size))
	}
	if !p.cost.IsZero() {
		e.percentPnl = cash.Mul(decimal.NewFromInt(100)).Div(p.cost).Truncate(6)
	}
	if sold := p.invested.Sub(p.cost); !sold.IsZero() {
		e.percentRealized = p.realized.Mul(decimal.NewFromInt(100)).Div(sold).Truncate(6)
	}
	return e
}

// board returns the expected leaderboard: wallets with rows after from (all rows
// when from is 0) ranked by orderBy, then the other figure, then the address. marks
// values the open positions for ALL.
func (m *model) board(from int64, orderBy string, marks map[string][2]string) []expectedEntry {
	acc := map[market.Address]*expectedEntry{}
	for _, r := range m.rows {
		if from != 0 && r.time <= from {
			continue
		}
		e := acc[r.who]
		if e == nil {
			e = &expectedEntry{who: r.who}
			acc[r.who] = e
		}
		e.vol = e.vol.Add(r.vol)
		e.pnl = e.pnl.Add(r.realized)
	}
	if from == 0 {
		for k, p := range m.pos {
			if p.size.IsPositive() && acc[k.who] != nil {
				mk := num(marks[k.slug][k.o])
				acc[k.who].pnl = acc[k.who].pnl.Add(floor6(p.size.Mul(mk)).Sub(p.cost))
			}
		}
	}
	out := make([]expectedEntry, 0, len(acc))
	for _, e := range acc {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b expectedEntry) int {
		x, y := b.vol.Cmp(a.vol), b.pnl.Cmp(a.pnl)
		if orderBy == "pnl" {
			x, y = y, x
		}
		if x != 0 {
			return x
		}
		if y != 0 {
			return y
		}
		return cmp.Compare(strings.ToLower(a.who.String()), strings.ToLower(b.who.String()))
	})
	return out
}

type expectedEntry struct {
	who      market.Address
	vol, pnl decimal.Decimal
}

package policies

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

const (
	cond  = market.ConditionID("0x1111111111111111111111111111111111111111111111111111111111111111")
	cond2 = market.ConditionID("0x2222222222222222222222222222222222222222222222222222222222222222")
	yes   = market.TokenID("101")
	no    = market.TokenID("102")
	yes2  = market.TokenID("201")
	no2   = market.TokenID("202")
	t0    = int64(1_767_225_600_000) // 2026-01-01T00:00:00Z
)

func m(s string) market.Micros {
	v, err := market.ParseMicros(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return v
}

// fixture returns a state with two tradable markets (tick 0.01, min size 5), a
// two-sided YES book in each (0.44 / 0.46), a balance of 100 and no positions.
func fixture() *market.State {
	s := &market.State{Time: t0, Balance: m("100")}
	s.Init()
	for _, mk := range []struct {
		c       market.ConditionID
		y, n    market.TokenID
		endDate int64
	}{{cond, yes, no, t0/1000 + 86_400}, {cond2, yes2, no2, 0}} {
		s.Markets[mk.c] = &market.Info{Condition: mk.c, Tokens: [2]market.TokenID{mk.y, mk.n}, TickSize: m("0.01"),
			MinSize: m("5"), Active: true, AcceptingOrders: true, EndDate: mk.endDate}
		b := &market.Book{Token: mk.y}
		b.Reset([]market.Level{{Price: m("0.44"), Size: m("100")}}, []market.Level{{Price: m("0.46"), Size: m("100")}})
		s.Books[mk.y] = b
	}
	return s
}

func hold(s *market.State, tok market.TokenID, size, avg string) {
	mk, o, _ := s.MarketOf(tok)
	p := &market.Position{Market: mk.Condition, Token: tok, Outcome: o}
	p.Buy(m(avg), m(size), 0)
	s.Positions[tok] = p
}

func openOrder(s *market.State, id string, tok market.TokenID, side market.Side, price, size string) {
	mk, o, _ := s.MarketOf(tok)
	s.Orders[market.OrderID(id)] = &market.Order{ID: market.OrderID(id), Market: mk.Condition, Token: tok, Outcome: o,
		Side: side, Price: m(price), Size: m(size)}
}

// conditionOf is the fixture's token → market map; intents name their market, as
// the strategy's do.
var conditionOf = map[market.TokenID]market.ConditionID{yes: cond, no: cond, yes2: cond2, no2: cond2}

func quote(tok market.TokenID, side market.Side, price, size string) *market.Intent {
	return &market.Intent{Kind: market.IntentQuote, Key: "q1", Market: conditionOf[tok], Token: tok, Side: side, Price: m(price), Size: m(size)}
}

func take(tok market.TokenID, side market.Side, price, size string) *market.Intent {
	return &market.Intent{Kind: market.IntentTake, Key: "t1", Market: conditionOf[tok], Token: tok, Side: side, Price: m(price), Size: m(size), Type: market.FAK}
}

// collector is a Sink that keeps every record.
type collector struct{ recs []Record }

func (c *collector) Audit(r Record) { c.recs = append(c.recs, r) }

func newChain(t testing.TB, cfg Config, opts ...Option) (*Chain, *collector) {
	t.Helper()
	col := &collector{}
	opts = append([]Option{WithSink(col), WithAgent("test"), WithGeoblock(Geoblock{Status: GeoAllowed})}, opts...)
	c, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, col
}

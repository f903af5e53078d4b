package strategy

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestForecastIsTheValueNamedFair(t *testing.T) {
	const cond = market.ConditionID("0xc1")
	info := &market.Info{Condition: cond, Tokens: [2]market.TokenID{"y", "n"}, TickSize: 10_000, MinSize: market.One,
		Active: true, AcceptingOrders: true}
	book := func(bid, ask market.Micros) *market.Event {
		return &market.Event{Kind: market.EventBook, Time: 1_000, Market: cond, Token: "y",
			Bids: []market.Level{{Price: bid, Size: market.One}}, Asks: []market.Level{{Price: ask, Size: market.One}}}
	}
	for _, tc := range []struct {
		name string
		src  string
		ok   bool
		want float64
	}{
		{"a var", "name: v\nvars:\n  fair: yes.mid\nquotes:\n  q: {side: BUY, price: yes.bid, size: 1}\n", true, 0.5},
		{"an indicator", "name: i\nindicators:\n  fair: ema(mid, 3)\nquotes:\n  q: {side: BUY, price: yes.bid, size: 1}\n", true, 0.5},
		{"none", "name: n\nvars:\n  other: yes.mid\nquotes:\n  q: {side: BUY, price: yes.bid, size: 1}\n", false, 0},
		{"not a probability", "name: x\nvars:\n  fair: yes.mid * 3\nquotes:\n  q: {side: BUY, price: yes.bid, size: 1}\n", false, 0},
		{"a bool", "name: b\nvars:\n  fair: yes.mid > 0\nquotes:\n  q: {side: BUY, price: yes.bid, size: 1}\n", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.name+".yaml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			in, err := s.NewInstance([]Binding{{Name: "main", Market: cond}})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := in.Forecast(cond); ok {
				t.Fatal("a forecast before any evaluation")
			}
			var st market.State
			st.Init()
			st.Markets[cond] = info
			ev := book(480_000, 520_000)
			st.Apply(ev)
			if _, err := in.Decide(ev, &st, nil); err != nil {
				t.Fatal(err)
			}
			p, ok := in.Forecast(cond)
			if ok != tc.ok || p != tc.want {
				t.Fatalf("Forecast = %v, %v; want %v, %v", p, ok, tc.want, tc.ok)
			}
			if _, ok := in.Forecast("0xother"); ok {
				t.Fatal("a forecast for an unbound market")
			}
		})
	}
}

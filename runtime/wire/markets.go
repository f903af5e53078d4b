package wire

import (
	"fmt"
	"strconv"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
	"github.com/pitbossdev/pitboss/strategy"
)

// bindMarkets turns the agent file's markets section into the strategy's bindings,
// against the venue's catalogue at event time now (Unix ms):
//
//   - tokens and conditions: the markets they name, in file order, each bound under
//     its slug (or m1, m2, ... when slugs are missing or repeat);
//   - slots: each slot's market under the slot's name;
//   - select: the catalogue's markets the expression selects, in catalogue order, at
//     most markets.limit.
func bindMarkets(m *agents.Markets, catalog []market.Info, now int64) ([]strategy.Binding, error) {
	byCond := map[market.ConditionID]*market.Info{}
	byToken := map[market.TokenID]*market.Info{}
	for i := range catalog {
		info := &catalog[i]
		byCond[info.Condition] = info
		byToken[info.Tokens[market.Yes]] = info
		byToken[info.Tokens[market.No]] = info
	}
	var picked []*market.Info
	add := func(info *market.Info) {
		for _, p := range picked {
			if p.Condition == info.Condition {
				return
			}
		}
		picked = append(picked, info)
	}
	switch {
	case len(m.Slots) > 0:
		var out []strategy.Binding
		for _, s := range m.Slots {
			info := byCond[s.Condition]
			if s.Token != "" {
				info = byToken[s.Token]
			}
			if info == nil {
				return nil, fmt.Errorf("markets.slots.%s: no such market on the venue", s.Name)
			}
			out = append(out, strategy.Binding{Name: s.Name, Market: info.Condition})
		}
		return out, nil
	case len(m.Tokens) > 0:
		for _, t := range m.Tokens {
			info := byToken[t]
			if info == nil {
				return nil, fmt.Errorf("markets.tokens: token %s is not listed on the venue", t)
			}
			add(info)
		}
	case len(m.Conditions) > 0:
		for _, c := range m.Conditions {
			info := byCond[c]
			if info == nil {
				return nil, fmt.Errorf("markets.conditions: market %s is not listed on the venue", c)
			}
			add(info)
		}
	case m.Selector != nil:
		var ev exprenv.Evaluator
		limit := m.Limit
		if limit <= 0 {
			limit = agents.DefaultSelectLimit
		}
		for i := range catalog {
			ok, err := m.Selector.Match(&ev, &catalog[i], now/1000)
			if err != nil || !ok {
				continue
			}
			add(&catalog[i])
			if len(picked) >= limit {
				break
			}
		}
		if len(picked) == 0 {
			return nil, fmt.Errorf("markets.select: no market on the venue matches %q", m.Selector.Source())
		}
	default:
		return nil, fmt.Errorf("markets: nothing to trade")
	}
	names := map[string]int{}
	for _, p := range picked {
		names[p.Slug]++
	}
	out := make([]strategy.Binding, len(picked))
	for i, p := range picked {
		name := p.Slug
		if name == "" || names[name] > 1 {
			name = "m" + strconv.Itoa(i+1)
		}
		out[i] = strategy.Binding{Name: name, Market: p.Condition}
	}
	return out, nil
}

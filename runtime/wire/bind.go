package wire

import (
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/strategy"
)

// BindMarkets turns an agent file's markets section into the strategy's bindings
// against a catalogue at event time now (Unix ms), exactly as Build binds a dry run:
// tokens and conditions in file order under their slugs (m1, m2, … when slugs are
// missing or repeat), slots under their names, select in catalogue order up to
// markets.limit. Other composition roots (runtime/backtest, whose catalogue is a
// recording's) call it so that they bind as the dry run does. An error names the
// first market section it cannot satisfy.
func BindMarkets(m *agents.Markets, catalog []market.Info, now int64) ([]strategy.Binding, error) {
	return bindMarkets(m, catalog, now)
}

// bindingsOf returns the markets of binds in order and, for each whose market is in
// catalog, the binding with its Info (a catalogue names a market once; binds come
// from BindMarkets over the same catalogue, so every one is found).
func bindingsOf(binds []strategy.Binding, catalog []market.Info) ([]market.ConditionID, []Binding) {
	conds := make([]market.ConditionID, len(binds))
	var out []Binding
	for i, b := range binds {
		conds[i] = b.Market
		for _, info := range catalog {
			if info.Condition == b.Market {
				out = append(out, Binding{Name: b.Name, Info: info})
				break
			}
		}
	}
	return conds, out
}

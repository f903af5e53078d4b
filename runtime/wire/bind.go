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

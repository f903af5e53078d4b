package catalog

import (
	"fmt"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Spec returns the exchange listing of m: its tokens, text, trading parameters and
// initial flags.
func (m *Market) Spec() exchange.MarketSpec {
	return exchange.MarketSpec{
		Tokens: m.Tokens, Question: m.Question, Slug: m.Slug, Outcomes: m.Outcomes, EndDate: m.EndDate,
		TickSize: m.TickSize, MinSize: m.MinSize, FeeBps: m.FeeBps, NegRisk: m.NegRisk, NegRiskID: m.NegRiskID,
		Active: m.Active, Closed: m.Closed, Archived: m.Archived, AcceptingOrders: m.AcceptingOrders,
	}
}

// GenesisCommands returns the commands that list every market of c in the exchange
// core, one CreateMarket per market in catalogue order, each with Time timeMs (0 lets
// the host stamp its clock). The result is deterministic: the same catalogue gives
// the same commands.
func GenesisCommands(c *Catalog, timeMs int64) []exchange.Command {
	out := make([]exchange.Command, 0, c.NumMarkets())
	for m := range c.Markets() {
		out = append(out, exchange.Command{Kind: exchange.CreateMarket, Time: timeMs, Market: m.Condition, Spec: m.Spec()})
	}
	return out
}

// Genesis returns a sandbox/host Config.Genesis function: it applies
// GenesisCommands(c, timeMs) in order and stops at the first error, naming the
// market. Apply's error (a rejected CreateMarket, such as an existing condition) is
// wrapped with %w, so a catalog error stays reachable with errors.As.
func Genesis(c *Catalog, timeMs int64) func(apply func(exchange.Command) error) error {
	return func(apply func(exchange.Command) error) error {
		for _, cmd := range GenesisCommands(c, timeMs) {
			if err := apply(cmd); err != nil {
				return fmt.Errorf("catalog: listing market %s (%s): %w", cmd.Spec.Slug, cmd.Market, err)
			}
		}
		return nil
	}
}

// Missing returns the markets of c that engine markets (as listed by the exchange)
// lack, in catalogue order: what a store created from an older catalogue needs to
// list when the catalogue file gained markets. The caller Submits their commands.
func Missing(c *Catalog, listed []market.Info, timeMs int64) []exchange.Command {
	have := make(map[market.ConditionID]bool, len(listed))
	for i := range listed {
		have[listed[i].Condition] = true
	}
	var out []exchange.Command
	for _, cmd := range GenesisCommands(c, timeMs) {
		if !have[cmd.Market] {
			out = append(out, cmd)
		}
	}
	return out
}

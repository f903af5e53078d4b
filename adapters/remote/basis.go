package remote

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// Sources of a holding's cost basis (agent.Basis.Source).
const (
	BasisDataService  = "the data service's average price"
	BasisTradeHistory = "the wallet's trade history"
)

// basis returns the venue's cost basis of the holdings: from the data service's
// positions (GET /positions?user=…: its initialValue when its size is the holding's,
// else avgPrice × size), and for holdings it does not list (or when it is not
// configured or fails) from the wallet's trade history (GET /data/trades), replayed
// with average-cost accounting, when that history accounts for the whole holding.
// A holding neither knows is left out: the agent adopts it at cost 0 and says so.
// Failures are logged, never fatal: the start goes on with what is known.
func (v *Venue) basis(ctx context.Context, held []market.Position) map[market.TokenID]agent.Basis {
	if len(held) == 0 {
		return nil
	}
	out := make(map[market.TokenID]agent.Basis, len(held))
	size := make(map[market.TokenID]market.Micros, len(held))
	for _, p := range held {
		size[p.Token] = p.Size
	}
	for row, err := range v.c.Data().Positions(ctx, api.PositionsQuery{User: v.addr}) {
		if err != nil {
			if !errors.Is(err, clob.ErrNotConfigured) {
				v.log.Warn("remote: the data service's positions could not be read; the cost basis of holdings comes from the trade history", zap.Error(err))
			}
			break
		}
		if cost, ok := rowCost(&row, size[row.Asset]); ok {
			out[row.Asset] = agent.Basis{Cost: cost, Source: BasisDataService}
		}
	}
	if len(out) == len(held) {
		return out
	}
	fills, err := v.Fills(ctx, 0)
	if err != nil {
		v.log.Warn("remote: the wallet's trade history could not be read for the cost basis of its holdings", zap.Error(err))
		return out
	}
	for tok, pos := range historyPositions(fills) {
		if _, done := out[tok]; !done && size[tok] > 0 && pos.Size == size[tok] {
			out[tok] = agent.Basis{Cost: pos.Cost, Source: BasisTradeHistory}
		}
	}
	return out
}

// rowCost is the cost of a holding of size shares by a data-service row: the row's
// initial value when it holds exactly that size, else its average price × size.
func rowCost(row *api.Position, size market.Micros) (market.Micros, bool) {
	if size <= 0 {
		return 0, false
	}
	if row.Size.Micros() == size && row.InitialValue.Micros() > 0 {
		return row.InitialValue.Micros(), true
	}
	if avg := row.AvgPrice.Micros(); avg > 0 {
		return market.Notional(avg, size)
	}
	return 0, false
}

// historyPositions replays fills (oldest first) into positions by token. A sale the
// history cannot account for (more than it shows bought) marks the token's history
// incomplete: its position is left out.
func historyPositions(fills []market.Fill) map[market.TokenID]market.Position {
	out := map[market.TokenID]market.Position{}
	broken := map[market.TokenID]bool{}
	for i := range fills {
		f := &fills[i]
		if broken[f.Token] {
			continue
		}
		p := out[f.Token]
		ok := true
		if f.Side == market.Buy {
			ok = p.Buy(f.Price, f.Size, f.Fee)
		} else {
			_, ok = p.Sell(f.Price, f.Size, f.Fee)
		}
		if !ok {
			broken[f.Token] = true
			delete(out, f.Token)
			continue
		}
		out[f.Token] = p
	}
	return out
}

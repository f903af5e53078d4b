package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// DefaultListLimit bounds how many markets Catalog.List reads when its limit is zero.
const DefaultListLimit = 10_000

// Catalog reads the trading metadata of the venue's markets (GET /markets,
// /markets/{condition_id}, /book) through a clob.Client. It needs no signer and no
// credentials and can place nothing: a dry run's paper venue reads its markets from a
// Catalog (runtime/paper.MarketSource). It is safe for concurrent use; it owns no
// goroutine and caches nothing.
type Catalog struct {
	c *clob.Client
}

// NewCatalog returns a catalog over c.
func NewCatalog(c *clob.Client) *Catalog { return &Catalog{c: c} }

// Markets returns the metadata of the given markets, in order (GET
// /markets/{condition_id} each). An unknown id is an error wrapping
// market.ErrMarketNotFound.
func (k *Catalog) Markets(ctx context.Context, ids []market.ConditionID) ([]market.Info, error) {
	out := make([]market.Info, 0, len(ids))
	for _, id := range ids {
		m, err := k.c.Market(ctx, id)
		if err != nil {
			if isNotFound(err) {
				return nil, fmt.Errorf("market %s: %w", id, market.ErrMarketNotFound)
			}
			return nil, fmt.Errorf("market %s: %w", id, err)
		}
		info, err := MarketInfo(m)
		if err != nil {
			return nil, fmt.Errorf("market %s: %w", id, err)
		}
		if info.Condition != id {
			return nil, fmt.Errorf("market %s: the venue answered for %s: %w", id, info.Condition, clob.ErrBadResponse)
		}
		out = append(out, info)
	}
	return out, nil
}

// MarketOfToken returns the market an outcome token belongs to: GET /book names the
// token's condition, GET /markets/{condition_id} describes it. An unknown token is
// an error wrapping market.ErrNoOrderbook.
func (k *Catalog) MarketOfToken(ctx context.Context, t market.TokenID) (market.Info, error) {
	b, err := k.c.Book(ctx, t)
	if err != nil {
		return market.Info{}, fmt.Errorf("token %s: %w", t, err)
	}
	if b.Market == "" {
		return market.Info{}, fmt.Errorf("token %s: GET /book names no market: %w", t, clob.ErrBadResponse)
	}
	infos, err := k.Markets(ctx, []market.ConditionID{b.Market})
	if err != nil {
		return market.Info{}, err
	}
	if _, ok := infos[0].OutcomeOf(t); !ok {
		return market.Info{}, fmt.Errorf("token %s: market %s does not list it: %w", t, b.Market, clob.ErrBadResponse)
	}
	return infos[0], nil
}

// List returns the venue's markets in its own order (GET /markets, page by page),
// at most limit of them (DefaultListLimit when zero). Markets that are not binary
// are skipped.
func (k *Catalog) List(ctx context.Context, limit int) ([]market.Info, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	var out []market.Info
	for m, err := range k.c.Markets(ctx) {
		if err != nil {
			return nil, err
		}
		info, err := MarketInfo(&m)
		if err != nil {
			continue // not binary: nothing an agent can trade
		}
		out = append(out, info)
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}

// MarketInfo converts the CLOB's market object into market.Info (api.Market.Info,
// which also reads the end date) and refuses what an agent cannot trade: a market
// that is not binary (api.ErrNotBinary) or whose tick size is not one of
// market.TickSizes.
func MarketInfo(m *api.Market) (market.Info, error) {
	info, err := m.Info()
	if err != nil {
		return market.Info{}, err
	}
	if !market.ValidTick(info.TickSize) {
		return market.Info{}, fmt.Errorf("market %s: tick size %s: %w", info.Condition, info.TickSize, errBadTick)
	}
	return info, nil
}

var errBadTick = errors.New("not one of 0.1, 0.01, 0.001, 0.0001")

// isNotFound reports a 404 answer (or the catalog's not-found codes).
func isNotFound(err error) bool {
	var ae *clob.APIError
	if errors.As(err, &ae) {
		return ae.Status == 404
	}
	return errors.Is(err, market.ErrMarketNotFound) || errors.Is(err, market.ErrUnknownOrder)
}

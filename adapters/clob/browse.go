package clob

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// CLOB markets (cursor-paged) and the browse endpoints (public). Shapes the
// specification shows are typed with its field names; where it says "not shown",
// the fields are those the local exchange (sandbox/server) serves, and unknown
// fields of another service are ignored.

// MarketsPage returns one page of CLOB markets (GET /markets) from cursor ("" for
// the first).
func (c *Client) MarketsPage(ctx context.Context, cursor string) (*api.Page[api.Market], error) {
	return marketsPage[api.Market](ctx, c, "/markets", cursor)
}

// Markets iterates over all CLOB markets (GET /markets).
func (c *Client) Markets(ctx context.Context) iter.Seq2[api.Market, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cur string) (*api.Page[api.Market], error) { return c.MarketsPage(ctx, cur) })
}

// SamplingMarkets iterates over the markets with liquidity rewards (GET
// /sampling-markets).
func (c *Client) SamplingMarkets(ctx context.Context) iter.Seq2[api.Market, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cur string) (*api.Page[api.Market], error) {
		return marketsPage[api.Market](ctx, c, "/sampling-markets", cur)
	})
}

// SimplifiedMarkets iterates over all markets in simplified form (GET
// /simplified-markets).
func (c *Client) SimplifiedMarkets(ctx context.Context) iter.Seq2[api.SimplifiedMarket, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cur string) (*api.Page[api.SimplifiedMarket], error) {
		return marketsPage[api.SimplifiedMarket](ctx, c, "/simplified-markets", cur)
	})
}

// SamplingSimplifiedMarkets iterates over the rewarded markets in simplified form
// (GET /sampling-simplified-markets).
func (c *Client) SamplingSimplifiedMarkets(ctx context.Context) iter.Seq2[api.SimplifiedMarket, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cur string) (*api.Page[api.SimplifiedMarket], error) {
		return marketsPage[api.SimplifiedMarket](ctx, c, "/sampling-simplified-markets", cur)
	})
}

func marketsPage[T any](ctx context.Context, c *Client, path, cursor string) (*api.Page[T], error) {
	q := url.Values{}
	setNonEmpty(q, "next_cursor", cursor)
	var p api.Page[T]
	if err := c.get(ctx, path, q, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Market returns one CLOB market by condition id (GET /markets/{condition_id}).
// An unknown id is market.ErrMarketNotFound (or a 404).
func (c *Client) Market(ctx context.Context, id market.ConditionID) (*api.Market, error) {
	var m api.Market
	if err := c.get(ctx, "/markets/"+url.PathEscape(string(id)), nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// BrowseOutcome is one outcome of a browsed market (specification: tokenId, label,
// price; canonicalLabel when the label is translated).
type BrowseOutcome struct {
	TokenID        market.TokenID  `json:"tokenId"`
	Label          string          `json:"label"`
	CanonicalLabel string          `json:"canonicalLabel,omitempty"`
	Price          decimal.Decimal `json:"price"`
}

// BrowseMarket is one market of GET /browse/markets (specification: conditionId,
// questionText, outcomes; canonicalQuestionText when translated). The other fields
// are the local exchange's and are zero when a service does not send them.
type BrowseMarket struct {
	ConditionID           market.ConditionID `json:"conditionId"`
	QuestionText          string             `json:"questionText"`
	CanonicalQuestionText string             `json:"canonicalQuestionText,omitempty"`
	CanonicalTitle        string             `json:"canonicalTitle,omitempty"`
	Outcomes              []BrowseOutcome    `json:"outcomes"`
	Slug                  string             `json:"slug,omitempty"`
	EventSlug             string             `json:"eventSlug,omitempty"`
	Status                string             `json:"status,omitempty"`
	NegRisk               bool               `json:"negRisk,omitempty"`
	EndDate               string             `json:"endDate,omitempty"`
	TickSize              decimal.Decimal    `json:"tickSize"`
	Tags                  []string           `json:"tags,omitempty"`
}

// BrowseParams select GET /browse/markets (fields: status, locale, limit and
// offset of the query). Zero fields are left to the service:
// status (LIVE occurs; the local exchange also knows PAUSED, CLOSED, RESOLVED, ALL),
// locale (en, zh, ja, ko, fr, es; canonical English otherwise), limit, offset.
type BrowseParams struct {
	Status string
	Locale string
	Limit  int
	Offset int
}

func (p BrowseParams) query() url.Values {
	q := url.Values{}
	setNonEmpty(q, "status", p.Status)
	setNonEmpty(q, "locale", p.Locale)
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	return q
}

// BrowseMarketsPage is the answer of GET /browse/markets.
type BrowseMarketsPage struct {
	Markets []BrowseMarket `json:"markets"`
	Total   int            `json:"total"`
}

// BrowseMarketsPage returns one page of browsable markets (GET /browse/markets).
func (c *Client) BrowseMarketsPage(ctx context.Context, p BrowseParams) (*BrowseMarketsPage, error) {
	var r BrowseMarketsPage
	if err := c.get(ctx, "/browse/markets", p.query(), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// BrowseMarkets iterates over the browsable markets from p.Offset on, in pages of
// p.Limit (50 when zero).
func (c *Client) BrowseMarkets(ctx context.Context, p BrowseParams) iter.Seq2[BrowseMarket, error] {
	limit := pageLimit(p.Limit, 50, 500)
	return offsetSeq(ctx, p.Offset, limit, func(ctx context.Context, offset, limit int) ([]BrowseMarket, []byte, error) {
		q := p
		q.Offset, q.Limit = offset, limit
		var raw []byte
		if err := c.get(ctx, "/browse/markets", q.query(), &raw); err != nil {
			return nil, nil, err
		}
		var r BrowseMarketsPage
		if err := decodeRaw(raw, &r, "GET /browse/markets"); err != nil {
			return nil, nil, err
		}
		return r.Markets, raw, nil
	})
}

// Topic is the answer of GET /browse/topics/world-cup/games: the topic's sections
// of events of markets, and the localization report (specification). Sections,
// events and titles are the local exchange's shape.
type Topic struct {
	Topic          string           `json:"topic"`
	Title          string           `json:"title"`
	CanonicalTitle string           `json:"canonicalTitle,omitempty"`
	Description    string           `json:"description"`
	Sections       []TopicSection   `json:"sections"`
	Localization   api.Localization `json:"localization"`
}

// TopicSection is one section of a Topic.
type TopicSection struct {
	Slug           string       `json:"slug"`
	Title          string       `json:"title"`
	CanonicalTitle string       `json:"canonicalTitle,omitempty"`
	Events         []TopicEvent `json:"events"`
}

// TopicEvent is one event of a TopicSection.
type TopicEvent struct {
	Slug           string         `json:"slug"`
	Title          string         `json:"title"`
	CanonicalTitle string         `json:"canonicalTitle,omitempty"`
	Markets        []BrowseMarket `json:"markets"`
}

// WorldCupGames returns the World Cup topic in locale ("" for canonical English;
// GET /browse/topics/world-cup/games).
func (c *Client) WorldCupGames(ctx context.Context, locale string) (*Topic, error) {
	q := url.Values{}
	setNonEmpty(q, "locale", locale)
	var t Topic
	if err := c.get(ctx, "/browse/topics/world-cup/games", q, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// StocksPage is the answer of GET /stocks/active.
type StocksPage struct {
	Stocks []BrowseMarket `json:"stocks"`
	Total  int            `json:"total"`
}

// StocksActive returns the active stock markets (GET /stocks/active; shape not
// shown by the specification, the local exchange's).
func (c *Client) StocksActive(ctx context.Context, locale string) (*StocksPage, error) {
	q := url.Values{}
	setNonEmpty(q, "locale", locale)
	var r StocksPage
	if err := c.get(ctx, "/stocks/active", q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Recommendation is one market of GET /agent/markets/recommended (shape not shown
// by the specification; the local exchange's).
type Recommendation struct {
	Rank         int                `json:"rank"`
	ConditionID  market.ConditionID `json:"conditionId"`
	Question     string             `json:"question"`
	Slug         string             `json:"slug"`
	Tokens       []api.MarketToken  `json:"tokens"`
	BestBid      decimal.Decimal    `json:"bestBid"`
	BestAsk      decimal.Decimal    `json:"bestAsk"`
	Spread       decimal.Decimal    `json:"spread"`
	Depth        decimal.Decimal    `json:"depth"`
	Trades24h    int                `json:"trades24h"`
	Volume24h    decimal.Decimal    `json:"volume24h"`
	TickSize     decimal.Decimal    `json:"tickSize"`
	MinOrderSize decimal.Decimal    `json:"minOrderSize"`
	FeeRateBps   uint32             `json:"feeRateBps"`
	NegRisk      bool               `json:"negRisk"`
	EndDate      string             `json:"endDate,omitempty"`
}

// Recommendations is the answer of GET /agent/markets/recommended.
type Recommendations struct {
	Markets []Recommendation `json:"markets"`
	Ranking string           `json:"ranking"`
}

// RecommendedMarkets returns the markets the service recommends to agents (GET
// /agent/markets/recommended); q carries the service's optional parameters (the
// local exchange: limit).
func (c *Client) RecommendedMarkets(ctx context.Context, q url.Values) (*Recommendations, error) {
	var r Recommendations
	if err := c.get(ctx, "/agent/markets/recommended", q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// BrowseStats returns the platform statistics of GET /browse/stats as raw JSON (a
// shape the specification does not show).
func (c *Client) BrowseStats(ctx context.Context) (json.RawMessage, error) {
	return c.getRaw(ctx, "/browse/stats", nil)
}

// BrowseAgents returns the agents listing of GET /browse/agents as raw JSON (shape
// not shown); q carries its parameters.
func (c *Client) BrowseAgents(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.getRaw(ctx, "/browse/agents", q)
}

// BrowseAgentStats returns GET /browse/agents/stats as raw JSON (shape not shown).
func (c *Client) BrowseAgentStats(ctx context.Context) (json.RawMessage, error) {
	return c.getRaw(ctx, "/browse/agents/stats", nil)
}

// ExchangeStatus is the answer of GET /exchanges/status (shape not shown by the
// specification; the local exchange's): the venue's state, its chain and the two
// exchange contracts orders are signed for.
type ExchangeStatus struct {
	Status          string `json:"status"`
	Trading         bool   `json:"trading"`
	CancelOnly      bool   `json:"cancelOnly"`
	ChainID         uint64 `json:"chainId"`
	Exchange        string `json:"exchange"`
	NegRiskExchange string `json:"negRiskExchange"`
	Collateral      string `json:"collateral,omitempty"`
	Markets         int    `json:"markets"`
	LiveMarkets     int    `json:"liveMarkets"`
	Durable         bool   `json:"durable"`
	Timestamp       int64  `json:"timestamp"`
}

// ExchangesStatus returns the venue's status (GET /exchanges/status).
func (c *Client) ExchangesStatus(ctx context.Context) (*ExchangeStatus, error) {
	var r ExchangeStatus
	if err := c.get(ctx, "/exchanges/status", nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (c *Client) getRaw(ctx context.Context, path string, q url.Values) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.get(ctx, path, q, &raw); err != nil {
		return nil, err
	}
	if !json.Valid(raw) {
		return nil, errBadJSON("GET " + path)
	}
	return raw, nil
}

package api

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// MarketToken is one outcome token of a market: {"token_id", "outcome", "price"}
// plus "winner" once resolved.
type MarketToken struct {
	TokenID market.TokenID `json:"token_id"`
	Outcome string         `json:"outcome"`
	Price   Decimal        `json:"price"`
	Winner  bool           `json:"winner"`
}

// RewardRate is one entry of Rewards.Rates.
type RewardRate struct {
	AssetAddress     string `json:"asset_address"`
	RewardsDailyRate Number `json:"rewards_daily_rate"`
}

// Rewards are the liquidity-reward parameters of a market:
// {"rates": […], "min_size": n, "max_spread": n}. Rates encodes as [] when nil.
type Rewards struct {
	Rates     []RewardRate `json:"rates"`
	MinSize   Number       `json:"min_size"`
	MaxSpread Number       `json:"max_spread"`
}

type rewardsJSON Rewards

// MarshalJSON encodes r with a non-null rates array.
func (r Rewards) MarshalJSON() ([]byte, error) {
	if r.Rates == nil {
		r.Rates = []RewardRate{}
	}
	return json.Marshal(rewardsJSON(r))
}

// SimplifiedMarket is one element of GET /simplified-markets (the specification's
// "simplified market").
type SimplifiedMarket struct {
	ConditionID     market.ConditionID `json:"condition_id"`
	Tokens          []MarketToken      `json:"tokens"`
	Rewards         Rewards            `json:"rewards"`
	Active          bool               `json:"active"`
	Closed          bool               `json:"closed"`
	Archived        bool               `json:"archived"`
	AcceptingOrders bool               `json:"accepting_orders"`
}

// Market is the CLOB market object of GET /markets, /markets/{condition_id} and
// /sampling-markets. The specification shows only the fields it shares with
// SimplifiedMarket; the rest follow the upstream service's names, restricted to what
// market.Info holds plus descriptive text.
type Market struct {
	ConditionID      market.ConditionID `json:"condition_id"`
	QuestionID       string             `json:"question_id"`
	Question         string             `json:"question"`
	Description      string             `json:"description"`
	MarketSlug       string             `json:"market_slug"`
	EndDateISO       string             `json:"end_date_iso"`
	Tokens           []MarketToken      `json:"tokens"`
	Rewards          Rewards            `json:"rewards"`
	MinimumOrderSize Number             `json:"minimum_order_size"`
	MinimumTickSize  Number             `json:"minimum_tick_size"`
	MakerBaseFee     uint32             `json:"maker_base_fee"`
	TakerBaseFee     uint32             `json:"taker_base_fee"`
	NegRisk          bool               `json:"neg_risk"`
	// NegRiskMarketID groups the markets of one neg-risk event (the dialect's
	// neg_risk_market_id); absent for other markets.
	NegRiskMarketID string `json:"neg_risk_market_id,omitempty"`
	EnableOrderBook bool   `json:"enable_order_book"`
	Active          bool   `json:"active"`
	Closed          bool   `json:"closed"`
	Archived        bool   `json:"archived"`
	AcceptingOrders bool   `json:"accepting_orders"`
}

// SimplifiedMarketFrom renders info with the current prices of its YES and NO
// tokens.
func SimplifiedMarketFrom(info *market.Info, prices [2]market.Micros) SimplifiedMarket {
	return SimplifiedMarket{
		ConditionID: info.Condition, Tokens: tokensOf(info, prices), Active: info.Active, Closed: info.Closed,
		Archived: info.Archived, AcceptingOrders: info.AcceptingOrders,
	}
}

// MarketFrom renders info with the current prices of its YES and NO tokens.
// endDateISO is the end date in ISO 8601 ("" when none); api does not format time.
func MarketFrom(info *market.Info, prices [2]market.Micros, endDateISO string) Market {
	return Market{
		ConditionID: info.Condition, Question: info.Question, MarketSlug: info.Slug, EndDateISO: endDateISO,
		Tokens: tokensOf(info, prices), MinimumOrderSize: Number(info.MinSize), MinimumTickSize: Number(info.TickSize),
		MakerBaseFee: info.FeeBps, TakerBaseFee: info.FeeBps, NegRisk: info.NegRisk, NegRiskMarketID: info.NegRiskID,
		EnableOrderBook: true, Active: info.Active, Closed: info.Closed, Archived: info.Archived, AcceptingOrders: info.AcceptingOrders,
	}
}

func tokensOf(info *market.Info, prices [2]market.Micros) []MarketToken {
	out := make([]MarketToken, 2)
	for _, oc := range [...]market.Outcome{market.Yes, market.No} {
		out[oc] = MarketToken{
			TokenID: info.Tokens[oc], Outcome: info.Outcomes[oc], Price: Decimal(prices[oc]),
			Winner: info.Resolved && info.Winner == oc,
		}
	}
	return out
}

// ErrNotBinary is returned by Market.Info for a market without exactly two tokens.
var ErrNotBinary = errors.New("market does not have exactly two tokens")

// Info converts the market into market.Info: tokens in wire order are YES then NO.
// EndDate comes from end_date_iso (RFC 3339, or a bare date meaning its midnight UTC);
// an empty or unparseable value leaves it zero, since strategies treat zero as "no end
// date". A resolved market is one with a winner token.
func (m *Market) Info() (market.Info, error) {
	if len(m.Tokens) != 2 {
		return market.Info{}, ErrNotBinary
	}
	info := market.Info{
		Condition: m.ConditionID, Question: m.Question, Slug: m.MarketSlug, TickSize: market.Micros(m.MinimumTickSize),
		MinSize: market.Micros(m.MinimumOrderSize), FeeBps: m.TakerBaseFee, NegRisk: m.NegRisk, NegRiskID: m.NegRiskMarketID, Active: m.Active,
		Closed: m.Closed, Archived: m.Archived, AcceptingOrders: m.AcceptingOrders,
		EndDate: parseEndDate(m.EndDateISO),
	}
	for i, t := range m.Tokens {
		info.Tokens[i], info.Outcomes[i] = t.TokenID, t.Outcome
		if t.Winner {
			info.Resolved, info.Winner = true, market.Outcome(i)
		}
	}
	return info, nil
}

// parseEndDate reads an ISO 8601 end date as Unix seconds (0 when empty or invalid).
func parseEndDate(s string) int64 {
	if s == "" {
		return 0
	}
	for _, layout := range [...]string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix()
		}
	}
	return 0
}

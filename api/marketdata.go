package api

import (
	"encoding/json"

	"github.com/pitbossdev/pitboss/market"
)

// PriceResponse is the answer of GET /price: {"price": "0.5"} (dialect §4.5).
type PriceResponse struct {
	Price Decimal `json:"price"`
}

// PricesResponse is the answer of POST /prices: {"<token>": {"BUY": "…", "SELL":
// "…"}}; a side without a price is omitted.
type PricesResponse map[market.TokenID]map[string]Decimal

// MidpointResponse is the answer of GET /midpoint: {"mid": "0.5"}.
type MidpointResponse struct {
	Mid Decimal `json:"mid"`
}

// MidpointsResponse is the answer of POST /midpoints: {"<token>": "0.5"}.
type MidpointsResponse map[market.TokenID]Decimal

// SpreadResponse is the answer of GET /spread: {"spread": "0.04"} (best ask − best
// bid).
type SpreadResponse struct {
	Spread Decimal `json:"spread"`
}

// SpreadsResponse is the answer of POST /spreads as the specification gives it:
// {"spreads": {"<token>": "0.04"}}.
type SpreadsResponse struct {
	Spreads map[market.TokenID]Decimal `json:"spreads"`
}

// LastTradePriceResponse is the answer of GET /last-trade-price: {"price": "0.5",
// "side": "BUY"}; Side is "" when the token has not traded.
type LastTradePriceResponse struct {
	Price Decimal `json:"price"`
	Side  string  `json:"side"`
}

// LastTradePrice is one element of the answer of POST /last-trades-prices.
type LastTradePrice struct {
	TokenID market.TokenID `json:"token_id"`
	Price   Decimal        `json:"price"`
	Side    string         `json:"side"`
}

// PricePoint is one point of a price history: Unix seconds and a price as a JSON
// number (the specification: "number price, 4 decimal precision").
type PricePoint struct {
	T int64  `json:"t"`
	P Number `json:"p"`
}

// PriceHistory is the answer of GET /prices-history and each value of POST
// /batch-prices-history: {"history": [{"t": …, "p": …}]}, ordered by time. History
// encodes as [] when nil.
type PriceHistory struct {
	History []PricePoint `json:"history"`
}

type priceHistoryJSON PriceHistory

// MarshalJSON encodes h with a non-null history array.
func (h PriceHistory) MarshalJSON() ([]byte, error) {
	if h.History == nil {
		h.History = []PricePoint{}
	}
	return json.Marshal(priceHistoryJSON(h))
}

// TickSizeResponse is the answer of GET /tick-size: {"minimum_tick_size": 0.01}, a
// JSON number (dialect §4.6; it decodes from a string too).
type TickSizeResponse struct {
	MinimumTickSize Number `json:"minimum_tick_size"`
}

// NegRiskResponse is the answer of GET /neg-risk: {"neg_risk": false}.
type NegRiskResponse struct {
	NegRisk bool `json:"neg_risk"`
}

// FeeRateResponse is the answer of GET /fee-rate: {"base_fee": 0}, in basis points.
type FeeRateResponse struct {
	BaseFee uint32 `json:"base_fee"`
}

// ServerTime is the answer of GET /time: a bare JSON integer of Unix seconds (not an
// object; clients use it directly as the L1/L2 timestamp).
type ServerTime int64

// OKResponse is the answer of GET /: the JSON string "OK".
const OKResponse = "OK"

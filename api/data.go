package api

import "github.com/pitbossdev/pitboss/market"

// Response shapes of the data service (GET /positions, /v1/market-positions,
// /activity, /v1/leaderboard). Field names and types are the specification's
// (decimal values are JSON strings: Decimal); keys are in the upstream service's
// order. Arrays of these are never null (the services write [] when empty).

// Position is one element of GET /positions: a wallet's holding of one outcome token
// with its cost basis and PnL. Figures are ledger units (platform token); the
// percentages are percent (12.5 is 12.5 %), rounded toward zero to 6 decimals.
type Position struct {
	ProxyWallet        market.Address     `json:"proxyWallet"`
	Asset              market.TokenID     `json:"asset"`
	ConditionID        market.ConditionID `json:"conditionId"`
	Size               Decimal            `json:"size"`
	AvgPrice           Decimal            `json:"avgPrice"`
	InitialValue       Decimal            `json:"initialValue"`
	CurrentValue       Decimal            `json:"currentValue"`
	CashPnl            Decimal            `json:"cashPnl"`
	PercentPnl         Decimal            `json:"percentPnl"`
	TotalBought        Decimal            `json:"totalBought"`
	RealizedPnl        Decimal            `json:"realizedPnl"`
	PercentRealizedPnl Decimal            `json:"percentRealizedPnl"`
	CurPrice           Decimal            `json:"curPrice"`
	Redeemable         bool               `json:"redeemable"`
	Mergeable          bool               `json:"mergeable"`
	Title              string             `json:"title"`
	Slug               string             `json:"slug"`
	Icon               string             `json:"icon"`
	EventID            string             `json:"eventId"`
	EventSlug          string             `json:"eventSlug"`
	Outcome            string             `json:"outcome"`
	OutcomeIndex       int                `json:"outcomeIndex"`
	OppositeOutcome    string             `json:"oppositeOutcome"`
	OppositeAsset      market.TokenID     `json:"oppositeAsset"`
	EndDate            string             `json:"endDate"`
	NegativeRisk       bool               `json:"negativeRisk"`
}

// MarketPosition is one element of GET /v1/market-positions: one participant's
// position in one token of a market. CashPnl is the unrealized PnL of an open
// position and the realized PnL of a closed one (docs/services.md). Name and
// ProfileImage are omitted when there is none.
type MarketPosition struct {
	ProxyWallet  market.Address     `json:"proxyWallet"`
	Asset        market.TokenID     `json:"asset"`
	ConditionID  market.ConditionID `json:"conditionId"`
	Size         Decimal            `json:"size"`
	AvgPrice     Decimal            `json:"avgPrice"`
	CurPrice     Decimal            `json:"curPrice"`
	CashPnl      Decimal            `json:"cashPnl"`
	OutcomeIndex int                `json:"outcomeIndex"`
	Outcome      string             `json:"outcome"`
	Name         string             `json:"name,omitempty"`
	ProfileImage string             `json:"profileImage,omitempty"`
}

// Activity is one element of GET /activity: a trade, split, merge or redemption of a
// wallet. Timestamp is Unix seconds. Size is shares (tokens), UsdcSize collateral
// (ledger units; the legacy name is kept); Price is the trade price in the asset's
// token. For a split or merge Asset, Side and Outcome are empty, Price is 0 and Size
// = UsdcSize (one full set per collateral unit); for a redemption Asset is the
// winning token, Price 0, Size the tokens burned (winning and losing) and UsdcSize
// the payout. TransactionHash is a simulated, deterministic hash on the local exchange.
type Activity struct {
	ProxyWallet     market.Address     `json:"proxyWallet"`
	Timestamp       int64              `json:"timestamp"`
	ConditionID     market.ConditionID `json:"conditionId"`
	Type            string             `json:"type"`
	Size            Decimal            `json:"size"`
	UsdcSize        Decimal            `json:"usdcSize"`
	TransactionHash string             `json:"transactionHash"`
	Price           Decimal            `json:"price"`
	Asset           market.TokenID     `json:"asset"`
	Side            string             `json:"side"`
	OutcomeIndex    int                `json:"outcomeIndex"`
	Title           string             `json:"title"`
	Slug            string             `json:"slug"`
	Icon            string             `json:"icon"`
	EventSlug       string             `json:"eventSlug"`
	Outcome         string             `json:"outcome"`
}

// LeaderboardEntry is one element of GET /v1/leaderboard. Rank is the wallet's place
// in the whole ordering of the period (1 is first), also when the request filters by
// user or userName.
type LeaderboardEntry struct {
	Rank          int            `json:"rank"`
	ProxyWallet   market.Address `json:"proxyWallet"`
	Vol           Decimal        `json:"vol"`
	Pnl           Decimal        `json:"pnl"`
	Name          string         `json:"name"`
	ProfileImage  string         `json:"profileImage"`
	UserName      string         `json:"userName"`
	XUsername     string         `json:"xUsername"`
	VerifiedBadge bool           `json:"verifiedBadge"`
}

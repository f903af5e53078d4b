package api

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// OpenOrder is one order of GET /data/orders and the body of GET /data/order/{id}
// (dialect §4.1). Owner is the API key of the order's owner; MakerAddress its
// wallet. Sizes and price are decimal strings in human units; CreatedAt is a JSON
// number of Unix seconds; Expiration a string of Unix seconds ("0" for none).
// AssociateTrades encodes as [] when nil.
type OpenOrder struct {
	ID              market.OrderID     `json:"id"`
	Status          string             `json:"status"`
	Owner           string             `json:"owner"`
	MakerAddress    string             `json:"maker_address"`
	Market          market.ConditionID `json:"market"`
	AssetID         market.TokenID     `json:"asset_id"`
	Side            Side               `json:"side"`
	OriginalSize    Decimal            `json:"original_size"`
	SizeMatched     Decimal            `json:"size_matched"`
	Price           Decimal            `json:"price"`
	AssociateTrades []market.TradeID   `json:"associate_trades"`
	Outcome         string             `json:"outcome"`
	CreatedAt       int64              `json:"created_at"`
	Expiration      Int                `json:"expiration"`
	OrderType       OrderType          `json:"order_type"`
}

type openOrderJSON OpenOrder

// MarshalJSON encodes o with a non-null associate_trades array.
func (o OpenOrder) MarshalJSON() ([]byte, error) {
	if o.AssociateTrades == nil {
		o.AssociateTrades = []market.TradeID{}
	}
	return json.Marshal(openOrderJSON(o))
}

// OpenOrderFrom renders o for its owner's API key. outcome is the label of o's
// outcome as the market names it ("Yes", "No", "Up", ...); trades are the ids of the
// trades o took part in. CreatedAt goes from milliseconds to seconds.
func OpenOrderFrom(o *market.Order, ownerAPIKey, outcome string, trades []market.TradeID) OpenOrder {
	return OpenOrder{
		ID:              o.ID,
		Status:          o.Status.String(),
		Owner:           ownerAPIKey,
		MakerAddress:    o.Owner.String(),
		Market:          o.Market,
		AssetID:         o.Token,
		Side:            Side(o.Side),
		OriginalSize:    Decimal(o.Size),
		SizeMatched:     Decimal(o.Matched),
		Price:           Decimal(o.Price),
		AssociateTrades: trades,
		Outcome:         outcome,
		CreatedAt:       o.CreatedAt / 1000,
		Expiration:      Int(o.Expiration),
		OrderType:       OrderType(o.Type),
	}
}

// ErrUnknownStatus is returned for an order status the vocabulary does not know.
var ErrUnknownStatus = errors.New("unknown order status")

// ParseOrderStatus maps the wire statuses ("LIVE", "MATCHED", "CANCELED", "EXPIRED",
// "REJECTED", in any case; also the upstream "ORDER_STATUS_" prefixed forms and the
// British "CANCELLED") to market.OrderStatus.
func ParseOrderStatus(s string) (market.OrderStatus, bool) {
	u := strings.ToUpper(strings.TrimPrefix(strings.ToUpper(s), "ORDER_STATUS_"))
	switch u {
	case "LIVE":
		return market.StatusLive, true
	case "MATCHED":
		return market.StatusMatched, true
	case "CANCELED", "CANCELLED", "CANCELED_MARKET_RESOLVED":
		return market.StatusCanceled, true
	case "EXPIRED":
		return market.StatusExpired, true
	case "REJECTED", "INVALID":
		return market.StatusRejected, true
	}
	return 0, false
}

// Order converts o back into a market.Order. The outcome comes from info when it is
// non-nil and knows the token, else from the label ("yes"/"no" in any case); other
// labels without info leave Outcome at its zero value (Yes). MakerAddress must be an
// address and Status a known status.
func (o *OpenOrder) Order(info *market.Info) (market.Order, error) {
	owner, err := market.ParseAddress(o.MakerAddress)
	if err != nil {
		return market.Order{}, err
	}
	st, ok := ParseOrderStatus(o.Status)
	if !ok {
		return market.Order{}, ErrUnknownStatus
	}
	out := market.Order{
		ID: o.ID, Owner: owner, Market: o.Market, Token: o.AssetID, Side: market.Side(o.Side),
		Price: market.Micros(o.Price), Size: market.Micros(o.OriginalSize), Matched: market.Micros(o.SizeMatched),
		Type: market.OrderType(o.OrderType), Expiration: int64(o.Expiration), CreatedAt: o.CreatedAt * 1000, Status: st,
		Outcome: outcomeOf(info, o.AssetID, o.Outcome),
	}
	return out, nil
}

func outcomeOf(info *market.Info, token market.TokenID, label string) market.Outcome {
	if info != nil {
		if oc, ok := info.OutcomeOf(token); ok {
			return oc
		}
	}
	if strings.EqualFold(label, "no") {
		return market.No
	}
	return market.Yes
}

// Trade statuses (dialect §4.2). Trades in the off-chain ledger are final when
// matched; the chain statuses exist for compatibility.
const (
	TradeMatched   = "MATCHED"
	TradeMined     = "MINED"
	TradeConfirmed = "CONFIRMED"
	TradeRetrying  = "RETRYING"
	TradeFailed    = "FAILED"
)

// MakerOrder is one maker's part of a Trade (dialect §4.2).
type MakerOrder struct {
	OrderID       market.OrderID `json:"order_id"`
	Owner         string         `json:"owner"`
	MakerAddress  string         `json:"maker_address"`
	MatchedAmount Decimal        `json:"matched_amount"`
	Price         Decimal        `json:"price"`
	FeeRateBps    Int            `json:"fee_rate_bps"`
	AssetID       market.TokenID `json:"asset_id"`
	Outcome       string         `json:"outcome"`
	Side          Side           `json:"side"`
}

// Trade is one trade of GET /data/trades (dialect §4.2), seen by one participant:
// Owner and MakerAddress are that participant's API key and wallet, TraderSide says
// whether it was the "TAKER" or a "MAKER". Side, Size, Price and AssetID are the
// taker's. MatchTime and LastUpdate are Unix seconds as strings. TransactionHash is
// always present ("" when there is none; the Rust client requires the key).
type Trade struct {
	ID              market.TradeID     `json:"id"`
	TakerOrderID    market.OrderID     `json:"taker_order_id"`
	Market          market.ConditionID `json:"market"`
	AssetID         market.TokenID     `json:"asset_id"`
	Side            Side               `json:"side"`
	Size            Decimal            `json:"size"`
	FeeRateBps      Int                `json:"fee_rate_bps"`
	Price           Decimal            `json:"price"`
	Status          string             `json:"status"`
	MatchTime       Int                `json:"match_time"`
	LastUpdate      Int                `json:"last_update"`
	Outcome         string             `json:"outcome"`
	BucketIndex     int                `json:"bucket_index"`
	Owner           string             `json:"owner"`
	MakerAddress    string             `json:"maker_address"`
	MakerOrders     []MakerOrder       `json:"maker_orders"`
	TransactionHash string             `json:"transaction_hash"`
	TraderSide      string             `json:"trader_side"`
	ErrorMsg        string             `json:"error_msg,omitempty"`
}

type tradeJSON Trade

// MarshalJSON encodes t with a non-null maker_orders array.
func (t Trade) MarshalJSON() ([]byte, error) {
	if t.MakerOrders == nil {
		t.MakerOrders = []MakerOrder{}
	}
	return json.Marshal(tradeJSON(t))
}

// TradeView says whose view of a trade TradeFrom renders and supplies what the
// market vocabulary does not hold.
type TradeView struct {
	// Viewer is the participant the record is for; TraderSide follows from it.
	Viewer market.Address
	// APIKey maps an address to its API key (the owner fields). If nil, owner
	// fields are empty.
	APIKey func(market.Address) string
	// Outcome maps a token to its outcome label. If nil, "Yes"/"No" by the fills'
	// outcome.
	Outcome func(market.TokenID, market.Outcome) string
	// FeeRateBps is the market's fee rate.
	FeeRateBps int64
	// Status is the trade status; if empty, TradeMatched.
	Status string
}

// TradeFrom renders t for v.Viewer (see TradeView). Times go from milliseconds to
// seconds.
func TradeFrom(t *market.Trade, v TradeView) Trade {
	key := func(a market.Address) string {
		if v.APIKey == nil {
			return ""
		}
		return v.APIKey(a)
	}
	label := func(tok market.TokenID, oc market.Outcome) string {
		if v.Outcome != nil {
			return v.Outcome(tok, oc)
		}
		if oc == market.No {
			return "No"
		}
		return "Yes"
	}
	status := v.Status
	if status == "" {
		status = TradeMatched
	}
	role := "TAKER"
	if v.Viewer != t.Taker {
		role = "MAKER"
	}
	takerOutcome := market.Yes
	makers := make([]MakerOrder, len(t.Makers))
	for i, m := range t.Makers {
		makers[i] = MakerOrder{
			OrderID: m.Order, Owner: key(m.Owner), MakerAddress: m.Owner.String(), MatchedAmount: Decimal(m.Size),
			Price: Decimal(m.Price), FeeRateBps: Int(v.FeeRateBps), AssetID: m.Token, Outcome: label(m.Token, m.Outcome), Side: Side(m.Side),
		}
		if m.Token == t.Token {
			takerOutcome = m.Outcome
		} else {
			takerOutcome = m.Outcome.Other()
		}
	}
	sec := Int(t.Time / 1000)
	return Trade{
		ID: t.ID, TakerOrderID: t.TakerOrder, Market: t.Market, AssetID: t.Token, Side: Side(t.Side),
		Size: Decimal(t.Size), FeeRateBps: Int(v.FeeRateBps), Price: Decimal(t.Price), Status: status,
		MatchTime: sec, LastUpdate: sec, Outcome: label(t.Token, takerOutcome), Owner: key(v.Viewer),
		MakerAddress: v.Viewer.String(), MakerOrders: makers, TraderSide: role,
	}
}

// Trade converts the record back into a market.Trade (the taker's view). The taker's
// address is known only when TraderSide is "TAKER" (it is then MakerAddress); fees
// are not on the wire and stay zero. Maker addresses must parse.
func (t *Trade) Trade(info *market.Info) (market.Trade, error) {
	out := market.Trade{
		ID: t.ID, Market: t.Market, Token: t.AssetID, Side: market.Side(t.Side), Price: market.Micros(t.Price),
		Size: market.Micros(t.Size), TakerOrder: t.TakerOrderID, Time: int64(t.MatchTime) * 1000,
	}
	if strings.EqualFold(t.TraderSide, "TAKER") {
		a, err := market.ParseAddress(t.MakerAddress)
		if err != nil {
			return market.Trade{}, err
		}
		out.Taker = a
	}
	out.Makers = make([]market.MakerFill, len(t.MakerOrders))
	for i, m := range t.MakerOrders {
		a, err := market.ParseAddress(m.MakerAddress)
		if err != nil {
			return market.Trade{}, err
		}
		out.Makers[i] = market.MakerFill{
			Order: m.OrderID, Owner: a, Token: m.AssetID, Outcome: outcomeOf(info, m.AssetID, m.Outcome),
			Side: market.Side(m.Side), Price: market.Micros(m.Price), Size: market.Micros(m.MatchedAmount),
		}
	}
	return out, nil
}

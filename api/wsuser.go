package api

import (
	"github.com/pitbossdev/pitboss/market"
)

// User channel frames (dialect §5.4). Owner fields are API keys: the local exchange
// fills them with the key the connection authenticated with, for the records of that
// key's address, and leaves other participants' keys empty. Timestamps are Unix
// seconds as strings, as in the documentation's examples.

// Order update types of WSOrder.Type.
const (
	WSOrderPlacement    = "PLACEMENT"
	WSOrderUpdate       = "UPDATE"
	WSOrderCancellation = "CANCELLATION"
)

// WSOrder is an order event: PLACEMENT when the order (or the rest of a taker order)
// rests on the book, UPDATE when it matched (Status MATCHED once complete),
// CANCELLATION when it left the book unfilled (Status CANCELED or EXPIRED).
// AssociateTrades encodes as [] when nil.
type WSOrder struct {
	EventType       string             `json:"event_type"`
	ID              market.OrderID     `json:"id"`
	Owner           string             `json:"owner"`
	OrderOwner      string             `json:"order_owner"`
	Market          market.ConditionID `json:"market"`
	AssetID         market.TokenID     `json:"asset_id"`
	Side            Side               `json:"side"`
	Price           Decimal            `json:"price"`
	OriginalSize    Decimal            `json:"original_size"`
	SizeMatched     Decimal            `json:"size_matched"`
	Outcome         string             `json:"outcome"`
	AssociateTrades []market.TradeID   `json:"associate_trades"`
	Timestamp       Int                `json:"timestamp"`
	Type            string             `json:"type"`
	CreatedAt       Int                `json:"created_at"`
	Expiration      Int                `json:"expiration"`
	MakerAddress    string             `json:"maker_address"`
	OrderType       OrderType          `json:"order_type"`
	Status          string             `json:"status"`
}

type wsOrderJSON WSOrder

// MarshalJSON encodes o with a non-null associate_trades array.
func (o WSOrder) MarshalJSON() ([]byte, error) {
	if o.AssociateTrades == nil {
		o.AssociateTrades = []market.TradeID{}
	}
	return MarshalWSFrame(wsOrderJSON(o))
}

// NewWSOrder renders o for the API key apiKey: typ is WSOrderPlacement,
// WSOrderUpdate or WSOrderCancellation, outcome the label of o's outcome, timeMs the
// event time (Unix ms). CreatedAt goes from milliseconds to seconds.
func NewWSOrder(o *market.Order, typ, apiKey, outcome string, trades []market.TradeID, timeMs int64) WSOrder {
	return WSOrder{
		EventType: WSEventOrder, ID: o.ID, Owner: apiKey, OrderOwner: apiKey, Market: o.Market, AssetID: o.Token,
		Side: Side(o.Side), Price: Decimal(o.Price), OriginalSize: Decimal(o.Size), SizeMatched: Decimal(o.Matched),
		Outcome: outcome, AssociateTrades: trades, Timestamp: Int(timeMs / 1000), Type: typ,
		CreatedAt: Int(o.CreatedAt / 1000), Expiration: Int(o.Expiration), MakerAddress: o.Owner.String(),
		OrderType: OrderType(o.Type), Status: o.Status.String(),
	}
}

// Update returns the market.OrderUpdate of the frame's type (0 for an unknown type).
func (o *WSOrder) Update() market.OrderUpdate {
	switch o.Type {
	case WSOrderPlacement:
		return market.OrderPlacement
	case WSOrderUpdate:
		return market.OrderUpdated
	case WSOrderCancellation:
		return market.OrderCancellation
	}
	return 0
}

// Order converts the frame into a market.Order (see OpenOrder.Order for the
// outcome). An unknown status is taken from the type: LIVE for PLACEMENT and UPDATE,
// CANCELED for CANCELLATION.
func (o *WSOrder) Order(info *market.Info) (market.Order, error) {
	owner, err := market.ParseAddress(o.MakerAddress)
	if err != nil {
		return market.Order{}, err
	}
	st, ok := ParseOrderStatus(o.Status)
	if !ok {
		st = market.StatusLive
		if o.Type == WSOrderCancellation {
			st = market.StatusCanceled
		}
	}
	return market.Order{
		ID: o.ID, Owner: owner, Market: o.Market, Token: o.AssetID, Outcome: outcomeOf(info, o.AssetID, o.Outcome),
		Side: market.Side(o.Side), Price: market.Micros(o.Price), Size: market.Micros(o.OriginalSize),
		Matched: market.Micros(o.SizeMatched), Type: market.OrderType(o.OrderType), Expiration: int64(o.Expiration),
		CreatedAt: int64(o.CreatedAt) * 1000, Status: st,
	}, nil
}

func (o *WSOrder) validate() error {
	if o.ID == "" || !ValidTokenID(string(o.AssetID)) || !market.Side(o.Side).Valid() || !validPrice(o.Price) ||
		o.OriginalSize < 0 || o.SizeMatched < 0 {
		return ErrWSMessage
	}
	return nil
}

// WSTrade is a trade event (dialect §5.4): the trade as GET /data/trades shows it to
// one participant (see Trade), with the channel's extra fields. Both spellings of
// the match time are sent. Fee is our extension: the fee the viewing participant paid
// in this trade (collateral; makers pay none). MakerOrders encodes as [] when nil.
type WSTrade struct {
	EventType       string             `json:"event_type"`
	Type            string             `json:"type"`
	ID              market.TradeID     `json:"id"`
	TakerOrderID    market.OrderID     `json:"taker_order_id"`
	Market          market.ConditionID `json:"market"`
	AssetID         market.TokenID     `json:"asset_id"`
	Side            Side               `json:"side"`
	Size            Decimal            `json:"size"`
	FeeRateBps      Int                `json:"fee_rate_bps"`
	Price           Decimal            `json:"price"`
	Status          string             `json:"status"`
	Matchtime       Int                `json:"matchtime"`
	MatchTime       Int                `json:"match_time"`
	LastUpdate      Int                `json:"last_update"`
	Timestamp       Int                `json:"timestamp"`
	Outcome         string             `json:"outcome"`
	BucketIndex     int                `json:"bucket_index"`
	Owner           string             `json:"owner"`
	TradeOwner      string             `json:"trade_owner"`
	MakerAddress    string             `json:"maker_address"`
	MakerOrders     []MakerOrder       `json:"maker_orders"`
	TransactionHash string             `json:"transaction_hash"`
	TraderSide      string             `json:"trader_side"`
	Fee             Decimal            `json:"fee"`
}

type wsTradeJSON WSTrade

// MarshalJSON encodes t with a non-null maker_orders array.
func (t WSTrade) MarshalJSON() ([]byte, error) {
	if t.MakerOrders == nil {
		t.MakerOrders = []MakerOrder{}
	}
	return MarshalWSFrame(wsTradeJSON(t))
}

// NewWSTrade renders a trade record (from TradeFrom) as a trade event, with the
// viewer's fee.
func NewWSTrade(t *Trade, fee market.Micros) WSTrade {
	return WSTrade{
		EventType: WSEventTrade, Type: "TRADE", ID: t.ID, TakerOrderID: t.TakerOrderID, Market: t.Market,
		AssetID: t.AssetID, Side: t.Side, Size: t.Size, FeeRateBps: t.FeeRateBps, Price: t.Price, Status: t.Status,
		Matchtime: t.MatchTime, MatchTime: t.MatchTime, LastUpdate: t.LastUpdate, Timestamp: t.MatchTime,
		Outcome: t.Outcome, BucketIndex: t.BucketIndex, Owner: t.Owner, TradeOwner: t.Owner,
		MakerAddress: t.MakerAddress, MakerOrders: t.MakerOrders, TransactionHash: t.TransactionHash,
		TraderSide: t.TraderSide, Fee: Decimal(fee),
	}
}

// Fills returns the fills of the participant identified by apiKey (and, when it is
// not the zero address, addr) in this trade: its taker fill when TraderSide is
// "TAKER", else its maker orders (those whose owner is apiKey or whose maker address
// is addr). Times go from seconds to milliseconds; the taker's Fee is the frame's
// fee, makers' fees are zero.
func (t *WSTrade) Fills(apiKey string, addr market.Address, info *market.Info) []market.Fill {
	tm := int64(t.Matchtime)
	if tm == 0 {
		tm = int64(t.MatchTime)
	}
	tm *= 1000
	var out []market.Fill
	if t.TraderSide == "TAKER" {
		owner, _ := market.ParseAddress(t.MakerAddress)
		return append(out, market.Fill{
			Trade: t.ID, Order: t.TakerOrderID, Owner: owner, Market: t.Market, Token: t.AssetID,
			Outcome: outcomeOf(info, t.AssetID, t.Outcome), Side: market.Side(t.Side), Role: market.Taker,
			Price: market.Micros(t.Price), Size: market.Micros(t.Size), Fee: market.Micros(t.Fee), Time: tm,
		})
	}
	for i := range t.MakerOrders {
		m := &t.MakerOrders[i]
		owner, err := market.ParseAddress(m.MakerAddress)
		mine := apiKey != "" && m.Owner == apiKey || err == nil && !addr.IsZero() && owner == addr
		if !mine {
			continue
		}
		out = append(out, market.Fill{
			Trade: t.ID, Order: m.OrderID, Owner: owner, Market: t.Market, Token: m.AssetID,
			Outcome: outcomeOf(info, m.AssetID, m.Outcome), Side: market.Side(m.Side), Role: market.Maker,
			Price: market.Micros(m.Price), Size: market.Micros(m.MatchedAmount), Time: tm,
		})
	}
	return out
}

// validate checks the ranges and fills a maker order's missing side (the
// documentation's maker_orders have none): a maker on the taker's asset took the
// other side, a maker on the other asset the same side (a mint or a merge).
func (t *WSTrade) validate() error {
	if t.ID == "" || !ValidTokenID(string(t.AssetID)) || !validPrice(t.Price) || t.Size < 0 || t.Fee < 0 ||
		!market.Side(t.Side).Valid() {
		return ErrWSMessage
	}
	for i := range t.MakerOrders {
		m := &t.MakerOrders[i]
		if m.MatchedAmount < 0 || m.Price < 0 || market.Micros(m.Price) >= market.One {
			return ErrWSMessage
		}
		if m.Side == 0 {
			m.Side = t.Side
			if m.AssetID == t.AssetID {
				m.Side = Side(market.Side(t.Side).Opposite())
			}
		}
	}
	return nil
}

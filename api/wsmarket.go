package api

import (
	"errors"

	"github.com/pitbossdev/pitboss/market"
)

// Market channel frames (dialect §5.3). Every frame that changes what a client knows
// of one asset's book carries our extension "seq": a per-asset sequence number that
// increases by exactly one with each such message (book snapshots excepted: a book
// carries the current number, and the next message of the asset carries the number
// after it). Seq 0 means "not sent" (a stock server); the local exchange starts every
// asset at 1. See docs/design/0071-ws-sequence-and-resync.md.

// WSBook is the book snapshot of one asset: {"event_type": "book", ...}, sent on
// subscribe and whenever the server re-sends the whole book. Levels are in REST
// order (bids ascending, asks descending: the best level last; dialect §5.3 leaves
// the order open and the local exchange picks REST's). Hash is the REST summary's
// hash of exactly these fields (see OrderBook.ComputeHash), so a client can verify a
// snapshot with b.OrderBook().ComputeHash(). TickSize, MinOrderSize, NegRisk and
// LastTradePrice are the fields of the summary the hash covers; upstream servers send
// tick_size and last_trade_price too. Bids and Asks encode as [] when nil.
type WSBook struct {
	EventType      string             `json:"event_type"`
	AssetID        market.TokenID     `json:"asset_id"`
	Market         market.ConditionID `json:"market"`
	Bids           []Level            `json:"bids"`
	Asks           []Level            `json:"asks"`
	Timestamp      Int                `json:"timestamp"`
	Hash           string             `json:"hash"`
	TickSize       Decimal            `json:"tick_size"`
	MinOrderSize   Number             `json:"min_order_size"`
	NegRisk        bool               `json:"neg_risk"`
	LastTradePrice Decimal            `json:"last_trade_price"`
	Seq            uint64             `json:"seq,omitempty"`
}

// NewWSBook renders s as a book frame with sequence number seq, hashing it with h
// (h may be nil: a fresh hasher is used).
func NewWSBook(s *BookState, seq uint64, h *BookHasher) WSBook {
	if h == nil {
		h = new(BookHasher)
	}
	return WSBook{
		EventType: WSEventBook, AssetID: s.Asset, Market: s.Market,
		Bids: restLevels(s.Bids), Asks: restLevels(s.Asks), Timestamp: Int(s.TimeMs), Hash: h.Hash(s),
		TickSize: Decimal(s.Tick), MinOrderSize: Number(s.MinSize), NegRisk: s.NegRisk,
		LastTradePrice: Decimal(s.LastTrade), Seq: seq,
	}
}

// OrderBook returns the REST summary the frame's hash covers.
func (b *WSBook) OrderBook() OrderBook {
	return OrderBook{
		Market: b.Market, AssetID: b.AssetID, Timestamp: b.Timestamp, Hash: b.Hash, Bids: b.Bids, Asks: b.Asks,
		MinOrderSize: b.MinOrderSize, TickSize: b.TickSize, NegRisk: b.NegRisk, LastTradePrice: b.LastTradePrice,
	}
}

// WSPriceChange reports new aggregate sizes of price levels of one market's assets
// (the schema since 2025-09-15; dialect §5.3). The local exchange sends one per market
// per batch of engine events, with the entries of both tokens of the market.
type WSPriceChange struct {
	EventType    string               `json:"event_type"`
	Market       market.ConditionID   `json:"market"`
	PriceChanges []WSPriceChangeEntry `json:"price_changes"`
	Timestamp    Int                  `json:"timestamp"`
}

// WSPriceChangeEntry is one level change: Size is the new aggregate size at Price on
// Side (BUY: bids, SELL: asks; "0" removes the level); BestBid and BestAsk are the top
// of the asset's book after the change ("0" for an empty side).
//
// Extensions of the local exchange: Seq is the asset's sequence number of the frame
// (the same on every entry of the asset in one frame); Hash, when not empty, is the
// book hash (BookHasher, with the frame's timestamp and the tick size, minimum order
// size, neg-risk flag and last trade price the client tracks) of the asset's book
// after applying this entry and every earlier entry of the frame; the local exchange
// sets it on the last entry of each asset.
type WSPriceChangeEntry struct {
	AssetID market.TokenID `json:"asset_id"`
	Price   Decimal        `json:"price"`
	Size    Decimal        `json:"size"`
	Side    Side           `json:"side"`
	Hash    string         `json:"hash,omitempty"`
	BestBid Decimal        `json:"best_bid"`
	BestAsk Decimal        `json:"best_ask"`
	Seq     uint64         `json:"seq,omitempty"`
}

// Change returns the entry as a market.LevelChange.
func (e *WSPriceChangeEntry) Change() market.LevelChange {
	return market.LevelChange{Token: e.AssetID, Side: market.Side(e.Side), Price: market.Micros(e.Price),
		Size: market.Micros(e.Size), BestBid: market.Micros(e.BestBid), BestAsk: market.Micros(e.BestAsk)}
}

// WSLastTradePrice is a trade print of one asset (dialect §5.3). The local exchange
// sends one per asset of the market for every taker order that traded: Price is the
// price of the order's last fill (what GET /last-trade-price reports afterwards), Size
// the taker's total size, Side the taker's side, all in the asset's own terms (a taker
// buying NO at 0.3 prints BUY 0.3 on NO and SELL 0.7 on YES).
type WSLastTradePrice struct {
	EventType       string             `json:"event_type"`
	AssetID         market.TokenID     `json:"asset_id"`
	Market          market.ConditionID `json:"market"`
	Price           Decimal            `json:"price"`
	Side            Side               `json:"side"`
	Size            Decimal            `json:"size"`
	FeeRateBps      Int                `json:"fee_rate_bps"`
	Timestamp       Int                `json:"timestamp"`
	TransactionHash string             `json:"transaction_hash"`
	Seq             uint64             `json:"seq,omitempty"`
}

// WSTickSizeChange reports a new tick size of one asset's market (dialect §5.3).
type WSTickSizeChange struct {
	EventType   string             `json:"event_type"`
	AssetID     market.TokenID     `json:"asset_id"`
	Market      market.ConditionID `json:"market"`
	OldTickSize Decimal            `json:"old_tick_size"`
	NewTickSize Decimal            `json:"new_tick_size"`
	Timestamp   Int                `json:"timestamp"`
	Seq         uint64             `json:"seq,omitempty"`
}

// WSBestBidAsk is the top of one asset's book (custom feature, dialect §5.3). Spread
// is best ask − best bid when both sides exist, else "0".
type WSBestBidAsk struct {
	EventType string             `json:"event_type"`
	Market    market.ConditionID `json:"market"`
	AssetID   market.TokenID     `json:"asset_id"`
	BestBid   Decimal            `json:"best_bid"`
	BestAsk   Decimal            `json:"best_ask"`
	Spread    Decimal            `json:"spread"`
	Timestamp Int                `json:"timestamp"`
}

// WSEventMessage is the event a market belongs to, in new_market and
// market_resolved frames.
type WSEventMessage struct {
	ID          string `json:"id"`
	Ticker      string `json:"ticker"`
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// WSMarketEvent is a new_market or market_resolved frame (dialect §5.3). The winning
// fields are set on market_resolved only. AssetsIDs and Outcomes encode as [] when
// nil.
type WSMarketEvent struct {
	EventType      string             `json:"event_type"`
	ID             string             `json:"id"`
	Question       string             `json:"question"`
	Market         market.ConditionID `json:"market"`
	Slug           string             `json:"slug"`
	Description    string             `json:"description"`
	AssetsIDs      []market.TokenID   `json:"assets_ids"`
	Outcomes       []string           `json:"outcomes"`
	EventMessage   *WSEventMessage    `json:"event_message,omitempty"`
	WinningAssetID market.TokenID     `json:"winning_asset_id,omitempty"`
	WinningOutcome string             `json:"winning_outcome,omitempty"`
	Timestamp      Int                `json:"timestamp"`
}

// ErrWSMessage is the cause of a market or user message whose fields are out of
// range: a missing asset id, a price outside (0, 1), a negative size, an invalid side.
var ErrWSMessage = errors.New("ws message: field out of range")

func validPrice(p Decimal) bool { return p > 0 && market.Micros(p) < market.One }

// validBestPrice accepts [0, 1]: upstream servers write "0" and "1" for empty sides.
func validBestPrice(p Decimal) bool { return p >= 0 && market.Micros(p) <= market.One }

func validLevels(lv []Level) bool {
	for _, l := range lv {
		if !validPrice(l.Price) || l.Size < 0 {
			return false
		}
	}
	return true
}

func (b *WSBook) validate() error {
	if !ValidTokenID(string(b.AssetID)) || !validLevels(b.Bids) || !validLevels(b.Asks) ||
		b.TickSize < 0 || b.MinOrderSize < 0 || b.LastTradePrice < 0 || market.Micros(b.LastTradePrice) >= market.One {
		return ErrWSMessage
	}
	return nil
}

func (p *WSPriceChange) validate() error {
	for i := range p.PriceChanges {
		e := &p.PriceChanges[i]
		if !ValidTokenID(string(e.AssetID)) || !validPrice(e.Price) || e.Size < 0 || !market.Side(e.Side).Valid() ||
			!validBestPrice(e.BestBid) || !validBestPrice(e.BestAsk) {
			return ErrWSMessage
		}
	}
	return nil
}

func (t *WSLastTradePrice) validate() error {
	if !ValidTokenID(string(t.AssetID)) || !validPrice(t.Price) || t.Size < 0 {
		return ErrWSMessage
	}
	return nil
}

func (t *WSTickSizeChange) validate() error {
	if !ValidTokenID(string(t.AssetID)) || t.NewTickSize <= 0 || market.Micros(t.NewTickSize) >= market.One || t.OldTickSize < 0 {
		return ErrWSMessage
	}
	return nil
}

type wsBookJSON WSBook

// MarshalJSON encodes b with non-null level arrays.
func (b WSBook) MarshalJSON() ([]byte, error) {
	if b.Bids == nil {
		b.Bids = []Level{}
	}
	if b.Asks == nil {
		b.Asks = []Level{}
	}
	return MarshalWSFrame(wsBookJSON(b))
}

type wsPriceChangeJSON WSPriceChange

// MarshalJSON encodes p with a non-null price_changes array.
func (p WSPriceChange) MarshalJSON() ([]byte, error) {
	if p.PriceChanges == nil {
		p.PriceChanges = []WSPriceChangeEntry{}
	}
	return MarshalWSFrame(wsPriceChangeJSON(p))
}

type wsMarketEventJSON WSMarketEvent

// MarshalJSON encodes m with non-null arrays.
func (m WSMarketEvent) MarshalJSON() ([]byte, error) {
	if m.AssetsIDs == nil {
		m.AssetsIDs = []market.TokenID{}
	}
	if m.Outcomes == nil {
		m.Outcomes = []string{}
	}
	return MarshalWSFrame(wsMarketEventJSON(m))
}

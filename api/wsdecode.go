package api

import (
	"encoding/json"
	"fmt"
)

// WSMessage is one decoded message of a market or user channel frame: EventType and
// the one pointer that belongs to it (none for an event type this package does not
// know, which a client ignores).
type WSMessage struct {
	EventType   string
	Book        *WSBook
	PriceChange *WSPriceChange
	LastTrade   *WSLastTradePrice
	TickSize    *WSTickSizeChange
	BestBidAsk  *WSBestBidAsk
	Market      *WSMarketEvent // new_market and market_resolved
	Order       *WSOrder
	Trade       *WSTrade
	RFQRequest  *WSRFQRequest // rfq_request (user channel, local shape)
	RFQQuote    *WSRFQQuote   // rfq_quote (user channel, local shape)
	Error       *WSError
}

// DecodeWSFrame decodes a server frame of the market or user channel (one object or
// an array of objects) into its messages. It never panics. A frame that is not JSON
// objects fails with ErrWSFrame; a message of a known type that does not decode or
// whose fields are out of range fails the whole frame (wrapping ErrWSMessage or the
// JSON error): a client cannot apply half a frame safely.
func DecodeWSFrame(frame []byte) ([]WSMessage, error) {
	msgs, err := SplitWSFrame(frame)
	if err != nil {
		return nil, err
	}
	out := make([]WSMessage, 0, len(msgs))
	for _, m := range msgs {
		d, err := DecodeWSMessage(m)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// DecodeWSMessage decodes one message (a JSON object) by its event_type; see
// DecodeWSFrame for the error contract.
func DecodeWSMessage(msg []byte) (WSMessage, error) {
	var env WSEnvelope
	if err := json.Unmarshal(msg, &env); err != nil {
		return WSMessage{}, fmt.Errorf("%w: %w", ErrWSFrame, err)
	}
	out := WSMessage{EventType: env.EventType}
	var err error
	switch env.EventType {
	case WSEventBook:
		out.Book = new(WSBook)
		if err = decodeStrict(msg, out.Book); err == nil {
			err = out.Book.validate()
		}
	case WSEventPriceChange:
		out.PriceChange = new(WSPriceChange)
		if err = decodeStrict(msg, out.PriceChange); err == nil {
			err = out.PriceChange.validate()
		}
	case WSEventLastTradePrice:
		out.LastTrade = new(WSLastTradePrice)
		if err = decodeStrict(msg, out.LastTrade); err == nil {
			err = out.LastTrade.validate()
		}
	case WSEventTickSizeChange:
		out.TickSize = new(WSTickSizeChange)
		if err = decodeStrict(msg, out.TickSize); err == nil {
			err = out.TickSize.validate()
		}
	case WSEventBestBidAsk:
		out.BestBidAsk = new(WSBestBidAsk)
		err = decodeStrict(msg, out.BestBidAsk)
	case WSEventNewMarket, WSEventMarketResolved:
		out.Market = new(WSMarketEvent)
		err = decodeStrict(msg, out.Market)
	case WSEventOrder:
		out.Order = new(WSOrder)
		if err = decodeStrict(msg, out.Order); err == nil {
			err = out.Order.validate()
		}
	case WSEventTrade:
		out.Trade = new(WSTrade)
		if err = decodeStrict(msg, out.Trade); err == nil {
			err = out.Trade.validate()
		}
	case WSEventRFQRequest:
		out.RFQRequest = new(WSRFQRequest)
		if err = decodeStrict(msg, out.RFQRequest); err == nil {
			err = out.RFQRequest.validate()
		}
	case WSEventRFQQuote:
		out.RFQQuote = new(WSRFQQuote)
		if err = decodeStrict(msg, out.RFQQuote); err == nil {
			err = out.RFQQuote.validate()
		}
	case WSEventError:
		out.Error = new(WSError)
		err = decodeStrict(msg, out.Error)
	}
	if err != nil {
		return WSMessage{}, fmt.Errorf("%w: %s: %w", ErrWSMessage, env.EventType, err)
	}
	return out, nil
}

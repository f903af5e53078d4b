package ws

import (
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// RFQFeed is the source of the user channel's RFQ events: the local exchange's
// request-for-quote desk (*sandbox/server.Server satisfies it). Its changes are not
// engine events (only the settlement is), so the desk publishes them itself once
// they are durable (docs/design/0153-rfq.md).
type RFQFeed interface {
	// SubscribeRFQ registers fn for every change; fn must not block. The returned
	// function unsubscribes.
	SubscribeRFQ(fn func(RFQEvent)) (unsubscribe func())
}

// RFQEvent is one change of the RFQ desk for the user channel.
type RFQEvent struct {
	// Market is the request's market: a user subscription's market filter applies.
	Market market.ConditionID
	// To are the addresses whose user connections get the event.
	To []market.Address
	// Frame is the encoded rfq_request or rfq_quote message (api.WSRFQRequest,
	// api.WSRFQQuote), queued as is on every /ws/user connection of To and, in an
	// RTDS envelope of topic clob_user and type Type, on their RTDS clob_user
	// subscriptions (as order and trade events are). May be nil.
	Frame []byte
	// Type is Frame's event type (api.WSEventRFQRequest, api.WSEventRFQQuote): an
	// RTDS clob_user subscription's type filter applies.
	Type string
	// Time is the change's time (Unix ms), the RTDS envelope's timestamp.
	Time int64
	// Trade, when not nil, is the trade an approval settled: each participant gets
	// it as trade events (MATCHED, MINED, CONFIRMED), as GET /data/trades shows it,
	// on its user connections (RTDS clob_user included) whose open-order dump is
	// before Seq, the engine sequence number of the settlement.
	Trade *market.Trade
	Seq   uint64
	// Keys are the API keys of the trade's participants (maker_orders[].owner).
	Keys map[market.Address]string
}

// rfqFeed returns Config.RFQ, or the Credentials when they are a feed too (as the
// server is), or nil.
func (h *Hub) rfqFeed() RFQFeed {
	if h.cfg.RFQ != nil {
		return h.cfg.RFQ
	}
	f, _ := h.cfg.Credentials.(RFQFeed)
	return f
}

// onRFQ is the RFQ feed's listener: it queues ev on its addresses' user
// connections under the hub's lock (the frame is encoded already; an RTDS
// clob_user connection gets it in its envelope; a trade is rendered once per API
// key, as the engine's trades are).
func (h *Hub) onRFQ(ev RFQEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Frame != nil {
		for _, a := range ev.To {
			for c := range h.users[a] {
				if !c.user.matches(ev.Market, ev.Type) {
					continue
				}
				if c.kind == chRTDS {
					c.enqueueLocked(rtdsEnvelope(api.RTDSTopicClobUser, ev.Type, ev.Time, ev.Frame, c.id))
				} else {
					c.enqueueLocked(ev.Frame)
				}
			}
		}
	}
	if ev.Trade != nil && len(h.users) > 0 {
		h.st.tradeToUsers(ev.Trade, ev.Seq, 0, ev.Keys)
	}
}

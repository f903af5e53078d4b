package ws

import (
	"maps"
	"strings"

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

	// Public, when not nil, is the encoded payload (api.RTDSRFQRequest) of an RTDS
	// rfq-topic message of type PublicType about a request of Token in Market,
	// queued on every RTDS connection whose rfq subscriptions select it: what
	// would-be quoters learn without polling. It names nobody.
	Public     []byte
	PublicType string
	Token      market.TokenID
}

// rfqSub is one RTDS rfq subscription of a connection: a type ("*" or one) and
// the markets and tokens it selects (both empty: every request).
type rfqSub struct {
	typ     string
	markets map[market.ConditionID]struct{}
	tokens  map[market.TokenID]struct{}
}

// selects reports whether s selects a message of type typ about a request of
// token t in market m.
func (s *rfqSub) selects(typ string, m market.ConditionID, t market.TokenID) bool {
	if s.typ != api.RTDSTypeAll && s.typ != typ {
		return false
	}
	if len(s.markets) == 0 && len(s.tokens) == 0 {
		return true
	}
	_, inM := s.markets[m]
	_, inT := s.tokens[t]
	return inM || inT
}

// maxRFQSubs bounds the rfq subscriptions of one connection.
const maxRFQSubs = 64

// rtdsRFQSub applies an rfq-topic subscription (hub.mu held). Subscribe adds one
// (type and filters); unsubscribe removes every one of the type ("*": all) when
// no filters are given, else those with exactly these filters.
func (c *conn) rtdsRFQSub(action string, s *api.RTDSSubscription) error {
	if !api.ValidRTDSRFQType(s.Type) {
		return unavailableType(s.Topic, s.Type)
	}
	f, err := api.DecodeRTDSRFQFilters(s.Filters)
	if err != nil {
		return err
	}
	if len(f.Markets)+len(f.Tokens) > c.h.cfg.MaxAssets {
		return market.Errorf(market.CodePayloadTooLarge)
	}
	sub := rfqSub{typ: s.Type, markets: map[market.ConditionID]struct{}{}, tokens: map[market.TokenID]struct{}{}}
	for _, m := range f.Markets {
		sub.markets[m] = struct{}{}
	}
	for _, t := range f.Tokens {
		sub.tokens[t] = struct{}{}
	}
	r := c.rtds
	if action == api.RTDSUnsubscribe {
		kept := r.rfq[:0]
		for _, x := range r.rfq {
			sameType := sub.typ == api.RTDSTypeAll || x.typ == sub.typ
			sameFilters := strings.TrimSpace(s.Filters) == "" || maps.Equal(x.markets, sub.markets) && maps.Equal(x.tokens, sub.tokens)
			if !(sameType && sameFilters) {
				kept = append(kept, x)
			}
		}
		clear(r.rfq[len(kept):])
		r.rfq = kept
		return nil
	}
	if len(r.rfq) >= maxRFQSubs {
		return market.Errorf(market.CodePayloadTooLarge)
	}
	r.rfq = append(r.rfq, sub)
	return nil
}

// rtdsRFQ queues an rfq-topic message on the RTDS connections that select it
// (hub.mu held): the payload is encoded already, only the envelope is built per
// connection (it carries the connection id).
func (h *Hub) rtdsRFQ(ev *RFQEvent) {
	for c := range h.rtdsAll {
		r := c.rtds
		if r == nil || len(r.rfq) == 0 {
			continue
		}
		for i := range r.rfq {
			if r.rfq[i].selects(ev.PublicType, ev.Market, ev.Token) {
				c.enqueueLocked(rtdsEnvelope(api.RTDSTopicRFQ, ev.PublicType, ev.Time, ev.Public, c.id))
				break
			}
		}
	}
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
	if ev.Public != nil {
		h.rtdsRFQ(&ev)
	}
	if ev.Trade != nil && len(h.users) > 0 {
		h.st.tradeToUsers(ev.Trade, ev.Seq, 0, ev.Keys)
	}
}

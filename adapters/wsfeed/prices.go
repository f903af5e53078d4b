package wsfeed

import (
	"context"
	"encoding/json"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// PriceChannel names the connection to the service's real-time data socket
// (URL+"/ws/rtds") that carries the prices of Config.Prices.
const PriceChannel Channel = "rtds"

// maxPricePing is the longest ping period of the price channel: the service asks
// RTDS clients for a PING about every 5 s.
const maxPricePing = 5e9

// startPrices subscribes the price topics of every symbol of Config.Prices.
func (r *reader) startPrices(ctx context.Context) error {
	return writeJSON(ctx, r.c, api.RTDSRequest{Action: api.RTDSSubscribe, Subscriptions: api.RTDSPriceSubscriptions(r.f.cfg.Prices)})
}

// prices handles one frame of the price channel: a price of a wanted symbol newer
// than the last one delivered becomes an EventFeed; a refused subscription is
// logged; anything else is ignored (the socket carries other topics too).
func (r *reader) prices(b []byte) {
	f := r.f
	ev, ok, refusal := decodePriceFrame(b, f.priceWant)
	if refusal != "" {
		f.log.Warn("wsfeed: a price subscription was refused", zap.String("error", refusal))
		return
	}
	if !ok || ev.Time <= f.priceLast[ev.Name] {
		return // another topic, or a price delivered already (sent again after a reconnection)
	}
	f.priceLast[ev.Name] = ev.Time
	r.evs = append(r.evs[:0], ev)
	f.emit(r.evs)
}

// decodePriceFrame decodes an RTDS frame: ok with the EventFeed of a price of a
// symbol of want (Name the symbol's String, Time the price's time, Value the
// price); refusal with the message of a subscription error. It never panics.
func decodePriceFrame(b []byte, want map[market.FeedSymbol]string) (ev market.Event, ok bool, refusal string) {
	m, err := api.DecodeRTDSMessage(b)
	if err != nil {
		return ev, false, ""
	}
	if m.Topic == api.RTDSTopicSubscription && m.Type == api.RTDSTypeError {
		var e api.RTDSError
		if json.Unmarshal(m.Payload, &e) == nil {
			return ev, false, clipText(e.Topic + ": " + e.Error)
		}
		return ev, false, "(undecodable)"
	}
	src, isPrice := api.RTDSPriceSource(m.Topic)
	if !isPrice {
		return ev, false, ""
	}
	p, err := api.DecodeRTDSPrice(m.Payload)
	if err != nil {
		return ev, false, ""
	}
	name, wanted := want[market.FeedSymbol{Source: src, Symbol: p.Symbol}]
	if !wanted {
		return ev, false, ""
	}
	return market.Event{Kind: market.EventFeed, Time: p.Timestamp, Name: name, Value: p.Value}, true, ""
}

// clipText bounds a server's text before it is logged.
func clipText(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

package ws

import (
	"context"
	"strconv"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// PriceSource is the price process behind the RTDS price topics (crypto_prices,
// crypto_prices_chainlink, equity_prices; docs/design/0160).
// sandbox/sim.PriceService satisfies it.
type PriceSource interface {
	// Prices steps sym's process up to upTo (Unix ms) and appends its prices
	// stamped after after, oldest first — or, with latest, only the newest one at
	// or before upTo. Events carry the price in Value and its time in Time. It is
	// called from one goroutine, without the hub's lock.
	Prices(sym market.FeedSymbol, after, upTo int64, latest bool, out []market.Event) []market.Event
}

// DefaultPriceInterval is how often the hub looks for new prices (Config.PriceInterval).
const DefaultPriceInterval = 100 * time.Millisecond

// MaxPriceSymbols bounds the symbols the hub serves prices of, over all
// connections: a subscription that would add one more is refused with "Payload
// exceeds the limit".
const MaxPriceSymbols = 256

// defaultPriceSymbols are what a price subscription without filters gets.
var defaultPriceSymbols = map[market.FeedSource][]string{
	market.FeedCrypto:    {"btcusdt", "ethusdt", "solusdt", "xrpusdt", "dogeusdt"},
	market.FeedChainlink: {"btc/usd", "eth/usd", "sol/usd", "xrp/usd", "doge/usd"},
}

// priceHub is the hub's price state (guarded by hub.mu but for wake).
type priceHub struct {
	subs map[market.FeedSymbol]*priceSub
	wake chan struct{} // the price loop's work signal (1-buffered)
}

// priceSub is one symbol's subscribers: each connection with the time of the
// newest price it was sent (0: none yet), and the newest price fetched.
type priceSub struct {
	conns  map[*conn]int64
	latest market.Event
}

// startPrices starts the price loop when the hub has a price source; the
// returned function waits for it to stop (after ctx ends).
func (h *Hub) startPrices(ctx context.Context) (wait func()) {
	if h.cfg.Prices == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.runPrices(ctx)
	}()
	return func() { <-done }
}

// runPrices sends new prices to their subscribers every PriceInterval, and the
// newest price to a new subscriber as soon as it subscribes.
func (h *Hub) runPrices(ctx context.Context) {
	tick := time.NewTicker(h.cfg.PriceInterval)
	defer tick.Stop()
	type job struct {
		sym   market.FeedSymbol
		after int64
	}
	var jobs []job
	var evs []market.Event
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-h.px.wake:
		}
		now := h.cfg.Now().UnixMilli()
		jobs = jobs[:0]
		h.mu.Lock()
		for sym, ps := range h.px.subs {
			jobs = append(jobs, job{sym, ps.latest.Time})
		}
		h.mu.Unlock()
		for _, j := range jobs {
			// A symbol's first fetch asks for its newest price only: the process
			// may have started long ago.
			evs = h.cfg.Prices.Prices(j.sym, j.after, now, j.after == 0, evs[:0])
			h.mu.Lock()
			h.sendPricesLocked(j.sym, evs, now)
			h.mu.Unlock()
		}
	}
}

// sendPricesLocked hands sym's new prices evs to its subscribers, and the newest
// price to those that have none yet (hub.mu held).
func (h *Hub) sendPricesLocked(sym market.FeedSymbol, evs []market.Event, now int64) {
	ps := h.px.subs[sym]
	if ps == nil {
		return
	}
	frames := make([][]byte, len(evs))
	for i := range evs {
		frames[i] = api.AppendRTDSPrice(nil, api.RTDSPrice{Symbol: sym.Symbol, Timestamp: evs[i].Time, Value: evs[i].Value})
	}
	topic := api.RTDSPriceTopic(sym.Source)
	for c, last := range ps.conns {
		if last == 0 && ps.latest.Time != 0 && (len(evs) == 0 || evs[0].Time > ps.latest.Time) {
			// Subscribed since the last round: the newest price first.
			p := api.AppendRTDSPrice(nil, api.RTDSPrice{Symbol: sym.Symbol, Timestamp: ps.latest.Time, Value: ps.latest.Value})
			c.enqueueLocked(rtdsEnvelope(topic, api.RTDSTypeUpdate, now, p, c.id))
			last = ps.latest.Time
		}
		for i := range evs {
			if evs[i].Time > last {
				c.enqueueLocked(rtdsEnvelope(topic, api.RTDSTypeUpdate, now, frames[i], c.id))
				last = evs[i].Time
			}
		}
		if !c.dead {
			ps.conns[c] = last
		}
	}
	if len(evs) > 0 {
		ps.latest = evs[len(evs)-1]
	}
}

// rtdsPricesSub handles a subscription to a price topic: type "*" or "update",
// filters naming symbols (api.ParseRTDSPriceFilters; none: the default symbols of
// the topic). Unsubscribing without filters drops every symbol of the topic.
func (c *conn) rtdsPricesSub(action string, s *api.RTDSSubscription) error {
	h := c.h
	if h.cfg.Prices == nil {
		return market.Errorf(market.CodeChannelUnavailable, "RTDS topic "+strconv.Quote(clip(s.Topic))) // pitboss exchange serves them with --sim
	}
	if s.Type != api.RTDSTypeAll && s.Type != api.RTDSTypeUpdate {
		return unavailableType(s.Topic, s.Type)
	}
	src, _ := api.RTDSPriceSource(s.Topic)
	syms, err := api.ParseRTDSPriceFilters(src, s.Filters, h.cfg.MaxAssets)
	if err != nil {
		if _, ok := err.(*market.Error); ok {
			return err // too many symbols
		}
		return badFilters(err.Error())
	}
	r := c.rtds
	if r.prices == nil {
		r.prices = map[market.FeedSymbol]struct{}{}
	}
	if action == api.RTDSUnsubscribe {
		for sym := range r.prices {
			if len(syms) == 0 && sym.Source == src {
				c.priceUnwatchLocked(sym)
			}
		}
		for _, sym := range syms {
			c.priceUnwatchLocked(sym)
		}
		return nil
	}
	if len(syms) == 0 {
		for _, n := range defaultPriceSymbols[src] {
			syms = append(syms, market.FeedSymbol{Source: src, Symbol: n})
		}
		if len(syms) == 0 {
			return badFilters("topic " + strconv.Quote(s.Topic) + " needs the symbols it wants")
		}
	}
	if h.px.subs == nil {
		h.px.subs = map[market.FeedSymbol]*priceSub{}
	}
	for _, sym := range syms {
		if _, ok := r.prices[sym]; ok {
			continue
		}
		ps := h.px.subs[sym]
		if ps == nil {
			if len(h.px.subs) >= MaxPriceSymbols || len(r.prices) >= h.cfg.MaxAssets {
				return market.Errorf(market.CodePayloadTooLarge)
			}
			ps = &priceSub{conns: map[*conn]int64{}}
			h.px.subs[sym] = ps
		}
		ps.conns[c] = 0
		r.prices[sym] = struct{}{}
	}
	select {
	case h.px.wake <- struct{}{}:
	default:
	}
	return nil
}

// priceUnwatchLocked drops c's subscription to sym (hub.mu held).
func (c *conn) priceUnwatchLocked(sym market.FeedSymbol) {
	delete(c.rtds.prices, sym)
	if ps := c.h.px.subs[sym]; ps != nil {
		delete(ps.conns, c)
		if len(ps.conns) == 0 {
			delete(c.h.px.subs, sym)
		}
	}
}

// pricesDropLocked drops every price subscription of c (hub.mu held).
func (c *conn) pricesDropLocked() {
	for sym := range c.rtds.prices {
		c.priceUnwatchLocked(sym)
	}
}

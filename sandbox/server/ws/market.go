package ws

import (
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// onMarketMessage handles a subscribe message on /ws/market: the initial message
// {"assets_ids": [...], "type": "market", "initial_dump": true,
// "custom_feature_enabled": false} or a dynamic {"assets_ids": [...], "operation":
// "subscribe"|"unsubscribe"}. Each named asset gets its book snapshot (unless
// initial_dump is false) before any change; subscribing again to an asset re-sends
// its snapshot. Unknown assets are reported in one error frame; the known ones are
// subscribed.
func (c *conn) onMarketMessage(b []byte) {
	sub, ok := c.decodeSubscribe(b)
	if !ok {
		return
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.dead {
		return
	}
	if c.assets == nil {
		c.assets = map[market.TokenID]struct{}{}
	}
	if sub.Operation == api.WSOpUnsubscribe {
		for _, t := range sub.AssetsIDs {
			h.st.unsubscribe(c, t)
			delete(c.assets, t)
		}
		return
	}
	if sub.Operation == "" || sub.CustomFeatureEnabled {
		c.customFeat = sub.CustomFeatureEnabled
		if c.customFeat {
			h.custom[c] = struct{}{}
		} else {
			delete(h.custom, c)
		}
	}
	var unknown []market.TokenID
	for _, t := range sub.AssetsIDs {
		if _, have := c.assets[t]; !have && len(c.assets) >= h.cfg.MaxAssets {
			c.errorLocked(market.Errorf(market.CodePayloadTooLarge), nil)
			break
		}
		if !h.st.subscribe(c, t, sub.WantsDump()) {
			unknown = append(unknown, t)
			continue
		}
		c.assets[t] = struct{}{}
	}
	if len(unknown) > 0 {
		c.errorLocked(market.Errorf(market.CodeNoOrderbook), unknown)
	}
}

// onSportsMessage refuses every subscription: the local exchange has no sports
// data. The client gets an error frame, then the connection is closed with the same
// text, so that it never waits for data that cannot come.
func (c *conn) onSportsMessage([]byte) {
	c.sendError(market.Errorf(market.CodeChannelUnavailable, "the sports feed"), true)
}

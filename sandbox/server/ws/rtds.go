package ws

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// rtdsState is the RTDS subscriptions of one connection (guarded by hub.mu).
type rtdsState struct {
	// clob_market: types per token, and types wanted for every market
	// (market_created, market_resolved without a filter).
	market    map[market.TokenID]map[string]bool
	marketAll map[string]bool
	// activity subscriptions.
	activity []activitySub
	// comments subscriptions: entity type → ids ("" type: all; empty ids: all).
	comments map[string]map[string]struct{}
	commentT map[string]bool
	// price topics: the symbols subscribed (prices.go).
	prices map[market.FeedSymbol]struct{}
	// rfq subscriptions (rfq.go).
	rfq []rfqSub
}

type activitySub struct {
	typ       string
	market    market.ConditionID
	slug      string
	eventSlug string
}

// clobMarketTypes are the clob_market types the local exchange produces.
var clobMarketTypes = map[string]bool{
	api.WSEventPriceChange: true, api.RTDSTypeAggOrderbook: true, api.WSEventLastTradePrice: true,
	api.WSEventTickSizeChange: true, api.RTDSTypeMarketCreated: true, api.RTDSTypeMarketResolved: true,
}

// tokenTypes are the clob_market types that need a token filter.
var tokenTypes = map[string]bool{
	api.WSEventPriceChange: true, api.RTDSTypeAggOrderbook: true, api.WSEventLastTradePrice: true, api.WSEventTickSizeChange: true,
}

var commentTypes = map[string]bool{
	api.CommentCreated: true, api.CommentRemoved: true, api.ReactionCreated: true, api.ReactionRemoved: true, api.SquareMessage: true,
}

func (c *conn) rtdsDropLocked() {
	if c.rtds == nil {
		return
	}
	c.pricesDropLocked()
	for t := range c.rtds.market {
		if r, ok := c.h.st.tokens[t]; ok {
			delete(r.m.rtds[r.o], c)
		}
	}
}

// rtdsEnvelope builds {"topic","type","timestamp","payload","connection_id"} around
// an already encoded payload (one allocation per connection: the connection id
// differs).
func rtdsEnvelope(topic, typ string, ts int64, payload []byte, connID uint64) []byte {
	id := connectionID(connID)
	b := make([]byte, 0, len(payload)+len(topic)+len(typ)+len(id)+80)
	b = append(b, `{"topic":`...)
	b = strconv.AppendQuote(b, topic)
	b = append(b, `,"type":`...)
	b = strconv.AppendQuote(b, typ)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"payload":`...)
	b = append(b, payload...)
	b = append(b, `,"connection_id":"`...)
	b = append(b, id...)
	return append(b, `"}`...)
}

// rtdsError queues a refusal: topic "subscription", type "error" (hub.mu held).
func (c *conn) rtdsErrorLocked(err error, topic, typ string) {
	p, mErr := api.MarshalWSFrame(api.RTDSError{Error: api.AsCatalog(err).Message, Topic: clip(topic), Type: clip(typ)})
	if mErr != nil {
		return
	}
	c.enqueueLocked(rtdsEnvelope(api.RTDSTopicSubscription, api.RTDSTypeError, c.h.cfg.Now().UnixMilli(), p, c.id))
}

// onRTDSMessage handles {"action": "subscribe"|"unsubscribe", "subscriptions": [...]}.
// Topics the local exchange feeds: clob_market (filters: a JSON array of token ids,
// required for the per-token types), activity (filters: optional JSON object with
// market, market_slug or event_slug), clob_user (clob_auth required) and comments
// (filters: optional JSON object with parentEntityType and parentEntityID), rfq
// (filters: optional JSON object with market(s) and token(s); rfq.go) and,
// with Config.Prices, the price topics (prices.go). Every
// other topic, type or malformed filter is refused with an error message naming it;
// the other subscriptions of the request still apply.
func (c *conn) onRTDSMessage(b []byte) {
	req, err := api.DecodeRTDSRequest(b)
	h := c.h
	if err != nil {
		h.mu.Lock()
		c.rtdsErrorLocked(err, "", "")
		h.mu.Unlock()
		return
	}
	// Authenticate clob_user subscriptions outside the lock.
	type authRes struct {
		addr market.Address
		err  error
	}
	auths := make([]authRes, len(req.Subscriptions))
	for i, s := range req.Subscriptions {
		if s.Topic == api.RTDSTopicClobUser && req.Action == api.RTDSSubscribe {
			if s.ClobAuth == nil {
				auths[i].err = market.Errorf(market.CodeUnauthorized)
				continue
			}
			auths[i].addr, auths[i].err = h.authenticate(s.ClobAuth.Key, s.ClobAuth.Secret, s.ClobAuth.Passphrase)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.dead {
		return
	}
	if c.rtds == nil {
		c.rtds = &rtdsState{market: map[market.TokenID]map[string]bool{}, marketAll: map[string]bool{},
			comments: map[string]map[string]struct{}{}, commentT: map[string]bool{}}
	}
	for i := range req.Subscriptions {
		s := &req.Subscriptions[i]
		var err error
		switch s.Topic {
		case api.RTDSTopicClobMarket:
			err = c.rtdsClobMarketSub(req.Action, s)
		case api.RTDSTopicActivity:
			err = c.rtdsActivitySub(req.Action, s)
		case api.RTDSTopicClobUser:
			err = c.rtdsUserSub(req.Action, s, auths[i].addr, auths[i].err)
		case api.RTDSTopicComments:
			err = c.rtdsCommentsSub(req.Action, s)
		case api.RTDSTopicRFQ:
			err = c.rtdsRFQSub(req.Action, s)
		case api.RTDSTopicCryptoPrices, api.RTDSTopicChainlinkPrices, api.RTDSTopicEquityPrices:
			err = c.rtdsPricesSub(req.Action, s)
		default:
			err = market.Errorf(market.CodeChannelUnavailable, "RTDS topic "+strconv.Quote(clip(s.Topic)))
		}
		if err != nil {
			c.rtdsErrorLocked(err, s.Topic, s.Type)
		}
	}
}

func unavailableType(topic, typ string) error {
	return market.Errorf(market.CodeChannelUnavailable, "RTDS type "+strconv.Quote(clip(typ))+" of topic "+strconv.Quote(clip(topic)))
}

func badFilters(what string) error {
	return api.WithCause(market.Errorf(market.CodeBadRequest, "filters: "+what), errors.New(what))
}

func (c *conn) rtdsClobMarketSub(action string, s *api.RTDSSubscription) error {
	types := []string{s.Type}
	if s.Type == api.RTDSTypeAll {
		types = []string{api.WSEventPriceChange, api.RTDSTypeAggOrderbook, api.WSEventLastTradePrice,
			api.WSEventTickSizeChange, api.RTDSTypeMarketCreated, api.RTDSTypeMarketResolved}
	} else if !clobMarketTypes[s.Type] {
		return unavailableType(s.Topic, s.Type)
	}
	var tokens []market.TokenID
	if strings.TrimSpace(s.Filters) != "" {
		if err := json.Unmarshal([]byte(s.Filters), &tokens); err != nil {
			return badFilters("a JSON array of token ids")
		}
		if len(tokens) > c.h.cfg.MaxAssets {
			return market.Errorf(market.CodePayloadTooLarge)
		}
	}
	st := c.h.st
	r := c.rtds
	if action == api.RTDSUnsubscribe {
		for _, typ := range types {
			if len(tokens) == 0 {
				delete(r.marketAll, typ)
				for t, set := range r.market {
					delete(set, typ)
					if len(set) == 0 {
						c.rtdsUnwatch(t)
					}
				}
				continue
			}
			for _, t := range tokens {
				if set := r.market[t]; set != nil {
					delete(set, typ)
					if len(set) == 0 {
						c.rtdsUnwatch(t)
					}
				}
			}
		}
		return nil
	}
	if len(tokens) == 0 {
		if s.Type != api.RTDSTypeAll && tokenTypes[s.Type] {
			return badFilters("type " + strconv.Quote(clip(s.Type)) + " needs a JSON array of token ids")
		}
		r.marketAll[api.RTDSTypeMarketCreated] = r.marketAll[api.RTDSTypeMarketCreated] || s.Type == api.RTDSTypeAll || s.Type == api.RTDSTypeMarketCreated
		r.marketAll[api.RTDSTypeMarketResolved] = r.marketAll[api.RTDSTypeMarketResolved] || s.Type == api.RTDSTypeAll || s.Type == api.RTDSTypeMarketResolved
		return nil
	}
	var unknown []string
	for _, t := range tokens {
		ref, ok := st.tokens[t]
		if !ok {
			unknown = append(unknown, string(t))
			continue
		}
		set := r.market[t]
		if set == nil {
			if len(r.market) >= c.h.cfg.MaxAssets {
				return market.Errorf(market.CodePayloadTooLarge)
			}
			set = map[string]bool{}
			r.market[t] = set
		}
		for _, typ := range types {
			set[typ] = true
		}
		ref.m.rtds[ref.o][c] = struct{}{}
		if set[api.RTDSTypeAggOrderbook] && (s.Type == api.RTDSTypeAggOrderbook || s.Type == api.RTDSTypeAll) && !st.stale {
			st.rtdsBook(ref.m, ref.o, c)
		}
	}
	if len(unknown) > 0 {
		return api.WithCause(market.Errorf(market.CodeNoOrderbook), errors.New(strings.Join(unknown, ",")))
	}
	return nil
}

func (c *conn) rtdsUnwatch(t market.TokenID) {
	delete(c.rtds.market, t)
	if r, ok := c.h.st.tokens[t]; ok {
		delete(r.m.rtds[r.o], c)
	}
}

// activityFilters is the JSON object an activity subscription may carry.
type activityFilters struct {
	Market     market.ConditionID `json:"market"`
	MarketSlug string             `json:"market_slug"`
	EventSlug  string             `json:"event_slug"`
}

func (c *conn) rtdsActivitySub(action string, s *api.RTDSSubscription) error {
	if s.Type != api.RTDSTypeAll && s.Type != api.RTDSTypeTrades && s.Type != api.RTDSTypeOrdersMatched {
		return unavailableType(s.Topic, s.Type)
	}
	var f activityFilters
	if strings.TrimSpace(s.Filters) != "" {
		if err := json.Unmarshal([]byte(s.Filters), &f); err != nil {
			return badFilters("a JSON object with market, market_slug or event_slug")
		}
	}
	sub := activitySub{typ: s.Type, market: f.Market, slug: f.MarketSlug, eventSlug: f.EventSlug}
	r := c.rtds
	if action == api.RTDSUnsubscribe {
		kept := r.activity[:0]
		for _, a := range r.activity {
			if a.typ != sub.typ && sub.typ != api.RTDSTypeAll || s.Filters != "" && a != sub {
				kept = append(kept, a)
			}
		}
		r.activity = kept
		return nil
	}
	if len(r.activity) >= 64 {
		return market.Errorf(market.CodePayloadTooLarge)
	}
	r.activity = append(r.activity, sub)
	return nil
}

func (c *conn) rtdsUserSub(action string, s *api.RTDSSubscription, addr market.Address, authErr error) error {
	if s.Type != api.RTDSTypeAll && s.Type != api.WSEventOrder && s.Type != api.WSEventTrade &&
		s.Type != api.WSEventRFQRequest && s.Type != api.WSEventRFQQuote {
		return unavailableType(s.Topic, s.Type)
	}
	h := c.h
	if action == api.RTDSUnsubscribe {
		if c.user != nil {
			delete(c.user.types, s.Type)
			if s.Type == api.RTDSTypeAll || len(c.user.types) == 0 {
				h.removeUser(c)
				c.user = nil
			}
		}
		return nil
	}
	if authErr != nil {
		return authErr
	}
	if c.user != nil && c.user.key != s.ClobAuth.Key {
		h.removeUser(c)
		c.user = nil
	}
	if c.user == nil {
		c.user = &userSub{addr: addr, key: s.ClobAuth.Key, all: true, types: map[string]bool{}}
		set := h.users[addr]
		if set == nil {
			set = map[*conn]struct{}{}
			h.users[addr] = set
		}
		set[c] = struct{}{}
	}
	c.user.types[s.Type] = true
	return nil
}

// commentFilters is the JSON object a comments subscription may carry.
type commentFilters struct {
	ParentEntityType string          `json:"parentEntityType"`
	ParentEntityID   json.RawMessage `json:"parentEntityID"`
}

func (c *conn) rtdsCommentsSub(action string, s *api.RTDSSubscription) error {
	if s.Type != api.RTDSTypeAll && !commentTypes[s.Type] {
		return unavailableType(s.Topic, s.Type)
	}
	var f commentFilters
	if strings.TrimSpace(s.Filters) != "" {
		if err := json.Unmarshal([]byte(s.Filters), &f); err != nil {
			return badFilters("a JSON object with parentEntityType and parentEntityID")
		}
	}
	id := strings.Trim(string(f.ParentEntityID), `"`)
	r := c.rtds
	if action == api.RTDSUnsubscribe {
		delete(r.commentT, s.Type)
		if id == "" {
			delete(r.comments, f.ParentEntityType)
		} else if set := r.comments[f.ParentEntityType]; set != nil {
			delete(set, id)
			if len(set) == 0 {
				delete(r.comments, f.ParentEntityType) // an empty set would mean "all"
			}
		}
		return nil
	}
	r.commentT[s.Type] = true
	set := r.comments[f.ParentEntityType]
	if set == nil {
		set = map[string]struct{}{}
		r.comments[f.ParentEntityType] = set
	}
	if id == "" {
		clear(set) // every thread of the type
	} else {
		set[id] = struct{}{}
	}
	return nil
}

// wantsComment reports whether the RTDS subscriptions select ev.
func (r *rtdsState) wantsComment(ev *api.CommentEvent) bool {
	if !r.commentT[api.RTDSTypeAll] && !r.commentT[ev.Type] {
		return false
	}
	return matchEntity(r.comments, ev)
}

// matchEntity reports whether subs (entity type → ids) selects ev.
func matchEntity(subs map[string]map[string]struct{}, ev *api.CommentEvent) bool {
	for typ, ids := range subs {
		if typ != "" && typ != ev.ParentEntityType {
			continue
		}
		if len(ids) == 0 {
			return true
		}
		if _, ok := ids[ev.ParentEntityID]; ok {
			return true
		}
	}
	return false
}

// rtdsClobMarket forwards a per-token market-channel message (last_trade_price,
// tick_size_change) to RTDS subscribers of token o of m (hub.mu held).
func (s *state) rtdsClobMarket(m *mstate, o int, typ string, payload []byte, ts int64) {
	for c := range m.rtds[o] {
		if c.rtds.market[m.tokens[o]][typ] {
			c.enqueueLocked(rtdsEnvelope(api.RTDSTopicClobMarket, typ, ts, payload, c.id))
		}
	}
}

// rtdsPriceChange forwards a price_change (short keys) to RTDS subscribers of
// either token.
func (s *state) rtdsPriceChange(m *mstate, f *api.WSPriceChange) {
	var payload []byte
	send := func(c *conn) {
		if !c.rtds.market[m.tokens[0]][api.WSEventPriceChange] && !c.rtds.market[m.tokens[1]][api.WSEventPriceChange] {
			return
		}
		if payload == nil {
			var err error
			if payload, err = api.MarshalWSFrame(api.NewRTDSPriceChange(f, nil)); err != nil {
				return
			}
		}
		c.enqueueLocked(rtdsEnvelope(api.RTDSTopicClobMarket, api.WSEventPriceChange, int64(f.Timestamp), payload, c.id))
	}
	for c := range m.rtds[0] {
		send(c)
	}
	for c := range m.rtds[1] {
		if _, dup := m.rtds[0][c]; !dup {
			send(c)
		}
	}
}

// rtdsBook sends token o's book as agg_orderbook to one connection (only when not
// nil) or to every RTDS subscriber of the type.
func (s *state) rtdsBook(m *mstate, o market.Outcome, only *conn) {
	b := s.bookFrame(m, o)
	if b == nil {
		return
	}
	send := func(c *conn) {
		if c.rtds.market[m.tokens[o]][api.RTDSTypeAggOrderbook] {
			c.enqueueLocked(rtdsEnvelope(api.RTDSTopicClobMarket, api.RTDSTypeAggOrderbook, s.now, b, c.id))
		}
	}
	if only != nil {
		send(only)
		return
	}
	for c := range m.rtds[o] {
		send(c)
	}
}

// rtdsMarketEvent sends market_created / market_resolved to RTDS subscribers.
func (s *state) rtdsMarketEvent(m *mstate, typ string, ev api.WSMarketEvent, ts int64) {
	var payload []byte
	for c := range s.h.rtdsAll {
		r := c.rtds
		if r == nil {
			continue
		}
		if !r.marketAll[typ] && !r.market[m.tokens[0]][typ] && !r.market[m.tokens[1]][typ] {
			continue
		}
		if payload == nil {
			var err error
			if payload, err = api.MarshalWSFrame(ev); err != nil {
				return
			}
		}
		c.enqueueLocked(rtdsEnvelope(api.RTDSTopicClobMarket, typ, ts, payload, c.id))
	}
}

// rtdsActivity sends a trade to RTDS activity subscribers.
func (s *state) rtdsActivity(m *mstate, t *market.Trade, ev *exchange.Event) {
	if len(s.h.rtdsAll) == 0 {
		return
	}
	var payload []byte
	for c := range s.h.rtdsAll {
		r := c.rtds
		if r == nil || len(r.activity) == 0 {
			continue
		}
		var typ string
		for _, a := range r.activity {
			if a.market != "" && a.market != t.Market || m != nil && a.slug != "" && a.slug != m.slug ||
				a.eventSlug != "" && (m == nil || !m.hasDesc || m.desc.Event == nil || m.desc.Event.Slug != a.eventSlug) {
				continue
			}
			typ = a.typ
			break
		}
		if typ == "" {
			continue
		}
		if typ == api.RTDSTypeAll {
			typ = api.RTDSTypeTrades
		}
		if payload == nil {
			p := api.RTDSActivityTrade{Asset: t.Token, ConditionID: t.Market, Outcome: s.outcomeLabel(t.Market, ev.Outcome),
				OutcomeIndex: int(ev.Outcome), Price: api.Number(t.Price), Side: api.Side(t.Side), Size: api.Number(t.Size),
				Timestamp: t.Time / 1000, TransactionHash: "", ProxyWallet: t.Taker.String()}
			if m != nil {
				p.Slug, p.Title = m.slug, m.question
				if m.hasDesc {
					p.Icon = m.desc.Icon
					if m.desc.Event != nil {
						p.EventSlug = m.desc.Event.Slug
					}
				}
			}
			var err error
			if payload, err = api.MarshalWSFrame(p); err != nil {
				return
			}
		}
		c.enqueueLocked(rtdsEnvelope(api.RTDSTopicActivity, typ, t.Time, payload, c.id))
	}
}

package ws

import (
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// userSub is the user-channel subscription of a connection: the address its API key
// belongs to, the key, and the market filter (all markets but excluded ones, or only
// included ones).
type userSub struct {
	addr    market.Address
	key     string
	all     bool
	include map[market.ConditionID]struct{}
	exclude map[market.ConditionID]struct{}
	// types restricts the events (RTDS clob_user: "order", "trade"); nil means all.
	types map[string]bool
}

func (u *userSub) matches(m market.ConditionID, typ string) bool {
	if u.types != nil && !u.types[typ] && !u.types[api.RTDSTypeAll] {
		return false
	}
	if u.all {
		_, ex := u.exclude[m]
		return !ex
	}
	_, in := u.include[m]
	return in
}

// authenticate checks credentials with the configured store.
func (h *Hub) authenticate(key, secret, passphrase string) (market.Address, error) {
	if h.cfg.Credentials == nil || key == "" {
		return market.Address{}, market.Errorf(market.CodeUnauthorized)
	}
	addr, ok := h.cfg.Credentials.LookupCredentials(key, secret, passphrase)
	if !ok || addr.IsZero() {
		return market.Address{}, market.Errorf(market.CodeUnauthorized)
	}
	return addr, nil
}

// onUserMessage handles /ws/user: the initial {"auth": {...}, "markets": [...],
// "type": "user"} authenticates the connection (a failure closes it with
// "Unauthorized/Invalid api key"); later {"markets": [...], "operation":
// "subscribe"|"unsubscribe"} change the market filter (an empty initial list means
// every market; unsubscribe with an empty list stops everything).
//
// The channel is per API key and shows its address's orders and trades: the engine
// keeps orders by address, so every key of an address sees the same events, each
// with its own key in the owner fields (docs/design/0070-ws-hub.md).
func (c *conn) onUserMessage(b []byte) {
	sub, ok := c.decodeSubscribe(b)
	if !ok {
		return
	}
	h := c.h
	h.mu.Lock()
	authed := c.user != nil
	var key string
	if authed {
		key = c.user.key
	}
	h.mu.Unlock()
	var addr market.Address
	var err error
	switch {
	case !authed && sub.Auth == nil:
		c.sendError(market.Errorf(market.CodeUnauthorized), true)
		return
	case !authed:
		if addr, err = h.authenticate(sub.Auth.APIKey, sub.Auth.Secret, sub.Auth.Passphrase); err != nil {
			c.sendError(err, true)
			return
		}
	case sub.Auth != nil && sub.Auth.APIKey != key:
		c.sendError(market.Errorf(market.CodeUnauthorized), false)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.dead {
		return
	}
	if c.user == nil {
		c.user = &userSub{addr: addr, key: sub.Auth.APIKey, include: map[market.ConditionID]struct{}{}, exclude: map[market.ConditionID]struct{}{}}
		set := h.users[addr]
		if set == nil {
			set = map[*conn]struct{}{}
			h.users[addr] = set
		}
		set[c] = struct{}{}
	}
	u := c.user
	switch sub.Operation {
	case "":
		u.all = len(sub.Markets) == 0
		clear(u.include)
		clear(u.exclude)
		for _, m := range sub.Markets {
			u.include[m] = struct{}{}
		}
	case api.WSOpSubscribe:
		for _, m := range sub.Markets {
			if _, have := u.include[m]; !have && len(u.include) >= h.cfg.MaxAssets {
				c.errorLocked(market.Errorf(market.CodePayloadTooLarge), nil)
				break
			}
			u.include[m] = struct{}{}
			delete(u.exclude, m)
		}
		if len(sub.Markets) == 0 {
			u.all = true
			clear(u.exclude)
		}
	case api.WSOpUnsubscribe:
		if len(sub.Markets) == 0 {
			u.all = false
			clear(u.include)
		}
		for _, m := range sub.Markets {
			delete(u.include, m)
			if u.all {
				u.exclude[m] = struct{}{}
			}
		}
	}
}

func (h *Hub) removeUser(c *conn) {
	if set := h.users[c.user.addr]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(h.users, c.user.addr)
		}
	}
}

// outcomeLabel returns the label of token t's outcome o in market m.
func (s *state) outcomeLabel(mk market.ConditionID, o market.Outcome) string {
	if m := s.markets[mk]; m != nil {
		return m.labels[o]
	}
	if o == market.No {
		return "No"
	}
	return "Yes"
}

// userOrder sends an order event of ev's order to its owner's user connections.
func (s *state) userOrder(ev *exchange.Event, typ string) {
	set := s.h.users[ev.Owner]
	if len(set) == 0 {
		return
	}
	o := market.Order{ID: ev.Order, Owner: ev.Owner, Market: ev.Market, Token: ev.Token, Outcome: ev.Outcome,
		Side: ev.Side, Price: ev.Price, Size: ev.Size, Matched: ev.Matched, Type: ev.Type, Expiration: ev.Expiration,
		Status: ev.Status}
	var trades []market.TradeID
	switch ev.Kind {
	case exchange.OrderFilled:
		o.Size = ev.Matched + ev.Remaining
		o.Price = ev.Price
		trades = []market.TradeID{s.h.cfg.TradeID(ev.Trade)}
	case exchange.TradeExecuted:
		o.Size = ev.Matched + ev.Remaining
		trades = []market.TradeID{s.h.cfg.TradeID(ev.Trade)}
	}
	if s.taker.Order == ev.Order && s.taker.Kind == exchange.OrderAccepted {
		o.Price, o.CreatedAt = s.taker.Price, s.taker.Time
		o.Expiration, o.PostOnly = s.taker.Expiration, s.taker.PostOnly
	}
	label := s.outcomeLabel(ev.Market, ev.Outcome)
	clear(s.keyBuf)
	for c := range set {
		if !c.user.matches(ev.Market, api.WSEventOrder) {
			continue
		}
		b, ok := s.keyBuf[c.user.key]
		if !ok {
			f := api.NewWSOrder(&o, typ, c.user.key, label, trades, ev.Time)
			b, _ = api.MarshalWSFrame(f)
			s.keyBuf[c.user.key] = b
		}
		if b == nil {
			continue
		}
		if c.kind == chRTDS {
			c.enqueueLocked(rtdsEnvelope(api.RTDSTopicClobUser, api.WSEventOrder, ev.Time, b, c.id))
		} else {
			c.enqueueLocked(b)
		}
	}
}

// trade renders the trade that TradeExecuted ev closes (with the OrderFilled events
// before it) for every participant with user connections, and for RTDS activity.
func (s *state) trade(ev *exchange.Event) {
	m := s.markets[ev.Market]
	t := market.Trade{ID: s.h.cfg.TradeID(ev.Trade), Market: ev.Market, Token: ev.Token, Side: ev.Side, Price: ev.Price,
		Size: ev.Size, TakerOrder: ev.Order, Taker: ev.Owner, TakerFee: ev.Fee, Time: ev.Time}
	for i := range s.fills {
		f := &s.fills[i]
		if f.Trade != ev.Trade {
			continue
		}
		t.Makers = append(t.Makers, market.MakerFill{Order: f.Order, Owner: f.Owner, Token: f.Token, Outcome: f.Outcome,
			Side: f.Side, Price: f.Price, Size: f.Size, Fee: f.Fee})
	}
	s.rtdsActivity(m, &t, ev)
	if len(s.h.users) == 0 {
		return
	}
	var fee int64
	if m != nil {
		fee = int64(m.feeBps)
	}
	viewers := []market.Address{t.Taker}
	for _, mk := range t.Makers {
		dup := false
		for _, v := range viewers {
			dup = dup || v == mk.Owner
		}
		if !dup {
			viewers = append(viewers, mk.Owner)
		}
	}
	for _, v := range viewers {
		set := s.h.users[v]
		if len(set) == 0 {
			continue
		}
		clear(s.keyBuf)
		for c := range set {
			if !c.user.matches(t.Market, api.WSEventTrade) {
				continue
			}
			b, ok := s.keyBuf[c.user.key]
			if !ok {
				key := c.user.key
				rec := api.TradeFrom(&t, api.TradeView{Viewer: v, FeeRateBps: fee,
					APIKey:  func(a market.Address) string { return ownKey(a, v, key) },
					Outcome: func(_ market.TokenID, o market.Outcome) string { return s.outcomeLabel(t.Market, o) }})
				var myFee market.Micros
				if v == t.Taker {
					myFee = t.TakerFee
				}
				b, _ = api.MarshalWSFrame(api.NewWSTrade(&rec, myFee))
				s.keyBuf[key] = b
			}
			if b == nil {
				continue
			}
			if c.kind == chRTDS {
				c.enqueueLocked(rtdsEnvelope(api.RTDSTopicClobUser, api.WSEventTrade, t.Time, b, c.id))
			} else {
				c.enqueueLocked(b)
			}
		}
	}
}

// ownKey shows the viewer's own API key and hides other participants' keys.
func ownKey(a, viewer market.Address, key string) string {
	if a == viewer {
		return key
	}
	return ""
}

package ws

import (
	"context"

	"go.uber.org/zap"

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
	// types restricts the events (RTDS clob_user: "order", "trade",
	// "rfq_request", "rfq_quote"); nil means all.
	types map[string]bool
	// after is the engine seq of the open-order dump sent on subscribe: events up
	// to it are in the dump (or before the subscription) and are not sent.
	after uint64
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
	if authed {
		c.applyUserSub(&sub, addr, nil)
		return
	}
	// The first subscription dumps the caller's open orders, read in the same
	// engine step as the hub's lock is taken, so the dump and the events after it
	// neither overlap nor leave a gap.
	err = h.cfg.Source.Read(context.Background(), func(e *exchange.Engine) { c.applyUserSub(&sub, addr, e) })
	if err != nil {
		h.log.Warn("ws: reading open orders for a user subscription failed", zap.Error(err))
		c.applyUserSub(&sub, addr, nil)
	}
}

// applyUserSub applies a user-channel subscription message; when e is not nil and
// the connection had no subscription, it queues the open-order dump from e.
func (c *conn) applyUserSub(sub *api.WSSubscribe, addr market.Address, e *exchange.Engine) {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.dead {
		return
	}
	fresh := c.user == nil
	if fresh {
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
	if fresh && e != nil {
		h.st.dumpOrders(c, e)
	}
}

// dumpOrders queues the open orders of c's address (within its market filter) as
// PLACEMENT order events, the state of the engine at e.Seq(); later events of
// seq up to it are not sent to c. hub.mu held, inside Source.Read.
func (s *state) dumpOrders(c *conn, e *exchange.Engine) {
	u := c.user
	u.after = e.Seq()
	for _, o := range e.OpenOrders(nil, exchange.Filter{Owner: u.addr}) {
		if !u.matches(o.Market, api.WSEventOrder) {
			continue
		}
		var trades []market.TradeID
		if s.h.cfg.Orders != nil {
			if _, _, nums, ok := s.h.cfg.Orders(o.ID); ok {
				trades = s.tradeIDs(nums, 0)
			}
		}
		f := api.NewWSOrder(&o, api.WSOrderPlacement, u.key, s.outcomeLabel(o.Market, o.Outcome), trades, e.Time())
		if b, err := api.MarshalWSFrame(f); err == nil {
			c.enqueueLocked(b)
		}
	}
}

// tradeIDs renders trade numbers up to bound (all when bound is 0) as trade ids.
func (s *state) tradeIDs(nums []uint64, bound uint64) []market.TradeID {
	out := make([]market.TradeID, 0, len(nums))
	for _, n := range nums {
		if bound == 0 || n <= bound {
			out = append(out, s.h.cfg.TradeID(n))
		}
	}
	return out
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
	if s.h.cfg.Orders != nil {
		// The REST record's creation time and trades (an UPDATE or CANCELLATION of
		// a resting order would otherwise show created_at 0 and no trades): the
		// trades up to this event's (the record already has the whole batch's).
		if _, created, nums, ok := s.h.cfg.Orders(ev.Order); ok {
			o.CreatedAt = created
			bound := ev.Trade
			if bound == 0 {
				bound = s.tradeN
			}
			trades = s.tradeIDs(nums, bound)
		}
	}
	label := s.outcomeLabel(ev.Market, ev.Outcome)
	clear(s.keyBuf)
	for c := range set {
		if !c.user.matches(ev.Market, api.WSEventOrder) || ev.Seq <= c.user.after {
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
	// The other participants' keys, as GET /data/trades shows them: the key that
	// placed each one's (first) order in the trade.
	var keys map[market.Address]string
	if s.h.cfg.Orders != nil {
		keys = make(map[market.Address]string, 1+len(t.Makers))
		if k, _, _, ok := s.h.cfg.Orders(t.TakerOrder); ok {
			keys[t.Taker] = k
		}
		for _, mk := range t.Makers {
			if _, have := keys[mk.Owner]; !have {
				if k, _, _, ok := s.h.cfg.Orders(mk.Order); ok {
					keys[mk.Owner] = k
				}
			}
		}
	}
	s.tradeToUsers(&t, ev.Seq, fee, keys)
}

// tradeToUsers queues trade t on the user connections of each participant, as that
// participant sees it, once per status (seq: the engine event that settled it;
// connections whose open-order dump is at or after it do not get it).
func (s *state) tradeToUsers(t *market.Trade, seq uint64, fee int64, keys map[market.Address]string) {
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
		// The local ledger settles a trade when it matches: the trade goes through
		// every later status at once, one event each (dialect: "on every later
		// status change"), ending CONFIRMED as GET /data/trades shows it.
		for _, status := range tradeStatuses {
			s.tradeFrames(t, seq, v, status, fee, keys, set)
		}
	}
}

// tradeStatuses are the statuses a trade of the local exchange goes through.
var tradeStatuses = [...]string{api.TradeMatched, api.TradeMined, api.TradeConfirmed}

// tradeFrames queues t as viewer v sees it, with status, on v's connections.
func (s *state) tradeFrames(t *market.Trade, seq uint64, v market.Address, status string, fee int64,
	keys map[market.Address]string, set map[*conn]struct{}) {
	clear(s.keyBuf)
	for c := range set {
		if !c.user.matches(t.Market, api.WSEventTrade) || seq <= c.user.after {
			continue
		}
		b, ok := s.keyBuf[c.user.key]
		if !ok {
			key := c.user.key
			rec := api.TradeFrom(t, api.TradeView{Viewer: v, FeeRateBps: fee, Status: status,
				APIKey:  func(a market.Address) string { return ownKey(a, v, key, keys) },
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

// ownKey shows the viewer's own key (the connection's) and the other
// participants' keys from keys ("" when keys is nil).
func ownKey(a, viewer market.Address, key string, keys map[market.Address]string) string {
	if a == viewer {
		return key
	}
	return keys[a]
}

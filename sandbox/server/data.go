package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// outcomeLabel returns the label of a token's outcome in its market ("Yes", "No",
// or the market's own labels).
func (st *state) outcomeLabel(t market.TokenID, o market.Outcome) string {
	if m := st.markets[t]; m != nil && m.info.Outcomes[o] != "" {
		return m.info.Outcomes[o]
	}
	if o == market.No {
		return "No"
	}
	return "Yes"
}

// tradeIDs renders trade numbers as trade ids. dataMu is held.
func (st *state) tradeIDs(nums []uint64) []market.TradeID {
	out := make([]market.TradeID, len(nums))
	for i, n := range nums {
		out[i] = st.tradeID(n)
	}
	return out
}

// openOrder renders an order for the API, with its key, label and trades from the
// state. dataMu is held for reading.
func (st *state) openOrder(o *market.Order, fallbackKey string) api.OpenOrder {
	key, trades := fallbackKey, []market.TradeID(nil)
	if rec := st.orders[o.ID]; rec != nil {
		if rec.key != "" {
			key = rec.key
		}
		trades = st.tradeIDs(rec.trades)
	}
	return api.OpenOrderFrom(o, key, st.outcomeLabel(o.Token, o.Outcome), trades)
}

// dataOrders is GET /data/orders (L2): the caller's open orders, filtered by id,
// market and asset_id, paged.
func (s *Server) dataOrders(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := exchange.Filter{Owner: c.owner, Market: market.ConditionID(q.Get("market")), Token: market.TokenID(q.Get("asset_id"))}
	id := market.OrderID(q.Get("id"))
	var orders []market.Order
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		if id != "" {
			if o, ok := e.Order(id); ok && o.Owner == c.owner && (f.Market == "" || o.Market == f.Market) && (f.Token == "" || o.Token == f.Token) {
				orders = append(orders, o)
			}
			return
		}
		orders = e.OpenOrders(nil, f)
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	page, err := api.Paginate(orders, q.Get("next_cursor"), DefaultPageSize)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	out := api.Page[api.OpenOrder]{NextCursor: page.NextCursor, Limit: page.Limit, Count: page.Count, Data: make([]api.OpenOrder, len(page.Data))}
	s.st.dataMu.RLock()
	for i := range page.Data {
		out.Data[i] = s.st.openOrder(&page.Data[i], c.key.creds.APIKey)
	}
	s.st.dataMu.RUnlock()
	s.writeJSON(w, out)
}

// dataOrder is GET /data/order/{order_id} (L2): one of the caller's orders, open or
// final (final orders are kept up to Config.MaxFinalOrders).
func (s *Server) dataOrder(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	id := r.PathValue("order_id")
	if !api.ValidOrderID(id) {
		s.writeErr(w, market.Errorf(market.CodeInvalidOrderID))
		return
	}
	var o market.Order
	var open bool
	if err := s.h.Read(r.Context(), func(e *exchange.Engine) { o, open = e.Order(market.OrderID(id)) }); err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.st.dataMu.RLock()
	defer s.st.dataMu.RUnlock()
	if !open {
		rec := s.st.orders[market.OrderID(id)]
		if rec == nil {
			s.writeErr(w, market.Errorf(market.CodeUnknownOrder))
			return
		}
		o = rec.o
	}
	if o.Owner != c.owner {
		s.writeErr(w, market.Errorf(market.CodeUnknownOrder))
		return
	}
	s.writeJSON(w, s.st.openOrder(&o, c.key.creds.APIKey))
}

// tradeOut is a trade record with the builder id that placed its taker order (when
// there is one), as "builder_id".
type tradeOut struct {
	api.Trade
	builder string
}

// MarshalJSON adds "builder_id" to the api.Trade encoding.
func (t tradeOut) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(t.Trade)
	if err != nil || t.builder == "" {
		return b, err
	}
	extra, _ := json.Marshal(t.builder)
	b = append(b[:len(b)-1], `,"builder_id":`...)
	b = append(b, extra...)
	return append(b, '}'), nil
}

// marketTrade returns t as a market.Trade with the API keys of its participants
// (the key that placed each one's first order in it). dataMu is held.
func (st *state) marketTrade(t *tradeRec) (market.Trade, map[market.Address]string) {
	mt := market.Trade{ID: t.id, Market: t.market, Token: t.token, Side: t.side, Price: t.price, Size: t.size,
		TakerOrder: t.takerOrder, Taker: t.taker, TakerFee: t.fee, Time: t.time, Makers: make([]market.MakerFill, len(t.makers))}
	keys := make(map[market.Address]string, 1+len(t.makers))
	keys[t.taker] = t.takerKey
	for i, m := range t.makers {
		mt.Makers[i] = market.MakerFill{Order: m.order, Owner: m.owner, Token: m.token, Outcome: m.outcome, Side: m.side, Price: m.price, Size: m.size}
		if _, have := keys[m.owner]; !have {
			keys[m.owner] = m.key
		}
	}
	return mt, keys
}

// render returns t as seen by viewer. dataMu is held.
func (st *state) render(t *tradeRec, viewer market.Address) tradeOut {
	mt, keys := st.marketTrade(t)
	tr := api.TradeFrom(&mt, api.TradeView{Viewer: viewer, APIKey: func(a market.Address) string { return keys[a] }, Outcome: st.outcomeLabel,
		FeeRateBps: int64(t.feeBps), Status: api.TradeConfirmed})
	return tradeOut{Trade: tr, builder: t.builder}
}

// dataTrades is GET /data/trades (L2): the trades the caller took part in, oldest
// first, filtered by id, market, asset_id, maker_address / maker / taker (which must
// be the caller's address to match anything), before and after (Unix seconds,
// exclusive), paged.
func (s *Server) dataTrades(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	q := r.URL.Query()
	for _, k := range [...]string{"maker_address", "maker", "taker"} {
		if v := q.Get(k); v != "" {
			a, err := market.ParseAddress(v)
			if err != nil {
				s.writeErr(w, market.Errorf(market.CodeBadRequest, k))
				return
			}
			if a != c.owner {
				s.writeJSON(w, api.Page[tradeOut]{NextCursor: api.EndCursor, Limit: DefaultPageSize})
				return
			}
		}
	}
	var before, after int64 = 1 << 62, -1
	for _, p := range [...]struct {
		name string
		dst  *int64
	}{{"before", &before}, {"after", &after}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				s.writeErr(w, market.Errorf(market.CodeBadRequest, p.name))
				return
			}
			*p.dst = n
		}
	}
	id, mkt, asset := market.TradeID(q.Get("id")), market.ConditionID(q.Get("market")), market.TokenID(q.Get("asset_id"))
	s.st.dataMu.RLock()
	defer s.st.dataMu.RUnlock()
	var sel []*tradeRec
	for _, n := range s.st.byAcct[c.owner] {
		t := s.st.tradeByNum(n)
		if t == nil {
			continue
		}
		sec := t.time / 1000
		if id != "" && t.id != id || mkt != "" && t.market != mkt || sec >= before || sec <= after {
			continue
		}
		if asset != "" && t.token != asset && !makersHold(t, asset) {
			continue
		}
		sel = append(sel, t)
	}
	page, err := api.Paginate(sel, q.Get("next_cursor"), DefaultPageSize)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	out := api.Page[tradeOut]{NextCursor: page.NextCursor, Limit: page.Limit, Count: page.Count, Data: make([]tradeOut, len(page.Data))}
	for i, t := range page.Data {
		out.Data[i] = s.st.render(t, c.owner)
	}
	s.writeJSON(w, out)
}

func makersHold(t *tradeRec, asset market.TokenID) bool {
	for _, m := range t.makers {
		if m.token == asset {
			return true
		}
	}
	return false
}

// OrderMeta returns what the REST API knows of an order (open, or final and still
// kept): the API key that placed it, its creation time (Unix ms) and the numbers
// of the trades it took part in, oldest first. The WebSocket hub's Config.Orders.
func (s *Server) OrderMeta(id market.OrderID) (key string, createdMs int64, trades []uint64, ok bool) {
	s.st.dataMu.RLock()
	defer s.st.dataMu.RUnlock()
	rec := s.st.orders[id]
	if rec == nil {
		return "", 0, nil, false
	}
	return rec.key, rec.o.CreatedAt, slices.Clone(rec.trades), true
}
